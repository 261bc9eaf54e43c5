//! What the human renderer shows of the source for one diagnostic: the
//! lines its labels need, each cut to a bounded window around the labels
//! when it is long.
//!
//! codespan-reporting prints every labelled line whole and counts columns
//! from the start of the line, so a 1 MB line under each of a thousand
//! diagnostics would be printed (and scanned) a thousand times. Instead the
//! renderer reads an [`Excerpt`]: a `Files` implementation holding, per
//! file, only the lines a diagnostic can show (its labels' lines, their
//! neighbours and the context lines of multi-line labels). A line longer than
//! [`LONG_LINE`] bytes is cut to the stretch around its labels, with `...`
//! where text was left out. Line numbers and columns are those of the real
//! file; a line that is not long is copied as it is, so the output for it is
//! exactly what the whole file would give.

use super::located;
use crate::diagnostics::Diagnostic;
use crate::source::{SourceFile, SourceMap};
use crate::span::FileId;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{self, Files};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// A line longer than this many bytes is shown as a window around its labels.
pub const LONG_LINE: usize = 240;
/// Bytes of context kept on each side of the labels of a long line.
const CONTEXT: usize = 60;
/// The widest stretch of a long line shown between its first and last label.
const WIDEST: usize = 120;
/// Stands for the text left out of a long line.
const CUT: &str = "...";

/// The source a diagnostic needs, and its labels pointing into it.
pub struct Excerpt<'s> {
    sources: &'s SourceMap,
    files: Vec<ExcerptFile>,
}

/// The kept lines of one file, one after another in `text`.
struct ExcerptFile {
    id: FileId,
    text: String,
    /// Original line index → the line as kept.
    lines: BTreeMap<usize, Kept>,
    /// Start of each kept line in `text` → its original line index.
    starts: BTreeMap<usize, usize>,
}

/// One kept line: where it is in the excerpt and which part of the
/// original line it shows.
struct Kept {
    /// The line in the excerpt (newline included, as in the original).
    range: Range<usize>,
    /// Byte offset in the original file of the first byte shown.
    shown_from: usize,
    /// Byte offset in the original file just past the last byte shown.
    shown_to: usize,
    /// Bytes of the `...` marker in front of the shown text (0 or 3).
    lead: usize,
    /// 0-based column (in characters) of `shown_from` in the original line.
    column: usize,
}

impl<'s> Excerpt<'s> {
    /// The excerpt for `d`, and `d` as codespan's diagnostic with its labels
    /// pointing into the excerpt.
    pub fn of(sources: &'s SourceMap, d: &Diagnostic) -> (Excerpt<'s>, Vec<cs::Label<FileId>>) {
        // Every label, clamped into its file, and the points of each line
        // that labels touch.
        let spans: Vec<(bool, crate::span::Span, &str)> = d
            .labels
            .iter()
            .filter_map(|l| {
                let (_, span) = located(sources, Some(l.span))?;
                Some((l.primary, span, l.message.as_str()))
            })
            .collect();
        let mut wanted: BTreeMap<FileId, BTreeMap<usize, Vec<usize>>> = BTreeMap::new();
        for (_, span, _) in &spans {
            let Some(file) = sources.get(span.file) else {
                continue;
            };
            let lines = wanted.entry(span.file).or_default();
            let (a, b) = (span.start as usize, span.end as usize);
            let (la, lb) = (file.line_index(a), file.line_index(b));
            lines.entry(la).or_default().push(a);
            lines.entry(lb).or_default().push(b);
            if lb > la {
                // codespan shows a few lines after a multi-line label's start
                // and one before its end.
                for l in (la + 1..=la + 3).chain(lb.checked_sub(1)) {
                    if l < lb {
                        lines.entry(l).or_default();
                    }
                }
            }
        }
        let mut files = Vec::new();
        for (id, points) in wanted {
            if let Some(file) = sources.get(id) {
                files.push(ExcerptFile::new(id, file, &points));
            }
        }
        let excerpt = Excerpt { sources, files };
        let labels = spans
            .iter()
            .filter_map(|(primary, span, message)| {
                let f = excerpt.file(span.file).ok()?;
                let range = f.map(sources.get(span.file)?, span.start as usize)
                    ..f.map(sources.get(span.file)?, span.end as usize);
                let label = if *primary {
                    cs::Label::primary(span.file, range)
                } else {
                    cs::Label::secondary(span.file, range)
                };
                Some(label.with_message(message.to_string()))
            })
            .collect();
        (excerpt, labels)
    }

