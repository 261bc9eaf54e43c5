//! kdsl's integration tests, in one test binary so that a change links once.
//!
//! One rule names every module: `tests/it/<stage>/<feature>.rs`. The folder
//! is the stage of kdslc a module tests (in pipeline order: `syntax`,
//! `check`, `ptx`, `opt`, `sim`), a program around the compiler (`cli`,
//! `lsp`, `host`), or the whole (`pipeline`, `docs`); the file names the feature and
//! never repeats its folder (`sim/atomics.rs`, not `sim_atomics.rs`).
//! `docs/testing.md` states the rule and where a module that spans stages
//! goes; `common` holds the helpers more than one module uses.

mod common;

mod check;
mod cli;
mod docs;
mod host;
mod lsp;
mod opt;
mod pipeline;
mod ptx;
mod sim;
mod syntax;
