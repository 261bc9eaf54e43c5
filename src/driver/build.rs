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
    let dest = destination(args);
    let json = args.common.message_format == MessageFormat::Json;
    if json && dest == Dest::Stdout {
        return Err(Fail::Usage(
            "`--message-format json` writes diagnostics to stdout, so the output needs a file: give `-o FILE`"
                .to_string(),
        ));
    }
    let depfile = depfile_path(args, &dest)?;
    if let Dest::File(out) = &dest {
        refuse_to_overwrite_input(&args.file, out)?;
    }
    let ptxas = match args.emit {
        Emit::Cubin => Some(ptxas::find(args.ptxas.as_deref())?),
        _ => None,
    };
    // `--emit ir` shows the IR after the passes, so it runs them (and the
    // writer, whose output is dropped); with `--passes none`, the IR as the
    // checker built it (loops over constant lists still loops, which the
    // optimiser would unroll first); the AST needs neither.
    let checked_ir = args.emit == Emit::Ir && args.common.passes == crate::opt::Passes::none();
    let mut opts = options(&args.common, args.emit == Emit::Ast || checked_ir)?;
    opts.lineinfo = args.lineinfo;
    opts.drop_syntax = args.emit != Emit::Ast;

    let (bytes, imports) = match args.emit {
        Emit::Tokens => (
            tokens(&args.file, &opts, reporter)?.into_bytes(),
            Vec::new(),
        ),
        _ => {
            let mut c = compile(&args.file, &opts, reporter)?;
            let bytes = emit(args, &mut c, &dest, ptxas.as_deref())?;
            (bytes, c.imports)
        }
    };

    // `--emit cubin` to a file has already been moved into place by ptxas.
    if !(args.emit == Emit::Cubin && dest != Dest::Stdout) {
        output::write(&dest, &bytes)?;
    }
    if let (Some(depfile), Dest::File(out)) = (depfile, &dest) {
        output::write_atomic(
            &depfile,
            output::depfile(out, &args.file, &imports).as_bytes(),
        )?;
    }
    Ok(())
}

/// `-o`, or the input's stem with `.ptx`/`.cubin` in the current folder, or
/// stdout for the debugging emits.
fn destination(args: &BuildArgs) -> Dest {
    if let Some(o) = &args.output {
        return Dest::from_arg(o);
    }
    let ext = match args.emit {
        Emit::Ptx => "ptx",
        Emit::Cubin => "cubin",
        Emit::Manifest => "manifest.json",
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

/// `-MF PATH`, or `OUT.d` for `-MD`; `None` when no depfile is wanted.
fn depfile_path(args: &BuildArgs, dest: &Dest) -> Result<Option<PathBuf>, Fail> {
    if !args.depfile && args.depfile_path.is_none() {
        return Ok(None);
    }
    let Dest::File(out) = dest else {
        return Err(Fail::Usage(
            "a depfile (-MD/-MF) names the output file as its target, so it needs `-o FILE`, not stdout".to_string(),
        ));
    };
    if let Some(p) = &args.depfile_path {
        refuse_a_folder(p, "-MF")?;
        return Ok(Some(p.clone()));
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
    Ok(Some(p))
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

/// `kdslc k.ptx` would otherwise replace its own input with its output.
fn refuse_to_overwrite_input(input: &Path, out: &Path) -> Result<(), Fail> {
    match (input.canonicalize(), out.canonicalize()) {
        (Ok(a), Ok(b)) if a == b => Err(Fail::Usage(format!(
            "the output `{}` is the input file; give another `-o`",
            out.display()
        ))),
        _ => Ok(()),
    }
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
    })
}

/// Compiles and reports; `Err` when the input cannot be read (exit 2) or the
/// program has errors (exit 1, already reported).
pub fn compile(file: &Path, opts: &Options, reporter: &mut Reporter) -> Result<Compilation, Fail> {
    let c = crate::compile(file, opts).map_err(|e| cannot_read(file, &e))?;
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
fn emit(
    args: &BuildArgs,
    c: &mut Compilation,
    dest: &Dest,
    ptxas: Option<&Path>,
) -> Result<Vec<u8>, Fail> {
    let missing = |what: &str| {
        Fail::Internal(format!(
            "the compiler reported no errors but produced no {what}"
        ))
    };
    match args.emit {
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
            let bytes = ptxas::assemble(
                ptxas,
                ptx,
                args.common.target,
                args.opt_level.as_deref(),
                out,
            )?;
            Ok(bytes.unwrap_or_default())
        }
        Emit::Manifest => {
            let ptx = c.ptx.as_deref().ok_or_else(|| missing("PTX"))?;
            let module = c.module.as_ref().ok_or_else(|| missing("IR"))?;
            crate::manifest::of_module(module, ptx, args.common.target)
                .and_then(|m| crate::manifest::to_json(&m))
                .map(String::into_bytes)
                .map_err(|e| Fail::Internal(format!("--emit manifest: {e}")))
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
