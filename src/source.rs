//! The source files of one compilation and the line/column arithmetic that
//! diagnostics need. Implements codespan-reporting's `Files` so the renderer
//! can read it directly.
//!
//! A line ends at `\n`, `\r\n` or a lone `\r` (old Mac files), as the lexer
//! ends `//` comments. A UTF-8 byte-order mark at the start of a file stays
//! in the text, so byte offsets are the file's own, but it is not part of
//! line 1: columns start after it, as editors count them.

use crate::span::{FileId, Span};
use codespan_reporting::files::{self, Files};
use std::ops::Range;
use std::path::PathBuf;

#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The name shown in diagnostics (the path as given on the command line,
    /// or as resolved from an import).
    pub name: String,
    /// The file on disk, when there is one.
    pub path: Option<PathBuf>,
    pub text: String,
    line_starts: Vec<usize>,
    /// The number of characters, and of characters outside the Basic
    /// Multilingual Plane, before every [`CHAR_STRIDE`]-th byte, so that a
    /// column takes constant time however long its line is.
    char_marks: Vec<(usize, usize)>,
}

/// Bytes between two entries of `SourceFile::char_marks`.
const CHAR_STRIDE: usize = 256;

impl SourceFile {
    pub fn new(
        name: impl Into<String>,
        path: Option<PathBuf>,
        text: impl Into<String>,
    ) -> SourceFile {
        let text = text.into();
        let line_starts = line_starts(&text);
        let char_marks = char_marks(&text);
        SourceFile {
            name: name.into(),
            path,
            text,
            line_starts,
            char_marks,
        }
    }

    /// How many characters, and how many of them outside the Basic
    /// Multilingual Plane (two UTF-16 units each), start before byte offset
    /// `byte` (clamped to the text and down to a character boundary).
    fn chars_before(&self, byte: usize) -> (usize, usize) {
        let byte = clamp_to_char_boundary(&self.text, byte);
        let mark = (byte / CHAR_STRIDE).min(self.char_marks.len().saturating_sub(1));
        let (base, from) = match self.char_marks.get(mark) {
            Some(&n) => (n, mark * CHAR_STRIDE),
            None => ((0, 0), 0),
        };
        let rest = self.text.as_bytes().get(from..byte).unwrap_or_default();
        rest.iter().fold(base, |(c, a), &b| {
            (
                c + usize::from(starts_char(b)),
                a + usize::from(starts_astral(b)),
            )
        })
    }

    /// The number of characters between byte offsets `from` and `to`.
    pub fn char_count(&self, from: usize, to: usize) -> usize {
        self.chars_before(to)
            .0
            .saturating_sub(self.chars_before(from).0)
    }

    /// The number of UTF-16 code units between byte offsets `from` and `to`.
    pub fn utf16_count(&self, from: usize, to: usize) -> usize {
        let ((c1, a1), (c2, a2)) = (self.chars_before(from), self.chars_before(to));
        (c2 + a2).saturating_sub(c1 + a1)
    }

    /// 0-based line index of a byte offset.
    pub fn line_index(&self, byte: usize) -> usize {
        match self.line_starts.binary_search(&byte) {
            Ok(line) => line,
            Err(next) => next.saturating_sub(1),
        }
    }

    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line)
            .copied()
            .unwrap_or(self.text.len())
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// 1-based line and column (column counted in Unicode scalar values) of
    /// a byte offset. Offsets past the end or inside a character are clamped.
    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        let byte = clamp_to_char_boundary(&self.text, byte);
        let line = self.line_index(byte);
        let start = self.line_start(line);
        (line + 1, self.char_count(start, byte) + 1)
    }

    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.range()).unwrap_or("")
    }
}

/// The UTF-8 byte-order mark, skipped at the start of a file.
pub const BOM: char = '\u{feff}';

/// The byte offset where each line starts: after the byte-order mark for
/// the first line, then after every line break.
fn line_starts(text: &str) -> Vec<usize> {
    let first = if text.starts_with(BOM) {
        BOM.len_utf8()
    } else {
        0
    };
    std::iter::once(first).chain(line_breaks(text)).collect()
}

/// The offset just after each line break of `text`: every `\n`, `\r\n`
/// (one break, after its `\n`) and lone `\r`. The language server's line
/// table uses it too, as LSP counts the same three.
pub fn line_breaks(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().filter_map(move |(i, &b)| {
        let ends_line = match b {
            b'\n' => true,
            b'\r' => bytes.get(i + 1) != Some(&b'\n'),
            _ => false,
        };
        ends_line.then_some(i + 1)
    })
}

