//! PTX text with, for each line, the `.kdsl` span it came from: the map the
//! simulator uses to point its reports at source, and from which
//! `--lineinfo` writes `.loc` directives.
//!
//! The writer only records: every instruction line gets the span of the IR
//! node being written when it was emitted; a kernel's `.shared` declarations
//! get the span of their kdsl declaration (so that reports can label it);
//! labels, comments, other declarations and headers get `None`.

use crate::source::SourceMap;
use crate::span::{FileId, Span};
use std::fmt::Write as _;

/// PTX text and the span of each of its lines (`spans.len()` is the number
/// of lines of `text`, which always ends with a newline unless empty).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lines {
    pub text: String,
    pub spans: Vec<Option<Span>>,
}

impl Lines {
    /// Appends `text`; each line of it (a final unterminated line counts)
    /// is mapped to `span`. A missing final newline is added, so lines and
    /// spans never drift apart.
    pub fn push(&mut self, text: &str, span: Option<Span>) {
        for line in text.split_inclusive('\n') {
            self.text.push_str(line);
            if !line.ends_with('\n') {
                self.text.push('\n');
            }
            self.spans.push(span);
        }
    }

    /// Appends another mapped text.
    pub fn append(&mut self, other: Lines) {
        self.text.push_str(&other.text);
        self.spans.extend(other.spans);
    }

    /// Puts `head` before the text, in place: the module's header can only
    /// be written once its body has decided the `.version`, and appending a
    /// large body to a small header would hold two copies of it at once.
    pub fn prepend(&mut self, head: Lines) {
        self.text.insert_str(0, &head.text);
        self.spans.splice(0..0, head.spans);
    }

    /// Removes blank lines at the end.
    pub fn trim_blank_end(&mut self) {
        while self.text.ends_with("\n\n") || self.text == "\n" {
            self.text.pop();
            self.spans.pop();
        }
    }

    /// The number of lines.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// The `.file` number of a source file in `--lineinfo` output.
pub(super) fn file_number(file: FileId) -> u32 {
    file.0 + 1
}

/// `.file N "PATH"` for every source file: the root and each import. The
/// path is made absolute (as nvcc does) so that tools run from another
/// folder find it.
pub(super) fn file_directives(sources: &SourceMap) -> String {
    let mut out = String::new();
    for (id, file) in sources.iter() {
        let path = match &file.path {
            Some(p) => std::path::absolute(p).unwrap_or_else(|_| p.clone()),
            None => std::path::PathBuf::from(&file.name),
        };
        let _ = writeln!(
            out,
            ".file {} \"{}\"",
            file_number(id),
            escape(&path.to_string_lossy())
        );
    }
    out
}

/// A PTX string literal's escapes, as in C.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Inserts `.loc FILE LINE COL` before each instruction of a function body
/// whose source line differs from the previous `.loc`'s. `.loc` lines map
/// to `None`: they are not instructions. Declarations (lines that start
/// with a directive) get no `.loc`, whatever their span.
pub(super) fn with_locs(body: Lines, sources: &SourceMap) -> Lines {
    let mut out = Lines::default();
    let mut last: Option<(FileId, usize)> = None;
    for (line, span) in body.text.split_inclusive('\n').zip(body.spans) {
        let directive = line.trim_start().starts_with('.');
        if let Some(s) = span.filter(|_| !directive) {
            if let Some(file) = sources.get(s.file) {
                let (l, c) = file.line_col(s.start as usize);
                if last != Some((s.file, l)) {
                    out.push(&format!("\t.loc\t{} {l} {c}\n", file_number(s.file)), None);
                    last = Some((s.file, l));
                }
            }
        }
        out.push(line, span);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_keeps_lines_and_spans_in_step() {
        let s = Span::new(FileId(0), 1, 2);
        let mut l = Lines::default();
        l.push("a\nb\n", Some(s));
        l.push("c", None);
        l.push("", Some(s));
        assert_eq!(l.text, "a\nb\nc\n");
        assert_eq!(l.spans, [Some(s), Some(s), None]);
        l.push("\n\n", None);
        l.trim_blank_end();
        assert_eq!(l.text, "a\nb\nc\n");
        assert_eq!(l.len(), 3);
        let mut head = Lines::default();
        head.push("h\n", None);
        l.prepend(head);
        assert_eq!(l.text, "h\na\nb\nc\n");
        assert_eq!(l.spans, [None, Some(s), Some(s), None]);
    }

    #[test]
    fn escapes_quotes_and_backslashes() {
        assert_eq!(escape(r#"a"b\c"#), r#"a\"b\\c"#);
    }
}
