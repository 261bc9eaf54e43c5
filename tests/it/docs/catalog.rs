//! Keeps the diagnostics catalogue, its explanations, `docs/diagnostics.md`
//! and the compiler in agreement:
//! - the generated docs equal `render_docs()` (`KDSL_BLESS=1` rewrites them);
//! - every code is well formed and has a complete explanation;
//! - every explanation's wrong example triggers its code and its fixed
//!   example compiles without any diagnostic.

use kdsl::diagnostics::catalog::{
    self, CodeInfo, CODES, LATIN1_PREFIX, NOT_COMPILED, TARGET_PREFIX,
};
use kdsl::diagnostics::Severity;
use kdsl::target::Target;
use kdsl::{compile_str, Options};
use std::path::PathBuf;

/// Codes whose examples are not compiled, and which of them (wrong, fixed):
/// the import codes need several files; E0127's wrong example needs 4096
/// parameters and is abridged (`tests/it/check/limits.rs` and the UI test compile
/// the real thing).
const NOT_COMPILED_CODES: [(&str, [bool; 2]); 8] = [
    ("E0127", [true, false]),
    ("E0130", [true, true]),
    ("E0131", [true, true]),
    // ptxas's advisories under `--emit cubin` (`ptx::advice`): their
    // examples are assembled by `registers::explained_advisories`.
    ("E0425", [true, true]),
    ("W0426", [true, true]),
    ("W0427", [true, true]),
    ("W0428", [true, true]),
    ("W0429", [true, true]),
];

fn docs_path() -> PathBuf {
    crate::common::repo_root()
        .join("docs")
        .join("diagnostics.md")
}

#[test]
fn docs_are_up_to_date() {
    let expected = catalog::render_docs();
    let path = docs_path();
    if std::env::var("KDSL_BLESS").as_deref() == Ok("1") {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        std::fs::write(&path, &expected)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_default();
    if actual != expected {
        let first_diff = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "{} is out of date (first difference at line {}).\n\
             It is generated from src/diagnostics/explain/*.md; regenerate it with\n\n    \
             KDSL_BLESS=1 cargo test --test it docs::catalog::\n",
            path.display(),
            first_diff + 1
        );
    }
}

#[test]
fn codes_are_unique_sorted_and_well_formed() {
    let codes: Vec<&str> = CODES.iter().map(|c| c.code).collect();
    let mut sorted = codes.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(codes, sorted, "codes must be unique and in ascending order");

    for info in CODES {
        let code = info.code;
        let (letter, digits) = code.split_at(1);
        assert!(
            digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit()),
            "{code}: a code is a letter and four digits"
        );
        let severity = match letter {
            "E" | "S" => Severity::Error,
            "W" => Severity::Warning,
            _ => panic!("{code}: codes start with E (error), W (warning) or S (simulator report)"),
        };
        assert_eq!(
            info.severity, severity,
            "{code}: severity does not match the letter"
        );
    }
}

#[test]
fn titles_follow_the_formatting_rules() {
    for info in CODES {
        let (code, title) = (info.code, info.title);
        assert!(!title.is_empty(), "{code}: empty title");
        assert_eq!(
            title,
            title.trim(),
            "{code}: title has surrounding whitespace"
        );
        assert!(!title.contains('\n'), "{code}: a title is one line");
        assert!(
            !title.ends_with('.'),
            "{code}: a title has no trailing period"
        );
        assert!(
            title.matches('`').count() % 2 == 0,
            "{code}: unbalanced backticks in {title:?}"
        );
        assert!(
            braces_balanced(title),
            "{code}: unbalanced {{placeholders}} in {title:?}"
        );
        assert!(
            !title.contains('|'),
            "{code}: `|` would break the docs' index table"
        );
    }
}

/// `{` and `}` alternate, starting with `{`, and none is left open.
fn braces_balanced(s: &str) -> bool {
    let mut open = false;
    for c in s.chars() {
        match (c, open) {
            ('{', false) => open = true,
            ('}', true) => open = false,
            ('{', true) | ('}', false) => return false,
            _ => {}
        }
    }
    !open
}

