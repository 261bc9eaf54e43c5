//! The seam between the command line and the simulator engine (`src/sim/`):
//! `kdslc sim`, `kdslc run --check-sim` and the signatures of `.ptx` inputs
//! all come through here.

use super::cli::Schedule;
use super::launch_io::Input;
use super::report::Reporter;
use super::Fail;
use crate::diagnostics::{plural, Diagnostic};
use crate::launch::Origin;
use crate::launch::{Array, KernelSignature, Launch};
use crate::sim::{self, PtxSource, SimOptions, Stats};
use crate::source::SourceMap;
use crate::span::FileId;
use std::fmt::Write as _;

/// How to simulate: `--schedule`, `--max-steps`, `--jobs`, `--checks`,
/// `--stats`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub schedule: Schedule,
    pub max_steps: Option<u64>,
    /// `--jobs` (0: one per core).
    pub jobs: usize,
    /// `--checks`.
    pub checks: sim::Checks,
    pub stats: bool,
    /// `--message-format json`: the statistics as one JSON object.
    pub json: bool,
}

/// What a simulated run gives back.
#[derive(Debug)]
pub(crate) struct Simulated {
    /// Every array argument after the run (launch order).
    pub arrays: Vec<Array>,
    /// Deadlocks, faults, protocol violations (codes `S0001`...).
    pub reports: Vec<Diagnostic>,
    /// The files the reports point into: the input's, plus the sources a
    /// `.ptx` file's `.file` directives name.
    pub sources: SourceMap,
    /// A report that makes the run fail (exit 4).
    pub faulted: bool,
    /// `--stats`, formatted for the terminal or as JSON.
    pub stats: Option<String>,
    /// What the kernel's `printf`s printed, in the simulator's order.
    pub printed: Vec<sim::Printed>,
}

/// Runs `launch` on the CPU. A kernel outside the simulator's PTX subset is
/// reported (every unsupported instruction it reaches, each with its PTX
/// line; a module none of whose kernels can run: every one of the module)
/// and ends the command: exit 2 for a `.ptx` input, an internal error (exit 3) for
/// kdslc's own PTX, which the simulator must always be able to run.
pub(crate) fn simulate(
    input: &Input,
    launch: &Launch,
    settings: &Settings,
    consts: &[String],
    reporter: &mut Reporter,
) -> Result<Simulated, Fail> {
    let mut sources = input.sources.clone();
    let loaded = match input.origin {
        Origin::Kdsl => sim::load_with(
            &input.ptx,
            PtxSource::Kdsl {
                line_spans: &input.line_spans,
            },
            input.dynamic_layouts.clone(),
        ),
        Origin::Ptx => sim::load(
            &input.ptx,
            PtxSource::File {
                file: FileId(0),
                sources: &mut sources,
            },
        ),
    };
    // A kernel that reaches an instruction outside the subset is refused
    // as a module that does not load is (the module's other kernels run).
    let loaded = loaded.and_then(|p| {
        let refusals = p.refusals(&launch.kernel);
        if refusals.is_empty() {
            Ok(p)
        } else {
            Err(refusals)
        }
    });
    let mut program = match loaded {
        Ok(p) => p,
        Err(diags) => {
            reporter.report(&sources, &diags);
            return Err(match input.origin {
                Origin::Ptx => Fail::Exit(2),
                Origin::Kdsl => Fail::Internal(format!(
                    "the simulator cannot load the PTX kdslc wrote for `{}` (reported above)",
                    input.path.display()
                )),
            });
        }
    };
    // `--const NAME=ARRAY`: the module's `__constant__` memory, set as a
    // host sets it before the launch (`launch::consts`).
    // (A `.kdsl` input's `--const` flags were its kernel constants.)
    let symbols = program.constants();
    for text in consts.iter().filter(|_| input.origin == Origin::Ptx) {
        let (name, bytes) = crate::launch::consts::parse(&symbols, text).map_err(Fail::Usage)?;
        program.set_constant(&name, &bytes).map_err(Fail::Usage)?;
    }
    let defaults = SimOptions::default();
    let opts = SimOptions {
        schedule: match settings.schedule {
            Schedule::InOrder => sim::Schedule::InOrder,
            Schedule::Random(seed) => sim::Schedule::Random(seed),
        },
        max_steps: settings.max_steps.unwrap_or(defaults.max_steps),
        checks: settings.checks,
        jobs: settings.jobs,
    };
    let outcome = sim::run(&program, launch, &opts);
    let stats = settings
        .stats
        .then(|| format_stats(&outcome.stats, settings.json));
    Ok(Simulated {
        printed: outcome.printed,
        arrays: outcome.arrays,
        reports: outcome.reports,
        sources,
        faulted: outcome.faulted,
        stats,
    })
}

