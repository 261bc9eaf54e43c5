//! UI tests: every `tests/ui/*.kdsl` file carries its expectations inline,
//! and its rendered human output is snapshotted beside it.
//!
//! Annotations, on the line the diagnostic's primary label starts on:
//!   `//~ ERROR E0301`       an error with that code on this line
//!   `//~ WARNING W0001`     a warning
//!   `//~^ ERROR E0110`      on the line above (one `^` per line up)
//! Several may share a line: `//~ ERROR E0100 //~ ERROR E0110`.
//! A line ending in `// ×N` stands for N copies of itself (without the
//! marker), for tests of limits.
//! Header directives (anywhere, usually at the top):
//!   `// target: sm_80`      compile for that target (default sm_90)
//!   `// flags: -D warnings` compile with warnings denied
//!   `// flags: --const N=4` compile with that kernel constant (repeatable)
//!   `// emit: cubin`        also write PTX and run `ptxas -v` on it, as
//!                           `kdslc --emit cubin` does: its advisories are
//!                           diagnostics too (`kdsl::ptx::advice`; skipped
//!                           locally without ptxas, never in CI)
//!
//! A file must produce exactly the annotated diagnostics, no more, no fewer.
//! Snapshots live in `tests/ui/snapshots/`; review changes with
//! `cargo insta review` (or `INSTA_UPDATE=always cargo test --test it check::ui::`).

use kdsl::diagnostics::{render, Severity};
use kdsl::target::Target;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Expectation {
    line: usize,
    severity: &'static str,
    code: String,
}

fn ui_files() -> Vec<PathBuf> {
    crate::common::kdsl_suite("tests/ui", 30)
}

/// The lines of a test file as the compiler counts them: `\n`, `\r\n` and
/// a lone `\r` each end a line.
fn source_lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'))
        .collect()
}

fn parse_expectations(text: &str) -> Vec<Expectation> {
    let mut out = Vec::new();
    for (i, line) in source_lines(text).into_iter().enumerate() {
        for part in line.split("//~").skip(1) {
            let carets = part.chars().take_while(|c| *c == '^').count();
            let mut words = part[carets..].split_whitespace();
            let severity = match words.next() {
                Some("ERROR") => "error",
                Some("WARNING") => "warning",
                other => panic!("line {}: bad annotation `//~{part}` ({other:?})", i + 1),
            };
            let code = words
                .next()
                .unwrap_or_else(|| panic!("line {}: annotation without a code", i + 1));
            assert!(i >= carets, "line {}: `^` points above the file", i + 1);
            out.push(Expectation {
                line: i + 1 - carets,
                severity,
                code: code.to_string(),
            });
        }
    }
    out.sort();
    out
}

fn options_for(text: &str) -> kdsl::Options {
    let mut opts = kdsl::Options {
        check_only: true,
        ..kdsl::Options::default()
    };
    for line in source_lines(text) {
        let line = line.trim();
        if let Some(t) = line.strip_prefix("// target:") {
            opts.target = Target::from_name(t.trim())
                .unwrap_or_else(|| panic!("unknown target `{}`", t.trim()));
        }
        if let Some(f) = line.strip_prefix("// flags:") {
            if f.contains("-D warnings") {
                opts.deny_warnings = true;
            }
            let mut words = f.split_whitespace();
            while let Some(w) = words.next() {
                if w == "--const" {
                    let arg = words.next().expect("a value after --const");
                    opts.consts.push(arg.parse().expect("a --const value"));
                }
            }
        }
    }
    opts
}

