//! The PTX writer: golden PTX of every sample, every program under ptxas,
//! hand-built IR written and assembled (`build` is its IR builder), the PTX
//! line → span map and `--lineinfo`, and the ptxas harness itself.

mod build;
mod fragments;
mod harness;
mod instances;
mod lineinfo;
mod matrix;
mod packed;
mod registers;
mod regtile;
mod samples;
mod wgmma;
mod writer;
