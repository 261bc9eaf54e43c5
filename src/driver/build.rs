//! `kdslc build`: compile one file and write what `--emit` asks for.
//!
//! Usage problems (a JSON stream and `-o -` both on stdout, a depfile for
//! stdout, no ptxas for `--emit cubin`) are found before compiling, so a
//! build that cannot write its result does not spend time or print
//! diagnostics first. Nothing is written unless the build succeeds.

use super::cli::{BuildArgs, CommonArgs, Emit, MessageFormat};
use super::output::{self, Dest};
use super::report::Reporter;
use super::{ptxas, Fail};
use crate::diagnostics::Diagnostic;
use crate::input::ReadError;
use crate::source::{SourceFile, SourceMap};
use crate::{Compilation, Options};
use std::path::{Path, PathBuf};

pub fn build(args: &BuildArgs, reporter: &mut Reporter) -> Result<(), Fail> {
    let plan = plan(args)?;
    let primary = plan.primary();
    let json = args.common.message_format == MessageFormat::Json;
    if json && plan.dests().any(|d| *d == Dest::Stdout) {
        return Err(Fail::Usage(
            "`--message-format json` writes diagnostics to stdout, so the output needs a file: give `-o FILE`"
                .to_string(),
        ));
    }
    if args.header_ptx.is_some() && !plan.has(Emit::Header) {
        return Err(Fail::Usage(
            "`--header-ptx` says where a header finds the PTX, so it needs `--emit header`"
                .to_string(),
        ));
    }
    let depfile = depfile_path(args, &plan)?;
    let outputs = Outputs::new(&plan, depfile.as_ref());
    outputs.refuse_the_input(&args.file)?;
    let ptxas = match plan.has(Emit::Cubin) {
        true => Some(ptxas::find(args.ptxas.as_deref())?),
        false => None,
    };
    // `--emit ir` shows the IR after the passes, so it runs them (and the
    // writer, whose output is dropped); with `--passes none`, the IR as the
    // checker built it (loops over constant lists still loops, which the
    // optimiser would unroll first); the AST needs neither.
    let checked_ir = primary == Emit::Ir && args.common.passes == crate::opt::Passes::none();
    let mut opts = options(&args.common, primary == Emit::Ast || checked_ir)?;
    opts.lineinfo = args.lineinfo;
    opts.drop_syntax = primary != Emit::Ast;

    // The depfile is written (to its temporary) before the outputs are put
    // in place (`--emit cubin` is, by `emit`), and put in place after
    // them: a depfile that cannot be written, or a name it cannot hold,
    // leaves the old outputs as they were.
    let stage_depfile = |imports: &[PathBuf]| -> Result<Option<output::Staged>, Fail> {
        let Some((path, _)) = &depfile else {
            return Ok(None);
        };
        let targets: Vec<&Path> = plan.files().collect();
        let text = output::depfile(&targets, &args.file, imports)?;
        let mut staged = output::Staged::new(path)?;
        staged.write_all(text.as_bytes())?;
        Ok(Some(staged))
    };
    if primary == Emit::Tokens {
        let bytes = tokens(&args.file, &opts, reporter)?.into_bytes();
        let depfile = stage_depfile(&[])?;
        output::write(plan.first_dest(), &bytes)?;
        return depfile.map_or(Ok(()), output::Staged::commit);
    }
    let mut c = compile(&args.file, &opts, reporter)?;
    outputs.refuse_imports(&c.imports)?;
    let depfile = stage_depfile(&c.imports)?;
    // Every output is made (in memory, or a staged temporary) before any
    // is put in place, so that a failure leaves all the old ones as they
    // were: the PTX last, since it is moved out of the compilation, and
    // `--emit cubin`, which ptxas puts in place itself, after the rest.
    let mut order: Vec<&(Emit, Dest)> = plan.outputs.iter().collect();
    order.sort_by_key(|(kind, _)| match kind {
        Emit::Cubin => 1,
        Emit::Ptx => 2,
        _ => 0,
    });
    let mut made = Vec::new();
    for (kind, dest) in order {
        let out = Emitting {
            dest,
            ptxas: ptxas.as_deref(),
            opts: &opts,
        };
        let bytes = emit(args, *kind, &mut c, &out, reporter)?;
        // `--emit cubin` to a file has already been moved into place by ptxas.
        if *kind == Emit::Cubin && *dest != Dest::Stdout {
            continue;
        }
        made.push(match dest {
            Dest::Stdout => Made::Stdout(bytes),
            Dest::File(path) => {
                let mut staged = output::Staged::new(path)?;
                staged.write_all(&bytes)?;
                Made::File(staged)
            }
        });
    }
    for m in made {
        match m {
            Made::Stdout(bytes) => output::write_stdout(&bytes)?,
            Made::File(staged) => staged.commit()?,
        }
    }
    depfile.map_or(Ok(()), output::Staged::commit)
}

