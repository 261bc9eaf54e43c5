//! kdsl's integration tests, in one test binary so that a change links once.
//! Each module is one concern; `common` holds the shared helpers (the ptxas
//! harness), `ptx_build` a small builder of hand-made IR for writer tests.

mod common;
mod ptx_build;

mod atomics;
mod barriers;
mod builtins;
mod catalog;
mod cli;
mod consteval;
mod depth;
mod docs;
mod dynamic_shared;
mod fuzz;
mod generated;
mod imports;
mod inference;
mod launch;
mod limits;
mod lineinfo;
mod lists;
mod lsp;
mod make;
mod nvim;
mod ptx_writer;
mod ptxas_harness;
mod registers;
mod render;
mod samples;
mod scaling;
mod setup;
mod sim_atomics;
mod sim_broken;
mod sim_cli;
mod sim_cluster;
mod sim_generated;
mod sim_isa;
mod sim_named;
mod sim_passes;
mod sim_reference;
mod sim_samples;
mod sim_support;
mod sim_twins;
mod sim_warp;
mod sim_wgmma;
mod syntax;
mod tensor;
mod ui;
mod vector;
mod verify;
mod wgmma;
