//! The simulator: instruction semantics, every sample and its nvcc twin
//! against a Rust reference (`reference`), broken kernels and their reports,
//! generated programs, each feature that runs on the GPU, and `kdslc sim`
//! from the command line. Helpers: `common::sim`.

mod atomics;
pub mod attention;
mod broken;
pub mod cli;
mod cluster;
mod dynamic_shared;
mod fragments;
mod generated;
mod hopper;
mod instances;
mod isa;
mod matrix;
mod named;
mod packed;
pub mod reference;
pub mod samples;
mod tensor;
mod twins;
mod vector;
mod warp;
mod wgmma;