#[test]
fn every_explanation_is_complete() {
    for info in CODES {
        let code = info.code;
        let text = info.explanation;
        let heading = format!("# {code}: {}\n", info.title);
        assert!(
            text.starts_with(&heading),
            "{code}: explanation must start with {heading:?}"
        );
        let example = text.find("\n## Example\n");
        let fixed_section = text.find("\n## Fixed\n");
        assert!(example.is_some(), "{code}: no `## Example` section");
        assert!(fixed_section.is_some(), "{code}: no `## Fixed` section");
        assert!(
            example < fixed_section,
            "{code}: `## Example` must come before `## Fixed`"
        );
        // Some prose between the heading and the example.
        let prose = text.get(heading.len()..example.unwrap_or(0)).unwrap_or("");
        assert!(
            prose.trim().len() > 40,
            "{code}: the explanation needs a paragraph before the example"
        );
        for line in text.lines().filter(|l| l.starts_with("## ")) {
            assert!(
                ["## Example", "## Fixed", "## See also"].contains(&line),
                "{code}: unexpected section {line:?}"
            );
        }
        assert!(
            text.ends_with('\n') && !text.ends_with("\n\n"),
            "{code}: end with exactly one newline"
        );

        let (wrong, fixed) = catalog::examples(info);
        assert!(!wrong.trim().is_empty(), "{code}: no wrong example");
        assert!(!fixed.trim().is_empty(), "{code}: no fixed example");
        assert_ne!(
            wrong, fixed,
            "{code}: the fixed example must differ from the wrong one"
        );
        // The wrong example is the block under `## Example`, the fixed one under `## Fixed`.
        let fence = format!("\n```{}\n", catalog::example_language(info));
        let blocks: Vec<usize> = text.match_indices(fence.as_str()).map(|(i, _)| i).collect();
        let (example_at, fixed_at) = (example.unwrap_or(0), fixed_section.unwrap_or(0));
        assert!(
            matches!(blocks.as_slice(), [w, f, ..] if example_at < *w && *w < fixed_at && fixed_at < *f),
            "{code}: the wrong example belongs under `## Example`, the fixed one under `## Fixed`"
        );
    }
}

#[test]
fn only_listed_codes_skip_compilation() {
    for info in CODES {
        let (wrong, fixed) = catalog::examples(info);
        let skipped = [&wrong, &fixed].map(|b| b.starts_with(NOT_COMPILED));
        let expected = NOT_COMPILED_CODES
            .iter()
            .find(|(code, _)| *code == info.code)
            .map_or([false, false], |(_, which)| *which);
        assert_eq!(
            skipped, expected,
            "{}: only {NOT_COMPILED_CODES:?} may skip compilation (marker {NOT_COMPILED:?})",
            info.code
        );
    }
}

#[test]
fn lookup_finds_every_code_in_any_case() {
    for info in CODES {
        let found = catalog::lookup(&info.code.to_ascii_lowercase()).map(|i| i.code);
        assert_eq!(found, Some(info.code));
        assert_eq!(catalog::lookup(info.code).map(|i| i.code), Some(info.code));
    }
    assert!(catalog::lookup("E0000").is_none());
    assert!(catalog::lookup("E030").is_none());
    assert!(catalog::lookup("E03011").is_none());
}

#[test]
fn docs_index_and_sections_cover_every_code() {
    let docs = catalog::render_docs();
    for info in CODES {
        let anchor = info.code.to_ascii_lowercase();
        assert!(
            docs.contains(&format!("| [{}](#{anchor}) |", info.code)),
            "{}: missing from the index",
            info.code
        );
        assert!(
            docs.contains(&format!("<a id=\"{anchor}\"></a>")),
            "{}: missing anchor",
            info.code
        );
        assert!(
            docs.contains(&format!("\n## {}: {}\n", info.code, info.title)),
            "{}: missing section heading (demoted one level)",
            info.code
        );
    }
    assert_eq!(
        docs.matches("\n### Example\n").count(),
        CODES.len(),
        "sub-sections are demoted"
    );
    assert!(!docs.contains("\n## Example\n"), "sub-sections are demoted");
}

/// The options an example block asks for: sm_90 unless its first line is
/// `// kdslc --target NAME`.
fn options_for(block: &str, code: &str) -> Options {
    let mut opts = Options {
        check_only: true,
        ..Options::default()
    };
    if let Some(name) = block
        .lines()
        .next()
        .and_then(|l| l.strip_prefix(TARGET_PREFIX))
    {
        opts.target = Target::from_name(name.trim())
            .unwrap_or_else(|| panic!("{code}: unknown target {name:?}"));
    }
    opts
}

#[test]
fn target_comments_name_known_targets() {
    for info in CODES {
        let (wrong, fixed) = catalog::examples(info);
        let w = options_for(&wrong, info.code).target;
        let f = options_for(&fixed, info.code).target;
        assert_eq!(
            w, f,
            "{}: both examples must be compiled for the same target",
            info.code
        );
    }
    let (wrong, _) = catalog::lookup("E0200")
        .map(catalog::examples)
        .unwrap_or_default();
    assert_eq!(
        options_for(&wrong, "E0200").target,
        Target::Sm80,
        "E0200's examples compile for sm_80"
    );
}

fn describe(diags: &[kdsl::diagnostics::Diagnostic]) -> String {
    let list: Vec<String> = diags
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect();
    if list.is_empty() {
        "no diagnostics".to_string()
    } else {
        list.join("; ")
    }
}

/// Compiles an example block; one marked [`LATIN1_PREFIX`] is written to a
/// file in Latin-1 (every character below U+0100 as its one byte) and
/// compiled from there, as a user's legacy-encoded file would be.
fn compile_block(block: &str, opts: &Options) -> kdsl::Compilation {
    if !block.starts_with(LATIN1_PREFIX) {
        return compile_str("example.kdsl", block, opts);
    }
    let bytes: Vec<u8> = block
        .chars()
        .map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 example uses only U+0000..U+00FF"))
        .collect();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("example.kdsl");
    std::fs::write(&path, bytes).expect("the example is written");
    kdsl::compile(&path, opts).expect("the example is readable")
}

