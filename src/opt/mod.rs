//! The optimisation passes: IR → IR rewrites between the barrier pass and
//! the PTX writer, run only on a module without errors.
//!
//! Before any pass, whatever `--passes` says, the manager unrolls the loops
//! over constant lists ([`lists`]) and gives each element of each register
//! array a local of its own ([`registers`]): that is what those mean, not
//! an optimisation, and no pass or writer sees either.
//!
//! Each pass is a module of its own with one entry point,
//! `run(&mut Module) -> bool` (whether it changed anything), and a name by
//! which `--passes` switches it on or off. The manager ([`run`]) runs the
//! chosen passes in their fixed order and hands the module to a check after
//! each (the pipeline verifies the IR there in debug builds); the analyses
//! are computed again afterwards, since their facts are keyed by ids that
//! a pass may have replaced or added.
//!
//! What every pass promises: the program computes exactly what it computed
//! before, bit for bit (no reassociation, no change of rounding), and no
//! memory access, barrier operation, bulk copy or fence moves past another
//! (unrolling copies a loop's body in order; rewriting a special register
//! reads a different one with the same value). The simulator test
//! `opt::passes` (tests/it/opt/passes.rs) runs every sample with the passes on and off.

pub mod hints;
pub mod licm;
pub mod lists;
pub mod registers;
pub(crate) mod rewrite;
pub mod special;
pub mod stream;
pub mod unroll;

use crate::ir::Module;

/// One optimisation pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pass {
    /// [`special`]: `lane_id` and `warp_id` from `thread_idx.x` where the
    /// block shape makes them equal.
    Special,
    /// [`unroll`]: full unrolling of loops with a small constant trip count.
    Unroll,
    /// [`stream`]: streaming loops ×4 with a remainder loop.
    Stream,
    /// [`licm`]: loop-invariant shared-memory addresses computed once.
    Licm,
}

impl Pass {
    /// Every pass, in the order they run.
    pub const ALL: [Pass; 4] = [Pass::Special, Pass::Unroll, Pass::Stream, Pass::Licm];

    /// The name `--passes` knows it by.
    pub fn name(self) -> &'static str {
        match self {
            Pass::Special => "special",
            Pass::Unroll => "unroll",
            Pass::Stream => "stream",
            Pass::Licm => "licm",
        }
    }

    fn run(self, module: &mut Module) -> bool {
        match self {
            Pass::Special => special::run(module),
            Pass::Unroll => unroll::run(module),
            Pass::Stream => stream::run(module),
            Pass::Licm => licm::run(module),
        }
    }
}

/// The passes to run: a subset of [`Pass::ALL`], kept in its order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passes {
    on: Vec<Pass>,
}

impl Default for Passes {
    /// Every pass: optimisation is on unless asked otherwise.
    fn default() -> Passes {
        Passes::all()
    }
}

impl Passes {
    pub fn all() -> Passes {
        Passes {
            on: Pass::ALL.to_vec(),
        }
    }

    pub fn none() -> Passes {
        Passes { on: Vec::new() }
    }

    /// `all`, `none`, or a comma-separated list of pass names (in any
    /// order: the passes always run in [`Pass::ALL`]'s).
    pub fn parse(text: &str) -> Result<Passes, String> {
        match text {
            "all" => return Ok(Passes::all()),
            "none" => return Ok(Passes::none()),
            _ => {}
        }
        let mut wanted = Vec::new();
        for word in text.split(',').map(str::trim) {
            match Pass::ALL.iter().find(|p| p.name() == word) {
                Some(p) => wanted.push(*p),
                None => {
                    let names: Vec<&str> = Pass::ALL.iter().map(|p| p.name()).collect();
                    return Err(format!(
                        "no pass `{word}`; the passes are {} (or `all`, `none`)",
                        names.join(", ")
                    ));
                }
            }
        }
        Ok(Passes {
            on: Pass::ALL
                .into_iter()
                .filter(|p| wanted.contains(p))
                .collect(),
        })
    }

    pub fn contains(&self, p: Pass) -> bool {
        self.on.contains(&p)
    }

    pub fn iter(&self) -> impl Iterator<Item = Pass> + '_ {
        self.on.iter().copied()
    }
}

/// Unrolls the loops over constant lists ([`lists`], always), makes the
/// register arrays registers ([`registers`], always), then runs `passes`
/// over `module` in order, calling `after` with the name of each step
/// (`lists`, `registers`, then each pass's) and the module it left (the pipeline
/// verifies the IR there); stops at the first `Err` of `after`.
/// `Ok(true)` when some step changed the module.
pub fn run<E>(
    module: &mut Module,
    passes: &Passes,
    mut after: impl FnMut(&'static str, &Module) -> Result<(), E>,
) -> Result<bool, E> {
    let mut changed = lists::run(module);
    if changed {
        after("lists", module)?;
    }
    if registers::run(module) {
        changed = true;
        after("registers", module)?;
    }
    for p in passes.iter() {
        changed |= p.run(module);
        after(p.name(), module)?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests;
