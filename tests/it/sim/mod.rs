//! The simulator: instruction semantics, every sample and its nvcc twin
//! against a Rust reference (`reference`), broken kernels and their reports,
//! generated programs, each feature that runs on the GPU, and `kdslc sim`
//! from the command line. Helpers: `common::sim`.

mod atomics;
pub mod attention;
pub mod broken;
mod clean;
pub mod cli;
mod cluster;
mod convergence;
mod cuda;
mod dynamic_shared;
mod fence;
mod fragments;
mod generated;
pub mod hopper;
mod hostile;
mod instances;
mod isa;
mod jobs;
mod matrix;
mod named;
mod packed;
pub mod reference;
mod register_arrays;
pub mod samples;
mod tensor;
pub mod twins;
mod unsupported;
mod vector;
mod warp;
mod wgmma;