/// The kernels of a `.ptx` input and their signatures, from the parser
/// alone (so `kdslc run` can launch PTX the simulator does not support).
/// Text that does not parse is reported (S0014, at the PTX position, in
/// `sources`, where the input is file 0) and ends the command: exit 2.
pub(crate) fn ptx_signatures(
    ptx: &str,
    sources: &mut SourceMap,
    reporter: &mut Reporter,
) -> Result<Vec<KernelSignature>, Fail> {
    sim::signatures(ptx).map_err(|(message, line)| {
        // The loader's diagnostic for the same text says where, with the line.
        let loaded = sim::load(
            ptx,
            PtxSource::File {
                file: FileId(0),
                sources,
            },
        );
        match loaded {
            Err(diags) if !diags.is_empty() => {
                reporter.report(sources, &diags);
                Fail::Exit(2)
            }
            _ => Fail::Usage(format!("cannot read the PTX: line {line}: {message}")),
        }
    })
}

/// `--stats`: one JSON object, or a short table for people.
fn format_stats(s: &Stats, json: bool) -> String {
    if json {
        let value = serde_json::json!({ "type": "stats", "stats": s });
        return value.to_string();
    }
    let i = &s.instructions;
    let m = &i.memory;
    let mut out = String::new();
    let per_cta = s.threads / s.ctas.max(1);
    let _ = if s.clusters == s.ctas {
        writeln!(
            out,
            "stats for `{}`: {} of {} ({})",
            s.kernel,
            plural(s.ctas, "CTA"),
            plural(per_cta, "thread"),
            plural(s.threads, "thread")
        )
    } else {
        writeln!(
            out,
            "stats for `{}`: {} of {} in {} of {} ({})",
            s.kernel,
            plural(s.ctas, "CTA"),
            plural(per_cta, "thread"),
            plural(s.clusters, "cluster"),
            s.ctas / s.clusters.max(1),
            plural(s.threads, "thread")
        )
    };
    let _ = writeln!(out, "  instructions executed  {:>14}", s.steps);
    let _ = writeln!(out, "    arithmetic           {:>14}", i.arith);
    let _ = writeln!(
        out,
        "    memory               {:>14}  (global {}, shared {}, shared::cluster {}, local {}, param {}, const {}; generic {}; bulk {})",
        m.global + m.shared + m.shared_cluster + m.local + m.param + m.constant + m.bulk,
        m.global,
        m.shared,
        m.shared_cluster,
        m.local,
        m.param,
        m.constant,
        m.generic,
        m.bulk
    );
    let _ = writeln!(out, "    barrier              {:>14}", i.barrier);
    let _ = writeln!(out, "    warp                 {:>14}", i.warp);
    let _ = writeln!(out, "    control              {:>14}", i.control);
    let _ = writeln!(
        out,
        "  mbarrier waits that blocked {:>8}",
        s.blocking_mbarrier_waits
    );
    if let Some(t) = &s.longest_thread {
        let _ = write!(
            out,
            "  longest thread: cta ({},{},{}) thread {}, {}",
            t.cta[0],
            t.cta[1],
            t.cta[2],
            t.thread,
            plural(t.instructions, "instruction")
        );
    }
    out.trim_end().to_string()
}

/// The `printf` output of a run for stdout: the texts one after another,
/// or (`json`) one object per call, `{"type":"printf","cta":[x,y,z],
/// "thread":T,"text":"..."}`.
pub(crate) fn printf_text(printed: &[sim::Printed], json: bool) -> String {
    let mut out = String::new();
    for p in printed {
        if json {
            let v = serde_json::json!({
                "type": "printf",
                "cta": p.cta,
                "thread": p.thread,
                "text": p.text,
            });
            out.push_str(&v.to_string());
            out.push('\n');
        } else {
            out.push_str(&p.text);
        }
    }
    out
}
