//! Helpers shared by the integration tests. Use from a test file with
//!
//! ```ignore
//! mod common;
//! use common::ptxas;
//! ```
//!
//! Each integration test is its own crate and uses only some of these helpers,
//! so unused ones must not warn.
#![allow(dead_code)]

pub mod gen_expr;
pub mod gen_program;
pub mod ptxas;
pub mod shapes;
pub mod sim;

use std::path::PathBuf;

/// The repository root (where Cargo.toml is), whatever the current directory.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
