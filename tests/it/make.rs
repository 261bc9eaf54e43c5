//! `samples/Makefile` with depfiles, driven by real `make`: a clean build,
//! an incremental rebuild after touching an imported file, and a broken file
//! that fails the build and leaves its previous output untouched.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read samples") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("file name");
        if path.is_dir() {
            copy_dir(&path, &to.join(name));
        } else if !name.to_string_lossy().ends_with(".ptx")
            && !name.to_string_lossy().ends_with(".d")
        {
            std::fs::copy(&path, to.join(name)).expect("copy");
        }
    }
}

fn make(dir: &Path) -> std::process::Output {
    make_with(dir, &[])
}

fn make_with(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("make")
        .arg("-C")
        .arg(dir)
        .arg(format!("KDSLC={}", env!("CARGO_BIN_EXE_kdslc")))
        .args(args)
        .output()
        .expect("make runs")
}

fn mtimes(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut out: Vec<(PathBuf, SystemTime)> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .map(|p| {
            let t = std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .expect("mtime");
            (p, t)
        })
        .collect();
    out.sort();
    out
}

fn make_available() -> bool {
    let found = Command::new("make")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").map_or(true, |v| v.is_empty()),
            "make is missing in CI"
        );
        eprintln!("SKIPPED: `make` not found");
    }
    found
}

#[test]
fn makefile_builds_rebuilds_dependants_and_keeps_old_output_on_failure() {
    if !make_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("samples");
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("samples"), &dir);

    // A clean build makes one .ptx and one depfile per sample.
    let out = make(&dir);
    assert!(
        out.status.success(),
        "make failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sources = std::fs::read_dir(&dir).expect("dir").filter(|e| {
        e.as_ref()
            .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "kdsl"))
    });
    let built = mtimes(&dir);
    assert_eq!(built.len(), sources.count(), "one .ptx per sample");
    let dep = std::fs::read_to_string(dir.join("blend_rows.ptx.d")).expect("depfile");
    assert!(
        dep.starts_with("blend_rows.ptx: blend_rows.kdsl"),
        "depfile: {dep}"
    );
    assert!(
        dep.contains("common/blend.kdsl"),
        "depfile names the import: {dep}"
    );

    // Nothing to do the second time.
    let out = make(&dir);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Nothing to be done"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Touching the imported file rebuilds exactly the sample that imports it.
    std::thread::sleep(Duration::from_millis(1100));
    let import = dir.join("common/blend.kdsl");
    let text = std::fs::read_to_string(&import).expect("read import");
    std::fs::write(&import, text).expect("touch import");
    let out = make(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = mtimes(&dir);
    let changed: Vec<String> = built
        .iter()
        .zip(&after)
        .filter(|(a, b)| a.1 != b.1)
        .map(|(a, _)| {
            a.0.file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(changed, vec!["blend_rows.ptx".to_string()]);

    // A broken file fails the build (make's status 2) and keeps its old PTX.
    let old = std::fs::read(dir.join("saxpy.ptx")).expect("old ptx");
    std::thread::sleep(Duration::from_millis(1100));
    let mut src = std::fs::read_to_string(dir.join("saxpy.kdsl")).expect("src");
    src.push_str("\nkernel broken( {\n");
    std::fs::write(dir.join("saxpy.kdsl"), src).expect("break it");
    let out = make(&dir);
    assert_eq!(out.status.code(), Some(2), "make must fail");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("error[E00"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(dir.join("saxpy.ptx")).expect("ptx still there"),
        old,
        "old output untouched"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp") || (n.starts_with(".") && n != ".gitignore"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// The samples that `samples/Makefile` says need sm_90 (`NEEDS_SM90 := ...`).
fn needs_sm90(makefile: &str) -> Vec<String> {
    make_list(makefile, "NEEDS_SM90")
}

/// The samples of the Makefile variable `var` (`VAR := a b c`).
fn make_list(makefile: &str, var: &str) -> Vec<String> {
    let line = makefile
        .lines()
        .find(|l| l.starts_with(var))
        .unwrap_or_else(|| panic!("samples/Makefile lists {var}"));
    let mut names: Vec<String> = line
        .split(":=")
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    names.sort();
    names
}

/// The Makefile's list of samples that need more than 99 KiB of shared
/// memory is exactly the samples the compiler refuses for sm_120 with E0122
/// (sm_86 and sm_89 refuse them too, and more besides: E0200).
#[test]
fn makefile_lists_the_samples_past_99_kib() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let makefile = std::fs::read_to_string(root.join("Makefile")).expect("Makefile");
    let listed = make_list(&makefile, "NEEDS_BIG_SMEM");
    let mut refused = Vec::new();
    for entry in std::fs::read_dir(&root).expect("samples") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "kdsl") {
            continue;
        }
        let opts = kdsl::Options {
            target: kdsl::target::Target::Sm120,
            check_only: true,
            ..kdsl::Options::default()
        };
        let c = kdsl::compile(&path, &opts).expect("readable sample");
        if c.diagnostics.iter().any(|d| d.code == "E0122") {
            let stem = path.file_stem().expect("stem").to_string_lossy();
            refused.push(stem.into_owned());
        }
    }
    refused.sort();
    assert_eq!(
        listed, refused,
        "NEEDS_BIG_SMEM in samples/Makefile is out of date"
    );
}

/// The Makefile's documented `TARGET=sm_80` builds every sample that sm_80
/// can have, skips the others with a message, and its list of sm_90-only
/// samples is exactly the samples the compiler refuses for sm_80 (E0200).
#[test]
fn makefile_target_sm80_skips_the_sm90_samples() {
    if !make_available() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let listed = needs_sm90(&std::fs::read_to_string(root.join("Makefile")).expect("Makefile"));
    let mut refused = Vec::new();
    let mut all = Vec::new();
    for entry in std::fs::read_dir(&root).expect("samples") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "kdsl") {
            continue;
        }
        let stem = path
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let opts = kdsl::Options {
            target: kdsl::target::Target::Sm80,
            check_only: true,
            ..kdsl::Options::default()
        };
        let c = kdsl::compile(&path, &opts).expect("readable sample");
        if c.diagnostics.iter().any(|d| d.code == "E0200") {
            refused.push(stem.clone());
        }
        all.push(stem);
    }
    refused.sort();
    assert_eq!(
        listed, refused,
        "NEEDS_SM90 in samples/Makefile is out of date"
    );

    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("samples");
    copy_dir(&root, &dir);
    let out = make_with(&dir, &["TARGET=sm_80"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "make TARGET=sm_80 failed:\n{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!(
            "samples: skipping {}, which need sm_90",
            listed.join(" ")
        )),
        "{said}"
    );
    let mut built: Vec<String> = mtimes(&dir)
        .into_iter()
        .map(|(p, _)| {
            let ptx = std::fs::read_to_string(&p).expect("ptx");
            assert!(ptx.contains(".target sm_80"), "{}", p.display());
            p.file_stem().expect("stem").to_string_lossy().into_owned()
        })
        .collect();
    built.sort();
    let mut expected: Vec<String> = all.into_iter().filter(|s| !listed.contains(s)).collect();
    expected.sort();
    assert_eq!(built, expected);
}

