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

use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// proptest's configuration for these tests: `cases` cases, and the seeds
/// of failures kept in the repository's one `proptest-regressions/` folder
/// (under `it/`, beside the library's), not in a second one under `tests/`.
pub fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::SourceParallel(
            "../proptest-regressions/it",
        ))),
        ..ProptestConfig::default()
    }
}

/// `samples/saxpy.kdsl`: the program the command-line tests build and run.
pub const SAXPY: &str = include_str!("../../../samples/saxpy.kdsl");

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

/// The `.kdsl` files of a suite's folder (`repo_root()`-relative),
/// sorted; fewer than `at_least` fails the test (a suite that lost its
/// files).
#[track_caller]
pub fn kdsl_suite(dir: &str, at_least: usize) -> Vec<PathBuf> {
    let files = kdsl_files(&repo_root().join(dir));
    assert!(
        files.len() >= at_least,
        "expected at least {at_least} .kdsl files in {dir}, found {files:?}"
    );
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

/// `core` inside `n` of `open` and `n` of `close`: the text of a construct
/// nested `n` deep.
pub fn nested(open: &str, core: &str, close: &str, n: usize) -> String {
    format!("{}{core}{}", open.repeat(n), close.repeat(n))
}

/// The ```` ```lang ```` block of the "## Example" section of the document
/// `doc` (repository-relative): an example the docs show, which a test
/// checks is the compiler's real output.
pub fn doc_example(doc: &str, lang: &str) -> String {
    let text =
        std::fs::read_to_string(repo_root().join(doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let example = text
        .split("## Example")
        .nth(1)
        .unwrap_or_else(|| panic!("{doc} has no `## Example`"));
    let fence = format!("```{lang}\n");
    let start = example
        .find(&fence)
        .unwrap_or_else(|| panic!("{doc}: no {lang} block in the example"))
        + fence.len();
    let len = example[start..].find("```").expect("a closing fence");
    example[start..start + len].to_string()
}

/// The target a `.kdsl` file asks for on a `// target: sm_90a` line of its
/// leading comment (a sample that needs wgmma says so), else the default
/// (sm_90): what the samples' tests compile each one for.
pub fn source_target(path: &Path) -> kdsl::target::Target {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix("// target:"))
        .map(|t| {
            kdsl::target::Target::from_name(t.trim())
                .unwrap_or_else(|| panic!("{}: unknown target `{}`", path.display(), t.trim()))
        })
        .unwrap_or_default()
}

/// The default options for `target`.
pub fn for_target(target: kdsl::target::Target) -> kdsl::Options {
    kdsl::Options {
        target,
        ..kdsl::Options::default()
    }
}

/// The head of a kernel `name(params) block(32)`, with `cluster(2)` when
/// `cluster`, declaring a shared array `s_T: [T; len]` of each of `types`:
/// what the tables of accepted combinations (atomics, vector accesses)
/// write their accesses into.
pub fn kernel_head(
    name: &str,
    params: &[String],
    cluster: bool,
    types: &[kdsl::types::Scalar],
    len: usize,
) -> String {
    let mut text = format!(
        "kernel {name}({}) block(32){} {{\n",
        params.join(", "),
        if cluster { " cluster(2)" } else { "" }
    );
    for t in types {
        text.push_str(&format!("    shared s_{t}: [{t}; {len}];\n", t = t.name()));
    }
    text
}

/// Fails the test, showing `text`, unless it contains each of `needles`.
#[track_caller]
pub fn assert_contains(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "expected `{needle}` in:\n{text}");
    }
}
