//! Imports: constants and functions from other files, each file loaded once,
//! cycles reported with their files, and diagnostics in the right file.

use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

fn compile(path: &Path) -> kdsl::Compilation {
    kdsl::compile(path, &kdsl::Options::default()).expect("readable root")
}

const KERNEL: &str =
    "kernel k(out: global mut [f32]) block(32) {\n    out[thread_idx.x] = twice(HALF);\n}\n";

#[test]
fn imported_functions_and_constants_are_in_scope_and_listed_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    // Diamond: main imports a and b, both import lib; lib is loaded once.
    write(
        d,
        "main.kdsl",
        &format!("import \"a.kdsl\";\nimport \"sub/b.kdsl\";\n{KERNEL}"),
    );
    write(
        d,
        "a.kdsl",
        "import \"lib.kdsl\";\nconst HALF: f32 = 0.5;\n",
    );
    write(d, "sub/b.kdsl", "import \"../lib.kdsl\";\n");
    write(d, "lib.kdsl", "fn twice(x: f32) -> f32 { x * 2.0 }\n");
    let c = compile(&d.join("main.kdsl"));
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    assert!(
        c.ptx.as_deref().is_some_and(|p| p.contains(".func")),
        "the imported function is emitted"
    );
    assert_eq!(c.sources.len(), 4, "main, a, b and lib, each once");
    let names: Vec<String> = c
        .imports
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.kdsl", "lib.kdsl", "b.kdsl"]);
}

#[test]
fn errors_in_an_imported_file_point_into_that_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    write(
        d,
        "main.kdsl",
        &format!("import \"lib.kdsl\";\nconst HALF: f32 = 0.5;\n{KERNEL}"),
    );
    write(
        d,
        "lib.kdsl",
        "fn twice(x: f32) -> f32 {\n    x * 2.0 + y\n}\n",
    );
    let c = compile(&d.join("main.kdsl"));
    assert_eq!(c.diagnostics.len(), 1, "{:?}", c.diagnostics);
    let diag = &c.diagnostics[0];
    assert_eq!(diag.code, "E0100");
    let span = diag.primary_span().expect("span");
    let file = c.sources.get(span.file).expect("file");
    assert!(file.name.ends_with("lib.kdsl"), "{}", file.name);
    assert_eq!(file.slice(span), "y");
    assert_eq!(file.line_col(span.start as usize), (2, 15));
    let short = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
    assert!(short.contains("lib.kdsl:2:15: error[E0100]"), "{short}");
}

#[test]
fn a_cycle_names_its_files_and_points_at_the_first_import() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    write(
        d,
        "main.kdsl",
        &format!("import \"a.kdsl\";\nconst HALF: f32 = 0.5;\n{KERNEL}"),
    );
    write(
        d,
        "a.kdsl",
        "import \"b.kdsl\";\nfn twice(x: f32) -> f32 { x * 2.0 }\n",
    );
    write(d, "b.kdsl", "import \"a.kdsl\";\n");
    let c = compile(&d.join("main.kdsl"));
    let cycles: Vec<_> = c.diagnostics.iter().filter(|d| d.code == "E0131").collect();
    assert_eq!(cycles.len(), 1, "{:?}", c.diagnostics);
    let msg = &cycles[0].message;
    assert!(msg.starts_with("import cycle: "), "{msg}");
    assert!(
        msg.contains("a.kdsl -> ") && msg.contains("b.kdsl -> ") && msg.ends_with("a.kdsl"),
        "{msg}"
    );
    let span = cycles[0].primary_span().expect("span");
    assert!(c
        .sources
        .get(span.file)
        .expect("file")
        .name
        .ends_with("a.kdsl"));
    assert_eq!(c.sources.slice(span), "\"b.kdsl\"");
    assert_eq!(
        c.error_count(),
        1,
        "only the cycle is an error: {:?}",
        c.diagnostics
    );
}

#[test]
fn a_missing_import_is_e0130_with_the_resolved_path() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    write(
        d,
        "main.kdsl",
        "import \"nope.kdsl\";\nkernel k(out: global mut [f32]) block(32) { out[0] = 1.0; }\n",
    );
    let c = compile(&d.join("main.kdsl"));
    assert_eq!(c.diagnostics.len(), 1, "{:?}", c.diagnostics);
    assert_eq!(c.diagnostics[0].code, "E0130");
    assert!(c.diagnostics[0].message.contains("`nope.kdsl`"));
    assert!(c.diagnostics[0].message.ends_with("no such file"));
}

#[test]
fn kernels_of_imported_files_are_not_compiled() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    write(
        d,
        "main.kdsl",
        &format!("import \"lib.kdsl\";\nconst HALF: f32 = 0.5;\n{KERNEL}"),
    );
    write(
        d,
        "lib.kdsl",
        "fn twice(x: f32) -> f32 { x * 2.0 }\nkernel other(o: global mut [f32]) { o[0] = 1.0; }\n",
    );
    let c = compile(&d.join("main.kdsl"));
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let ptx = c.ptx.expect("ptx");
    assert!(
        ptx.contains(".entry k(") && !ptx.contains(".entry other"),
        "{ptx}"
    );
}