/// An output made and not yet put in place.
enum Made {
    Stdout(Vec<u8>),
    File(output::Staged),
}

/// What a build writes where: each `--emit` kind with its destination,
/// in the order given.
struct Plan {
    outputs: Vec<(Emit, Dest)>,
}

impl Plan {
    /// The first kind: what decides how the compiler runs (`--emit ir`
    /// and `ast` alone).
    fn primary(&self) -> Emit {
        self.outputs.first().map_or(Emit::Ptx, |(k, _)| *k)
    }

    fn first_dest(&self) -> &Dest {
        self.outputs.first().map_or(&Dest::Stdout, |(_, d)| d)
    }

    fn has(&self, kind: Emit) -> bool {
        self.outputs.iter().any(|(k, _)| *k == kind)
    }

    fn dests(&self) -> impl Iterator<Item = &Dest> {
        self.outputs.iter().map(|(_, d)| d)
    }

    /// The outputs that are files.
    fn files(&self) -> impl Iterator<Item = &Path> {
        self.dests().filter_map(|d| match d {
            Dest::File(p) => Some(p.as_path()),
            Dest::Stdout => None,
        })
    }
}

/// Each `--emit` kind's destination: its `=PATH`; for the first kind
/// without one, `-o`; else its default name ([`default_name`]). Several
/// kinds must all be build outputs (not `ir`, `ast`, `tokens`), each
/// once, each to a file of its own and at most one to stdout.
fn plan(args: &BuildArgs) -> Result<Plan, Fail> {
    let specs = &args.emit;
    let several = specs.len() > 1;
    if several {
        if let Some(s) = specs.iter().find(|s| !s.kind.is_output()) {
            return Err(Fail::Usage(format!(
                "`--emit {}` is a view for debugging and cannot be written beside other kinds; \
                 the kinds one compilation can write together are ptx, cubin, manifest and header",
                s.kind.name()
            )));
        }
    }
    let mut outputs: Vec<(Emit, Dest)> = Vec::new();
    let mut o_used = false;
    for s in specs {
        if outputs.iter().any(|(k, _)| *k == s.kind) {
            return Err(Fail::Usage(format!(
                "`--emit` names `{}` twice",
                s.kind.name()
            )));
        }
        let dest = match (&s.path, &args.output) {
            (Some(p), _) => Dest::from_arg(p),
            (None, Some(o)) if !o_used => {
                o_used = true;
                Dest::from_arg(o)
            }
            (None, Some(_)) => {
                return Err(Fail::Usage(format!(
                    "`-o` is the output of the first `--emit` kind without a path; give `{kind}` its own: `--emit ...,{kind}=PATH`",
                    kind = s.kind.name()
                )));
            }
            (None, None) => default_name(args, s.kind),
        };
        outputs.push((s.kind, dest));
    }
    if let (Some(o), false) = (&args.output, o_used) {
        return Err(Fail::Usage(format!(
            "`-o {}` names no output: every `--emit` kind has its own `=PATH`",
            o.display()
        )));
    }
    if outputs.iter().filter(|(_, d)| *d == Dest::Stdout).count() > 1 {
        return Err(Fail::Usage(
            "only one `--emit` kind can go to stdout (`-`)".to_string(),
        ));
    }
    for (i, (ka, a)) in outputs.iter().enumerate() {
        for (kb, b) in outputs.iter().skip(i + 1) {
            if let (Dest::File(pa), Dest::File(pb)) = (a, b) {
                if same_file(pa, pb) {
                    return Err(Fail::Usage(format!(
                        "`--emit {}` and `--emit {}` would both write `{}`; give each a path of its own",
                        ka.name(),
                        kb.name(),
                        pb.display()
                    )));
                }
            }
        }
    }
    Ok(Plan { outputs })
}

