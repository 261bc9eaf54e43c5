//! The `kdslc` command line (`kdslc --help`; the JSON format is in
//! `docs/json-diagnostics.md`).
//!
//! - [`cli`]: the clap definitions and the `argv` rewrites (implied `build`,
//!   gcc's `-MD`/`-MF`);
//! - [`build`], [`check`], [`explain`], [`sim`], [`run`]: one module per
//!   subcommand; [`launch_io`]: what `sim` and `run` share (the input, the
//!   launch, the outputs); [`engine`]: the call into the simulator;
//! - [`output`]: atomic writes and depfiles; [`ptxas`]: `--emit cubin`;
//! - [`report`]: where diagnostics go, in which format;
//! - [`device`]: launches on arrays already in device memory, for
//!   programs that hold them (the Python package, `python/`).
//!
//! Exit status: 0 success, 1 the program has errors, 2 usage or I/O
//! problems, 3 an internal compiler error (a panic, caught here), 4 a
//! kernel run by `sim` or `run` faulted.

mod build;
mod check;
pub mod cli;
mod engine;
mod explain;
mod launch_io;
pub(crate) mod output;
mod ptxas;
mod report;
mod run;
mod sim;

pub use run::device;

use cli::Command;
use report::Reporter;
use std::ffi::OsString;
use std::sync::Mutex;

/// Why a command did not succeed.
#[derive(Debug)]
pub(crate) enum Fail {
    /// Everything was already reported (diagnostics, per-file errors); exit
    /// with this status.
    Exit(i32),
    /// A usage or I/O problem: `error: ...`, exit 2.
    Usage(String),
    /// A broken invariant inside the compiler (a panic, ptxas rejecting the
    /// PTX kdslc wrote): the internal-error message, exit 3.
    Internal(String),
    /// The kernel faulted (a deadlock, a bad access, a CUDA error) or its
    /// results disagree (`--check-sim`): `error: ...`, exit 4.
    Fault(String),
}

impl Fail {
    /// Prints the message, if any, to stderr; returns the exit status. For
    /// where no [`Reporter`] is at hand (`explain`, a panic outside a
    /// command); commands report through theirs.
    fn print(&self) -> i32 {
        Reporter::with_format(cli::MessageFormat::Human, false).fail(self)
    }
}

/// Runs `kdslc` with the process's arguments; returns the exit status.
pub fn main() -> i32 {
    install_quiet_panic_hook();
    let args: Vec<OsString> = std::env::args_os().collect();
    guarded(move || run(args))
}

/// Runs `kdslc` with these arguments (the program name first), on a large
/// stack: printing and dropping the trees of a deeply nested program
/// recurses as deep as compiling it does.
pub fn run(args: Vec<OsString>) -> i32 {
    crate::stack::with_big_stack(move || run_here(args))
}

fn run_here(args: Vec<OsString>) -> i32 {
    let args = cli::normalize_args(args);
    let json = cli::asks_for_json(&args);
    let cli = match cli::parse(args) {
        Ok(cli) => cli,
        // Help and --version go to stdout with status 0.
        Err(e) if e.exit_code() == 0 => {
            let _ = e.print();
            return 0;
        }
        // A usage error: on stderr, or as a JSON error object when the
        // command line asked for JSON.
        Err(e) if json => {
            let reporter = Reporter::with_format(cli::MessageFormat::Json, false);
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text).to_string();
            return reporter.conclude(Err(Fail::Usage(text)));
        }
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    match &cli.command {
        Command::Build(args) => {
            let mut reporter = Reporter::new(&args.common);
            let result = catching(|| build::build(args, &mut reporter));
            reporter.conclude(result)
        }
        Command::Check(args) => {
            let mut reporter = Reporter::new(&args.common);
            let result = catching(|| check::check(args, &mut reporter));
            reporter.conclude(result)
        }
        Command::Explain(args) => match explain::explain(args) {
            Ok(()) => 0,
            Err(fail) => fail.print(),
        },
        Command::Sim(args) => {
            let mut reporter = Reporter::new(&args.launch.common);
            let result = catching(|| sim::sim(args, &mut reporter));
            reporter.conclude(result)
        }
        Command::Run(args) => {
            let mut reporter = Reporter::new(&args.launch.common);
            let result = catching(|| run::run(args, &mut reporter));
            reporter.conclude(result)
        }
        // The language server runs until the client exits and returns its
        // own status (0 after a `shutdown` request, 1 without one).
        Command::Lsp => crate::lsp::run_stdio(),
    }
}

/// Runs a command; a panic inside becomes [`Fail::Internal`], so that it is
/// reported in the format the command line asked for.
fn catching(f: impl FnOnce() -> Result<(), Fail>) -> Result<(), Fail> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(Fail::Internal(panic_message(payload.as_ref()))),
    }
}

/// The message of the last panic, recorded by the hook for [`guarded`].
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Replaces Rust's panic report ("thread 'main' panicked at ...") with a
/// record of the message: [`guarded`] prints its own, in our words.
fn install_quiet_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let mut text = payload_text(info.payload());
        if let Some(loc) = info.location() {
            text.push_str(&format!(
                " at {}:{}:{}",
                loc.file(),
                loc.line(),
                loc.column()
            ));
        }
        let trace = std::backtrace::Backtrace::capture();
        if trace.status() == std::backtrace::BacktraceStatus::Captured {
            text.push_str(&format!("\nbacktrace:\n{trace}"));
        }
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(text);
        }
    }));
}

/// Runs `f`; a panic inside becomes an internal-compiler-error message and
/// exit status 3.
fn guarded(f: impl FnOnce() -> i32) -> i32 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(code) => code,
        Err(payload) => Fail::Internal(panic_message(payload.as_ref())).print(),
    }
}

/// What the panic hook recorded about the last panic, or the payload's text.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    let recorded = LAST_PANIC.lock().ok().and_then(|mut last| last.take());
    recorded.unwrap_or_else(|| payload_text(payload))
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with no message".to_string()
    }
}

pub(crate) fn ice_message(what: &str) -> String {
    let repo = env!("CARGO_PKG_REPOSITORY");
    let report = if repo.is_empty() {
        "please report it to the kdsl maintainers".to_string()
    } else {
        format!("please report it at {}/issues", repo.trim_end_matches('/'))
    };
    format!(
        "error: internal compiler error: {what}\n\
         note: this is a bug in kdslc {}, not in your program; {report}, \
         with the input file and the command line\n\
         note: set RUST_BACKTRACE=1 for a backtrace\n",
        env!("CARGO_PKG_VERSION")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_exit_status_3() {
        assert_eq!(guarded(|| 7), 7);
        let code = guarded(|| panic!("boom"));
        assert_eq!(code, 3);
    }

    #[test]
    fn ice_message_asks_for_a_report() {
        let m = ice_message("boom");
        assert!(
            m.starts_with("error: internal compiler error: boom\n"),
            "{m}"
        );
        assert!(m.contains("please report it"), "{m}");
    }
}
