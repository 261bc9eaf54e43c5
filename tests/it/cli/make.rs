//! `samples/Makefile` with depfiles, driven by real `make`: a clean build,
//! an incremental rebuild after touching an imported file, a broken file
//! that fails the build and leaves its previous output untouched, outputs
//! per target and rebuilt when the flags change, the compiler found from
//! anywhere and rebuilt (in the repository) only when its sources change;
//! and depfiles with names that Make reads specially.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read samples") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("file name");
        if path.is_dir() {
            // The Makefile's outputs (`build/`) of a `make -C samples` run
            // in the checkout are not sources: a copy starts without them.
            if name == "build" {
                continue;
            }
            copy_dir(&path, &to.join(name));
        } else if !name.to_string_lossy().ends_with(".ptx")
            && !name.to_string_lossy().ends_with(".d")
        {
            std::fs::copy(&path, to.join(name)).expect("copy");
        }
    }
}

/// A copy of `samples/` in a new temporary folder: the folder and the copy.
fn samples_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("samples");
    copy_dir(&crate::common::repo_root().join("samples"), &dir);
    (tmp, dir)
}

/// What make printed: its stdout, then its stderr.
fn said(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
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
    let (_tmp, dir) = samples_copy();

    // A clean build makes one .ptx and one depfile per sample.
    let out = make(&dir);
    assert!(
        out.status.success(),
        "make failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every sample but those that need sm_90a.
    let makefile = std::fs::read_to_string(dir.join("Makefile")).expect("Makefile");
    let arch_specific = make_list(&makefile, "NEEDS_SM90A");
    let sources = std::fs::read_dir(&dir).expect("dir").filter(|e| {
        e.as_ref().is_ok_and(|e| {
            let p = e.path();
            p.extension().is_some_and(|x| x == "kdsl")
                && !p
                    .file_stem()
                    .is_some_and(|s| arch_specific.iter().any(|a| s == a.as_str()))
        })
    });
    let built_in = dir.join("build/sm_90");
    let built = mtimes(&built_in);
    assert_eq!(built.len(), sources.count(), "one .ptx per sample");
    let dep = std::fs::read_to_string(built_in.join("blend_rows.ptx.d")).expect("depfile");
    assert!(
        dep.starts_with("build/sm_90/blend_rows.ptx: blend_rows.kdsl"),
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
    let after = mtimes(&built_in);
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
    let old = std::fs::read(built_in.join("saxpy.ptx")).expect("old ptx");
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
        std::fs::read(built_in.join("saxpy.ptx")).expect("ptx still there"),
        old,
        "old output untouched"
    );
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .chain(std::fs::read_dir(&built_in).expect("outputs"))
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
/// Whether the compiler refuses the sample `path` for `target` with `code`
/// (checked only).
fn refused_for(path: &Path, target: kdsl::target::Target, code: &str) -> bool {
    let opts = kdsl::Options {
        target,
        check_only: true,
        ..kdsl::Options::default()
    };
    let c = kdsl::compile(path, &opts).expect("readable sample");
    c.diagnostics.iter().any(|d| d.code == code)
}

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
    let root = crate::common::repo_root().join("samples");
    let makefile = std::fs::read_to_string(root.join("Makefile")).expect("Makefile");
    let listed = make_list(&makefile, "NEEDS_BIG_SMEM");
    let mut refused = Vec::new();
    for entry in std::fs::read_dir(&root).expect("samples") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "kdsl") {
            continue;
        }
        if refused_for(&path, kdsl::target::Target::Sm120, "E0122") {
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
/// can have, skips the others with a message, and its lists of sm_90-only
/// and sm_90a-only samples together are exactly the samples the compiler
/// refuses for sm_80 (E0200).
#[test]
fn makefile_target_sm80_skips_the_sm90_samples() {
    if !make_available() {
        return;
    }
    let root = crate::common::repo_root().join("samples");
    let makefile = std::fs::read_to_string(root.join("Makefile")).expect("Makefile");
    let listed = needs_sm90(&makefile);
    let arch_specific = make_list(&makefile, "NEEDS_SM90A");
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
        if refused_for(&path, kdsl::target::Target::Sm80, "E0200") {
            refused.push(stem.clone());
        }
        all.push(stem);
    }
    refused.sort();
    let mut both: Vec<String> = listed.iter().chain(&arch_specific).cloned().collect();
    both.sort();
    assert_eq!(
        both, refused,
        "NEEDS_SM90 and NEEDS_SM90A in samples/Makefile are out of date"
    );

    let (_tmp, dir) = samples_copy();
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
    assert!(!dir.join("build/sm_90").exists(), "only sm_80 was built");
    let mut built: Vec<String> = mtimes(&dir.join("build/sm_80"))
        .into_iter()
        .map(|(p, _)| {
            let ptx = std::fs::read_to_string(&p).expect("ptx");
            assert!(ptx.contains(".target sm_80"), "{}", p.display());
            p.file_stem().expect("stem").to_string_lossy().into_owned()
        })
        .collect();
    built.sort();
    let mut expected: Vec<String> = all.into_iter().filter(|s| !both.contains(s)).collect();
    expected.sort();
    assert_eq!(built, expected);
}

/// The samples that need sm_90a (wgmma) are exactly those the compiler
/// refuses for sm_90 (E0200): `TARGET=sm_90a` builds every sample, each for
/// sm_90a, and any other target skips them with a message.
#[test]
fn makefile_target_sm90a_builds_the_tensor_core_samples() {
    if !make_available() {
        return;
    }
    let root = crate::common::repo_root().join("samples");
    let makefile = std::fs::read_to_string(root.join("Makefile")).expect("Makefile");
    let listed = make_list(&makefile, "NEEDS_SM90A");
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
        if refused_for(&path, kdsl::target::Target::Sm90, "E0200") {
            refused.push(stem.clone());
        }
        all.push(stem);
    }
    refused.sort();
    all.sort();
    assert!(!listed.is_empty());
    assert_eq!(
        listed, refused,
        "NEEDS_SM90A in samples/Makefile is out of date"
    );

    let (_tmp, dir) = samples_copy();
    let out = make(&dir);
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        said(&out).contains(&format!(
            "samples: skipping {}, which need sm_90a for wgmma (TARGET=sm_90;",
            listed.join(" ")
        )),
        "{}",
        said(&out)
    );
    let out = make_with(&dir, &["TARGET=sm_90a"]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(!said(&out).contains("skipping"), "{}", said(&out));
    let mut built: Vec<String> = mtimes(&dir.join("build/sm_90a"))
        .into_iter()
        .map(|(p, _)| {
            let ptx = std::fs::read_to_string(&p).expect("ptx");
            assert!(ptx.contains(".target sm_90a"), "{}", p.display());
            p.file_stem().expect("stem").to_string_lossy().into_owned()
        })
        .collect();
    built.sort();
    assert_eq!(built, all);
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
        (out.status.code(), said(&out))
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

/// Runs `make` in `dir` with `args`, the given PATH and no KDSLC.
fn make_on_path(dir: &Path, path: &str, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new("make")
        .current_dir(dir)
        .args(args)
        .env("PATH", path)
        .env_remove("KDSLC")
        .output()
        .expect("make runs");
    (out.status.code(), said(&out))
}

/// A folder of tools for PATH: a `cargo` that logs its runs to `LOG` (and
/// touches `touch`, as a build would), and `kdslc` when asked for.
#[cfg(unix)]
fn tools(dir: &Path, kdslc: bool, touch: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let log = dir.join("cargo.log");
    let script = format!(
        "#!/bin/sh\necho \"cargo $*\" >> '{}'\ntouch '{}'\n",
        log.display(),
        touch.display()
    );
    std::fs::write(bin.join("cargo"), script).expect("cargo");
    std::fs::set_permissions(bin.join("cargo"), std::fs::Permissions::from_mode(0o755))
        .expect("chmod");
    if kdslc {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_kdslc"), bin.join("kdslc")).expect("link");
    }
    (bin, log)
}

fn cargo_runs(log: &Path) -> usize {
    std::fs::read_to_string(log).map_or(0, |t| t.lines().count())
}

/// Outside the repository, without KDSLC, the samples build with the
/// `kdslc` on PATH and no cargo, from their own folder or (with `-f`) from
/// another one; with no kdslc anywhere, make says what to do.
#[cfg(unix)]
#[test]
fn makefile_works_outside_the_repository() {
    if !make_available() {
        return;
    }
    let (tmp, dir) = samples_copy();
    let (bin, log) = tools(tmp.path(), true, &tmp.path().join("untouched"));
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let (status, said) = make_on_path(&dir, &path, &[]);
    assert_eq!(status, Some(0), "{said}");
    assert!(dir.join("build/sm_90/saxpy.ptx").is_file(), "{said}");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let makefile = dir.join("Makefile").display().to_string();
    let (status, said) = make_on_path(&elsewhere, &path, &["-f", &makefile, "TARGET=sm_80"]);
    assert_eq!(status, Some(0), "{said}");
    assert!(elsewhere.join("build/sm_80/saxpy.ptx").is_file(), "{said}");
    assert_eq!(cargo_runs(&log), 0, "cargo ran");

    let (status, said) = make_on_path(&dir, "/usr/bin:/bin", &["TARGET=sm_80"]);
    assert_eq!(status, Some(2), "{said}");
    assert!(
        said.contains("give KDSLC=/path/to/kdslc, or put kdslc on PATH"),
        "{said}"
    );
    let (status, said) = make_on_path(&dir, "/usr/bin:/bin", &["clean"]);
    assert_eq!(status, Some(0), "clean needs no compiler: {said}");
    assert!(!dir.join("build").exists(), "{said}");
}

/// In the repository (here a stand-in with the compiler's layout), the
/// samples use its release build and rebuild it with cargo only when one
/// of its sources is newer than it, never on every `make`.
#[cfg(unix)]
#[test]
fn makefile_builds_the_compiler_only_when_its_sources_change() {
    if !make_available() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    let day_ago = SystemTime::now() - Duration::from_secs(86_400);
    for (file, text) in [
        ("Cargo.toml", "[package]\nname = \"kdsl\"\n"),
        ("Cargo.lock", ""),
        ("build.rs", ""),
        ("src/main.rs", "fn main() {}\n"),
        ("grammar/kdsl.lalrpop", ""),
    ] {
        let path = repo.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        let f = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        f.set_modified(day_ago).expect("age it");
    }
    let binary = repo.join("target/release/kdslc");
    std::fs::create_dir_all(binary.parent().expect("parent")).expect("mkdir");
    std::fs::copy(env!("CARGO_BIN_EXE_kdslc"), &binary).expect("the compiler");
    let dir = repo.join("samples");
    copy_dir(&crate::common::repo_root().join("samples"), &dir);
    let (bin, log) = tools(tmp.path(), false, &binary);
    let path = format!("{}:/usr/bin:/bin", bin.display());

    let (status, said) = make_on_path(&dir, &path, &[]);
    assert_eq!(status, Some(0), "{said}");
    let (status, said) = make_on_path(&dir, &path, &[]);
    assert!(
        status == Some(0) && said.contains("Nothing to be done"),
        "{said}"
    );
    assert_eq!(
        cargo_runs(&log),
        0,
        "cargo ran with the compiler up to date"
    );

    // A newer source: cargo runs once, and the samples are rebuilt with
    // the new compiler.
    let before = mtimes(&dir.join("build/sm_90"));
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(repo.join("src/main.rs"), "fn main() { }\n").expect("edit");
    let (status, said) = make_on_path(&dir, &path, &[]);
    assert_eq!(status, Some(0), "{said}");
    assert_eq!(cargo_runs(&log), 1, "{said}");
    let after = mtimes(&dir.join("build/sm_90"));
    assert!(before.iter().zip(&after).all(|(a, b)| a.1 != b.1), "{said}");
    let (status, said) = make_on_path(&dir, &path, &[]);
    assert!(
        status == Some(0) && said.contains("Nothing to be done"),
        "{said}"
    );
    assert_eq!(cargo_runs(&log), 1);
}

/// Switching TARGET builds that target's outputs in their own folder and
/// leaves the other target's as they were; changing KDSLFLAGS rebuilds.
#[test]
fn makefile_keeps_targets_apart_and_rebuilds_on_new_flags() {
    if !make_available() {
        return;
    }
    let (_tmp, dir) = samples_copy();
    let targets = |sub: &str| -> Vec<String> {
        mtimes(&dir.join("build").join(sub))
            .iter()
            .map(|(p, _)| {
                let ptx = std::fs::read_to_string(p).expect("ptx");
                let line = ptx
                    .lines()
                    .find(|l| l.starts_with(".target"))
                    .expect(".target");
                line.to_string()
            })
            .collect()
    };
    assert!(make(&dir).status.success());
    let out = make_with(&dir, &["TARGET=sm_80"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sm80 = targets("sm_80");
    let sm90 = targets("sm_90");
    assert!(
        !sm80.is_empty() && sm80.iter().all(|t| t.starts_with(".target sm_80")),
        "{sm80:?}"
    );
    assert!(
        sm90.len() > sm80.len() && sm90.iter().all(|t| t.starts_with(".target sm_90")),
        "{sm90:?}"
    );

    let before = mtimes(&dir.join("build/sm_90"));
    let out = make_with(&dir, &["KDSLFLAGS=--lineinfo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = mtimes(&dir.join("build/sm_90"));
    assert!(
        before.iter().zip(&after).all(|(a, b)| a.1 != b.1),
        "every output rebuilt"
    );
    let saxpy = std::fs::read_to_string(dir.join("build/sm_90/saxpy.ptx")).expect("ptx");
    assert!(saxpy.contains(".loc"), "built with --lineinfo");
    let out = make_with(&dir, &["KDSLFLAGS=--lineinfo"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Nothing to be done"));

    // `clean` removes every target's outputs; `clean all` builds again.
    let out = make_with(&dir, &["clean", "all"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.join("build/sm_80").exists());
    assert_eq!(targets("sm_90").len(), sm90.len());
}