/// The files a build writes, which must be none of the files it reads
/// (compared as files, not as spellings: see [`same_file`]).
struct Outputs<'a> {
    outputs: Vec<&'a Path>,
    /// The depfile and the flag that named it (`-MF`, or `-MD` for `OUT.d`).
    depfile: Option<(&'a Path, &'static str)>,
}

impl<'a> Outputs<'a> {
    fn new(plan: &'a Plan, depfile: Option<&'a (PathBuf, &'static str)>) -> Outputs<'a> {
        Outputs {
            outputs: plan.files().collect(),
            depfile: depfile.map(|(p, flag)| (p.as_path(), *flag)),
        }
    }

    /// `-o k.kdsl`, `-MF k.kdsl` or `-MF` naming the `-o` output would
    /// replace one file with another: refused before compiling.
    fn refuse_the_input(&self, input: &Path) -> Result<(), Fail> {
        if let Some(out) = self.outputs.iter().find(|o| same_file(input, o)) {
            return Err(Fail::Usage(format!(
                "the output `{}` is the input file; give another `-o`",
                out.display()
            )));
        }
        if let Some((dep, flag)) = self.depfile {
            if same_file(input, dep) {
                return Err(Fail::Usage(format!(
                    "the depfile `{}` (from {flag}) is the input file; give another {}",
                    dep.display(),
                    other_depfile(flag)
                )));
            }
            if let Some(out) = self.outputs.iter().find(|o| same_file(o, dep)) {
                return Err(Fail::Usage(format!(
                    "the depfile `{}` (from {flag}) is the output `{}`; give another {}",
                    dep.display(),
                    out.display(),
                    other_depfile(flag)
                )));
            }
        }
        Ok(())
    }

    /// Neither output may be a file the program imports (known once it is
    /// compiled, before anything is written).
    fn refuse_imports(&self, imports: &[PathBuf]) -> Result<(), Fail> {
        for import in imports {
            if let Some(out) = self.outputs.iter().find(|o| same_file(import, o)) {
                return Err(Fail::Usage(format!(
                    "the output `{}` is `{}`, a file the program imports; give another `-o`",
                    out.display(),
                    import.display()
                )));
            }
            if let Some((dep, flag)) = self.depfile.filter(|(d, _)| same_file(import, d)) {
                return Err(Fail::Usage(format!(
                    "the depfile `{}` (from {flag}) is `{}`, a file the program imports; give another {}",
                    dep.display(),
                    import.display(),
                    other_depfile(flag)
                )));
            }
        }
        Ok(())
    }
}

/// How to name another depfile than the one `flag` gave.
fn other_depfile(flag: &str) -> &'static str {
    if flag == "-MF" {
        "-MF"
    } else {
        "`-MF DEPFILE`"
    }
}

/// Whether two paths name one file: for existing regular files, the same
/// file on the same device (through symbolic links, hard links and any
/// spelling: `./a.kdsl`, `dir/../a.kdsl`); for paths where nothing is yet,
/// the same name in the same folder. A device, FIFO or socket is never the
/// same as anything here: `-o /dev/null -MF /dev/null` writes nothing
/// anyone reads, and inputs are regular files.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    use std::io::ErrorKind::NotFound;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(ma), Ok(mb)) => ma.is_file() && mb.is_file() && same_inode(a, &ma, b, &mb),
        (Err(ea), Err(eb)) if ea.kind() == NotFound && eb.kind() == NotFound => {
            match (where_it_would_be(a), where_it_would_be(b)) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            }
        }
        _ => false,
    }
}

#[cfg(unix)]
fn same_inode(_: &Path, ma: &std::fs::Metadata, _: &Path, mb: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (ma.dev(), ma.ino()) == (mb.dev(), mb.ino())
}

#[cfg(not(unix))]
fn same_inode(a: &Path, _: &std::fs::Metadata, b: &Path, _: &std::fs::Metadata) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// The file a path that does not exist would be created as: its folder,
/// resolved, and its name.
fn where_it_would_be(p: &Path) -> Option<PathBuf> {
    let name = p.file_name()?;
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(dir.canonicalize().ok()?.join(name))
}

