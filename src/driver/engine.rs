//! The seam between the command line and the simulator engine
//! (`src/sim/`, built separately): `kdslc sim`, `kdslc run --check-sim`
//! and the signatures of `.ptx` inputs all come through here.
//!
//! NOT YET WIRED: the engine lands in another branch. Until the lead wires
//! it (`sim::load` + `sim::run`, `Program::signature`), both functions
//! below return an internal error; everything before them (the input, the
//! launch) and after them (reports, outputs, `--check-sim`'s comparison)
//! is in place and tested.

use super::cli::Schedule;
use super::launch_io::Input;
use super::Fail;
use crate::diagnostics::Diagnostic;
use crate::launch::{Array, KernelSignature, Launch};
use std::path::Path;

/// How to simulate: `--schedule`, `--max-steps`, `--stats`.
#[derive(Clone, Copy, Debug)]
// Read by the engine once it is wired in (see the module comment).
#[allow(dead_code)]
pub(crate) struct Settings {
    pub schedule: Schedule,
    pub max_steps: Option<u64>,
    pub stats: bool,
    /// `--message-format json`: the statistics as one JSON object.
    pub json: bool,
}

/// What a simulated run gives back.
#[derive(Debug)]
pub(crate) struct Simulated {
    /// The writable arrays after the run.
    pub arrays: Vec<Array>,
    /// Deadlocks, faults, protocol violations (codes `S0001`...).
    pub reports: Vec<Diagnostic>,
    /// A report that makes the run fail (exit 4).
    pub faulted: bool,
    /// `--stats`, formatted for the terminal or as JSON.
    pub stats: Option<String>,
}

/// Runs `launch` on the CPU.
pub(crate) fn simulate(
    _input: &Input,
    _launch: &Launch,
    _settings: &Settings,
) -> Result<Simulated, Fail> {
    Err(not_wired())
}

/// The kernels of a `.ptx` input and their signatures.
pub(crate) fn ptx_signatures(_ptx: &str, _path: &Path) -> Result<Vec<KernelSignature>, Fail> {
    Err(not_wired())
}

fn not_wired() -> Fail {
    Fail::Internal(
        "the simulator engine is not wired into this build yet (src/driver/engine.rs)".to_string(),
    )
}
