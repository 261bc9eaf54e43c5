//! The language server's document handling (see `kdsl_fuzz::lsp`).
#![no_main]

libfuzzer_sys::fuzz_target!(|session: kdsl_fuzz::lsp::Session| kdsl_fuzz::lsp::run(session));