/// Where a kind goes without `-o` or `=PATH`: the input's stem with
/// `.ptx`, `.cubin`, `.manifest.json` or `.h` in the current folder, or
/// stdout for the debugging emits.
fn default_name(args: &BuildArgs, kind: Emit) -> Dest {
    let ext = match kind {
        Emit::Ptx => "ptx",
        Emit::Cubin => "cubin",
        Emit::Manifest => "manifest.json",
        Emit::Header => "h",
        Emit::Ir | Emit::Ast | Emit::Tokens => return Dest::Stdout,
    };
    // Appended, not `with_extension`: the stem of `a.b.kdsl` is `a.b`.
    let mut name = args
        .file
        .file_stem()
        .map_or_else(|| "out".into(), |s| s.to_os_string());
    name.push(".");
    name.push(ext);
    Dest::File(PathBuf::from(name))
}

/// `-MF PATH`, or `OUT.d` for `-MD` (with the flag that named it); `None`
/// when no depfile is wanted.
fn depfile_path(args: &BuildArgs, plan: &Plan) -> Result<Option<(PathBuf, &'static str)>, Fail> {
    if !args.depfile && args.depfile_path.is_none() {
        return Ok(None);
    }
    let all_files = plan.dests().all(|d| *d != Dest::Stdout);
    let (Dest::File(out), true) = (plan.first_dest(), all_files) else {
        return Err(Fail::Usage(
            "a depfile (-MD/-MF) names the output file as its target, so it needs `-o FILE`, not stdout".to_string(),
        ));
    };
    if let Some(p) = &args.depfile_path {
        refuse_a_folder(p, "-MF")?;
        return Ok(Some((p.clone(), "-MF")));
    }
    // `-o /dev/null -MD` must not write `/dev/null.d`.
    if std::fs::metadata(out).is_ok_and(|m| !m.is_file()) {
        return Err(Fail::Usage(format!(
            "`{}` is not a regular file, so -MD has no `OUT.d` to write; give `-MF DEPFILE`",
            out.display()
        )));
    }
    let mut p = out.clone().into_os_string();
    p.push(".d");
    let p = PathBuf::from(p);
    refuse_a_folder(&p, "-MD")?;
    Ok(Some((p, "-MD")))
}

/// A depfile path that names a folder: refused before anything is
/// compiled or written (otherwise the build would write its output and then
/// fail on the depfile, leaving the two out of step).
fn refuse_a_folder(depfile: &Path, flag: &str) -> Result<(), Fail> {
    if depfile.is_dir() {
        return Err(Fail::Usage(format!(
            "the depfile `{}` (from {flag}) is a directory; give a file path with -MF",
            depfile.display()
        )));
    }
    Ok(())
}

pub fn options(common: &CommonArgs, check_only: bool) -> Result<Options, Fail> {
    let mut allow = Vec::new();
    for code in &common.allow {
        let Some(info) = crate::diagnostics::catalog::lookup(code) else {
            return Err(Fail::Usage(format!(
                "no diagnostic code `{code}` (in `-A {code}`); see `docs/diagnostics.md` for the list"
            )));
        };
        if info.severity != crate::diagnostics::Severity::Warning {
            return Err(Fail::Usage(format!(
                "`-A` silences warnings only, and `{}` is an error",
                info.code
            )));
        }
        allow.push(info.code.to_string());
    }
    Ok(Options {
        target: common.target,
        deny_warnings: !common.deny.is_empty(),
        allow,
        check_only,
        lineinfo: false,
        drop_syntax: false,
        passes: common.passes.clone(),
        consts: kernel_consts(&common.consts)?,
        entries: Vec::new(),
    })
}

/// The `--const` flags of a `.kdsl` input: its kernels' constants, each
/// `[KERNEL.]NAME=VALUE` (a `.ptx` input's are `__constant__` memory,
/// read by `launch::consts` instead).
fn kernel_consts(flags: &[String]) -> Result<Vec<crate::check::instances::ConstArg>, Fail> {
    flags
        .iter()
        .map(|f| {
            f.parse().map_err(|e| {
                Fail::Usage(format!(
                    "invalid value '{f}' for '--const [KERNEL.]NAME=VALUE': {e}"
                ))
            })
        })
        .collect()
}