    fn file(&self, id: FileId) -> Result<&ExcerptFile, files::Error> {
        self.files
            .iter()
            .find(|f| f.id == id)
            .ok_or(files::Error::FileMissing)
    }
}

impl ExcerptFile {
    /// Keeps the lines in `points` (with the byte offsets labels touch on
    /// each) and their neighbours, which codespan prints rather than a
    /// one-line gap.
    fn new(id: FileId, file: &SourceFile, points: &BTreeMap<usize, Vec<usize>>) -> ExcerptFile {
        let last = file.line_count().saturating_sub(1);
        let mut keep: BTreeSet<usize> = BTreeSet::new();
        for &l in points.keys() {
            keep.extend(l.saturating_sub(1)..=(l + 1).min(last));
        }
        let mut out = ExcerptFile {
            id,
            text: String::new(),
            lines: BTreeMap::new(),
            starts: BTreeMap::new(),
        };
        for l in keep {
            let no_points = Vec::new();
            out.push_line(file, l, points.get(&l).unwrap_or(&no_points));
        }
        out
    }

    fn push_line(&mut self, file: &SourceFile, line: usize, points: &[usize]) {
        let start = file.line_start(line);
        let end = file.line_start(line + 1).max(start);
        let whole = file.text.get(start..end).unwrap_or("");
        let body_len = whole.trim_end_matches(['\n', '\r']).len();
        let newline = whole.get(body_len..).unwrap_or("");
        let (from, to) = if body_len <= LONG_LINE {
            (start, start + body_len)
        } else {
            window(file, start, start + body_len, points)
        };
        let lead = if from > start { CUT } else { "" };
        let trail = if to < start + body_len { CUT } else { "" };
        let at = self.text.len();
        self.text.push_str(lead);
        self.text.push_str(file.text.get(from..to).unwrap_or(""));
        self.text.push_str(trail);
        self.text.push_str(newline);
        let column = file.char_count(start, from);
        self.starts.insert(at, line);
        self.lines.insert(
            line,
            Kept {
                range: at..self.text.len(),
                shown_from: from,
                shown_to: to,
                lead: lead.len(),
                column,
            },
        );
    }

    /// The excerpt offset of the original byte offset `byte`.
    fn map(&self, file: &SourceFile, byte: usize) -> usize {
        let line = file.line_index(byte);
        match self.lines.get(&line) {
            Some(k) => {
                let inside = byte.clamp(k.shown_from, k.shown_to) - k.shown_from;
                k.range.start + k.lead + inside
            }
            None => self.text.len(),
        }
    }
}

/// The stretch of the long line `start..end` shown: from a little before
/// its first label point to a little after its last (at most [`WIDEST`]
/// bytes between them), on character boundaries.
fn window(file: &SourceFile, start: usize, end: usize, points: &[usize]) -> (usize, usize) {
    let first = points
        .iter()
        .copied()
        .min()
        .unwrap_or(start)
        .clamp(start, end);
    let last = points
        .iter()
        .copied()
        .max()
        .unwrap_or(start)
        .clamp(first, end);
    let last = last.min(first + WIDEST);
    let from = first.saturating_sub(CONTEXT).max(start);
    let to = (last + CONTEXT).min(end);
    let text = &file.text;
    let mut from = from;
    while from > start && !text.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = to;
    while to < end && !text.is_char_boundary(to) {
        to += 1;
    }
    (from, to)
}

impl<'a> Files<'a> for Excerpt<'_> {
    type FileId = FileId;
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        self.sources
            .get(id)
            .map(|f| f.name.as_str())
            .ok_or(files::Error::FileMissing)
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, files::Error> {
        Ok(&self.file(id)?.text)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, files::Error> {
        let f = self.file(id)?;
        Ok(f.starts
            .range(..=byte_index)
            .next_back()
            .map_or(0, |(_, line)| *line))
    }

    fn column_number(
        &'a self,
        id: FileId,
        line_index: usize,
        byte_index: usize,
    ) -> Result<usize, files::Error> {
        let f = self.file(id)?;
        let Some(k) = f.lines.get(&line_index) else {
            return Ok(1);
        };
        let shown = k.range.start + k.lead;
        let inside = files::column_index(&f.text, shown..k.range.end, byte_index.max(shown));
        Ok(k.column + inside + 1)
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, files::Error> {
        let f = self.file(id)?;
        Ok(match f.lines.get(&line_index) {
            Some(k) => k.range.clone(),
            // A line codespan walks past but never prints (inside a
            // multi-line label).
            None => f.text.len()..f.text.len(),
        })
    }
}
