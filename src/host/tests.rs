use super::*;
use cargo::directives;

const SAXPY: &str = include_str!("../../samples/saxpy.kdsl");

#[test]
fn a_source_compiles_to_ptx_and_its_manifest() {
    let a = compile_source("saxpy.kdsl", SAXPY, &CompileOptions::default()).unwrap();
    assert!(a.ptx.contains(".visible .entry saxpy("), "{}", a.ptx);
    assert_eq!(a.manifest.kernels[0].name, "saxpy");
    assert_eq!(a.manifest.target, "sm_90");
    assert_eq!(
        a.manifest_json,
        crate::manifest::to_json(&a.manifest).unwrap()
    );
    assert!(a.warnings.is_empty() && a.files.is_empty());
}

#[test]
fn errors_and_bad_options_are_failures() {
    let Err(Failure::Diagnostics { rendered, .. }) = compile_source(
        "k.kdsl",
        "kernel k() block(32) { x = 1; }",
        &CompileOptions::default(),
    ) else {
        panic!("compiled");
    };
    assert_eq!(
        rendered.short(),
        "k.kdsl:1:24: error[E0100]: cannot find value `x` in this scope\n"
    );
    assert!(rendered.human().contains("error[E0100]"));
    let bad = CompileOptions {
        consts: vec!["TILE".into()],
        ..CompileOptions::default()
    };
    assert!(matches!(
        compile_source("k.kdsl", SAXPY, &bad),
        Err(Failure::Usage(m)) if m.starts_with("kernel constant `TILE`")
    ));
    let bad = CompileOptions {
        allow: vec!["E0100".into()],
        ..CompileOptions::default()
    };
    assert!(matches!(
        compile_source("k.kdsl", SAXPY, &bad),
        Err(Failure::Usage(_))
    ));
    // A warning denied.
    let warned = "kernel k(x: global mut [f32]) block(32) { let unused = 1u32; x[0] = 1.0; }";
    let ok = compile_source("k.kdsl", warned, &CompileOptions::default()).unwrap();
    assert!(!ok.warnings.is_empty());
    let deny = CompileOptions {
        deny_warnings: true,
        ..CompileOptions::default()
    };
    assert!(matches!(
        compile_source("k.kdsl", warned, &deny),
        Err(Failure::Diagnostics { .. })
    ));
}

#[test]
fn a_build_writes_its_outputs_and_says_what_cargo_needs() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("lib")).unwrap();
    std::fs::write(src.join("lib/one.kdsl"), "const ONE: u32 = 1;\n").unwrap();
    std::fs::write(
        src.join("k.kdsl"),
        format!("import \"lib/one.kdsl\";\n{SAXPY}\nkernel w(x: global mut [f32]) block(32) {{ let unused = ONE; x[0] = 1.0; }}\n"),
    )
    .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let build = Build::new(src.join("k.kdsl"))
        .out_dir(&out)
        .header(true)
        .cargo_metadata(false);
    let built = build.compile().unwrap();
    assert_eq!(
        std::fs::read_to_string(&built.ptx).unwrap(),
        built.artifacts.ptx
    );
    assert_eq!(
        std::fs::read_to_string(&built.manifest).unwrap(),
        built.artifacts.manifest_json
    );
    let rust = std::fs::read_to_string(&built.rust).unwrap();
    assert!(rust.contains("pub mod saxpy {"), "{rust}");
    assert!(
        rust.contains("pub const BLOCK: Option<(u32, u32, u32)> = Some((256, 1, 1));"),
        "{rust}"
    );
    assert!(
        rust.contains(
            "super::Param { name: \"n\", ty: \"u32\", kind: \"scalar\", offset: 24, size: 4 },"
        ),
        "{rust}"
    );
    assert!(
        rust.contains(&format!(
            "include_str!({:?})",
            std::path::absolute(&built.ptx).unwrap()
        )),
        "{rust}"
    );
    let header = std::fs::read_to_string(built.header.as_ref().unwrap()).unwrap();
    assert!(header.contains("kdsl_saxpy_launch("));

    let lines = directives(
        &src.join("k.kdsl"),
        &compile_file(&src.join("k.kdsl"), &CompileOptions::default()),
    );
    let k = src.join("k.kdsl").display().to_string();
    let one = src.join("lib/one.kdsl").display().to_string();
    assert_eq!(
        lines[..2],
        [
            format!("cargo:rerun-if-changed={k}"),
            format!("cargo:rerun-if-changed={one}")
        ]
    );
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(
        lines[2].starts_with(&format!("cargo:warning={k}:")) && lines[2].contains("warning[W0001]"),
        "{lines:?}"
    );

    // An error: the files still named, each error a cargo::error line,
    // nothing written.
    std::fs::write(src.join("lib/one.kdsl"), "const ONE: u32 = 1 +;\n").unwrap();
    let before = std::fs::read_to_string(&built.ptx).unwrap();
    let result = compile_file(&src.join("k.kdsl"), &CompileOptions::default());
    let lines = directives(&src.join("k.kdsl"), &result);
    assert_eq!(lines[1], format!("cargo:rerun-if-changed={one}"));
    assert!(
        lines[2].starts_with(&format!("cargo::error={one}:1:")),
        "{lines:?}"
    );
    assert!(build.compile().is_err());
    assert_eq!(std::fs::read_to_string(&built.ptx).unwrap(), before);

    // Outside a build script, without out_dir.
    if std::env::var_os("OUT_DIR").is_none() {
        let e = Build::new(src.join("k.kdsl"))
            .cargo_metadata(false)
            .compile()
            .unwrap_err();
        assert!(e.to_string().starts_with("OUT_DIR is not set"), "{e}");
    }
}
