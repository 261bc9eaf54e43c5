//! The language server's document handling (see `kdsl_fuzz::lsp`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kdsl_fuzz::lsp::run_bytes(data));
