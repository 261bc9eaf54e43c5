//! The whole pipeline on arbitrary bytes: read as a source file (UTF-8 or
//! not, imports resolved next to it), compiled for sm_90 and, when the
//! first byte asks, for sm_80, with or without `--lineinfo` and
//! `-D warnings`; then every `--emit` kind kdslc can produce without ptxas
//! (tokens, ast, ir, ptx) and the diagnostics rendered in every format.

use kdsl::diagnostics::{catalog, render, Diagnostic, Severity};
use kdsl::source::SourceMap;
use kdsl::span::{FileId, Span};
use kdsl::target::Target;
use kdsl::Options;

/// Runs one input. The first byte chooses options; the rest is the file.
pub fn run(data: &[u8]) {
    let (flags, text) = match data.split_first() {
        Some((f, rest)) => (*f, rest),
        None => (0, data),
    };
    let path = crate::workdir().join("main.kdsl");
    if std::fs::write(&path, text).is_err() {
        return;
    }
    let mut targets = vec![Target::Sm90];
    if flags & 1 != 0 {
        targets.push(Target::Sm80);
    }
    for target in targets {
        let opts = Options {
            target,
            deny_warnings: flags & 2 != 0,
            lineinfo: flags & 4 != 0,
            ..Options::default()
        };
        match kdsl::compile(&path, &opts) {
            Ok(c) => exercise(&c, &opts, flags & 8 != 0),
            // Only an unreadable root file; it was just written.
            Err(e) => panic!("cannot read the input back: {e}"),
        }
    }
    // `--emit tokens` lexes the text alone.
    let decoded = kdsl::input::decode(text.to_vec());
    let (tokens, diags) = kdsl::syntax::tokens(FileId(0), &decoded.text);
    for (span, _) in &tokens {
        assert!(
            span.start <= span.end && span.end as usize <= decoded.text.len(),
            "token span {span:?} outside the text"
        );
    }
    let mut sources = SourceMap::new();
    sources.add(kdsl::source::SourceFile::new(
        "main.kdsl",
        None,
        decoded.text.clone(),
    ));
    check_diagnostics(&sources, &diags);
    let _ = render::human(&sources, &diags, false);
}

/// Every output of one compilation, and the invariants it keeps.
fn exercise(c: &kdsl::Compilation, opts: &Options, color: bool) {
    check_diagnostics(&c.sources, &c.diagnostics);
    // PTX exactly when the build succeeds.
    assert_eq!(
        c.ptx.is_some(),
        !c.failed(opts),
        "PTX written {} although the build {}",
        if c.ptx.is_some() { "" } else { "not" },
        if c.failed(opts) {
            "failed"
        } else {
            "succeeded"
        },
    );
    if let Some(ptx) = &c.ptx {
        assert_eq!(
            c.ptx_line_spans.len(),
            ptx.lines().count(),
            "one span entry per PTX line"
        );
        assert!(ptx.contains(".version") && ptx.contains(".target"));
    }
    if let Some(m) = &c.module {
        let _ = kdsl::ir::print::print(m);
    }
    for (_, f) in &c.files {
        let _ = kdsl::syntax::dump::dump(f);
    }
    let human = render::human(&c.sources, &c.diagnostics, color);
    let short = render::short(&c.sources, &c.diagnostics);
    let json = render::json(&c.sources, &c.diagnostics);
    if !c.diagnostics.is_empty() {
        assert!(!human.is_empty() && !short.is_empty());
    }
    for line in json.lines().filter(|l| !l.trim().is_empty()) {
        if let Err(e) = serde_json_check(line) {
            panic!("--message-format json wrote a line that is not JSON ({e}): {line}");
        }
    }
}

/// Each JSON diagnostic line must parse.
fn serde_json_check(line: &str) -> Result<(), String> {
    serde_json::from_str::<serde_json::Value>(line)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Labels and fix edits lie inside their files, on character boundaries;
/// every code is in the catalogue; an error has a primary label.
pub fn check_diagnostics(sources: &SourceMap, diags: &[Diagnostic]) {
    for d in diags {
        assert!(
            catalog::lookup(d.code).is_some(),
            "{} is not in the catalogue",
            d.code
        );
        assert!(!d.message.is_empty(), "{}: empty message", d.code);
        if d.severity == Severity::Error && d.code != "E0004" {
            assert!(
                d.labels.iter().any(|l| l.primary),
                "{} has no primary label: {d:?}",
                d.code
            );
        }
        let spans = d
            .labels
            .iter()
            .map(|l| l.span)
            .chain(d.fixes.iter().flat_map(|f| f.edits.iter().map(|e| e.span)));
        for span in spans {
            check_span(sources, span, d);
        }
    }
}

fn check_span(sources: &SourceMap, span: Span, d: &Diagnostic) {
    let Some(file) = sources.get(span.file) else {
        panic!("{}: span in an unknown file: {span:?}", d.code);
    };
    let (start, end) = (span.start as usize, span.end as usize);
    assert!(
        start <= end && end <= file.text.len(),
        "{}: span {start}..{end} outside its file of {} bytes",
        d.code,
        file.text.len()
    );
    assert!(
        file.text.is_char_boundary(start) && file.text.is_char_boundary(end),
        "{}: span {start}..{end} splits a character",
        d.code
    );
}
