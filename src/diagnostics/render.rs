//! Rendering diagnostics: human (codespan-reporting), short, JSON.
//!
//! All three take the [`SourceMap`] of the compilation and a slice of
//! diagnostics and return text; the driver decides where it goes. None of
//! them trusts the spans: a span past the end of its file, inside a UTF-8
//! character, reversed, or naming a file that is not loaded is clamped (or
//! dropped) rather than allowed to panic or abort the output.

mod escape;
mod excerpt;
mod json;

pub use escape::escape_text;
pub use json::{json, json_diagnostics, json_error, json_summary};

use super::{Diagnostic, Fix, Severity};
use crate::source::{SourceFile, SourceMap};
use crate::span::Span;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::term::{self, termcolor};
use std::fmt::Write as _;

/// Rich, multi-line output for people: the header with the code, the source
/// lines with carets under each label, then `note:` and `help:` lines (and
/// each fix, shown applied to its source line). `color` selects ANSI escapes.
pub fn human(sources: &SourceMap, diags: &[Diagnostic], color: bool) -> String {
    // Control characters in the source are shown escaped: render from an
    // escaped copy of the files (only built when some file needs it).
    if escape::needed(sources) || diags.iter().any(has_unsafe_text) {
        let (shown, diags) = escape::escape_all(sources, diags);
        return human_unescaped(&shown, &diags, color);
    }
    human_unescaped(sources, diags, color)
}

/// Does a diagnostic's own text (not its source) hold a character that must
/// be escaped? Messages can quote the source, an import path for one.
fn has_unsafe_text(d: &Diagnostic) -> bool {
    let unsafe_in = |s: &str| matches!(escape_text(s), std::borrow::Cow::Owned(_));
    unsafe_in(&d.message)
        || d.labels.iter().any(|l| unsafe_in(&l.message))
        || d.notes.iter().chain(&d.help).any(|n| unsafe_in(n))
        || d.fixes
            .iter()
            .any(|f| unsafe_in(&f.message) || f.edits.iter().any(|e| unsafe_in(&e.replacement)))
}

fn human_unescaped(sources: &SourceMap, diags: &[Diagnostic], color: bool) -> String {
    let mut out = String::new();
    for d in diags {
        let mut buf = if color {
            termcolor::Buffer::ansi()
        } else {
            termcolor::Buffer::no_color()
        };
        // Only the lines the labels need, long ones cut to a window: the
        // output stays bounded whatever the length of a line.
        let (excerpt, labels) = excerpt::Excerpt::of(sources, d);
        let rendered = term::emit(
            &mut buf,
            &term::Config::default(),
            &excerpt,
            &to_codespan(sources, d, labels),
        );
        match rendered
            .ok()
            .and_then(|()| String::from_utf8(buf.into_inner()).ok())
        {
            Some(text) => out.push_str(&text),
            // codespan gave up (it should not, the labels are clamped): the
            // one-line form still tells the user what is wrong.
            None => {
                out.push_str(&short_line(sources, d));
                out.push('\n');
            }
        }
    }
    out
}

/// The closing line after the diagnostics of a build, like rustc's:
/// `error: aborting due to 2 previous errors; 1 warning emitted`, or
/// `warning: 1 warning emitted`; empty when there was nothing.
pub fn human_summary(errors: usize, warnings: usize) -> String {
    let warned = match warnings {
        0 => String::new(),
        n => format!("{} emitted", super::plural(n, "warning")),
    };
    match errors {
        0 if warnings == 0 => String::new(),
        0 => format!("warning: {warned}"),
        n => {
            let errs = format!("aborting due to {}", super::plural(n, "previous error"));
            if warned.is_empty() {
                format!("error: {errs}")
            } else {
                format!("error: {errs}; {warned}")
            }
        }
    }
}

/// One line per diagnostic, `path:line:col: error[E0301]: message`, the
/// format of gcc that editors' problem matchers parse. Line and column are
/// 1-based, the column counted in characters (Unicode scalar values).
pub fn short(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&short_line(sources, d));
        out.push('\n');
    }
    out
}

fn short_line(sources: &SourceMap, d: &Diagnostic) -> String {
    let head = format!(
        "{}[{}]: {}",
        severity_word(d.severity),
        d.code,
        escape_text(first_line(&d.message))
    );
    match located(sources, d.primary_span()) {
        Some((file, span)) => {
            let (line, col) = file.line_col(span.start as usize);
            format!("{}:{line}:{col}: {head}", escape_text(&file.name))
        }
        // No place to point at: name the root file, as gcc names the program.
        None => match sources.get(crate::span::FileId(0)) {
            Some(root) => format!("{}: {head}", escape_text(&root.name)),
            None => format!("kdslc: {head}"),
        },
    }
}

/// `error` or `warning`, as every format spells it.
pub(crate) fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// Messages are one line by contract; a stray newline must not break the
/// one-line-per-diagnostic formats.
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// The file a span points into and the span clamped to it: inside the text,
/// on character boundaries, `start <= end`. `None` when the file is unknown.
pub(crate) fn located(sources: &SourceMap, span: Option<Span>) -> Option<(&SourceFile, Span)> {
    let span = span?;
    let file = sources.get(span.file)?;
    let text = &file.text;
    let fix = |b: u32| {
        let mut b = (b as usize).min(text.len());
        while b > 0 && !text.is_char_boundary(b) {
            b -= 1;
        }
        b
    };
    let (a, b) = (fix(span.start), fix(span.end));
    Some((file, Span::new(span.file, a.min(b), a.max(b))))
}

