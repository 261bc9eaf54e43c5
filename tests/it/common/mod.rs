//! Helpers that more than one test module uses: the repository's files,
//! running `kdslc`, temporary projects, and (in submodules) the ptxas
//! harness, the simulator's helpers, the generators and the scaling shapes.
//! A module uses only some of them, so unused ones must not warn.
#![allow(dead_code)]

pub mod gen_expr;
pub mod gen_program;
pub mod ptxas;
pub mod rng;
pub mod shapes;
pub mod sim;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root (where Cargo.toml is), whatever the current directory.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `.kdsl` files directly in `dir`, sorted; a folder that cannot be
/// read fails the test (it never silently checks nothing).
pub fn kdsl_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "kdsl"))
        .collect();
    files.sort();
    files
}

/// The `kdslc` binary under test, to run in `dir`.
pub fn kdslc_command(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kdslc"));
    c.current_dir(dir);
    c
}

/// Runs `kdslc ARGS` in `dir` with the test's environment, stdin empty.
pub fn kdslc(dir: &Path, args: &[&str]) -> Output {
    kdslc_command(dir).args(args).output().expect("kdslc runs")
}

/// A stream's bytes as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A temporary folder holding `files` (name, contents); names may have
/// folders in them.
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, body) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, body).expect("write");
    }
    dir
}

/// Runs `cmd` (`what` names it), fails the test with its stderr unless it
/// succeeds, and returns its output.
#[track_caller]
pub fn output_ok(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what} does not run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
