//! The three diagnostic formats, on diagnostics built by hand.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::common::assert_contains;
use kdsl::diagnostics::render::{human, human_summary, json, short};
use kdsl::diagnostics::Diagnostic;
use kdsl::source::{SourceFile, SourceMap};
use kdsl::span::{FileId, Span};
use serde_json::Value;

const SRC: &str = "\
kernel k() cluster(2) {
    barrier empty[2]: cluster(arrivals = 2); // ü
    let s = 0u32; /* ü */ empty[s].wait(0);
}
";

fn sources() -> SourceMap {
    let mut m = SourceMap::new();
    m.add(SourceFile::new("k.kdsl", None, SRC));
    m
}

/// The span of the `n`th occurrence (0-based) of `needle` in `SRC`.
fn span_of(needle: &str, n: usize) -> Span {
    let start = SRC.match_indices(needle).nth(n).expect("needle").0;
    Span::new(FileId(0), start, start + needle.len())
}

fn e0301() -> Diagnostic {
    let wait = span_of("wait(0)", 0);
    Diagnostic::error("E0301", "Can only await on CTA-local barriers")
        .primary(wait, "waits on a cluster-scope barrier")
        .secondary(span_of("cluster", 1), "declared with scope `cluster` here")
        .note("an `.acquire.cta` wait does not order the writes other CTAs released")
        .help("use `wait_cluster` to wait with cluster-scope acquire")
        .fix("replace with `wait_cluster(0)`", wait, "wait_cluster(0)")
}

fn w0001() -> Diagnostic {
    Diagnostic::warning("W0001", "unused variable `s`").primary(span_of("s", 3), "never used")
}

#[test]
fn human_has_code_source_carets_labels_notes_help_and_fix() {
    let out = human(&sources(), &[e0301()], false);
    assert_contains(
        &out,
        &[
            "error[E0301]: Can only await on CTA-local barriers",
            "k.kdsl:3:36",
            "empty[s].wait(0);",
            "^^^^^^^ waits on a cluster-scope barrier",
            "------- declared with scope `cluster` here",
            "= note: an `.acquire.cta` wait",
            "= help: use `wait_cluster`",
            "= help: replace with `wait_cluster(0)`",
        ],
    );
    // The fix is shown applied to its line.
    assert!(
        out.contains("let s = 0u32; /* ü */ empty[s].wait_cluster(0);"),
        "{out}"
    );
    assert!(!out.contains('\x1b'), "no colour asked for: {out}");
}

#[test]
fn human_colour_is_ansi() {
    let out = human(&sources(), &[e0301()], true);
    assert!(out.contains("\x1b["), "{out}");
}

#[test]
fn human_summary_counts() {
    assert_eq!(
        human_summary(2, 1),
        "error: aborting due to 2 previous errors; 1 warning emitted"
    );
    assert_eq!(human_summary(0, 2), "warning: 2 warnings emitted");
}

#[test]
fn short_is_one_gcc_style_line_each() {
    // Column 36 counts characters: the `ü` before the span is one column,
    // though two bytes.
    assert_eq!(
        short(&sources(), &[e0301(), w0001()]),
        "k.kdsl:3:36: error[E0301]: Can only await on CTA-local barriers\n\
         k.kdsl:3:9: warning[W0001]: unused variable `s`\n"
    );
}

fn json_lines(text: &str) -> Vec<Value> {
    assert!(text.ends_with('\n'));
    text.lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn json_fields_and_ranges() {
    let lines = json_lines(&json(&sources(), &[e0301(), w0001()]));
    assert_eq!(lines.len(), 3);
    let d = &lines[0];
    assert_eq!(d["type"], "diagnostic");
    assert_eq!(d["code"], "E0301");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["message"], "Can only await on CTA-local barriers");
    assert_eq!(d["file"], "k.kdsl");
    let wait = span_of("wait(0)", 0);
    assert_eq!(d["span"]["start"], wait.start);
    assert_eq!(d["span"]["end"], wait.end);
    // Line 3: `    let s = 0u32; /* ü */ empty[s].wait(0);` — 35 characters
    // (36 bytes) before `wait`.
    let start = &d["range"]["start"];
    assert_eq!(
        (start["line"].as_u64(), start["column"].as_u64()),
        (Some(3), Some(36))
    );
    assert_eq!(start["column_utf16"], 36);
    assert_eq!(start["column_byte"], 37);
    assert_eq!(d["range"]["end"]["column"], 43);

    let labels = d["labels"].as_array().unwrap();
    assert_eq!(labels.len(), 2);
    assert_eq!(labels[0]["primary"], true);
    assert_eq!(labels[1]["primary"], false);
    assert_eq!(labels[1]["message"], "declared with scope `cluster` here");
    assert_eq!(labels[1]["file"], "k.kdsl");
    assert_eq!(labels[1]["range"]["start"]["line"], 2);
    assert_eq!(labels[1]["range"]["start"]["column"], 23);

    assert_eq!(
        d["notes"][0],
        "an `.acquire.cta` wait does not order the writes other CTAs released"
    );
    assert_eq!(
        d["help"][0],
        "use `wait_cluster` to wait with cluster-scope acquire"
    );
    let edit = &d["fixes"][0]["edits"][0];
    assert_eq!(d["fixes"][0]["message"], "replace with `wait_cluster(0)`");
    assert_eq!(edit["replacement"], "wait_cluster(0)");
    assert_eq!(edit["span"]["start"], wait.start);
    assert_eq!(edit["range"]["start"]["column"], 36);

    assert_eq!(lines[1]["severity"], "warning");
    assert_eq!(
        lines[2],
        serde_json::json!({"type": "summary", "errors": 1, "warnings": 1})
    );
}

