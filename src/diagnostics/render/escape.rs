//! Keeping the terminal safe from the source: control characters (NUL, ESC,
//! the rest of C0 and C1, DEL) and the invisible bidirectional controls
//! (U+202A–U+202E, U+2066–U+2069, the marks U+200E, U+200F, U+061C) are
//! shown as `\u{1b}`, never written as themselves. Written raw, an ESC
//! sequence in a comment could recolour or rewrite the terminal, and a bidi
//! override could make the line shown differ from the line compiled
//! ("Trojan Source").
//!
//! Human output escapes the source lines it shows (through an escaped copy
//! of each file, with every span moved to match), the messages, labels,
//! notes and file names; short output escapes its message and file name.
//! JSON needs none of this: its consumers are programs, and JSON escapes
//! the C0 controls itself.

use crate::diagnostics::Diagnostic;
use crate::source::{SourceFile, SourceMap};
use crate::span::Span;
use std::borrow::Cow;

/// Must `c` not reach a terminal as itself? Line breaks and tabs are not
/// included: in source text they are layout (see [`escape_text`] for text
/// that must stay on one line).
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `\u{1b}`: how an unsafe character is shown.
fn escaped(c: char) -> String {
    format!("\\u{{{:x}}}", u32::from(c))
}

/// `text` with every unsafe character escaped, and also `\r` (in a message,
/// a carriage return would let the rest of the line overwrite its start).
/// Borrowed when there is nothing to escape.
pub fn escape_text(text: &str) -> Cow<'_, str> {
    let unsafe_here = |c: char| is_unsafe(c) || c == '\r';
    if !text.chars().any(unsafe_here) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_here(c) {
            out.push_str(&escaped(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Does any file of `sources` hold an unsafe character, in its text or its
/// name?
pub fn needed(sources: &SourceMap) -> bool {
    sources
        .iter()
        .any(|(_, f)| f.text.chars().any(is_unsafe) || f.name.chars().any(is_unsafe))
}

/// An escaped copy of every file, and the diagnostics with their spans
/// moved to the same text in the copy; messages, labels, notes and help
/// escaped too.
pub fn escape_all(sources: &SourceMap, diags: &[Diagnostic]) -> (SourceMap, Vec<Diagnostic>) {
    let mut shown = SourceMap::new();
    let mut shifts: Vec<Shifts> = Vec::with_capacity(sources.len());
    for (_, f) in sources.iter() {
        let (text, s) = escape_source(&f.text);
        shown.add(SourceFile::new(
            escape_text(&f.name).into_owned(),
            f.path.clone(),
            text,
        ));
        shifts.push(s);
    }
    let moved = |span: Span| -> Span {
        match shifts.get(span.file.0 as usize) {
            Some(s) => Span::new(
                span.file,
                s.map(span.start) as usize,
                s.map(span.end) as usize,
            ),
            None => span,
        }
    };
    let diags = diags
        .iter()
        .map(|d| {
            let mut d = d.clone();
            d.message = escape_text(&d.message).into_owned();
            for l in &mut d.labels {
                l.span = moved(l.span);
                l.message = escape_text(&l.message).into_owned();
            }
            for n in d.notes.iter_mut().chain(d.help.iter_mut()) {
                *n = escape_text(n).into_owned();
            }
            for f in &mut d.fixes {
                f.message = escape_text(&f.message).into_owned();
                for e in &mut f.edits {
                    e.span = moved(e.span);
                    e.replacement = escape_text(&e.replacement).into_owned();
                }
            }
            d
        })
        .collect();
    (shown, diags)
}

/// Where the escaped copy of a text grew: for each escaped character, its
/// offset in the original and the bytes added up to and including it.
struct Shifts(Vec<(u32, u32)>);

impl Shifts {
    /// The offset in the copy of original offset `at`.
    fn map(&self, at: u32) -> u32 {
        let before = self.0.partition_point(|&(offset, _)| offset < at);
        let added = match before.checked_sub(1) {
            Some(i) => self.0.get(i).map_or(0, |&(_, added)| added),
            None => 0,
        };
        at.saturating_add(added)
    }
}

fn escape_source(text: &str) -> (String, Shifts) {
    let mut out = String::with_capacity(text.len());
    let mut shifts = Vec::new();
    let mut added = 0u32;
    for (i, c) in text.char_indices() {
        if is_unsafe(c) {
            let e = escaped(c);
            let grow = e.len().saturating_sub(c.len_utf8());
            added = added.saturating_add(u32::try_from(grow).unwrap_or(u32::MAX));
            shifts.push((u32::try_from(i).unwrap_or(u32::MAX), added));
            out.push_str(&e);
        } else {
            out.push(c);
        }
    }
    (out, Shifts(shifts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::FileId;

    #[test]
    fn controls_and_bidi_are_escaped_layout_is_not() {
        assert_eq!(escape_text("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(
            escape_text("x\u{202e}y\0z\u{85}"),
            "x\\u{202e}y\\u{0}z\\u{85}"
        );
        assert_eq!(escape_text("a\rb"), "a\\u{d}b");
        assert!(matches!(escape_text("tab\there ü"), Cow::Borrowed(_)));
        assert!(!is_unsafe('\n') && !is_unsafe('\t') && !is_unsafe('\r') && !is_unsafe('é'));
    }

    #[test]
    fn spans_follow_the_escaped_text() {
        let mut m = SourceMap::new();
        m.add(SourceFile::new("a.kdsl", None, "\u{1b}x \u{202e}yy\n"));
        let text = &m.get(FileId(0)).unwrap().text;
        let y = text.find("yy").unwrap();
        let d = Diagnostic::error("E0100", "bad \u{1b}")
            .primary(Span::new(FileId(0), y, y + 2), "here");
        let (shown, diags) = escape_all(&m, &[d]);
        let file = shown.get(FileId(0)).unwrap();
        assert_eq!(file.text, "\\u{1b}x \\u{202e}yy\n");
        let span = diags[0].labels[0].span;
        assert_eq!(file.slice(span), "yy");
        assert_eq!(diags[0].message, "bad \\u{1b}");
        // The start of the file and the escaped character itself.
        let s = Shifts(vec![(0, 5), (3, 10)]);
        assert_eq!((s.map(0), s.map(1), s.map(3), s.map(4)), (0, 6, 8, 14));
    }
}
