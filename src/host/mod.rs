//! Compiling kdsl kernels from the programs that launch them: the library
//! entry points a Cargo build script ([`Build`]) and other hosts (the
//! Python package) call, so that none of them runs `kdslc` or repeats what
//! it does.
//!
//! [`compile_file`] and [`compile_source`] compile to [`Artifacts`]: the
//! PTX, the launch manifest ([`crate::manifest`]), every file read (for a
//! build system's dependencies) and the warnings; a program with errors is
//! a [`Failure`] holding the diagnostics, rendered. [`Build`] does that in
//! a `build.rs` and writes the results to `OUT_DIR`, with `cargo:` lines
//! for the diagnostics and `rerun-if-changed` for every file read.
//! `docs/host-code.md#rust` shows both.

mod cargo;
pub mod rust;

pub use cargo::{Build, Built};

use crate::diagnostics::{render, Diagnostic};
use crate::manifest::Manifest;
use crate::source::SourceMap;
use crate::target::Target;
use crate::Options;
use std::path::{Path, PathBuf};

/// What to compile for.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    pub target: Target,
    /// Kernel constants, as `--const` takes them: `TILE=8` (every kernel
    /// with a constant `TILE`) or `gemm.BM=64`; each value of a constant
    /// given several times is an instantiation (docs/language.md §2.6).
    pub consts: Vec<String>,
    /// Warnings count as errors (`-D warnings`).
    pub deny_warnings: bool,
    /// Warnings not to report (`-A W0001`).
    pub allow: Vec<String>,
    /// `.file`/`.loc` line information in the PTX (`--lineinfo`).
    pub lineinfo: bool,
}

/// A compiled module.
#[derive(Clone, Debug)]
pub struct Artifacts {
    /// The PTX: what `kdslc FILE` writes with the same options.
    pub ptx: String,
    /// The launch manifest of every kernel (`docs/manifest.md`).
    pub manifest: Manifest,
    /// The manifest as `kdslc --emit manifest` writes it.
    pub manifest_json: String,
    /// Every file read: the root file (when compiled from a file), then
    /// each import.
    pub files: Vec<PathBuf>,
    /// The warnings, with the sources they point into.
    pub warnings: Rendered,
}

/// Diagnostics with their sources, and their renderings.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    pub diagnostics: Vec<Diagnostic>,
    pub sources: SourceMap,
}

impl Rendered {
    /// As a terminal shows them (rustc's layout), without colour.
    pub fn human(&self) -> String {
        render::human(&self.sources, &self.diagnostics, false)
    }

    /// One line each: `path:line:col: error[E0301]: message`.
    pub fn short(&self) -> String {
        render::short(&self.sources, &self.diagnostics)
    }

    pub fn is_empty(&self) -> bool {
        self.diagnostics.is_empty()
    }
}

/// Why a compilation gave no module.
#[derive(Clone, Debug)]
pub enum Failure {
    /// The program has errors (or warnings, with `deny_warnings`): the
    /// diagnostics, and the files read, on which a rebuild depends.
    Diagnostics {
        rendered: Rendered,
        files: Vec<PathBuf>,
    },
    /// The root file cannot be read, or an option is wrong (a `--const`
    /// no kernel takes, an unknown warning code): what `kdslc` says with
    /// exit status 2.
    Usage(String),
    /// A bug in the compiler (what `kdslc` reports with exit status 3).
    Internal(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Diagnostics { rendered, .. } => f.write_str(rendered.human().trim_end()),
            Failure::Usage(m) => f.write_str(m),
            Failure::Internal(m) => write!(f, "internal compiler error: {m}"),
        }
    }
}

impl std::error::Error for Failure {}

/// Compiles the `.kdsl` file at `path` (and what it imports).
pub fn compile_file(path: &Path, options: &CompileOptions) -> Result<Artifacts, Failure> {
    let opts = pipeline_options(options)?;
    let c = crate::compile(path, &opts)
        .map_err(|e| Failure::Usage(format!("cannot read `{}`: {e}", path.display())))?;
    let mut files = vec![path.to_path_buf()];
    files.extend(c.imports.iter().cloned());
    finish(c, &opts, files)
}

/// Compiles `text` as the file `name` (for messages; imports are found
/// from the current directory).
pub fn compile_source(
    name: &str,
    text: &str,
    options: &CompileOptions,
) -> Result<Artifacts, Failure> {
    let opts = pipeline_options(options)?;
    let c = crate::compile_str(name, text, &opts);
    let files = c.imports.clone();
    finish(c, &opts, files)
}

fn pipeline_options(o: &CompileOptions) -> Result<Options, Failure> {
    let consts = o
        .consts
        .iter()
        .map(|c| {
            c.parse()
                .map_err(|e| Failure::Usage(format!("kernel constant `{c}`: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    for code in &o.allow {
        match crate::diagnostics::catalog::lookup(code) {
            Some(info) if info.severity == crate::diagnostics::Severity::Warning => {}
            Some(_) => {
                return Err(Failure::Usage(format!(
                    "`{code}` is an error; only warnings can be allowed"
                )))
            }
            None => return Err(Failure::Usage(format!("no diagnostic code `{code}`"))),
        }
    }
    Ok(Options {
        target: o.target,
        deny_warnings: o.deny_warnings,
        allow: o.allow.clone(),
        lineinfo: o.lineinfo,
        drop_syntax: true,
        consts,
        ..Options::default()
    })
}

fn finish(
    c: crate::Compilation,
    opts: &Options,
    files: Vec<PathBuf>,
) -> Result<Artifacts, Failure> {
    if let Some(usage) = c.usage_error {
        return Err(Failure::Usage(usage));
    }
    if c.failed(opts) {
        return Err(Failure::Diagnostics {
            rendered: Rendered {
                diagnostics: c.diagnostics,
                sources: c.sources,
            },
            files,
        });
    }
    if let Some(e) = c.internal_error {
        return Err(Failure::Internal(e));
    }
    let missing = |what: &str| Failure::Internal(format!("no errors, but no {what}"));
    let ptx = c.ptx.ok_or_else(|| missing("PTX"))?;
    let module = c.module.as_ref().ok_or_else(|| missing("IR"))?;
    let manifest =
        crate::manifest::of_module(module, &ptx, opts.target).map_err(Failure::Internal)?;
    let manifest_json = crate::manifest::to_json(&manifest).map_err(Failure::Internal)?;
    Ok(Artifacts {
        ptx,
        manifest,
        manifest_json,
        files,
        warnings: Rendered {
            diagnostics: c.diagnostics,
            sources: c.sources,
        },
    })
}

#[cfg(test)]
mod tests;
