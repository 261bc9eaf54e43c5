//! The command line as clap sees it, and the two rewrites of `argv` that
//! let `kdslc` take the gcc-style spellings build systems use.

use crate::launch::shape::{parse_dims, Dims};
use crate::launch::ArgSpec;
use crate::opt::Passes;
use crate::target::Target;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "kdslc",
    version,
    about = "The kdsl compiler: GPU kernels with checked mbarrier groups, to NVIDIA PTX",
    override_usage = "kdslc [build] FILE.kdsl [-o OUT] [OPTIONS]\n       \
                      kdslc check FILE...\n       \
                      kdslc explain CODE\n       \
                      kdslc lsp\n       \
                      kdslc sim FILE --grid X[,Y[,Z]] [--arg NAME=VALUE]... [OPTIONS]\n       \
                      kdslc run FILE --grid X[,Y[,Z]] [--arg NAME=VALUE]... [OPTIONS]",
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. `build` is implied when the first argument is not one
/// of these names (see [`normalize_args`]).
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile a file to PTX (the default: `kdslc FILE` means `kdslc build FILE`)
    #[command(after_help = DEPFILE_HELP)]
    Build(BuildArgs),
    /// Report the diagnostics of each file; write nothing
    Check(CheckArgs),
    /// Print the long explanation of a diagnostic code (`kdslc explain E0301`)
    Explain(ExplainArgs),
    /// Run the language server on stdin/stdout (for editors)
    Lsp,
    /// Run a kernel on the CPU in the simulator, with reports for hangs and
    /// faults
    #[command(after_help = LAUNCH_HELP)]
    Sim(SimArgs),
    /// Run a kernel on a CUDA GPU through the driver
    #[command(after_help = LAUNCH_HELP)]
    Run(RunArgs),
}

/// Every subcommand name, for [`normalize_args`]. Keep in step with
/// [`Command`] (`help` is clap's own).
pub const SUBCOMMANDS: &[&str] = &["build", "check", "explain", "lsp", "sim", "run", "help"];

/// The argument forms of `--arg`, shown under `kdslc sim/run --help`.
const LAUNCH_HELP: &str = "\
Arguments (--arg NAME=VALUE, or POSITION=VALUE counting from 0):
  scalars        a literal of the parameter's type: 1024, 0x400, -3, 2.5, 1e-3, inf, true;
                 pairs (f16x2, bf16x2) low/high: 1.5/-2
  @x.npy         a NumPy array; its dtype must match the element type
  @x.bin, @x     raw little-endian elements
  [1, 2, 3]      the elements
  zeros:N        N zeros          iota:N        0, 1, ..., N-1
  fill:N:V       N copies of V    rand:N:SEED   N seeded random elements
                 (floats uniform in [0, 1), integers over the whole type)
                 N may be a shape, outermost first: rand:512,256:3
  f32:iota:N     a type prefix: required for the pointers of a .ptx input
  tensors        an array form whose shape gives the dimensions (kdsl);
                 tmap:TYPE:ARRAY:box=B0,B1[:swizzle=128][:fill=nan] (.ptx)
  structs        a .ptx input's .b8[N] parameter (a struct by value): its
                 bytes, bytes:@FILE or bytes:[1, 2, 3], or its fields,
                 struct:f32=1.5,u32=7,f64=[1, 2] (C's layout, rest zeros)
  --const        a .kdsl kernel's constants, [KERNEL.]NAME=VALUE; for a .ptx
                 input its __constant__ memory (`kdslc sim`): --const
                 NAME=ARRAY sets the .const variable NAME (f32:[0.5, 2])

Exit status: 0 the kernel completed, 1 compile errors, 2 usage or I/O (or no
CUDA driver for `run`), 3 internal error, 4 the kernel faulted (a deadlock,
an out-of-bounds access, a barrier protocol violation, a CUDA error) or
--check-sim found a mismatch. See docs/cli.md and docs/run.md.";

/// The help for `-MD`/`-MF`, which clap cannot show in gcc's spelling.
const DEPFILE_HELP: &str = "\
Dependency files (for make and ninja):
  -MD            Also write a Make depfile: the output depends on FILE and every
                 .kdsl file it imports (written to OUT.d; only when the build succeeds)
  -MF DEPFILE    Write the depfile to DEPFILE instead of OUT.d (implies -MD)";

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The .kdsl file to compile
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Output file; `-` is stdout. Default: FILE's stem with .ptx, .cubin,
    /// .manifest.json or .h in the current directory (stdout for --emit
    /// ir|ast|tokens)
    #[arg(short = 'o', value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// What to write: ptx, cubin, manifest, header, ir, ast or tokens; or
    /// several of ptx, cubin, manifest and header from one compilation,
    /// comma-separated, each but the first as KIND=PATH (`-o` is the
    /// first's output): `--emit ptx,header=k.h -o k.ptx`
    #[arg(
        long,
        value_name = "EMIT",
        value_delimiter = ',',
        default_value = "ptx",
        value_parser = parse_emit
    )]
    pub emit: Vec<EmitSpec>,

    /// For --emit header: the header loads the PTX from PATH at run time
    /// (cuModuleLoad) instead of embedding it
    #[arg(long, value_name = "PATH")]
    pub header_ptx: Option<String>,

    /// `-MD` (see DEPFILE_HELP; clap spells it `--MD`, argv is rewritten)
    #[arg(long = "MD", hide = true)]
    pub depfile: bool,

    /// `-MF DEPFILE`
    #[arg(long = "MF", value_name = "DEPFILE", hide = true)]
    pub depfile_path: Option<PathBuf>,

    /// The ptxas to run for --emit cubin (else $PTXAS, PATH, $CUDA_HOME/bin,
    /// then where scripts/cuda-tools.sh installs it)
    #[arg(long, value_name = "PATH")]
    pub ptxas: Option<PathBuf>,

    /// Optimisation level handed to ptxas for --emit cubin (-O0 ... -O3); the
    /// PTX itself does not depend on it
    #[arg(short = 'O', value_name = "LEVEL", value_parser = ["0", "1", "2", "3"])]
    pub opt_level: Option<String>,

    /// Emit `.file`/`.loc` line information in the PTX (also `-lineinfo`),
    /// for ptxas -lineinfo, nvdisasm, profilers and compute-sanitizer
    #[arg(long)]
    pub lineinfo: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The .kdsl files to check
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub common: CommonArgs,
}

