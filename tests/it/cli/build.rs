//! The `kdslc` binary, run as a build system or a person would run it: exit
//! statuses, where output goes, atomic writes, depfiles, message formats.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::common::{self, assert_contains, kdslc_command, project, text};
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

/// A program that builds clean.
const GOOD: &str = common::SAXPY;

const BAD: &str = "\
kernel k(out: global mut [f32]) block(32) {
    out[0] = missing;
}
";

const WARNS: &str = "\
kernel k(out: global mut [f32]) block(32) {
    let tmp = 3.0;
    out[0] = 1.0;
}
";

fn kdslc_in(dir: &Path, args: &[&str]) -> Output {
    kdslc_command(dir)
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("PTXAS")
        .env_remove("CUDA_HOME")
        .output()
        .expect("kdslc runs")
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let dir = project(&[("k.kdsl", GOOD)]);
    let out = kdslc_in(dir.path(), &["k.kdsl", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert_contains(&text(&out.stderr), &["--bogus"]);
    assert_eq!(listing(dir.path()), ["k.kdsl"]);
}

#[test]
fn no_arguments_prints_help_and_exits_2() {
    let dir = project(&[]);
    let out = kdslc_in(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_contains(&text(&out.stderr), &["Usage: kdslc"]);
}

#[test]
fn help_and_version_exit_0() {
    let dir = project(&[]);
    let out = kdslc_in(dir.path(), &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("explain"));
    let out = kdslc_in(dir.path(), &["build", "--help"]);
    assert_contains(&text(&out.stdout), &["-MF DEPFILE"]);
    let out = kdslc_in(dir.path(), &["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("kdslc "));
}

#[test]
fn missing_input_exits_2() {
    let dir = project(&[]);
    let out = kdslc_in(dir.path(), &["nope.kdsl"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: cannot read `nope.kdsl`: no such file\n"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_target_is_a_usage_error() {
    let dir = project(&[("k.kdsl", GOOD)]);
    let out = kdslc_in(dir.path(), &["k.kdsl", "--target", "sm_70"]);
    assert_eq!(out.status.code(), Some(2));
    assert_contains(&text(&out.stderr), &["sm_90a"]);
}

#[test]
fn explain_prints_the_long_explanation() {
    let dir = project(&[]);
    for code in ["E0301", "e0301"] {
        let out = kdslc_in(dir.path(), &["explain", code]);
        assert_eq!(out.status.code(), Some(0));
        let s = text(&out.stdout);
        assert!(
            s.starts_with("# E0301: Can only await on CTA-local barriers\n"),
            "{s}"
        );
        assert!(s.contains("wait_cluster"), "{s}");
    }
    let out = kdslc_in(dir.path(), &["explain", "E9999"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: no diagnostic code `E9999`; see `docs/diagnostics.md` for the list\n"
    );
}

#[test]
fn default_output_is_the_stem_with_ptx_and_both_argument_orders_work() {
    let dir = project(&[("sub/saxpy.kdsl", GOOD)]);
    let out = kdslc_in(dir.path(), &["sub/saxpy.kdsl"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let ptx = fs::read_to_string(dir.path().join("saxpy.ptx")).unwrap();
    assert!(ptx.contains("saxpy"), "{ptx}");

    let out = kdslc_in(dir.path(), &["-o", "a.ptx", "sub/saxpy.kdsl"]);
    assert_eq!(out.status.code(), Some(0));
    let out = kdslc_in(dir.path(), &["build", "sub/saxpy.kdsl", "-o", "b.ptx"]);
    assert_eq!(out.status.code(), Some(0));
    // Deterministic: the same input and flags, the same bytes.
    assert_eq!(fs::read(dir.path().join("a.ptx")).unwrap(), ptx.as_bytes());
    assert_eq!(fs::read(dir.path().join("b.ptx")).unwrap(), ptx.as_bytes());
}

#[test]
fn dash_o_dash_writes_to_stdout_only() {
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    let out = kdslc_in(dir.path(), &["saxpy.kdsl", "-o", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("saxpy"));
    assert_eq!(listing(dir.path()), ["saxpy.kdsl"]);
}

#[test]
fn failed_build_leaves_the_old_output_untouched() {
    let dir = project(&[("bad.kdsl", BAD), ("out.ptx", "old contents\n")]);
    let out = kdslc_in(dir.path(), &["bad.kdsl", "-o", "out.ptx", "-MD"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(dir.path().join("out.ptx")).unwrap(),
        "old contents\n"
    );
    // No temporary file and no depfile left behind.
    assert_eq!(listing(dir.path()), ["bad.kdsl", "out.ptx"]);
    let err = text(&out.stderr);
    assert!(err.contains("error[E0100]"), "{err}");
    assert!(
        err.ends_with("error: aborting due to 1 previous error\n"),
        "{err}"
    );
}

#[test]
fn unwritable_output_exits_2() {
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    let out = kdslc_in(dir.path(), &["saxpy.kdsl", "-o", "no/such/dir/out.ptx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("error: cannot write `no/such/dir/out.ptx`"));
    let out = kdslc_in(dir.path(), &["saxpy.kdsl", "-o", "saxpy.kdsl"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        fs::read_to_string(dir.path().join("saxpy.kdsl")).unwrap(),
        GOOD
    );
}

/// `-o /dev/null` and friends: an existing device or FIFO is written into,
/// never replaced by a plain file (tested on a FIFO, which is safe to make).
#[cfg(unix)]
#[test]
fn special_files_are_written_into_not_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    let fifo = dir.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let (tx, rx) = std::sync::mpsc::channel();
    let reading = fifo.clone();
    std::thread::spawn(move || tx.send(fs::read(reading)));
    let out = kdslc_in(dir.path(), &["saxpy.kdsl", "-o", "pipe"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("kdslc wrote nothing into the FIFO")
        .unwrap();
    assert_contains(&text(&got), &[".entry saxpy"]);
    assert!(fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // No `pipe.d` beside a FIFO: -MD needs -MF there.
    let out = kdslc_in(dir.path(), &["saxpy.kdsl", "-o", "pipe", "-MD"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(listing(dir.path()), ["pipe", "saxpy.kdsl"]);
}

#[test]
fn warnings_pass_unless_denied_and_can_be_allowed() {
    let dir = project(&[("w.kdsl", WARNS)]);
    let out = kdslc_in(dir.path(), &["w.kdsl", "-o", "w.ptx"]);
    assert_eq!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    assert!(
        err.contains("warning[W0001]: unused variable `tmp`"),
        "{err}"
    );
    assert!(err.ends_with("warning: 1 warning emitted\n"), "{err}");
    fs::remove_file(dir.path().join("w.ptx")).unwrap();

    let out = kdslc_in(dir.path(), &["w.kdsl", "-o", "w.ptx", "-D", "warnings"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(listing(dir.path()), ["w.kdsl"]);

    let out = kdslc_in(
        dir.path(),
        &["w.kdsl", "-o", "w.ptx", "-D", "warnings", "-A", "W0001"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));

    let out = kdslc_in(dir.path(), &["w.kdsl", "-A", "E0301"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn short_format_is_one_line_per_diagnostic() {
    let dir = project(&[("bad.kdsl", BAD)]);
    let out = kdslc_in(dir.path(), &["bad.kdsl", "--message-format", "short"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("bad.kdsl:2:14: error[E0100]: "),
        "{err}"
    );
}

#[test]
fn json_format_is_json_lines_on_stdout() {
    let dir = project(&[("bad.kdsl", BAD)]);
    let out = kdslc_in(
        dir.path(),
        &["bad.kdsl", "--message-format", "json", "-o", "bad.ptx"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let objs: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(objs.len() >= 2, "{stdout}");
    assert_eq!(objs[0]["type"], "diagnostic");
    assert_eq!(objs[0]["code"], "E0100");
    assert_eq!(objs[0]["file"], "bad.kdsl");
    assert_eq!(objs[0]["range"]["start"]["line"], 2);
    let last = objs.last().unwrap();
    assert_eq!(last["type"], "summary");
    assert_eq!(last["errors"], 1);
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));

    // A clean build still ends its stream with the summary.
    let dir2 = project(&[("saxpy.kdsl", GOOD)]);
    let out = kdslc_in(dir2.path(), &["saxpy.kdsl", "--message-format=json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "{\"type\":\"summary\",\"errors\":0,\"warnings\":0}\n"
    );
}

/// Parses a JSON stream; every line must be one object.
fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    let stdout = text(&out.stdout);
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Under `--message-format json`, every error is a JSON object on stdout,
/// usage and I/O errors too, and the stream ends with the summary.
#[test]
fn json_format_reports_usage_and_io_errors_as_json() {
    let dir = project(&[("bad.kdsl", BAD), ("saxpy.kdsl", GOOD)]);
    let cases: &[&[&str]] = &[
        // An unreadable input.
        &["missing.kdsl", "--message-format=json"],
        // An unknown flag, found by clap.
        &["saxpy.kdsl", "--message-format", "json", "--bogus"],
        // JSON and the output cannot share stdout.
        &["bad.kdsl", "--message-format", "json", "-o", "-"],
        // `check` goes on after a file it cannot read.
        &[
            "check",
            "missing.kdsl",
            "bad.kdsl",
            "--message-format",
            "json",
        ],
    ];
    for args in cases {
        let out = kdslc_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {}", text(&out.stderr));
        let objs = json_lines(&out);
        let errors: Vec<&serde_json::Value> =
            objs.iter().filter(|o| o["type"] == "error").collect();
        assert_eq!(errors.len(), 1, "{args:?}: {objs:?}");
        assert_eq!(errors[0]["kind"], "usage");
        assert_eq!(errors[0]["exit_status"], 2);
        let message = errors[0]["message"].as_str().unwrap();
        assert!(!message.starts_with("error"), "{message}");
        let last = objs.last().unwrap();
        assert_eq!(last["type"], "summary", "{args:?}");
        let diagnostics = objs.iter().filter(|o| o["type"] == "diagnostic").count();
        assert_eq!(last["errors"], diagnostics + 1, "{args:?}: {objs:?}");
    }
    let out = kdslc_in(dir.path(), &["missing.kdsl", "--message-format=json"]);
    assert_eq!(
        json_lines(&out)[0]["message"],
        "cannot read `missing.kdsl`: no such file"
    );
}

/// The example in docs/json-diagnostics.md is the compiler's real output.
#[test]
fn json_doc_example_is_current() {
    let source = common::doc_example("docs/json-diagnostics.md", "kdsl");
    let expected = common::doc_example("docs/json-diagnostics.md", "json");
    let dir = project(&[("k.kdsl", &source)]);
    let out = kdslc_in(dir.path(), &["check", "k.kdsl", "--message-format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        expected,
        "regenerate the example in docs/json-diagnostics.md"
    );
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let dir = project(&[("bad.kdsl", BAD)]);
    let out = kdslc_in(dir.path(), &["bad.kdsl", "--color", "always"]);
    assert!(text(&out.stderr).contains("\x1b["));
    // stderr is a pipe here, so `auto` means no colour.
    let out = kdslc_in(dir.path(), &["bad.kdsl"]);
    assert!(!text(&out.stderr).contains('\x1b'));
}

#[test]
fn depfile_names_output_input_and_imports() {
    let dir = project(&[
        ("main.kdsl", "import \"lib dir/consts.kdsl\";\nkernel k(out: global mut [f32]) block(32) {\n    out[0] = SCALE;\n}\n"),
        ("lib dir/consts.kdsl", "const SCALE: f32 = 2.0;\n"),
    ]);
    let out = kdslc_in(dir.path(), &["main.kdsl", "-o", "out.ptx", "-MD"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(dir.path().join("out.ptx.d")).unwrap(),
        "out.ptx: main.kdsl lib\\ dir/consts.kdsl\n\nlib\\ dir/consts.kdsl:\n"
    );
    let out = kdslc_in(
        dir.path(),
        &["main.kdsl", "-o", "out.ptx", "-MF", "deps/main.d"],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "the depfile's folder does not exist"
    );
    fs::create_dir(dir.path().join("deps")).unwrap();
    let out = kdslc_in(
        dir.path(),
        &["main.kdsl", "-o", "out.ptx", "-MFdeps/main.d"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(fs::read_to_string(dir.path().join("deps/main.d"))
        .unwrap()
        .starts_with("out.ptx: main.kdsl "));
    let out = kdslc_in(dir.path(), &["main.kdsl", "-o", "-", "-MD"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_reports_every_file_and_writes_nothing() {
    let dir = project(&[("good.kdsl", GOOD), ("bad.kdsl", BAD)]);
    let out = kdslc_in(dir.path(), &["check", "good.kdsl"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = kdslc_in(
        dir.path(),
        &[
            "check",
            "bad.kdsl",
            "good.kdsl",
            "--message-format",
            "short",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("bad.kdsl:2:14: error[E0100]"));
    let out = kdslc_in(dir.path(), &["check", "missing.kdsl", "bad.kdsl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("error: cannot read `missing.kdsl`"), "{err}");
    assert!(
        err.contains("error[E0100]"),
        "the other file is still checked: {err}"
    );
    assert_eq!(listing(dir.path()), ["bad.kdsl", "good.kdsl"]);
}

#[test]
fn emit_ir_ast_and_tokens_go_to_stdout() {
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    let out = kdslc_in(dir.path(), &["saxpy.kdsl", "--emit", "ir"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ir = text(&out.stdout);
    assert!(
        ir.starts_with("kernel saxpy block(256, 1, 1) {\n    param a: f32\n"),
        "{ir}"
    );
    let out = kdslc_in(dir.path(), &["saxpy.kdsl", "--emit", "ast"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).starts_with("// saxpy.kdsl\n"));
    let out = kdslc_in(dir.path(), &["saxpy.kdsl", "--emit", "tokens"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let toks = text(&out.stdout);
    // The comment on line 1 is no token; `kernel` opens line 2.
    assert!(
        toks.starts_with("2:1  kernel\n2:8  saxpy\n2:13  (\n"),
        "{toks}"
    );
    let dir_bad = project(&[("lex.kdsl", "kernel k() { let a = 1 @ 2; }\n")]);
    let out = kdslc_in(dir_bad.path(), &["lex.kdsl", "--emit", "tokens"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert_contains(&text(&out.stderr), &["error[E0001]"]);
    assert_eq!(listing(dir.path()), ["saxpy.kdsl"]);
}

#[cfg(unix)]
fn fake_ptxas(dir: &Path, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-ptxas");
    fs::write(&path, script).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

#[cfg(unix)]
#[test]
fn emit_cubin_runs_the_ptxas_it_is_given() {
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    // Writes its arguments (less the temporary paths) where -o says.
    let ok = fake_ptxas(
        dir.path(),
        "#!/bin/sh\nout=\nfor a; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\necho \"$1 $2\" > \"$out\"\n",
    );
    let out = kdslc_in(
        dir.path(),
        &[
            "saxpy.kdsl",
            "--emit",
            "cubin",
            "--ptxas",
            &ok,
            "-O2",
            "--target",
            "sm_90a",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(dir.path().join("saxpy.cubin")).unwrap(),
        "-arch=sm_90a -O2\n"
    );

    let broken = fake_ptxas(
        dir.path(),
        "#!/bin/sh\necho 'ptxas fatal: nonsense' >&2\nexit 255\n",
    );
    let out = kdslc_in(
        dir.path(),
        &[
            "saxpy.kdsl",
            "--emit",
            "cubin",
            "--ptxas",
            &broken,
            "-o",
            "x.cubin",
        ],
    );
    // kdslc's PTX that ptxas rejects is kdslc's bug: an internal error.
    assert_eq!(out.status.code(), Some(3));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: internal compiler error: ptxas")
            && err.contains("bug in kdslc")
            && err.contains("please report it")
            && err.contains("ptxas fatal: nonsense"),
        "{err}"
    );
    assert_eq!(
        listing(dir.path()),
        ["fake-ptxas", "saxpy.cubin", "saxpy.kdsl"]
    );
    // The same under JSON: an `internal` error object, then the summary.
    let out = kdslc_in(
        dir.path(),
        &[
            "saxpy.kdsl",
            "--emit",
            "cubin",
            "--ptxas",
            &broken,
            "-o",
            "x.cubin",
            "--message-format",
            "json",
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    let objs = json_lines(&out);
    assert_eq!(objs.len(), 2, "{objs:?}");
    assert_eq!(objs[0]["kind"], "internal");
    assert_eq!(objs[0]["exit_status"], 3);
    assert!(objs[0]["notes"]
        .to_string()
        .contains("ptxas fatal: nonsense"));
    assert_eq!(objs[1]["type"], "summary");

    let out = kdslc_in(
        dir.path(),
        &["saxpy.kdsl", "--emit", "cubin", "--ptxas", "/no/such/ptxas"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("scripts/cuda-tools.sh"));
}

#[test]
fn emit_cubin_without_any_ptxas_says_how_to_get_one() {
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    let out = Command::new(env!("CARGO_BIN_EXE_kdslc"))
        .current_dir(dir.path())
        .args(["saxpy.kdsl", "--emit", "cubin"])
        .env_remove("PTXAS")
        .env_remove("CUDA_HOME")
        .env_remove("KDSL_CUDA_TOOLS")
        .env("HOME", dir.path())
        .env("PATH", dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("needs NVIDIA's ptxas") && err.contains("scripts/cuda-tools.sh"),
        "{err}"
    );
    assert_eq!(listing(dir.path()), ["saxpy.kdsl"]);
}

#[test]
fn emit_cubin_with_the_real_ptxas() {
    let Some(ptxas) = common::ptxas::require_ptxas() else {
        return;
    };
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    let ptxas = ptxas.to_string_lossy().into_owned();
    let out = kdslc_in(
        dir.path(),
        &["saxpy.kdsl", "--emit", "cubin", "--ptxas", &ptxas],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let cubin = fs::read(dir.path().join("saxpy.cubin")).unwrap();
    assert_eq!(cubin.get(..4), Some(&b"\x7fELF"[..]));
    assert_eq!(listing(dir.path()), ["saxpy.cubin", "saxpy.kdsl"]);
}

/// `--emit cubin` finds the ptxas that `scripts/cuda-tools.sh` installs, in
/// `$KDSL_CUDA_TOOLS` or in its default folder under `$HOME`, as the tests do.
#[cfg(unix)]
#[test]
fn emit_cubin_finds_the_install_scripts_ptxas() {
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    let script = "#!/bin/sh\nfor a; do [ \"$prev\" = -o ] && echo found > \"$a\"; prev=$a; done\n";
    for (var, root) in [
        ("KDSL_CUDA_TOOLS", "tools"),
        ("HOME", "home/.cache/kdsl-cuda-13.5"),
    ] {
        let bin = dir.path().join(root).join("nvidia/cu13/bin");
        fs::create_dir_all(&bin).unwrap();
        let ptxas = fake_ptxas(dir.path(), script);
        fs::rename(&ptxas, bin.join("ptxas")).unwrap();
        let value = dir.path().join(root.split('/').next().unwrap());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kdslc"));
        cmd.current_dir(dir.path())
            .args(["saxpy.kdsl", "--emit", "cubin", "-o", "out.cubin"])
            .env_remove("PTXAS")
            .env_remove("CUDA_HOME")
            .env_remove("KDSL_CUDA_TOOLS")
            .env("HOME", dir.path().join("nowhere"))
            .env("PATH", dir.path().join("nowhere"))
            .env(var, &value);
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{var}: {}", text(&out.stderr));
        assert_eq!(
            fs::read_to_string(dir.path().join("out.cubin")).unwrap(),
            "found\n"
        );
        fs::remove_dir_all(dir.path().join(root.split('/').next().unwrap())).unwrap();
        fs::remove_file(dir.path().join("out.cubin")).unwrap();
    }
}

/// `--ptxas` naming a folder or a file without execute permission says so.
#[cfg(unix)]
#[test]
fn ptxas_that_is_not_an_executable_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let dir = project(&[("saxpy.kdsl", GOOD), ("notes.txt", "not a program")]);
    fs::set_permissions(
        dir.path().join("notes.txt"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    for (arg, says) in [
        (".", "is a directory"),
        ("notes.txt", "is not executable"),
        ("/no/such/ptxas", "does not exist"),
    ] {
        let out = kdslc_in(
            dir.path(),
            &["saxpy.kdsl", "--emit", "cubin", "--ptxas", arg],
        );
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(
            err.contains(&format!("ptxas `{arg}` (from --ptxas) {says}")),
            "{err}"
        );
    }
    assert_eq!(listing(dir.path()), ["notes.txt", "saxpy.kdsl"]);
}

/// `-MF` (or `-MD`'s `OUT.d`) naming a folder is refused before anything is
/// written: no output appears beside a depfile that could not be written.
#[test]
fn depfile_that_is_a_directory_is_refused_before_writing() {
    let dir = project(&[("saxpy.kdsl", GOOD)]);
    fs::create_dir(dir.path().join("deps")).unwrap();
    fs::create_dir(dir.path().join("out.ptx.d")).unwrap();
    for args in [
        &["saxpy.kdsl", "-o", "out.ptx", "-MF", "deps"][..],
        &["saxpy.kdsl", "-o", "out.ptx", "-MD"][..],
    ] {
        let out = kdslc_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains("is a directory"), "{err}");
        assert_eq!(listing(dir.path()), ["deps", "out.ptx.d", "saxpy.kdsl"]);
    }
}

/// Inputs must be regular files: a FIFO, `/dev/stdin` or `/dev/zero` as the
/// root file is a usage error (exit 2), and as an import E0130, in both
/// cases at once, never a hang or a read that never ends.
#[cfg(unix)]
#[test]
fn special_files_are_refused_as_inputs_and_imports() {
    let dir = project(&[(
        "main.kdsl",
        "import \"pipe.kdsl\";\nimport \"/dev/zero\";\nimport \"/dev/stdin\";\nkernel k() {}\n",
    )]);
    let made = Command::new("mkfifo")
        .arg(dir.path().join("pipe.kdsl"))
        .status()
        .unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    for input in ["pipe.kdsl", "/dev/zero", "/dev/stdin"] {
        let out = kdslc_in(dir.path(), &["check", input]);
        assert_eq!(out.status.code(), Some(2), "{input}");
        let err = text(&out.stderr);
        assert!(err.contains("not a regular file"), "{input}: {err}");
    }
    let out = kdslc_in(
        dir.path(),
        &["check", "main.kdsl", "--message-format", "short"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert_eq!(err.matches("error[E0130]").count(), 3, "{err}");
    assert_contains(
        &err,
        &[
            "it is a FIFO (named pipe), not a regular file",
            "it is a character device, not a regular file",
        ],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// A file that is not UTF-8 is diagnostic E0004 at its first bad byte
/// (exit 1), as the root file and as an import; a byte-order mark is
/// skipped and spans still count the file's own bytes.
#[test]
fn encodings_utf8_only_bom_skipped() {
    let dir = project(&[]);
    fs::write(
        dir.path().join("latin1.kdsl"),
        b"// caf\xe9\nkernel k() {}\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("main.kdsl"),
        "import \"latin1.kdsl\";\nkernel m() {}\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("bom.kdsl"),
        "\u{feff}kernel k(o: global mut [u32]) { o[0] = missing; }\n",
    )
    .unwrap();
    let out = kdslc_in(
        dir.path(),
        &["check", "latin1.kdsl", "--message-format", "short"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "latin1.kdsl:1:7: error[E0004]: source file is not valid UTF-8\n"
    );
    let out = kdslc_in(
        dir.path(),
        &["main.kdsl", "--message-format", "short", "-o", "-"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr)
            .ends_with("latin1.kdsl:1:7: error[E0004]: source file is not valid UTF-8\n"),
        "{}",
        text(&out.stderr)
    );
    let out = kdslc_in(
        dir.path(),
        &["check", "bom.kdsl", "--message-format", "json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let d = &json_lines(&out)[0];
    assert_eq!(d["code"], "E0100");
    // `missing` starts at byte 46 of the file (after the 3-byte mark), in
    // column 44 of line 1 as editors count it (after the mark).
    let text_start = "\u{feff}kernel k(o: global mut [u32]) { o[0] = ".len();
    assert_eq!(d["span"]["start"], text_start);
    assert_eq!(d["range"]["start"]["column"], text_start - 2);
    assert_eq!(d["range"]["start"]["column_byte"], text_start - 2);
}

/// Control characters in the source never reach the terminal raw.
#[test]
fn control_characters_are_escaped_in_human_and_short_output() {
    let dir = project(&[(
        "k.kdsl",
        "kernel k(o: global mut [u32]) {\n    o[0] = missing; // \u{1b}[2J\u{202e}\0\n}\n",
    )]);
    for format in ["human", "short"] {
        let out = kdslc_in(dir.path(), &["check", "k.kdsl", "--message-format", format]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(err.contains("error[E0100]"), "{err}");
        assert!(
            !err.contains(['\u{1b}', '\u{202e}', '\0']),
            "{format}: raw control characters in {err:?}"
        );
        if format == "human" {
            assert!(err.contains("// \\u{1b}[2J\\u{202e}\\u{0}"), "{err}");
            // The caret still sits under `missing`.
            let line = err.lines().find(|l| l.contains("^^^^^^^")).unwrap();
            let src = err.lines().find(|l| l.contains("o[0] = missing")).unwrap();
            assert_eq!(line.find('^'), src.find("missing"), "{err}");
        }
    }
}

/// CR-only line endings (old Mac files) count as line breaks: positions and
/// `//` comments end at each `\r`.
#[test]
fn carriage_returns_end_lines() {
    let dir = project(&[(
        "mac.kdsl",
        "// a comment\rkernel k(o: global mut [u32]) {\r    o[0] = missing;\r}\r",
    )]);
    let out = kdslc_in(
        dir.path(),
        &["check", "mac.kdsl", "--message-format", "short"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "mac.kdsl:3:12: error[E0100]: cannot find value `missing` in this scope\n"
    );
}

/// `kdslc --help` shows the build flags, and docs/cli.md documents exactly
/// the flags `kdslc build --help` has.
#[test]
fn help_and_docs_show_the_build_flags() {
    let dir = project(&[]);
    let out = kdslc_in(dir.path(), &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    for flag in [
        "-o <OUT>",
        "--target <SM>",
        "--emit <EMIT>",
        "-O <LEVEL>",
        "-MD",
        "-MF <DEPFILE>",
    ] {
        assert!(
            help.contains(flag),
            "{flag} missing from kdslc --help:\n{help}"
        );
    }
    let build_help = text(&kdslc_in(dir.path(), &["build", "--help"]).stdout);
    let docs = fs::read_to_string(common::repo_root().join("docs/cli.md")).unwrap();
    let table: Vec<&str> = docs
        .lines()
        .skip_while(|l| !l.starts_with("| flag |"))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let documented = |flag: &str| table.iter().any(|row| row.contains(&format!("`{flag}")));
    for line in build_help.lines() {
        let line = line.trim_start();
        let Some(first) = line.split([',', ' ']).next() else {
            continue;
        };
        if first.starts_with('-') && first != "-h" {
            assert!(documented(first), "docs/cli.md does not document {first}");
        }
    }
    for row in &table[2..] {
        let flag = row.split('`').nth(1).unwrap();
        let name = flag.split([' ', '=']).next().unwrap();
        let known = build_help.contains(name) || matches!(name, "-MD" | "-MF");
        assert!(
            known,
            "docs/cli.md documents {name}, which kdslc build does not have"
        );
    }
}

#[test]
fn passes_are_switched_by_name_and_emit_ir_shows_their_result() {
    let src = "kernel k(out: global mut [f32]) block(32) {
        let mut acc = 1.0;
        let mut d = 16u32;
        while d > 0 { acc += shfl_down(acc, d); d = d >> 1; }
        out[lane_id] = acc;
    }";
    let dir = project(&[("k.kdsl", src)]);
    let ir = |passes: &str| {
        let out = kdslc_in(dir.path(), &["k.kdsl", "--emit", "ir", "--passes", passes]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let all = ir("all");
    assert!(
        !all.contains("while") && all.contains("shfl_down(%0, 16u32)"),
        "{all}"
    );
    assert!(all.contains("(thread_idx.x & 31u32)"), "{all}");
    let none = ir("none");
    assert!(none.contains("while") && none.contains("lane_id"), "{none}");
    let unroll = ir("unroll");
    assert!(
        !unroll.contains("while") && unroll.contains("lane_id"),
        "{unroll}"
    );
    // The default is every pass.
    let out = kdslc_in(dir.path(), &["k.kdsl", "--emit", "ir"]);
    assert_eq!(text(&out.stdout), all);

    let out = kdslc_in(dir.path(), &["k.kdsl", "--passes", "unroll,gvn"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("no pass `gvn`") && err.contains("special, unroll, stream, licm"),
        "{err}"
    );
}

/// No output replaces a file the build reads, or the other output: `-o`
/// or `-MF` (or `-MD`'s `OUT.d`) naming the input or an import, under any
/// spelling, through a symbolic or a hard link, or `-MF` naming the `-o`
/// output, is refused (exit 2) and nothing is written.
#[cfg(unix)]
#[test]
fn outputs_never_replace_inputs_or_each_other() {
    let lib = "const SCALE: f32 = 2.0;\n";
    let main = "import \"lib.kdsl\";\nkernel k(out: global mut [f32]) block(32) {\n    out[0] = SCALE;\n}\n";
    let dir = project(&[
        ("main.kdsl", main),
        ("lib.kdsl", lib),
        ("old.ptx", "old"),
        ("sub/x", ""),
    ]);
    let d = dir.path();
    std::os::unix::fs::symlink("lib.kdsl", d.join("link.kdsl")).unwrap();
    fs::hard_link(d.join("lib.kdsl"), d.join("hard.kdsl")).unwrap();
    std::os::unix::fs::symlink("main.kdsl", d.join("main.ptx.d")).unwrap();
    let before = listing(d);
    let cases: &[(&[&str], &str)] = &[
        (
            &["main.kdsl", "-o", "./main.kdsl"],
            "the output `./main.kdsl` is the input file",
        ),
        (
            &["main.kdsl", "-o", "out.ptx", "-MF", "main.kdsl"],
            "the depfile `main.kdsl` (from -MF) is the input file",
        ),
        (
            &["main.kdsl", "-o", "main.ptx", "-MD"],
            "the depfile `main.ptx.d` (from -MD) is the input file; give another `-MF DEPFILE`",
        ),
        (
            &["main.kdsl", "-o", "out.ptx", "-MF", "./out.ptx"],
            "the depfile `./out.ptx` (from -MF) is the output `out.ptx`",
        ),
        (
            &["main.kdsl", "-o", "old.ptx", "-MF", "sub/../old.ptx"],
            "is the output `old.ptx`",
        ),
        (
            &["main.kdsl", "-o", "lib.kdsl"],
            "the output `lib.kdsl` is `lib.kdsl`, a file the program imports",
        ),
        (
            &["main.kdsl", "-o", "link.kdsl"],
            "a file the program imports; give another `-o`",
        ),
        (
            &["main.kdsl", "-o", "hard.kdsl"],
            "a file the program imports",
        ),
        (
            &["main.kdsl", "--emit", "manifest", "-o", "sub/../lib.kdsl"],
            "a file the program imports",
        ),
        (
            &["main.kdsl", "-o", "out.ptx", "-MF", "link.kdsl"],
            "the depfile `link.kdsl` (from -MF) is `lib.kdsl`, a file the program imports",
        ),
    ];
    for (args, said) in cases {
        let out = kdslc_in(d, args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert_eq!(listing(d), before, "{args:?} wrote something");
        assert_eq!(fs::read_to_string(d.join("main.kdsl")).unwrap(), main);
        assert_eq!(fs::read_to_string(d.join("lib.kdsl")).unwrap(), lib);
        assert_eq!(fs::read_to_string(d.join("old.ptx")).unwrap(), "old");
    }
    // Devices are no one's input: both outputs may go to /dev/null.
    let out = kdslc_in(d, &["main.kdsl", "-o", "/dev/null", "-MF", "/dev/null"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// A depfile that cannot be written (its folder is missing, or it would
/// name a file Make cannot read) fails the build before the output is
/// replaced.
#[test]
fn a_depfile_that_cannot_be_written_leaves_the_old_output() {
    let dir = project(&[
        ("main.kdsl", "import \"a;b.kdsl\";\nkernel k(out: global mut [f32]) block(32) {\n    out[0] = ONE;\n}\n"),
        ("a;b.kdsl", "const ONE: f32 = 1.0;\n"),
        ("good.kdsl", GOOD),
        ("out.ptx", "old"),
    ]);
    let d = dir.path();
    let before = listing(d);
    for (args, said) in [
        (
            &["good.kdsl", "-o", "out.ptx", "-MF", "deps/out.d"][..],
            "cannot write",
        ),
        (
            &["main.kdsl", "-o", "out.ptx", "-MD"][..],
            "make cannot read the file name `a;b.kdsl` (it holds `;`)",
        ),
    ] {
        let out = kdslc_in(d, args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
        assert_eq!(fs::read_to_string(d.join("out.ptx")).unwrap(), "old");
        assert_eq!(listing(d), before);
    }
    // Without a depfile, the name is no problem.
    let out = kdslc_in(d, &["main.kdsl", "-o", "out.ptx"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
