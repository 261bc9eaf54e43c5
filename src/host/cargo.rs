//! [`Build`]: compiling a `.kdsl` file in a Cargo build script.

use super::{compile_file, Artifacts, CompileOptions, Failure};
use crate::target::Target;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Compiles one `.kdsl` file in a `build.rs` and writes, into `OUT_DIR`
/// (or [`Build::out_dir`]), `STEM.ptx`, `STEM.manifest.json`, `STEM.rs`
/// (the manifest as Rust constants, [`super::rust`]) and, when asked,
/// `STEM.h` (`kdslc --emit header`). It prints to stdout, for Cargo,
/// `cargo:rerun-if-changed=` for the file and every file it imports, one
/// `cargo:warning=` per warning and one `cargo::error=` per error (the
/// diagnostics in full go to stderr, which Cargo shows when the build
/// script fails).
///
/// In `build.rs`'s `main`:
///
/// ```no_run
/// let built = kdsl::host::Build::new("kernels/saxpy.kdsl")
///     .target(kdsl::target::Target::Sm90)
///     .compile();
/// if built.is_err() {
///     std::process::exit(1); // said: cargo::error lines, stderr
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Build {
    file: PathBuf,
    options: CompileOptions,
    out_dir: Option<PathBuf>,
    header: bool,
    cargo: bool,
}

/// What [`Build::compile`] wrote.
#[derive(Clone, Debug)]
pub struct Built {
    pub ptx: PathBuf,
    pub manifest: PathBuf,
    pub rust: PathBuf,
    pub header: Option<PathBuf>,
    pub artifacts: Artifacts,
}

impl Build {
    pub fn new(file: impl Into<PathBuf>) -> Build {
        Build {
            file: file.into(),
            options: CompileOptions::default(),
            out_dir: None,
            header: false,
            cargo: true,
        }
    }

    /// The target (`Target::Sm90` by default).
    pub fn target(mut self, target: Target) -> Build {
        self.options.target = target;
        self
    }

    /// A kernel constant, `NAME=VALUE` or `KERNEL.NAME=VALUE` (`--const`).
    pub fn constant(mut self, value: impl Into<String>) -> Build {
        self.options.consts.push(value.into());
        self
    }

    /// Warnings fail the build (`-D warnings`).
    pub fn deny_warnings(mut self, deny: bool) -> Build {
        self.options.deny_warnings = deny;
        self
    }

    /// Also write the C/C++ header (`STEM.h`).
    pub fn header(mut self, header: bool) -> Build {
        self.header = header;
        self
    }

    /// Where to write (default: `$OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Build {
        self.out_dir = Some(dir.into());
        self
    }

    /// Whether to print the `cargo:` lines (default: yes; off for use
    /// outside a build script).
    pub fn cargo_metadata(mut self, print: bool) -> Build {
        self.cargo = print;
        self
    }

    /// Compiles and writes the outputs (each atomically; nothing when the
    /// program has errors).
    pub fn compile(&self) -> Result<Built, Failure> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => std::env::var_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                Failure::Usage(
                    "OUT_DIR is not set: kdsl::host::Build runs in a build script, or give it .out_dir(...)"
                        .to_string(),
                )
            })?,
        };
        let result = compile_file(&self.file, &self.options);
        let lines = directives(&self.file, &result);
        if self.cargo {
            let mut out = std::io::stdout().lock();
            for l in &lines {
                let _ = writeln!(out, "{l}");
            }
            if let Err(e @ Failure::Diagnostics { .. }) = &result {
                let _ = writeln!(std::io::stderr().lock(), "{e}");
            }
        }
        let artifacts = result?;
        self.write(&out_dir, artifacts)
    }

    fn write(&self, dir: &Path, artifacts: Artifacts) -> Result<Built, Failure> {
        let stem = self
            .file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "module".to_string());
        let source_name = self
            .file
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ptx = dir.join(format!("{stem}.ptx"));
        let manifest = dir.join(format!("{stem}.manifest.json"));
        let rust = dir.join(format!("{stem}.rs"));
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let rust_text = super::rust::module(
            &artifacts.manifest,
            &source_name,
            &absolute(&ptx),
            &absolute(&manifest),
        );
        let header = if self.header {
            let name = crate::header::names::module(&stem);
            let text = crate::header::write(&crate::header::Input {
                manifest: &artifacts.manifest,
                source_name: &source_name,
                module: &name,
                ptx: crate::header::Ptx::Embed(&artifacts.ptx),
            })
            .map_err(Failure::Internal)?;
            Some((dir.join(format!("{stem}.h")), text))
        } else {
            None
        };
        let write = |path: &Path, bytes: &[u8]| {
            crate::driver::output::write_atomic(path, bytes).map_err(|e| {
                Failure::Usage(match e {
                    crate::driver::Fail::Usage(m) | crate::driver::Fail::Internal(m) => m,
                    other => format!("{other:?}"),
                })
            })
        };
        write(&ptx, artifacts.ptx.as_bytes())?;
        write(&manifest, artifacts.manifest_json.as_bytes())?;
        write(&rust, rust_text.as_bytes())?;
        if let Some((path, text)) = &header {
            write(path, text.as_bytes())?;
        }
        Ok(Built {
            ptx,
            manifest,
            rust,
            header: header.map(|(p, _)| p),
            artifacts,
        })
    }
}

/// The `cargo:` lines for a compilation's result: `rerun-if-changed` for
/// every file read, a `warning` per warning, an `error` per error.
pub(super) fn directives(file: &Path, result: &Result<Artifacts, Failure>) -> Vec<String> {
    let mut lines = Vec::new();
    let files: Vec<PathBuf> = match result {
        Ok(a) => a.files.clone(),
        Err(Failure::Diagnostics { files, .. }) => files.clone(),
        Err(_) => vec![file.to_path_buf()],
    };
    for f in &files {
        lines.push(format!("cargo:rerun-if-changed={}", f.display()));
    }
    match result {
        Ok(a) => {
            for line in a.warnings.short().lines() {
                lines.push(format!("cargo:warning={line}"));
            }
        }
        Err(Failure::Diagnostics { rendered, .. }) => {
            for d in &rendered.diagnostics {
                let line =
                    crate::diagnostics::render::short(&rendered.sources, std::slice::from_ref(d));
                let line = line.trim_end();
                lines.push(if d.is_error() {
                    format!("cargo::error={line}")
                } else {
                    format!("cargo:warning={line}")
                });
            }
        }
        Err(e) => lines.push(format!("cargo::error={}", one_line(&e.to_string()))),
    }
    lines
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}