/// What `build` and `check` share: the target and how diagnostics look.
#[derive(Args, Debug)]
pub struct CommonArgs {
    /// The GPU to compile for: sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100,
    /// sm_100a or sm_120
    #[arg(long, value_name = "SM", default_value = "sm_90", value_parser = parse_target)]
    pub target: Target,

    /// How diagnostics are written: human (stderr), short (stderr, one line
    /// each, gcc style), json (stdout, one object per line)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = MessageFormat::Human)]
    pub message_format: MessageFormat,

    /// Colour in human diagnostics (auto: when stderr is a terminal and
    /// NO_COLOR is not set)
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// `-D warnings`: treat warnings as errors
    #[arg(short = 'D', value_name = "warnings", value_parser = ["warnings"])]
    pub deny: Vec<String>,

    /// Do not report the warning CODE (e.g. `-A W0001`); repeatable
    #[arg(short = 'A', value_name = "CODE")]
    pub allow: Vec<String>,

    /// The optimisation passes to run before writing PTX: all, none, or a
    /// comma-separated list of special, unroll, stream, licm (see docs/cli.md)
    #[arg(long, value_name = "LIST", default_value = "all", value_parser = Passes::parse)]
    pub passes: Passes,

    /// The value of a kernel constant, `BM=64` (every kernel with a constant
    /// BM) or `gemm.BM=64`; repeatable: each value of a constant given
    /// several times is an instantiation (see docs/language.md §2.6). For a
    /// .ptx input of `kdslc sim`: NAME=ARRAY sets the `.const` variable
    /// NAME (`__constant__` memory), `coef=f32:[0.25, 0.5]`
    #[arg(long = "const", value_name = "[KERNEL.]NAME=VALUE")]
    pub consts: Vec<String>,
}

/// The launch flags `sim` and `run` share: the input, the kernel, the
/// shapes, the arguments and the outputs (`src/launch/` reads them).
#[derive(Args, Debug)]
pub struct LaunchArgs {
    /// The .kdsl file to compile and run, or a .ptx module (such as nvcc's)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The kernel to launch; may be left out when the module has one
    #[arg(long, value_name = "NAME")]
    pub kernel: Option<String>,

