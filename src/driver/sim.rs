//! `kdslc sim`: run one kernel on the CPU in the simulator engine.
//!
//! The input is read and the launch checked before the engine starts, so a
//! usage error costs nothing; the engine's reports are rendered like the
//! compiler's diagnostics; outputs are written only after a run that
//! completed without a fault (exit 4 otherwise).

use super::cli::{MessageFormat, SimArgs};
use super::engine::{self, Settings};
use super::launch_io;
use super::report::{self, Reporter};
use super::Fail;

pub fn sim(args: &SimArgs, reporter: &mut Reporter) -> Result<(), Fail> {
    let input = launch_io::load(&args.launch, reporter)?;
    let launch = launch_io::prepare(&args.launch, &input)?;
    if let Some(flag) = &args.ptxas {
        let ptxas = super::ptxas::find(flag.as_deref())?;
        let target = args.launch.common.target.name();
        let name = input.path.display().to_string();
        super::ptxas::vet(&ptxas, &input.ptx, target, &name).map_err(|e| {
            match (e, input.origin) {
                // kdslc promises PTX that ptxas accepts.
                (Fail::Usage(m), crate::launch::Origin::Kdsl) => Fail::Internal(m),
                (e, _) => e,
            }
        })?;
    }
    let settings = Settings {
        schedule: args.schedule,
        max_steps: args.max_steps,
        jobs: args.jobs.map_or(0, |n| n as usize),
        checks: args.checks,
        stats: args.stats,
        json: args.launch.common.message_format == MessageFormat::Json,
    };
    let outcome = engine::simulate(
        &input,
        &launch,
        &settings,
        &args.launch.common.consts,
        reporter,
    )?;
    // What the kernel printed comes first, as on a GPU (whose printf
    // buffer is flushed when the kernel ends), also when it faulted.
    let printed = engine::printf_text(&outcome.printed, settings.json);
    if !printed.is_empty() {
        super::output::write_stdout(printed.as_bytes())?;
    }
    reporter.report(&outcome.sources, &outcome.reports);
    if let Some(stats) = &outcome.stats {
        if settings.json {
            super::output::write_stdout(format!("{stats}\n").as_bytes())?;
        } else {
            report::stderr(&format!("{stats}\n"));
        }
    }
    if outcome.faulted {
        return Err(Fail::Exit(4));
    }
    let arrays = launch_io::results(&launch, outcome.arrays)?;
    launch_io::write_outputs(&args.launch, &launch, &arrays)
}