/// An imported file's kernels are not compiled, so they are not checked
/// either: not their names (E0126 is about the PTX a kernel becomes), not
/// their parameter space (E0127), launch shape or body, not the features
/// they need from the target (a library may hold sm_90 kernels that an
/// sm_80 program never uses), and their names take no place in the global
/// namespace (no E0101 with a root kernel or function of the same name).
/// The same file compiled as the root gets every one of those errors.
#[test]
fn kernels_of_imported_files_are_not_checked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    let params: Vec<String> = (0..4096).map(|i| format!("p{i}: u64")).collect();
    let lib = format!(
        "fn twice(x: f32) -> f32 {{ x * 2.0 }}\n\
         kernel WARP_SZ(o: global mut [f32]) block(32) {{ o[0] = 1; let bad: u32 = 1.5; }}\n\
         kernel _(o: global mut [f32]) block(2048) cluster(4) {{ o[0] = cluster_rank as f32; }}\n\
         kernel wide({}) {{ }}\n\
         kernel k(o: global mut [f32]) {{ o[0] = 2.0; }}\n",
        params.join(", ")
    );
    write(d, "lib.kdsl", &lib);
    write(
        d,
        "main.kdsl",
        &format!("import \"lib.kdsl\";\nconst HALF: f32 = 0.5;\n{KERNEL}fn wide() {{}}\n"),
    );
    for target in [kdsl::target::Target::Sm90, kdsl::target::Target::Sm80] {
        let opts = kdsl::Options {
            target,
            ..kdsl::Options::default()
        };
        let c = kdsl::compile(&d.join("main.kdsl"), &opts).expect("readable root");
        assert!(c.diagnostics.is_empty(), "{target:?}: {:#?}", c.diagnostics);
        let ptx = c.ptx.expect("ptx");
        assert_eq!(ptx.matches(".entry").count(), 1, "{ptx}");
    }
    let own = compile(&d.join("lib.kdsl"));
    let mut codes: Vec<&str> = own.diagnostics.iter().map(|d| d.code).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(
        codes,
        ["E0110", "E0120", "E0126", "E0127"],
        "{:#?}",
        own.diagnostics
    );
}

/// E0101 is reported on the later definition, an import standing for the
/// items of the file it loads, whatever the kinds of the two items.
#[test]
fn duplicates_across_imports_are_reported_on_the_later_definition() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    write(
        d,
        "main.kdsl",
        "const EARLY: u32 = 1;\nimport \"lib.kdsl\";\nfn twice(x: u32) -> u32 { x + x }\n\
         kernel helper(out: global mut [u32]) block(32) {\n    out[0] = twice(EARLY);\n}\n",
    );
    write(
        d,
        "lib.kdsl",
        "fn twice(x: u32) -> u32 { x * 2 }\nconst EARLY: u32 = 2;\nfn helper() {}\n",
    );
    let c = compile(&d.join("main.kdsl"));
    let mut found: Vec<(String, String, String)> = c
        .diagnostics
        .iter()
        .map(|diag| {
            assert_eq!(diag.code, "E0101", "{:?}", c.diagnostics);
            let span = diag.primary_span().expect("span");
            let file = c.sources.get(span.file).expect("file");
            let first = diag
                .labels
                .iter()
                .find(|l| !l.primary)
                .map(|l| l.span)
                .expect("previous definition");
            let first_file = c.sources.get(first.file).expect("file");
            let name = |f: &kdsl::source::SourceFile| {
                Path::new(&f.name)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            (file.slice(span).to_string(), name(file), name(first_file))
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        [
            // The import comes after `EARLY` in main: lib's is the later one.
            (
                "EARLY".to_string(),
                "lib.kdsl".to_string(),
                "main.kdsl".to_string()
            ),
            // `fn twice` and `kernel helper` come after the import.
            (
                "helper".to_string(),
                "main.kdsl".to_string(),
                "lib.kdsl".to_string()
            ),
            (
                "twice".to_string(),
                "main.kdsl".to_string(),
                "lib.kdsl".to_string()
            ),
        ]
    );
}

/// A syntax error in an imported file comes before what it explains in the
/// file that imports it: the root's uses of a function whose header did not
/// parse (what reading the files found is shown first, in every file).
#[test]
fn a_broken_import_is_reported_before_its_consequences() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = tmp.path();
    write(
        d,
        "main.kdsl",
        &format!("import \"lib.kdsl\";\nconst HALF: f32 = 0.5;\n{KERNEL}"),
    );
    write(d, "lib.kdsl", "fn twice(x: f32 -> f32 {\n    x * 2.0\n}\n");
    let c = compile(&d.join("main.kdsl"));
    let found: Vec<(&str, String)> = c
        .diagnostics
        .iter()
        .map(|d| {
            let file = d.primary_span().map_or(0, |s| s.file.0);
            (
                d.code,
                c.sources
                    .get(kdsl::span::FileId(file))
                    .unwrap()
                    .name
                    .clone(),
            )
        })
        .collect();
    let names: Vec<(&str, &str)> = found
        .iter()
        .map(|(code, name)| (*code, name.rsplit('/').next().unwrap()))
        .collect();
    assert_eq!(
        names,
        [("E0010", "lib.kdsl"), ("E0100", "main.kdsl")],
        "{:#?}",
        c.diagnostics
    );
}