    /// Blocks in the grid (a multiple of the cluster shape)
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims, required = true)]
    pub grid: Dims,

    /// Threads per block; default: the kernel's block(...) / .reqntid
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    pub block: Option<Dims>,

    /// Blocks per cluster; default: the kernel's cluster(...) /
    /// .reqnctapercluster, else none
    #[arg(long, value_name = "X[,Y[,Z]]", value_parser = parse_dims)]
    pub cluster: Option<Dims>,

    /// A kernel argument by parameter name or position (repeatable); the
    /// forms are listed below
    #[arg(long = "arg", value_name = "NAME=VALUE", value_parser = parse_arg_spec)]
    pub args: Vec<ArgSpec>,

    /// Bytes of dynamic shared memory per CTA, for a .ptx input whose
    /// kernel declares `.extern .shared` (default 0; a .kdsl kernel's comes
    /// from the compiler)
    #[arg(long, value_name = "N", value_parser = parse_shared_bytes)]
    pub shared_bytes: Option<u32>,

    /// After a run that completed, write every writable array as
    /// DIR/NAME.npy (the folder is created if needed)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// After the run, print the array argument NAME (repeatable; long
    /// arrays are summarised)
    #[arg(long, value_name = "NAME")]
    pub dump: Vec<String>,

    /// A cooperative launch (`cudaLaunchCooperativeKernel`): all CTAs of
    /// the grid co-resident, so that cooperative groups' `grid.sync()`
    /// works
    #[arg(long)]
    pub cooperative: bool,

    /// Print dumped arrays in full; without --dump, print every writable
    /// array
    #[arg(long)]
    pub dump_all: bool,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Args, Debug)]
pub struct SimArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,

    /// Thread interleaving: in-order (reproducible, the default) or
    /// random:SEED (also switches at memory operations and delays bulk
    /// copies, to expose other interleavings)
    #[arg(long, value_name = "SCHEDULE", value_parser = parse_schedule, default_value = "in-order")]
    pub schedule: Schedule,

    /// Assemble the module with ptxas first and run it only if ptxas
    /// accepts it (`--ptxas`: found as for `build --emit cubin`;
    /// `--ptxas=PATH`: that one)
    #[arg(long, value_name = "PATH", num_args = 0..=1, require_equals = true)]
    pub ptxas: Option<Option<PathBuf>>,

    /// Give up after this many simulated steps and report where each
    /// thread is ("no progress")
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u64>,

    /// Simulate N clusters (or CTAs) at once, on N threads (default: one
    /// per core; 1: one after another). The outcome is the same for every N
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,

    /// The run-time checks: all (the default), none, or a list of races,
    /// uninit, tx, barriers
    #[arg(long, value_name = "CHECKS", value_parser = crate::sim::Checks::parse, default_value = "all")]
    pub checks: crate::sim::Checks,

    /// Print executed instructions by class, blocked waits and steps
    #[arg(long)]
    pub stats: bool,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub launch: LaunchArgs,

    /// The CUDA device ordinal
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub device: usize,

    /// After the run, time N more launches with CUDA events and print the
    /// median, the minimum and the effective bandwidth
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub bench: Option<u32>,

    /// Also run the simulator on the same inputs and compare every
    /// writable array (exit 4 on a mismatch)
    #[arg(long)]
    pub check_sim: bool,

    /// Seconds to wait for one launch before calling it hung (exit 4)
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_timeout)]
    pub timeout: f64,
}

/// `--schedule`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    InOrder,
    Random(u64),
}

fn parse_schedule(s: &str) -> Result<Schedule, String> {
    if s == "in-order" {
        return Ok(Schedule::InOrder);
    }
    match s.strip_prefix("random:").map(|seed| seed.parse::<u64>()) {
        Some(Ok(seed)) => Ok(Schedule::Random(seed)),
        _ => {
            Err("the schedules are `in-order` and `random:SEED` (SEED a whole number)".to_string())
        }
    }
}

fn parse_arg_spec(s: &str) -> Result<ArgSpec, String> {
    s.parse()
}

/// `--shared-bytes`: a byte count no larger than any target allows one CTA
/// (each target's own maximum is checked when the kernel is launched).
fn parse_shared_bytes(s: &str) -> Result<u32, String> {
    let most = Target::ALL
        .into_iter()
        .map(Target::max_shared_per_block)
        .max()
        .unwrap_or(0);
    match s.parse::<u64>() {
        Ok(n) if n <= most => u32::try_from(n).map_err(|e| e.to_string()),
        Ok(_) => Err(format!(
            "at most {most} bytes: no target gives one CTA more shared memory"
        )),
        Err(_) => Err("a whole number of bytes".to_string()),
    }
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() => Ok(t),
        _ => Err("a number of seconds greater than 0".to_string()),
    }
}