#[test]
fn json_utf16_columns_after_astral_characters() {
    // '𝄞' (U+1D11E) is one character, two UTF-16 units, four bytes.
    let text = "let a = \"𝄞𝄞\"; let b = c;\n";
    let mut m = SourceMap::new();
    let id = m.add(SourceFile::new("u.kdsl", None, text));
    let at = text.find('c').unwrap();
    let d = Diagnostic::error("E0100", "cannot find value `c` in this scope")
        .primary(Span::new(id, at, at + 1), "");
    let lines = json_lines(&json(&m, &[d]));
    let start = &lines[0]["range"]["start"];
    assert_eq!(start["line"], 1);
    assert_eq!(start["column"], 23);
    assert_eq!(start["column_utf16"], 25);
    assert_eq!(start["column_byte"], 29);
    assert_eq!(
        short(
            &m,
            &[Diagnostic::error("E0100", "x").primary(Span::new(id, at, at + 1), "")]
        ),
        "u.kdsl:1:23: error[E0100]: x\n"
    );
}

#[test]
fn bad_spans_render_without_panicking() {
    let m = sources();
    let len = SRC.len();
    let inside_u = SRC.find('ü').unwrap() + 1;
    let diags = vec![
        Diagnostic::error("E0011", "unexpected end of file")
            .primary(Span::new(FileId(0), len, len), "here"),
        Diagnostic::error("E0010", "past the end")
            .primary(Span::new(FileId(0), len + 5, len + 50), "x"),
        Diagnostic::error("E0010", "inside a character")
            .primary(Span::new(FileId(0), inside_u, inside_u + 1), "x"),
        Diagnostic::error("E0010", "reversed").primary(Span::new(FileId(0), 10, 4), "x"),
        Diagnostic::error("E0010", "unknown file").primary(Span::new(FileId(9), 0, 1), "x"),
        Diagnostic::error("E0010", "no labels at all"),
        Diagnostic::error("E0010", "fix outside the file")
            .primary(Span::new(FileId(0), 0, 1), "x")
            .fix(
                "nothing sensible",
                Span::new(FileId(0), len + 1, len + 9),
                "y",
            ),
    ];
    let text = human(&m, &diags, false);
    assert!(text.contains("= help: nothing sensible\n"), "{text}");
    for d in &diags {
        assert!(
            text.contains(&d.message),
            "{} missing from {text}",
            d.message
        );
    }
    let short_text = short(&m, &diags);
    let lines: Vec<&str> = short_text.lines().collect();
    assert_eq!(lines.len(), diags.len());
    assert_eq!(lines[0], "k.kdsl:5:1: error[E0011]: unexpected end of file");
    assert_eq!(lines[1], "k.kdsl:5:1: error[E0010]: past the end");
    assert_eq!(lines[4], "k.kdsl: error[E0010]: unknown file");
    assert_eq!(lines[5], "k.kdsl: error[E0010]: no labels at all");

    let objs = json_lines(&json(&m, &diags));
    assert_eq!(objs.len(), diags.len() + 1);
    assert_eq!(
        objs[1]["span"],
        serde_json::json!({"start": len, "end": len})
    );
    assert_eq!(objs[3]["span"], serde_json::json!({"start": 4, "end": 10}));
    assert_eq!(objs[4]["file"], Value::Null);
    assert_eq!(objs[4]["range"], Value::Null);
    assert_eq!(objs[4]["labels"], serde_json::json!([]));
    assert_eq!(objs[5]["span"], Value::Null);
    assert_eq!(objs[6]["fixes"], serde_json::json!([]));
    assert_eq!(objs[7]["errors"], diags.len());

    // Nothing at all to point into.
    let empty = SourceMap::new();
    assert_eq!(
        short(&empty, &diags[..1]),
        "kdslc: error[E0011]: unexpected end of file\n"
    );
    assert!(human(&empty, &diags, false).contains("unexpected end of file"));
}

/// A diagnostic on a very long line shows a window of it around the label,
/// with the real line and column; many diagnostics on that line each cost
/// the window, not the line.
#[test]
fn long_lines_are_shown_as_a_window() {
    let names: Vec<String> = (0..2000).map(|i| format!("zz{i}")).collect();
    let src = format!(
        "kernel k(out: global mut [u32]) block(32) {{\n    out[0] = {};\n}}\n",
        names.join(" + ")
    );
    let c = kdsl::compile_str("long.kdsl", &src, &kdsl::Options::default());
    // The first 100, then "and 1900 more".
    assert_eq!(c.diagnostics.len(), kdsl::diagnostics::cap::PER_CODE + 1);
    assert_eq!(c.error_count(), 2000);
    let text = human(&c.sources, &c.diagnostics, false);
    // Far less than 101 copies of the 20 KB line.
    assert!(text.len() < 101 * 1200, "{} bytes", text.len());
    let widest = text.lines().map(str::len).max().unwrap_or(0);
    assert!(widest < 400, "a line of {widest} bytes");
    // The one for `zz50`: its real column, and the name under its caret.
    let at = src.find("zz50 ").expect("in the source");
    let line_start = src[..at].rfind('\n').map_or(0, |i| i + 1);
    let header = format!("long.kdsl:2:{}", at - line_start + 1);
    let section = text
        .split("\n\n")
        .find(|s| s.contains("`zz50`"))
        .expect("rendered");
    assert!(section.contains(&header), "{section}");
    let lines: Vec<&str> = section.lines().collect();
    let source_line = lines
        .iter()
        .position(|l| l.contains("zz50 +"))
        .expect("shown");
    let caret = lines[source_line + 1].find('^').expect("caret");
    assert_eq!(&lines[source_line][caret..caret + 4], "zz50", "{section}");
    assert!(lines[source_line].contains("..."), "{section}");
}
