//! The whole pipeline on arbitrary bytes (see `kdsl_fuzz::pipeline`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kdsl_fuzz::pipeline::run(data));
