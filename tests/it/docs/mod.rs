//! The repository's documents against the code: the examples of
//! `docs/language.md`, the diagnostics catalogue and `docs/diagnostics.md`,
//! the built-in table against the docs, highlighters and generator, and the
//! setup.

mod builtins;
mod catalog;
mod language;
pub mod setup;
