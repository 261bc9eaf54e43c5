//! `--const` on the command line (language.md §2.6, cli.md): the `.entry`s
//! a build writes, the manifest of instantiations (snapshot, and
//! docs/manifest.md's example), `--emit ir`, and every usage error: an
//! unknown constant or kernel, a value of the wrong type or out of range,
//! a malformed flag, too many instantiations, for `build` and `check`.

use crate::common::{kdslc, project, text};

const ROWS_FLAGS: &[&str] = &["--const", "N=128"];

/// The example of language.md §2.6.
fn rows_example() -> String {
    let text = std::fs::read_to_string(crate::common::repo_root().join("docs/language.md"))
        .expect("docs/language.md");
    let section = text.split("### 2.6 Kernel constants").nth(1).expect("§2.6");
    let start = section.find("```kdsl\n").expect("an example") + "```kdsl\n".len();
    let len = section[start..].find("```").expect("its end");
    section[start..start + len].to_string()
}

const KERNELS: &str =
    "kernel a<const N: u32 = 32, const ELEM: type = f32>(x: global mut [ELEM]) block(N) {
    x[thread_idx.x] = 1 as ELEM;
}

kernel b<const N: i32 = -1, const ON: bool = true>(y: global mut [i32]) block(32) {
    if ON {
        y[thread_idx.x] = N;
    }
}

kernel plain(z: global mut [u32]) {
    z[thread_idx.x] = 2;
}
";

fn entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| l.strip_prefix(".visible .entry "))
        .map(|l| l.trim_end_matches('(').to_string())
        .collect()
}