#[test]
fn ui() {
    let files = ui_files();
    let mut failures = Vec::new();
    for path in &files {
        // Read as the compiler reads it (a file that is not UTF-8 is a test
        // of E0004); the annotations are read from the lossy text. A line
        // ending in `// ×N` stands for N copies of itself, as in the
        // explanations' examples (a test of a limit need not be that long).
        let written = read_lossy(path);
        let text = kdsl::diagnostics::catalog::expand_repeats(&written);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 name")
            .to_string();
        let mut opts = options_for(&text);
        let cubin = source_lines(&text)
            .iter()
            .any(|l| l.trim() == "// emit: cubin");
        let ptxas = if cubin {
            match crate::common::ptxas::require_ptxas() {
                Some(p) => Some(p),
                None => continue,
            }
        } else {
            None
        };
        opts.check_only &= !cubin;
        let shown = format!("tests/ui/{name}");
        let mut c = if text == written {
            kdsl::compile(Path::new(&shown), &opts).unwrap_or_else(|e| panic!("{name}: {e}"))
        } else {
            kdsl::compile_str(&shown, &text, &opts)
        };
        if let (Some(ptxas), Some(ptx)) = (&ptxas, &c.ptx) {
            let target = opts.target.name();
            let log = match crate::common::ptxas::assemble_with(ptxas, ptx, target, &["-v"]) {
                Ok(a) => a.log,
                Err(e) => e,
            };
            let found = kdsl::ptx::advice::diagnostics(&log, ptx, &c.ptx_line_spans);
            c.diagnostics.extend(found);
        }
        let mut actual: Vec<Expectation> = c
            .diagnostics
            .iter()
            .map(|d| {
                let span = d
                    .primary_span()
                    .expect("every diagnostic has a primary span");
                let file = c.sources.get(span.file).expect("span's file exists");
                // Diagnostics in other files (imports) never match an
                // annotation: line 0 makes them show up as unexpected.
                let line = if span.file.0 == 0 {
                    file.line_col(span.start as usize).0
                } else {
                    0
                };
                Expectation {
                    line,
                    severity: if d.severity == Severity::Error {
                        "error"
                    } else {
                        "warning"
                    },
                    code: d.code.to_string(),
                }
            })
            .collect();
        actual.sort();
        let expected = parse_expectations(&text);
        let rendered = render::human(&c.sources, &c.diagnostics, false);
        if actual != expected {
            let missing: Vec<_> = expected.iter().filter(|e| !actual.contains(e)).collect();
            let extra: Vec<_> = actual.iter().filter(|a| !expected.contains(a)).collect();
            failures.push(format!(
                "{name}:\n  missing: {missing:?}\n  unexpected: {extra:?}\n{rendered}"
            ));
            continue;
        }
        let stem = name.trim_end_matches(".kdsl").to_string();
        insta::with_settings!({
            snapshot_path => "../../ui/snapshots",
            prepend_module_to_snapshot => false,
            description => written.clone(),
            omit_expression => true,
        }, {
            insta::assert_snapshot!(stem, rendered);
        });
    }
    assert!(
        failures.is_empty(),
        "{} UI test(s) failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

fn read_lossy(path: &Path) -> String {
    let bytes = std::fs::read(path).expect("readable test file");
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Every code in the catalogue has at least one UI test.
#[test]
fn every_code_has_a_ui_test() {
    let mut covered = std::collections::BTreeSet::new();
    for path in ui_files() {
        let text = read_lossy(&path);
        covered.extend(parse_expectations(&text).into_iter().map(|e| e.code));
    }
    // Simulator reports (S…) are covered by tests/sim/broken and by their
    // explanations' examples, which catalog.rs runs in the simulator.
    // ptxas's advisories that kdslc's own checks come before (E0425 after
    // E0424, W0428 after E0423, W0429 after E0414) or that its PTX never
    // gets (W0427: the count at entry is pinned) are mapped from ptxas's
    // output for hand-written PTX in registers.rs.
    const PREEMPTED: [&str; 4] = ["E0425", "W0427", "W0428", "W0429"];
    let missing: Vec<&str> = kdsl::diagnostics::catalog::CODES
        .iter()
        .map(|c| c.code)
        .filter(|c| !c.starts_with('S') && !covered.contains(*c) && !PREEMPTED.contains(c))
        .collect();
    assert!(missing.is_empty(), "codes without a UI test: {missing:?}");
}
