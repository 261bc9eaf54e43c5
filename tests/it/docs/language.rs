//! The documentation's examples are real programs: every ```kdsl block in
//! docs/language.md compiles with no diagnostics at all (sm_90, or the
//! target its first line names: `// kdslc --target sm_90a`), and PTX is
//! produced for it. (docs/diagnostics.md's blocks are checked, wrong and
//! fixed, by tests/it/docs/catalog.rs.)

fn kdsl_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut current {
            None if line.trim_start() == "```kdsl" => current = Some((i + 2, String::new())),
            Some(_) if line.trim_start() == "```" => out.extend(current.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

#[test]
fn language_reference_examples_compile_cleanly() {
    let path = crate::common::repo_root().join("docs/language.md");
    let text = std::fs::read_to_string(&path).expect("docs/language.md");
    let blocks = kdsl_blocks(&text);
    assert!(
        blocks.len() >= 10,
        "expected the reference's examples, found {}",
        blocks.len()
    );
    let mut failures = Vec::new();
    for (line, src) in &blocks {
        let mut opts = kdsl::Options::default();
        if let Some(t) = src
            .lines()
            .next()
            .and_then(|l| l.strip_prefix(kdsl::diagnostics::catalog::TARGET_PREFIX))
        {
            opts.target = kdsl::target::Target::from_name(t.trim())
                .unwrap_or_else(|| panic!("docs/language.md:{line}: unknown target {t:?}"));
        }
        let c = kdsl::compile_str(&format!("docs/language.md:{line}"), src, &opts);
        if !c.diagnostics.is_empty() || c.ptx.is_none() {
            let shown = kdsl::diagnostics::render::short(&c.sources, &c.diagnostics);
            failures.push(format!("example at docs/language.md:{line}:\n{shown}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