/// Compiles and reports; `Err` when the input cannot be read (exit 2) or the
/// program has errors (exit 1, already reported).
pub fn compile(file: &Path, opts: &Options, reporter: &mut Reporter) -> Result<Compilation, Fail> {
    let c = crate::compile(file, opts).map_err(|e| cannot_read(file, &e))?;
    if let Some(usage) = c.usage_error {
        return Err(Fail::Usage(usage));
    }
    reporter.report(&c.sources, &c.diagnostics);
    outcome(c, opts)
}

/// Exit 1 for a program with errors (already reported); an internal error
/// (exit 3) when the compiler broke its own invariants on a program
/// without any, such as the PTX writer failing on a checked module.
fn outcome(c: Compilation, opts: &Options) -> Result<Compilation, Fail> {
    if c.failed(opts) {
        return Err(Fail::Exit(1));
    }
    if let Some(e) = &c.internal_error {
        return Err(Fail::Internal(e.clone()));
    }
    Ok(c)
}

pub fn cannot_read(file: &Path, e: &ReadError) -> Fail {
    Fail::Usage(format!("cannot read `{}`: {e}", file.display()))
}

/// The bytes to write for `--emit ptx|ir|ast`, or for `--emit cubin` to
/// stdout; `--emit cubin` to a file is moved into place here and gives no
/// bytes.
/// Where `emit` writes, and with what.
struct Emitting<'a> {
    dest: &'a Dest,
    /// The ptxas to run for `--emit cubin`.
    ptxas: Option<&'a Path>,
    /// `-A` and `-D warnings`, for ptxas's advisories.
    opts: &'a Options,
}

fn emit(
    args: &BuildArgs,
    kind: Emit,
    c: &mut Compilation,
    out: &Emitting<'_>,
    reporter: &mut Reporter,
) -> Result<Vec<u8>, Fail> {
    let (dest, ptxas, opts) = (out.dest, out.ptxas, out.opts);
    let missing = |what: &str| {
        Fail::Internal(format!(
            "the compiler reported no errors but produced no {what}"
        ))
    };
    match kind {
        // Moved out, not copied: the PTX of a large file is tens of MiB.
        Emit::Ptx => c
            .ptx
            .take()
            .map(String::into_bytes)
            .ok_or_else(|| missing("PTX")),
        Emit::Cubin => {
            let ptx = c.ptx.as_deref().ok_or_else(|| missing("PTX"))?;
            let ptxas = ptxas.ok_or_else(|| {
                Fail::Internal("no ptxas was looked up for --emit cubin".to_string())
            })?;
            let out = match dest {
                Dest::File(p) => Some(p.as_path()),
                Dest::Stdout => None,
            };
            let assembly = ptxas::assemble(
                ptxas,
                ptx,
                Some(args.common.target.name()),
                args.opt_level.as_deref(),
                out,
            )?;
            // ptxas's advisories, at the kdsl spans of the lines they
            // name: a program error (exit 1) when one is an error, the
            // cubin left where it was.
            let module = c.module.as_ref();
            let note = |entry: &str| crate::check::instances::entry_note(module?, entry);
            let found =
                crate::ptx::advice::diagnostics_in(&assembly.log, ptx, &c.ptx_line_spans, &note);
            let found = crate::pipeline::finish(found, opts);
            reporter.report(&c.sources, &found);
            let errors = found.iter().any(Diagnostic::is_error);
            if assembly.failed.is_some() {
                return Err(if errors {
                    Fail::Exit(1)
                } else {
                    assembly.rejection(ptxas)
                });
            }
            if errors {
                return Err(Fail::Exit(1));
            }
            Ok(assembly.finish()?.unwrap_or_default())
        }
        Emit::Manifest => {
            let ptx = c.ptx.as_deref().ok_or_else(|| missing("PTX"))?;
            let module = c.module.as_ref().ok_or_else(|| missing("IR"))?;
            crate::manifest::of_module(module, ptx, args.common.target)
                .and_then(|m| crate::manifest::to_json(&m))
                .map(String::into_bytes)
                .map_err(|e| Fail::Internal(format!("--emit manifest: {e}")))
        }
        Emit::Header => {
            let ptx = c.ptx.as_deref().ok_or_else(|| missing("PTX"))?;
            let module = c.module.as_ref().ok_or_else(|| missing("IR"))?;
            let m = crate::manifest::of_module(module, ptx, args.common.target)
                .map_err(|e| Fail::Internal(format!("--emit header: {e}")))?;
            let stem = args
                .file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let source_name = args
                .file
                .file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = crate::header::names::module(&stem);
            let input = crate::header::Input {
                manifest: &m,
                source_name: &source_name,
                module: &name,
                ptx: match &args.header_ptx {
                    Some(path) => crate::header::Ptx::Path(path),
                    None => crate::header::Ptx::Embed(ptx),
                },
            };
            crate::header::write(&input)
                .map(String::into_bytes)
                .map_err(|e| Fail::Internal(format!("--emit header: {e}")))
        }
        Emit::Ir => c
            .module
            .as_ref()
            .map(|m| crate::ir::print::print(m).into_bytes())
            .ok_or_else(|| missing("IR")),
        Emit::Ast => {
            let mut text = String::new();
            for (id, file) in &c.files {
                let name = c.sources.get(*id).map_or("?", |f| f.name.as_str());
                text.push_str(&format!("// {name}\n{}\n", crate::syntax::dump::dump(file)));
            }
            Ok(text.into_bytes())
        }
        // Handled by `tokens`, which does not compile.
        Emit::Tokens => Err(Fail::Internal(
            "--emit tokens reached the compiler".to_string(),
        )),
    }
}

