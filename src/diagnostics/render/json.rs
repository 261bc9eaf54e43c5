//! `--message-format json`: one JSON object per line. The schema is
//! documented, with an example, in `docs/json-diagnostics.md`; keep the two
//! in step (fields may be added, never renamed or removed).

use super::{exact, located, severity_word};
use crate::diagnostics::{Diagnostic, Fix, Label, Severity};
use crate::source::{SourceFile, SourceMap};
use crate::span::Span;
use serde::Serialize;

/// Every diagnostic as one line of JSON, then the summary line.
pub fn json(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    let count = |s: Severity| {
        diags
            .iter()
            .filter(|d| d.severity == s)
            .map(Diagnostic::weight)
            .sum()
    };
    let (errors, warnings) = (count(Severity::Error), count(Severity::Warning));
    let mut out = json_diagnostics(sources, diags);
    out.push_str(&json_summary(errors, warnings));
    out
}

/// The diagnostic lines only (for `kdslc check`, which prints one summary
/// after several files).
pub fn json_diagnostics(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&line(&diagnostic(sources, d)));
    }
    out
}

/// `{"type":"summary","errors":N,"warnings":M}` and a newline.
pub fn json_summary(errors: usize, warnings: usize) -> String {
    line(&Summary {
        kind: "summary",
        errors,
        warnings,
    })
}

/// A failure that is not a diagnostic (a usage or I/O problem, an internal
/// error): `{"type":"error","kind":...,"message":...,"notes":[...],"exit_status":N}`
/// and a newline. `message` is the first line of `text`, `notes` the rest.
pub fn json_error(kind: &str, text: &str, exit_status: i32) -> String {
    let mut lines = text.lines().map(str::trim_end).filter(|l| !l.is_empty());
    let message = lines.next().unwrap_or("");
    let message = message.strip_prefix("error: ").unwrap_or(message);
    line(&JsonError {
        kind: "error",
        category: kind,
        message,
        notes: lines
            .map(|l| l.strip_prefix("note: ").unwrap_or(l))
            .collect(),
        exit_status,
    })
}

#[derive(Serialize)]
struct JsonError<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(rename = "kind")]
    category: &'a str,
    message: &'a str,
    notes: Vec<&'a str>,
    exit_status: i32,
}

fn line<T: Serialize>(value: &T) -> String {
    // Serialising these plain structs cannot fail; an empty object keeps
    // the stream one-object-per-line if it somehow did.
    let mut s = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_string());
    s.push('\n');
    s
}

#[derive(Serialize)]
struct Summary {
    #[serde(rename = "type")]
    kind: &'static str,
    errors: usize,
    warnings: usize,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    code: &'a str,
    severity: &'static str,
    message: &'a str,
    /// The primary label's place; all three are null for a diagnostic
    /// without a location in a loaded file.
    file: Option<&'a str>,
    span: Option<ByteSpan>,
    range: Option<Range>,
    labels: Vec<JsonLabel<'a>>,
    notes: &'a [String],
    help: &'a [String],
    fixes: Vec<JsonFix<'a>>,
    /// Only on the "and N more" diagnostic of a code past the cap: how
    /// many diagnostics it stands for.
    #[serde(skip_serializing_if = "is_zero")]
    omitted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[derive(Serialize)]
struct ByteSpan {
    start: u32,
    end: u32,
}

#[derive(Serialize)]
struct Range {
    start: Position,
    end: Position,
}

/// 1-based line; 1-based column counted in Unicode scalar values
/// (`column`), in UTF-16 code units (`column_utf16`, what LSP and most
/// editors count) and in bytes (`column_byte`).
#[derive(Serialize, Debug, PartialEq, Eq)]
struct Position {
    line: usize,
    column: usize,
    column_utf16: usize,
    column_byte: usize,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    file: &'a str,
    span: ByteSpan,
    range: Range,
    message: &'a str,
    primary: bool,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    message: &'a str,
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    file: &'a str,
    span: ByteSpan,
    range: Range,
    replacement: &'a str,
}

fn diagnostic<'a>(sources: &'a SourceMap, d: &'a Diagnostic) -> JsonDiagnostic<'a> {
    let place = located(sources, d.primary_span());
    JsonDiagnostic {
        kind: "diagnostic",
        code: d.code,
        severity: severity_word(d.severity),
        message: &d.message,
        file: place.map(|(f, _)| f.name.as_str()),
        span: place.map(|(_, s)| byte_span(s)),
        range: place.map(|(f, s)| range(f, s)),
        labels: d.labels.iter().filter_map(|l| label(sources, l)).collect(),
        notes: &d.notes,
        help: &d.help,
        fixes: d.fixes.iter().filter_map(|f| fix(sources, f)).collect(),
        omitted: d.omitted,
    }
}

/// A label outside every loaded file is left out (there is nothing to show).
fn label<'a>(sources: &'a SourceMap, l: &'a Label) -> Option<JsonLabel<'a>> {
    let (file, span) = located(sources, Some(l.span))?;
    Some(JsonLabel {
        file: &file.name,
        span: byte_span(span),
        range: range(file, span),
        message: &l.message,
        primary: l.primary,
    })
}

/// A fix with an edit whose span does not fit its file exactly is left out
/// whole: applying it, or only part of it, would be wrong.
fn fix<'a>(sources: &'a SourceMap, f: &'a Fix) -> Option<JsonFix<'a>> {
    let edits = f
        .edits
        .iter()
        .map(|e| {
            let file = exact(sources, e.span)?;
            Some(JsonEdit {
                file: &file.name,
                span: byte_span(e.span),
                range: range(file, e.span),
                replacement: &e.replacement,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(JsonFix {
        message: &f.message,
        edits,
    })
}

fn byte_span(s: Span) -> ByteSpan {
    ByteSpan {
        start: s.start,
        end: s.end,
    }
}

fn range(file: &SourceFile, s: Span) -> Range {
    Range {
        start: position(file, s.start as usize),
        end: position(file, s.end as usize),
    }
}

/// `byte` is already clamped to a character boundary inside the file.
fn position(file: &SourceFile, byte: usize) -> Position {
    let (line, column) = file.line_col(byte);
    let start = file.line_start(line.saturating_sub(1));
    Position {
        line,
        column,
        column_utf16: file.utf16_count(start, byte) + 1,
        column_byte: byte.saturating_sub(start) + 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_chars_utf16_units_and_bytes() {
        // 'ü' is 2 bytes, 1 UTF-16 unit; '𝄞' is 4 bytes, 2 UTF-16 units.
        let f = SourceFile::new("a", None, "x\nü𝄞y\n");
        let at_y = f.text.find('y').unwrap();
        assert_eq!(
            position(&f, at_y),
            Position {
                line: 2,
                column: 3,
                column_utf16: 4,
                column_byte: 7
            }
        );
        assert_eq!(
            position(&f, 0),
            Position {
                line: 1,
                column: 1,
                column_utf16: 1,
                column_byte: 1
            }
        );
    }
}