fn check_examples(info: &CodeInfo) -> Vec<String> {
    let (wrong, fixed) = catalog::examples(info);
    if info.code.starts_with('S') {
        return check_sim_examples(info, &wrong, &fixed);
    }
    let mut failures = Vec::new();
    if !wrong.starts_with(NOT_COMPILED) {
        let opts = options_for(&wrong, info.code);
        let c = compile_block(&wrong, &opts);
        if !c.diagnostics.iter().any(|d| d.code == info.code) {
            failures.push(format!(
                "{}: the wrong example gives {}",
                info.code,
                describe(&c.diagnostics)
            ));
        }
    }
    if fixed.starts_with(NOT_COMPILED) {
        return failures;
    }
    let opts = options_for(&fixed, info.code);
    let c = compile_block(&fixed, &opts);
    if !c.diagnostics.is_empty() {
        failures.push(format!(
            "{}: the fixed example gives {}",
            info.code,
            describe(&c.diagnostics)
        ));
    }
    failures
}

#[test]
fn explain_examples_compile() {
    let failures: Vec<String> = CODES.iter().flat_map(check_examples).collect();
    assert!(
        failures.is_empty(),
        "{} example(s) wrong:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A simulator report's examples: the wrong one, compiled (kdsl) or loaded
/// (PTX) and run with the launch of its `// sim ...` line, gives the report
/// (at load time for the load errors); the fixed one compiles without any
/// diagnostic and runs without any report.
fn check_sim_examples(info: &CodeInfo, wrong: &str, fixed: &str) -> Vec<String> {
    let lang = catalog::example_language(info);
    let mut failures = Vec::new();
    for (block, is_wrong) in [(wrong, true), (fixed, false)] {
        let which = if is_wrong { "wrong" } else { "fixed" };
        match simulated_codes(block, lang, is_wrong) {
            Err(e) => failures.push(format!("{}: the {which} example: {e}", info.code)),
            Ok(codes) if is_wrong && !codes.contains(&info.code) => failures.push(format!(
                "{}: the wrong example gives {codes:?} in the simulator",
                info.code
            )),
            Ok(codes) if !is_wrong && !codes.is_empty() => failures.push(format!(
                "{}: the fixed example gives {codes:?} in the simulator",
                info.code
            )),
            Ok(_) => {}
        }
    }
    failures
}

fn simulated_codes(
    block: &str,
    lang: &str,
    warnings_ok: bool,
) -> Result<Vec<&'static str>, String> {
    use crate::common::sim::{load_compilation, NotLoaded};
    use kdsl::sim::{self, PtxSource, Schedule, SimOptions};
    let loaded = if lang == "ptx" {
        match crate::common::sim::ptx_str("example.ptx", block) {
            Ok(l) => l,
            Err(rendered) => {
                // A load error: its code is what the example gives.
                let mut sources = kdsl::source::SourceMap::new();
                let file = sources.add(kdsl::source::SourceFile::new("example.ptx", None, block));
                let err = sim::load(
                    block,
                    PtxSource::File {
                        file,
                        sources: &mut sources,
                    },
                );
                return match err {
                    Err(d) => Ok(d.iter().map(|d| d.code).collect()),
                    Ok(_) => Err(format!("inconsistent load: {rendered}")),
                };
            }
        }
    } else {
        let c = compile_str("example.kdsl", block, &Options::default());
        let blocking: Vec<_> = c
            .diagnostics
            .iter()
            .filter(|d| d.is_error() || !warnings_ok)
            .cloned()
            .collect();
        if !blocking.is_empty() {
            return Err(format!("it compiles with {}", describe(&blocking)));
        }
        match load_compilation(c) {
            Ok(loaded) => loaded,
            Err(NotLoaded::NoPtx) => return Err("no PTX".to_string()),
            Err(NotLoaded::Load(d, _)) => {
                return Err(format!("its PTX does not load: {}", describe(&d)))
            }
        }
    };
    let launch = crate::common::sim::header_launch(block, &loaded.program);
    let outcome = sim::run(
        &loaded.program,
        &launch,
        &SimOptions {
            schedule: Schedule::InOrder,
            max_steps: 1_000_000,
            ..SimOptions::default()
        },
    );
    // A report on a kdsl kernel points at the kdsl source: a primary span,
    // and no instruction named by its PTX line.
    if lang != "ptx" {
        let rendered = crate::common::sim::rendered(&loaded, &outcome);
        if outcome.reports.iter().any(|d| d.primary_span().is_none())
            || rendered.contains("PTX line")
        {
            return Err(format!(
                "a report does not point at the source:\n{rendered}"
            ));
        }
    }
    Ok(outcome.reports.iter().map(|d| d.code).collect())
}