#[test]
fn each_value_is_an_entry_and_the_flag_names_its_kernel() {
    let dir = project(&[("k.kdsl", KERNELS)]);
    let build = |flags: &[&str]| {
        let mut args = vec!["k.kdsl", "-o", "-"];
        args.extend_from_slice(flags);
        let o = kdslc(dir.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{flags:?}: {}", text(&o.stderr));
        entries(&text(&o.stdout))
    };
    assert_eq!(build(&[]), ["a", "b", "plain"]);
    // `N` is a constant of both kernels; `a.N` of one.
    assert_eq!(build(&["--const", "N=64"]), ["a__N_64", "b__N_64", "plain"]);
    assert_eq!(
        build(&["--const", "a.N=64", "--const", "N=32", "--const", "ON=false"]),
        ["a__N_64", "a", "b__N_32__ON_false", "plain"]
    );
    // Every combination, the first constant varying slowest.
    assert_eq!(
        build(&[
            "--const", "a.N=64", "--const", "a.N=128", "--const", "ELEM=u8", "--const", "ELEM=f64"
        ]),
        [
            "a__N_64__ELEM_u8",
            "a__N_64__ELEM_f64",
            "a__N_128__ELEM_u8",
            "a__N_128__ELEM_f64",
            "b",
            "plain"
        ]
    );
    // Negative values, other spellings of one value (one instantiation).
    assert_eq!(
        build(&[
            "--const",
            "b.N=-3",
            "--const",
            "b.N=-0x3",
            "--const",
            "b.N=-1i32"
        ]),
        ["a", "b__N_m3", "b", "plain"]
    );
}

#[test]
fn bad_consts_are_usage_errors_naming_the_constants() {
    let dir = project(&[("k.kdsl", KERNELS)]);
    let listing = "the kernels' constants: `a<const N: u32 = 32, const ELEM: type = f32>`; `b<const N: i32 = -1, const ON: bool = true>`";
    for (sub, flag, want) in [
        ("build", "M=1", format!("`--const M=1`: no kernel has a constant `M`; {listing}")),
        ("check", "M=1", format!("`--const M=1`: no kernel has a constant `M`; {listing}")),
        ("build", "plain.N=1", format!("`--const plain.N=1`: kernel `plain` has no constant `N`; {listing}")),
        ("build", "c.N=1", format!("`--const c.N=1`: there is no kernel `c`; {listing}")),
        ("build", "N=-1", "`--const N=-1`: invalid value for `N` (u32) of kernel `a`: `-1` is out of range for u32 (0 to 4294967295)".to_string()),
        ("build", "b.N=2147483648", "`--const b.N=2147483648`: invalid value for `N` (i32) of kernel `b`: `2147483648` is out of range for i32 (-2147483648 to 2147483647)".to_string()),
        ("build", "ON=1", "`--const ON=1`: invalid value for `ON` (bool) of kernel `b`: `1` is not a bool (true or false)".to_string()),
        ("build", "ELEM=float", "`--const ELEM=float`: invalid value for `ELEM` (type) of kernel `a`: `float` is not a type; the types are".to_string()),
        ("build", "N=1.5", "`--const N=1.5`: invalid value for `N` (u32) of kernel `a`".to_string()),
    ] {
        let o = kdslc(dir.path(), &[sub, "k.kdsl", "--const", flag]);
        assert_eq!(o.status.code(), Some(2), "{sub} --const {flag}");
        let err = text(&o.stderr);
        assert!(err.contains(&want), "{sub} --const {flag}:\n{err}");
        assert!(!err.contains("error["), "no diagnostics: {err}");
    }
    // Malformed flags: clap's usage errors.
    for flag in ["N", "=1", "N=", "a.b.N=1", "1N=2"] {
        let o = kdslc(dir.path(), &["k.kdsl", "--const", flag]);
        assert_eq!(o.status.code(), Some(2), "--const {flag}");
        assert!(
            text(&o.stderr).contains("NAME=VALUE or KERNEL.NAME=VALUE"),
            "--const {flag}: {}",
            text(&o.stderr)
        );
    }
    // At most 64 instantiations of a kernel.
    let mut args = vec!["k.kdsl".to_string()];
    for n in 1..=9 {
        args.extend(["--const".into(), format!("a.N={n}")]);
    }
    for t in ["u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64"] {
        args.extend(["--const".into(), format!("ELEM={t}")]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = kdslc(dir.path(), &args);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("`--const` asks for 72 instantiations of kernel `a`, more than the 64 one kernel may have"),
        "{}",
        text(&o.stderr)
    );
    // In JSON, a usage error is a JSON object.
    let o = kdslc(
        dir.path(),
        &[
            "check",
            "k.kdsl",
            "--const",
            "M=1",
            "--message-format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let line = text(&o.stdout);
    let v: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    assert_eq!(v["type"], "error", "{line}");
}

/// A `--const` that names a kernel a syntax error left unread is not a
/// usage error: the syntax error is what is wrong.
#[test]
fn a_file_with_syntax_errors_reports_them_instead() {
    let dir = project(&[("k.kdsl", "kernel a<const N: u32 = 1>(x: global mut [u32]) {\n    x[0] = N;\n}\nkernel b<const M: u32 = 1 x: ) {}\n")]);
    let o = kdslc(dir.path(), &["check", "k.kdsl", "--const", "M=2"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("error[E0010]"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_manifest_lists_each_instantiation_with_its_constants() {
    let dir = project(&[("k.kdsl", KERNELS)]);
    let o = kdslc(
        dir.path(),
        &[
            "k.kdsl", "--emit", "manifest", "-o", "-", "--const", "a.N=64", "--const", "a.N=32",
            "--const", "ELEM=f16", "--const", "ON=false",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let json = text(&o.stdout);
    insta::assert_snapshot!("instances_manifest", json);
}

/// docs/manifest.md's instantiation is the language reference's example
/// built with `--const N=128`: its name, kernel and constants are the
/// compiler's output.
#[test]
fn the_manifest_doc_shows_real_constants() {
    let dir = project(&[("rows.kdsl", &rows_example())]);
    let mut args = vec!["rows.kdsl", "--emit", "manifest", "-o", "-"];
    args.extend_from_slice(ROWS_FLAGS);
    let o = kdslc(dir.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The kernel's lines up to its `params`, as the doc indents them.
    let real = text(&o.stdout);
    let kernel: Vec<&str> = real
        .lines()
        .skip_while(|l| !l.contains("\"name\": \"scale_rows__N_128\""))
        .take_while(|l| !l.contains("\"params\""))
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    assert!(kernel.len() > 10, "{real}");
    let doc = std::fs::read_to_string(crate::common::repo_root().join("docs/manifest.md")).unwrap();
    let section = doc
        .split("## Kernel constants")
        .nth(1)
        .expect("the section");
    let start = section.find("```json\n{\n").expect("a json block") + "```json\n{\n".len();
    let shown: Vec<&str> = section[start..]
        .lines()
        .take_while(|l| !l.contains("\"params\""))
        .collect();
    assert_eq!(shown, kernel, "update docs/manifest.md");
    assert!(doc.contains("`kdslc build rows.kdsl --emit manifest --const N=128 -o -`"));
}

#[test]
fn emit_ir_shows_each_instantiation_with_its_constants() {
    let dir = project(&[("k.kdsl", KERNELS)]);
    let o = kdslc(
        dir.path(),
        &[
            "k.kdsl", "--emit", "ir", "--const", "ELEM=u16", "--const", "b.N=5",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let ir = text(&o.stdout);
    assert!(
        ir.contains("kernel a__ELEM_u16 block(32, 1, 1) {\n    const N: u32 = 32\n    const ELEM: type = u16\n    param x: global mut [u16]"),
        "{ir}"
    );
    assert!(
        ir.contains(
            "kernel b__N_5 block(32, 1, 1) {\n    const N: i32 = 5\n    const ON: bool = true\n"
        ),
        "{ir}"
    );
    assert!(ir.contains("kernel plain {\n    param z"), "{ir}");
}