/// The start of the line after the one holding byte `at` (the text's
/// length on the last line), by the line breaks of [`line_breaks`]; it
/// reads only as far as that line's end.
pub fn next_line_start(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = at;
    while let Some(&b) = bytes.get(i) {
        let ends_line = match b {
            b'\n' => true,
            b'\r' => bytes.get(i + 1) != Some(&b'\n'),
            _ => false,
        };
        if ends_line {
            return i + 1;
        }
        i += 1;
    }
    text.len()
}

/// `SourceFile::char_marks`: for each multiple k of [`CHAR_STRIDE`], the
/// number of characters (and of those outside the BMP) that start before
/// byte k.
fn char_marks(text: &str) -> Vec<(usize, usize)> {
    let mut marks = Vec::with_capacity(text.len() / CHAR_STRIDE + 1);
    let (mut chars, mut astral) = (0, 0);
    for (i, b) in text.bytes().enumerate() {
        if i % CHAR_STRIDE == 0 {
            marks.push((chars, astral));
        }
        chars += usize::from(starts_char(b));
        astral += usize::from(starts_astral(b));
    }
    marks
}

/// A byte that is not a UTF-8 continuation byte starts a character.
fn starts_char(b: u8) -> bool {
    b & 0xC0 != 0x80
}

/// The first byte of a four-byte UTF-8 sequence: a character outside the
/// Basic Multilingual Plane.
fn starts_astral(b: u8) -> bool {
    b >= 0xF0
}

fn clamp_to_char_boundary(text: &str, mut byte: usize) -> usize {
    byte = byte.min(text.len());
    while byte > 0 && !text.is_char_boundary(byte) {
        byte -= 1;
    }
    byte
}

/// All files of a compilation: the root file first, then imports in the
/// order they were loaded.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        FileId(self.files.len() as u32 - 1)
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The text a span covers ("" if it is out of range).
    pub fn slice(&self, span: Span) -> &str {
        self.get(span.file).map_or("", |f| f.slice(span))
    }

    fn file(&self, id: FileId) -> Result<&SourceFile, files::Error> {
        self.get(id).ok_or(files::Error::FileMissing)
    }
}

impl<'a> Files<'a> for SourceMap {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        Ok(&self.file(id)?.name)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        Ok(&self.file(id)?.text)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, files::Error> {
        Ok(self.file(id)?.line_index(byte_index))
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, files::Error> {
        let file = self.file(id)?;
        if line_index >= file.line_count() {
            return Err(files::Error::LineTooLarge {
                given: line_index,
                max: file.line_count().saturating_sub(1),
            });
        }
        let start = file.line_start(line_index);
        let end = if line_index + 1 < file.line_count() {
            file.line_start(line_index + 1)
        } else {
            file.text.len()
        };
        Ok(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns in characters and UTF-16 units, the slow way.
    fn naive(text: &str, byte: usize) -> (usize, usize) {
        let start = text
            .get(..byte)
            .and_then(|t| t.rfind('\n'))
            .map_or(0, |i| i + 1);
        let before = text.get(start..byte).unwrap_or("");
        (
            before.chars().count() + 1,
            before.encode_utf16().count() + 1,
        )
    }

    #[test]
    fn columns_match_counting_from_the_line_start() {
        // Long lines of one-, two-, three- and four-byte characters, so that
        // the marks fall inside characters too.
        let mut text = String::new();
        for (i, c) in ['a', 'é', '∑', '𝄞'].iter().enumerate() {
            text.push_str(&c.to_string().repeat(700 + i));
            text.push('\n');
        }
        text.push_str("x𝄞y");
        let f = SourceFile::new("t", None, text.clone());
        for (byte, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let (line, col) = f.line_col(byte);
            let (col_chars, col_utf16) = naive(&text, byte);
            assert_eq!(col, col_chars, "byte {byte}");
            let start = f.line_start(line - 1);
            assert_eq!(f.utf16_count(start, byte) + 1, col_utf16, "byte {byte}");
        }
        // Offsets inside a character count as its start.
        let inside = text.find('é').unwrap_or(0) + 1;
        assert_eq!(f.line_col(inside), f.line_col(inside - 1));
    }
}