#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A diagnostic code such as E0301
    #[arg(value_name = "CODE")]
    pub code: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Ptx,
    Cubin,
    /// The launch manifest, JSON (docs/manifest.md)
    Manifest,
    /// A C/C++ header with the PTX and a launcher per kernel
    /// (docs/host-code.md)
    Header,
    Ir,
    Ast,
    Tokens,
}

impl Emit {
    pub const ALL: [Emit; 7] = [
        Emit::Ptx,
        Emit::Cubin,
        Emit::Manifest,
        Emit::Header,
        Emit::Ir,
        Emit::Ast,
        Emit::Tokens,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Emit::Ptx => "ptx",
            Emit::Cubin => "cubin",
            Emit::Manifest => "manifest",
            Emit::Header => "header",
            Emit::Ir => "ir",
            Emit::Ast => "ast",
            Emit::Tokens => "tokens",
        }
    }

    /// Whether one compilation can write it beside others (a build
    /// output, not a debugging view).
    pub fn is_output(self) -> bool {
        matches!(
            self,
            Emit::Ptx | Emit::Cubin | Emit::Manifest | Emit::Header
        )
    }
}

/// One kind of `--emit`, with the path `KIND=PATH` gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmitSpec {
    pub kind: Emit,
    pub path: Option<PathBuf>,
}

fn parse_emit(s: &str) -> Result<EmitSpec, String> {
    let (name, path) = match s.split_once('=') {
        Some((n, "")) => {
            return Err(format!("`{n}=` needs a path after the `=`"));
        }
        Some((n, p)) => (n, Some(PathBuf::from(p))),
        None => (s, None),
    };
    let kind = Emit::ALL
        .into_iter()
        .find(|e| e.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = Emit::ALL.iter().map(|e| e.name()).collect();
            format!("unknown kind `{name}`; the kinds are {}", names.join(", "))
        })?;
    if path.is_some() && !kind.is_output() {
        return Err(format!(
            "`--emit {name}` goes to `-o` or stdout and takes no `={}`",
            path.as_deref()
                .map_or(String::new(), |p| p.display().to_string())
        ));
    }
    Ok(EmitSpec { kind, path })
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MessageFormat {
    Human,
    Short,
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

fn parse_target(s: &str) -> Result<Target, String> {
    Target::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
        format!("unknown target; the targets are {}", names.join(", "))
    })
}

