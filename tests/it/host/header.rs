//! `kdslc --emit header`: a golden header per sample (with `--header-ptx`,
//! so that a change to a sample's PTX changes only its golden PTX), every
//! sample's header compiled by gcc as C99 and by g++ as C++17 with
//! `-Wall -Wextra -Werror` against the pinned `cuda.h`, all of them in one
//! translation unit, the embedded PTX byte for byte, and the header written
//! with the PTX and the manifest from one compilation.
//!
//! Regenerate the golden headers after an intended change with
//! `KDSL_BLESS=1 cargo test --test it host::header::`, and review the diff.

use crate::common::{self, kdslc, repo_root, text};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Each sample with its target (a kernel with constants: its defaults).
fn samples() -> Vec<(PathBuf, String)> {
    common::kdsl_suite("samples", 8)
        .into_iter()
        .map(|p| {
            let t = common::source_target(&p).name().to_string();
            (p, t)
        })
        .collect()
}

/// Beside the samples: every kind of scalar parameter
/// (`tests/fixtures/header/kinds.kdsl`) and a tensor map of every element
/// type and rank 1 to 5 (`tests/valid/tensor_decls.kdsl`).
fn more() -> Vec<(PathBuf, String)> {
    [
        "tests/fixtures/header/kinds.kdsl",
        "tests/valid/tensor_decls.kdsl",
    ]
    .iter()
    .map(|p| (repo_root().join(p), "sm_90".to_string()))
    .collect()
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

/// `kdslc FILE --target T --emit header ARGS -o -`.
fn header(path: &Path, target: &str, args: &[&str]) -> String {
    let mut all = vec![
        path.to_str().unwrap(),
        "--target",
        target,
        "--emit",
        "header",
        "-o",
        "-",
    ];
    all.extend(args);
    let out = kdslc(&repo_root(), &all);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn every_sample_matches_its_golden_header() {
    let bless = std::env::var_os("KDSL_BLESS").is_some();
    let mut stale = Vec::new();
    let mut cases: Vec<(PathBuf, String, String, Vec<&str>)> = samples()
        .into_iter()
        .chain(more())
        .map(|(p, t)| {
            let name = stem(&p);
            (p, t, name, vec![])
        })
        .collect();
    // A kernel with constants, three instantiations (samples/Makefile's).
    cases.push((
        repo_root().join("samples/sgemm_tiled.kdsl"),
        "sm_90".into(),
        "sgemm_tiled.instances".into(),
        vec![
            "--const", "TILE=8", "--const", "TILE=16", "--const", "TILE=32",
        ],
    ));
    for (path, target, name, flags) in &cases {
        let ptx = format!("{}.{target}.ptx", stem(path));
        let mut args = vec!["--header-ptx", ptx.as_str()];
        args.extend(flags);
        let got = header(path, target, &args);
        let golden = repo_root().join(format!("tests/golden/header/{name}.h"));
        if bless {
            std::fs::write(&golden, &got).unwrap();
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(want) if want == got => {}
            Ok(_) => stale.push(format!(
                "{} differs from {}",
                path.display(),
                golden.display()
            )),
            Err(_) => stale.push(format!("{} is missing", golden.display())),
        }
    }
    assert!(
        stale.is_empty(),
        "{}\nregenerate with KDSL_BLESS=1 cargo test --test it host::header:: and review the diff",
        stale.join("\n")
    );
}

/// Compiles `source` (a file in `dir`) with `compiler` and `flags`; fails
/// the test with the compiler's messages.
fn compile(dir: &Path, compiler: &str, flags: &[&str], source: &str, out: &str) {
    let inc = common::ptxas::require_cuda_include().expect("checked by the caller");
    let result = Command::new(compiler)
        .current_dir(dir)
        .args(flags)
        .arg(format!("-I{}", inc.display()))
        .args(["-I.", "-o", out, source])
        .output()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(
        result.status.success(),
        "{compiler} {flags:?} {source}:\n{}",
        text(&result.stderr)
    );
}

#[test]
fn every_header_compiles_as_c_and_cpp_and_embeds_the_ptx() {
    if common::ptxas::require_cuda_include().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut includes = String::new();
    let mut prints = String::new();
    for (path, target) in samples().into_iter().chain(more()) {
        let name = stem(&path);
        let h = header(&path, &target, &[]);
        std::fs::write(dir.path().join(format!("{name}.h")), &h).unwrap();
        // Each header alone, as C and as C++.
        let one = format!("{name}_only.c");
        std::fs::write(
            dir.path().join(&one),
            format!(
                "#include \"{name}.h\"\n#include \"{name}.h\"\nint main(void) {{ return 0; }}\n"
            ),
        )
        .unwrap();
        compile(
            dir.path(),
            "gcc",
            &["-std=c99", "-Wall", "-Wextra", "-Werror", "-c"],
            &one,
            "/dev/null",
        );
        compile(
            dir.path(),
            "g++",
            &[
                "-std=c++17",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-x",
                "c++",
                "-c",
            ],
            &one,
            "/dev/null",
        );
        includes.push_str(&format!("#include \"{name}.h\"\n"));
        prints.push_str(&format!(
            "    if (strcmp(argv[1], \"{name}\") == 0) fputs(kdsl_{name}_module_ptx, stdout);\n"
        ));
    }
    // Every header in one file: C, C++, and a program that prints the
    // embedded PTX (linked without the driver: nothing calls it).
    let all = format!(
        "{includes}#include <stdio.h>\n#include <string.h>\n\
         int main(int argc, char **argv)\n{{\n    if (argc < 2) return 2;\n{prints}    return 0;\n}}\n"
    );
    std::fs::write(dir.path().join("all.c"), all).unwrap();
    compile(
        dir.path(),
        "g++",
        &[
            "-std=c++17",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-x",
            "c++",
            "-c",
        ],
        "all.c",
        "/dev/null",
    );
    compile(
        dir.path(),
        "gcc",
        &["-std=c99", "-Wall", "-Wextra", "-Werror"],
        "all.c",
        "all",
    );
    for (path, target) in samples() {
        let name = stem(&path);
        let printed = Command::new(dir.path().join("all"))
            .arg(&name)
            .output()
            .unwrap();
        let golden =
            std::fs::read_to_string(repo_root().join(format!("tests/golden/{name}.{target}.ptx")))
                .unwrap();
        assert!(
            text(&printed.stdout) == golden,
            "{name}: the embedded PTX is not the golden PTX"
        );
    }
}

#[test]
fn header_ptx_and_manifest_from_one_run_with_one_depfile() {
    let dir = common::project(&[("lib/one.kdsl", "const ONE: u32 = 1;\n")]);
    std::fs::write(
        dir.path().join("k.kdsl"),
        format!("import \"lib/one.kdsl\";\n{}", common::SAXPY),
    )
    .unwrap();
    let out = kdslc(
        dir.path(),
        &[
            "k.kdsl",
            "--emit",
            "ptx,header=out/k.h,manifest=k.json",
            "-o",
            "k.ptx",
            "-MD",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "the folder out/ does not exist");
    assert!(!dir.path().join("k.ptx").exists() && !dir.path().join("k.json").exists());
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let out = kdslc(
        dir.path(),
        &[
            "k.kdsl",
            "--emit",
            "ptx,header=out/k.h,manifest=k.json",
            "-o",
            "k.ptx",
            "-MD",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let read = |p: &str| std::fs::read_to_string(dir.path().join(p)).unwrap();
    assert_eq!(
        read("k.ptx.d"),
        "k.ptx out/k.h k.json: k.kdsl lib/one.kdsl\n\nlib/one.kdsl:\n"
    );
    // Each output is what its emit alone writes.
    for (kind, file) in [
        ("ptx", "k.ptx"),
        ("header", "out/k.h"),
        ("manifest", "k.json"),
    ] {
        let alone = kdslc(dir.path(), &["k.kdsl", "--emit", kind, "-o", "-"]);
        assert_eq!(text(&alone.stdout), read(file), "{kind}");
    }
    // The header's default name.
    let out = kdslc(dir.path(), &["k.kdsl", "--emit", "header"]);
    assert!(out.status.success());
    assert_eq!(read("k.h"), read("out/k.h"));
    // A failed build leaves every output as it was.
    std::fs::write(dir.path().join("lib/one.kdsl"), "const ONE: u32 = ;\n").unwrap();
    let before: Vec<String> = ["k.ptx", "out/k.h", "k.json", "k.ptx.d"]
        .iter()
        .map(|p| read(p))
        .collect();
    let out = kdslc(
        dir.path(),
        &[
            "k.kdsl",
            "--emit",
            "ptx,header=out/k.h,manifest=k.json",
            "-o",
            "k.ptx",
            "-MD",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let after: Vec<String> = ["k.ptx", "out/k.h", "k.json", "k.ptx.d"]
        .iter()
        .map(|p| read(p))
        .collect();
    assert_eq!(before, after);
}

#[test]
fn emit_lists_that_cannot_be_written_are_usage_errors() {
    let dir = common::project(&[("k.kdsl", common::SAXPY)]);
    for (args, message) in [
        (
            &["--emit", "header,ptx", "-o", "k.h"][..],
            "error: `-o` is the output of the first `--emit` kind without a path; give `ptx` its own: `--emit ...,ptx=PATH`\n",
        ),
        (
            &["--emit", "ptx,ir"][..],
            "error: `--emit ir` is a view for debugging and cannot be written beside other kinds; the kinds one compilation can write together are ptx, cubin, manifest and header\n",
        ),
        (&["--emit", "ptx,ptx=b.ptx"][..], "error: `--emit` names `ptx` twice\n"),
        (
            &["--emit", "header=a.h", "-o", "b.h"][..],
            "error: `-o b.h` names no output: every `--emit` kind has its own `=PATH`\n",
        ),
        (
            &["--emit", "ptx=-,header=-"][..],
            "error: only one `--emit` kind can go to stdout (`-`)\n",
        ),
        (
            &["--emit", "ptx=x.out,header=./x.out"][..],
            "error: `--emit ptx` and `--emit header` would both write `./x.out`; give each a path of its own\n",
        ),
        (
            &["--header-ptx", "k.ptx"][..],
            "error: `--header-ptx` says where a header finds the PTX, so it needs `--emit header`\n",
        ),
        (
            &["--emit", "header=k.kdsl"][..],
            "error: the output `k.kdsl` is the input file; give another `-o`\n",
        ),
    ] {
        let mut all = vec!["k.kdsl"];
        all.extend(args);
        let out = kdslc(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&out.stderr), message, "{args:?}");
    }
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["k.kdsl"], "nothing written");
}

/// A cubin beside the PTX and the header: ptxas puts it in place after
/// the others are made, and the depfile names all three.
#[test]
fn a_cubin_in_the_list() {
    let Some(ptxas) = common::ptxas::require_ptxas() else {
        return;
    };
    let dir = common::project(&[("k.kdsl", common::SAXPY)]);
    let out = common::kdslc_command(dir.path())
        .args([
            "k.kdsl",
            "--emit",
            "ptx,cubin=k.cubin,header=k.h",
            "-o",
            "k.ptx",
            "-MD",
        ])
        .env("PTXAS", &ptxas)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let cubin = std::fs::read(dir.path().join("k.cubin")).unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("k.ptx.d")).unwrap(),
        "k.ptx k.cubin k.h: k.kdsl\n"
    );
    assert!(dir.path().join("k.h").is_file() && dir.path().join("k.ptx").is_file());
}