/// Import names that Make reads specially (`:`, a space, `#`, `$`, `%`)
/// are escaped in the depfile so that real make reads them: the build is
/// then up to date, rebuilds when such an import changes, and, when one is
/// deleted, rebuilds (kdslc then reports the missing import) instead of
/// failing with "No rule to make target".
#[test]
fn depfiles_name_any_import_make_can_read() {
    if !make_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let odd = ["a:b.kdsl", "c d#e$f%.kdsl"];
    std::fs::write(
        dir.join("main.kdsl"),
        format!(
            "import \"{}\";\nimport \"{}\";\nkernel k(out: global mut [f32]) block(32) {{\n    out[0] = ONE + TWO;\n}}\n",
            odd[0], odd[1]
        ),
    )
    .expect("main");
    std::fs::write(dir.join(odd[0]), "const ONE: f32 = 1.0;\n").expect("import");
    std::fs::write(dir.join(odd[1]), "const TWO: f32 = 2.0;\n").expect("import");
    std::fs::write(
        dir.join("Makefile"),
        "out.ptx: main.kdsl\n\t$(KDSLC) -MD -o $@ $<\n\n-include out.ptx.d\n",
    )
    .expect("Makefile");
    let run = || {
        let out = make(dir);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), said)
    };
    let (status, said) = run();
    assert_eq!(status, Some(0), "{said}");
    let (status, said) = run();
    assert!(
        status == Some(0) && said.contains("is up to date"),
        "{said}"
    );
    for name in odd {
        std::thread::sleep(Duration::from_millis(1100));
        let text = std::fs::read_to_string(dir.join(name)).expect("read");
        std::fs::write(dir.join(name), text).expect("touch");
        let (status, said) = run();
        assert!(
            status == Some(0) && said.contains("-MD -o out.ptx"),
            "{name}: {said}"
        );
    }
    std::fs::remove_file(dir.join(odd[1])).expect("delete");
    let (status, said) = run();
    assert_eq!(status, Some(2), "{said}");
    assert!(
        said.contains("error[E0130]") && !said.contains("No rule"),
        "{said}"
    );
}