/// Parses `argv` (already [`normalize_args`]ed).
pub fn parse(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    let matches = command().try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

/// The clap command, with the build flags listed under the top-level help:
/// `kdslc FILE` builds, so `kdslc --help` must show how.
pub fn command() -> clap::Command {
    Cli::command().after_help(build_flags_help())
}

/// The flags of `build` as `kdslc --help` lists them, generated from
/// [`BuildArgs`] so that the two cannot drift apart.
fn build_flags_help() -> String {
    let build = BuildArgs::augment_args(clap::Command::new("build"));
    let mut rows: Vec<(String, String)> = Vec::new();
    for arg in build.get_arguments() {
        if arg.is_hide_set() || arg.is_positional() {
            continue;
        }
        let mut name = match (arg.get_short(), arg.get_long()) {
            (Some(s), _) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => continue,
        };
        if let Some(value) = arg.get_value_names().and_then(|v| v.first()) {
            if arg.get_action().takes_values() {
                name.push_str(&format!(" <{value}>"));
            }
        }
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let mut help = first_sentence(&help).to_string();
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect();
        if !values.is_empty() && !help.contains(values.join(", ").as_str()) {
            help.push_str(&format!(" ({})", values.join(", ")));
        }
        rows.push((name, help));
    }
    rows.push(("-MD".into(), "Also write a Make depfile (OUT.d)".into()));
    rows.push((
        "-MF <DEPFILE>".into(),
        "Write the depfile to DEPFILE".into(),
    ));
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut out =
        String::from("Build options (`kdslc FILE` builds; `kdslc build --help` describes each):\n");
    for (name, help) in rows {
        out.push_str(&format!("  {name:width$}  {help}\n"));
    }
    out.trim_end().to_string()
}

/// The text up to the first full stop that ends a sentence (one followed by
/// a space and a capital letter); `kdslc build --help` has the rest.
fn first_sentence(text: &str) -> &str {
    let bytes = text.as_bytes();
    let end = text
        .match_indices(". ")
        .map(|(i, _)| i)
        .find(|&i| bytes.get(i + 2).is_some_and(u8::is_ascii_uppercase))
        .unwrap_or(text.len());
    text.get(..end).unwrap_or(text).trim_end_matches('.')
}

/// Does the command line ask for `--message-format json`? Looked up before
/// clap parses it, so that even a usage error can be reported as JSON.
pub fn asks_for_json(args: &[OsString]) -> bool {
    let mut json = false;
    let mut args = args.iter().map(|a| a.to_str().unwrap_or(""));
    while let Some(a) = args.next() {
        match a {
            "--" => break,
            "--message-format" => json = args.next() == Some("json"),
            _ => {
                if let Some(v) = a.strip_prefix("--message-format=") {
                    json = v == "json";
                }
            }
        }
    }
    json
}

/// Rewrites `argv` (program name first) into what clap parses:
/// - the gcc spellings `-MD`, `-MF FILE` and `-MFFILE` become `--MD`,
///   `--MF FILE` and `--MF=FILE` (clap's short options are one letter);
/// - `build` is inserted when the first argument is not a subcommand or a
///   help/version flag, so `kdslc -o out.ptx in.kdsl` and `kdslc in.kdsl`
///   build.
///
/// Arguments after `--` are left alone.
pub fn normalize_args(args: Vec<OsString>) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len() + 1);
    let mut rest = args.into_iter();
    if let Some(program) = rest.next() {
        out.push(program);
    }
    let rest: Vec<OsString> = rest.collect();
    if let Some(first) = rest.first() {
        let first = first.to_str().unwrap_or("");
        let keep =
            SUBCOMMANDS.contains(&first) || matches!(first, "-h" | "--help" | "-V" | "--version");
        if !keep {
            out.push(OsString::from("build"));
        }
    }
    let mut after_dashes = false;
    for arg in rest {
        if after_dashes {
            out.push(arg);
            continue;
        }
        match arg.to_str() {
            Some("--") => {
                after_dashes = true;
                out.push(arg);
            }
            Some("-MD") => out.push("--MD".into()),
            // nvcc's spelling.
            Some("-lineinfo") => out.push("--lineinfo".into()),
            Some("-MF") => out.push("--MF".into()),
            Some(s) if s.starts_with("-MF") => {
                out.push(format!("--MF={}", s.get(3..).unwrap_or("")).into())
            }
            _ => out.push(arg),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        let args = args.iter().map(OsString::from).collect();
        normalize_args(args)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn build_is_implied() {
        assert_eq!(norm(&["kdslc", "a.kdsl"]), ["kdslc", "build", "a.kdsl"]);
        assert_eq!(
            norm(&["kdslc", "-o", "x", "a.kdsl"]),
            ["kdslc", "build", "-o", "x", "a.kdsl"]
        );
        assert_eq!(
            norm(&["kdslc", "check", "a.kdsl"]),
            ["kdslc", "check", "a.kdsl"]
        );
        assert_eq!(norm(&["kdslc", "--help"]), ["kdslc", "--help"]);
        assert_eq!(norm(&["kdslc"]), ["kdslc"]);
    }

    #[test]
    fn gcc_depfile_flags() {
        assert_eq!(
            norm(&["kdslc", "a.kdsl", "-MD", "-MF", "d", "-MFe", "--", "-MD"]),
            ["kdslc", "build", "a.kdsl", "--MD", "--MF", "d", "--MF=e", "--", "-MD"]
        );
    }

    #[test]
    fn clap_accepts_the_spec_command_lines() {
        let parse = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            parse(normalize_args(args))
        };
        let cli = parse(&[
            "kdslc", "-o", "out.ptx", "in.kdsl", "-O2", "-D", "warnings", "-A", "W0001",
        ]);
        let Ok(Cli {
            command: Command::Build(b),
        }) = cli
        else {
            panic!("did not parse: {cli:?}");
        };
        assert_eq!(b.file, PathBuf::from("in.kdsl"));
        assert_eq!(b.output, Some(PathBuf::from("out.ptx")));
        assert_eq!(b.opt_level.as_deref(), Some("2"));
        assert_eq!(b.common.deny, ["warnings"]);
        assert_eq!(b.common.allow, ["W0001"]);
        assert_eq!(b.common.target, Target::Sm90);
        assert!(parse(&["kdslc", "in.kdsl", "--target", "sm_80", "--emit", "ir", "-MD"]).is_ok());
        assert!(parse(&["kdslc", "in.kdsl", "--target", "sm_70"]).is_err());
        assert!(parse(&["kdslc", "in.kdsl", "-D", "nonsense"]).is_err());
        assert!(parse(&["kdslc", "check"]).is_err());
        assert!(parse(&["kdslc", "explain", "E0301"]).is_ok());
    }

    #[test]
    fn top_level_help_lists_the_build_flags() {
        let help = command().render_long_help().to_string();
        for flag in [
            "-o <OUT>",
            "--target <SM>",
            "--emit <EMIT>",
            "-O <LEVEL>",
            "--ptxas <PATH>",
            "-MD",
            "-MF <DEPFILE>",
            "--message-format <FORMAT>",
            "-D <warnings>",
            "-A <CODE>",
        ] {
            assert!(help.contains(flag), "{flag} missing from:\n{help}");
        }
    }

    #[test]
    fn json_is_spotted_before_parsing() {
        let v = |args: &[&str]| asks_for_json(&args.iter().map(OsString::from).collect::<Vec<_>>());
        assert!(v(&["kdslc", "x.kdsl", "--message-format", "json"]));
        assert!(v(&["kdslc", "--message-format=json", "--bogus"]));
        assert!(!v(&[
            "kdslc",
            "--message-format=json",
            "--message-format",
            "short"
        ]));
        assert!(!v(&["kdslc", "--", "--message-format=json"]));
        assert!(!v(&["kdslc", "x.kdsl"]));
    }

    #[test]
    fn sim_and_run_share_the_launch_flags() {
        let parse = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            Cli::try_parse_from(normalize_args(args))
        };
        let cli = parse(&[
            "kdslc",
            "sim",
            "k.kdsl",
            "--grid",
            "8,2",
            "--block",
            "128",
            "--cluster",
            "2",
            "--arg",
            "n=1024",
            "--arg",
            "1=f32:iota:8",
            "--out",
            "o",
            "--dump",
            "y",
            "--dump-all",
            "--schedule",
            "random:7",
            "--max-steps",
            "100",
            "--jobs",
            "3",
            "--stats",
            "--target",
            "sm_90a",
            "--message-format",
            "json",
        ]);
        let Ok(Cli {
            command: Command::Sim(s),
        }) = cli
        else {
            panic!("did not parse: {cli:?}");
        };
        assert_eq!(s.launch.grid, [8, 2, 1]);
        assert_eq!(s.launch.block, Some([128, 1, 1]));
        assert_eq!(s.launch.cluster, Some([2, 1, 1]));
        assert_eq!(s.launch.args.len(), 2);
        assert_eq!(s.launch.args[1].key, crate::launch::ArgKey::Position(1));
        assert_eq!(s.schedule, Schedule::Random(7));
        assert_eq!(s.max_steps, Some(100));
        assert_eq!(s.jobs, Some(3));
        assert!(s.stats && s.launch.dump_all);
        assert_eq!(s.launch.common.target, Target::Sm90a);
        assert_eq!(s.launch.common.message_format, MessageFormat::Json);

        let cli = parse(&[
            "kdslc",
            "run",
            "k.ptx",
            "--kernel",
            "k",
            "--grid",
            "4",
            "--device",
            "1",
            "--bench",
            "20",
            "--check-sim",
            "--timeout",
            "2.5",
        ]);
        let Ok(Cli {
            command: Command::Run(r),
        }) = cli
        else {
            panic!("did not parse: {cli:?}");
        };
        assert_eq!(
            (r.device, r.bench, r.check_sim, r.timeout),
            (1, Some(20), true, 2.5)
        );
        assert_eq!(r.launch.kernel.as_deref(), Some("k"));
        assert_eq!(
            parse(&["kdslc", "sim", "k.kdsl"]).unwrap_err().kind(),
            clap::error::ErrorKind::MissingRequiredArgument
        );
        for bad in [
            &["kdslc", "sim", "k.kdsl", "--grid", "0"][..],
            &["kdslc", "sim", "k.kdsl", "--grid", "4", "--arg", "n"],
            &[
                "kdslc",
                "sim",
                "k.kdsl",
                "--grid",
                "4",
                "--schedule",
                "random",
            ],
            &["kdslc", "run", "k.kdsl", "--grid", "4", "--bench", "0"],
            &["kdslc", "run", "k.kdsl", "--grid", "4", "--timeout", "0"],
            &[
                "kdslc",
                "run",
                "k.kdsl",
                "--grid",
                "4",
                "--schedule",
                "in-order",
            ],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