/// The file of a span that fits it exactly (inside the text, on character
/// boundaries, not reversed). Fixes need this: a clamped edit would change
/// the wrong text, so a fix with a bad span is not offered at all.
pub(crate) fn exact(sources: &SourceMap, span: Span) -> Option<&SourceFile> {
    let file = sources.get(span.file)?;
    let ok = span.start <= span.end && file.text.get(span.range()).is_some();
    ok.then_some(file)
}

fn to_codespan(
    sources: &SourceMap,
    d: &Diagnostic,
    labels: Vec<cs::Label<crate::span::FileId>>,
) -> cs::Diagnostic<crate::span::FileId> {
    let severity = match d.severity {
        Severity::Error => cs::Severity::Error,
        Severity::Warning => cs::Severity::Warning,
    };
    let mut notes: Vec<String> = d.notes.iter().map(|n| format!("note: {n}")).collect();
    notes.extend(d.help.iter().map(|h| format!("help: {h}")));
    notes.extend(d.fixes.iter().map(|f| fix_note(sources, f)));
    cs::Diagnostic::new(severity)
        .with_code(d.code)
        .with_message(d.message.clone())
        .with_labels(labels)
        .with_notes(notes)
}

/// `help: {message}`, followed by the source line as it reads with the fix
/// applied (when the fix is one edit within one line), or by each edit as
/// "replace `old` with `new`". Only the message when an edit's span is bad.
fn fix_note(sources: &SourceMap, fix: &Fix) -> String {
    let mut note = format!("help: {}", fix.message);
    if !fix.edits.iter().all(|e| exact(sources, e.span).is_some()) {
        return note;
    }
    if let [edit] = fix.edits.as_slice() {
        if let Some(line) = applied_line(sources, edit.span, &edit.replacement) {
            let _ = write!(note, "\n      {line}");
            return note;
        }
    }
    for edit in &fix.edits {
        let old = sources.slice(edit.span);
        let _ = if old.is_empty() {
            write!(note, "\n      insert `{}`", edit.replacement)
        } else {
            write!(note, "\n      replace `{old}` with `{}`", edit.replacement)
        };
    }
    note
}

/// The line holding `span` with `span` replaced, trimmed; `None` when the
/// span crosses a line end or the result would not be one line.
fn applied_line(sources: &SourceMap, span: Span, replacement: &str) -> Option<String> {
    let file = exact(sources, span)?;
    let line = file.line_index(span.start as usize);
    if file.line_index(span.end as usize) != line || replacement.contains(['\n', '\r']) {
        return None;
    }
    let start = file.line_start(line);
    let end = file
        .text
        .get(start..)?
        .find(['\n', '\r'])
        .map_or(file.text.len(), |n| start + n);
    let before = file.text.get(start..span.start as usize)?;
    let after = file.text.get(span.end as usize..end)?;
    if end - start <= excerpt::LONG_LINE {
        let edited = format!("{before}{replacement}{after}");
        return Some(edited.trim().to_string());
    }
    // A long line: the edit with some context on each side.
    let (before, after) = (tail_of(before, 60), head_of(after, 60));
    let lead = if before.len() < span.start as usize - start {
        "..."
    } else {
        ""
    };
    let trail = if after.len() < end - span.end as usize {
        "..."
    } else {
        ""
    };
    Some(format!(
        "{lead}{}{replacement}{}{trail}",
        before.trim_start(),
        after.trim_end()
    ))
}

/// The last `n` bytes of `s` or a little less, on a character boundary.
fn tail_of(s: &str, n: usize) -> &str {
    let mut at = s.len().saturating_sub(n);
    while !s.is_char_boundary(at) {
        at += 1;
    }
    s.get(at..).unwrap_or("")
}

/// The first `n` bytes of `s` or a little less, on a character boundary.
fn head_of(s: &str, n: usize) -> &str {
    let mut at = n.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    s.get(..at).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;
    use crate::span::FileId;

    fn map(text: &str) -> SourceMap {
        let mut m = SourceMap::new();
        m.add(SourceFile::new("a.kdsl", None, text));
        m
    }

    #[test]
    fn summary_wording() {
        assert_eq!(human_summary(0, 0), "");
        assert_eq!(human_summary(0, 1), "warning: 1 warning emitted");
        assert_eq!(
            human_summary(1, 0),
            "error: aborting due to 1 previous error"
        );
        assert_eq!(
            human_summary(2, 3),
            "error: aborting due to 2 previous errors; 3 warnings emitted"
        );
    }

    #[test]
    fn located_clamps_into_the_file() {
        let m = map("ü\n");
        let (_, s) = located(&m, Some(Span::new(FileId(0), 1, 99))).unwrap();
        assert_eq!((s.start, s.end), (0, 3));
        let (_, s) = located(&m, Some(Span::new(FileId(0), 3, 1))).unwrap();
        assert_eq!((s.start, s.end), (0, 3));
        assert!(located(&m, Some(Span::new(FileId(7), 0, 1))).is_none());
    }

    #[test]
    fn fix_is_shown_applied_to_its_line() {
        let m = map("fn f() {\n    full[s].wait(0);\n}\n");
        let start = m.get(FileId(0)).unwrap().text.find("wait").unwrap();
        let fix = Fix {
            message: "wait with cluster-scope acquire".into(),
            edits: vec![super::super::Edit {
                span: Span::new(FileId(0), start, start + 4),
                replacement: "wait_cluster".into(),
            }],
        };
        assert_eq!(
            fix_note(&m, &fix),
            "help: wait with cluster-scope acquire\n      full[s].wait_cluster(0);"
        );
    }
}