/// `--emit tokens`: the lexer's view of the file, `line:col  token` per
/// token (comments and whitespace are not tokens). Only the lexer runs; its
/// diagnostics are reported as usual, and any error means no output.
fn tokens(file: &Path, opts: &Options, reporter: &mut Reporter) -> Result<String, Fail> {
    let decoded = crate::input::read_source(file).map_err(|e| cannot_read(file, &e))?;
    let mut sources = SourceMap::new();
    let id = sources.add(SourceFile::new(
        file.display().to_string(),
        Some(file.to_path_buf()),
        decoded.text,
    ));
    let Some(source) = sources.get(id) else {
        return Err(Fail::Internal(
            "the source map lost the file just added".to_string(),
        ));
    };
    let (toks, mut diags) = match decoded.bad_utf8 {
        Some(bad) => (Vec::new(), vec![bad.into_diagnostic(id)]),
        None => crate::syntax::tokens(id, &source.text),
    };
    // What `compile` does with `-A` and `-D warnings`, for the lexer alone.
    diags.retain(|d| d.is_error() || !opts.allow.iter().any(|a| a == d.code));
    if opts.deny_warnings {
        for d in &mut diags {
            d.severity = crate::diagnostics::Severity::Error;
        }
    }
    reporter.report(&sources, &diags);
    if diags.iter().any(Diagnostic::is_error) {
        return Err(Fail::Exit(1));
    }
    let mut out = String::new();
    for (span, tok) in toks {
        let (line, col) = source.line_col(span.start as usize);
        out.push_str(&format!("{line}:{col}  {tok}\n"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_error_is_an_internal_error() {
        let opts = Options::default();
        let mut c = crate::compile_str("t.kdsl", "kernel k() block(32) {}", &opts);
        assert!(c.internal_error.is_none() && c.ptx.is_some());
        // What the pipeline records when `ptx::write` fails.
        let e = crate::ptx::Error {
            item: "kernel k".into(),
            span: None,
            kind: crate::ptx::ErrorKind::InvalidIr("a local with no register".into()),
        };
        c.ptx = None;
        c.internal_error = Some(e.describe(&c.sources));
        match outcome(c, &opts) {
            Err(Fail::Internal(m)) => {
                assert_eq!(
                    m,
                    "cannot write PTX for kernel k: invalid IR: a local with no register"
                );
                let ice = super::super::ice_message(&m);
                assert!(ice.starts_with("error: internal compiler error: cannot write PTX"));
                assert!(ice.contains("please report it"), "{ice}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_in_the_program_come_first() {
        let opts = Options::default();
        let mut c = crate::compile_str("t.kdsl", "kernel k() block(32) { x = 1; }", &opts);
        c.internal_error = Some("anything".into());
        assert!(matches!(outcome(c, &opts), Err(Fail::Exit(1))));
    }
}
