//! The cap on diagnostics: at most [`PER_CODE`] of one code for one file
//! are kept, and the rest of them become one "and N more" diagnostic.
//!
//! Input can produce a diagnostic per byte (16 MiB of `@` is 16 million
//! E0001s): kept, rendered and sent to an editor, they would take gigabytes
//! and minutes. A flood is nearly always one kind of mistake repeated, so
//! the cap counts per code (an independent error of another kind still
//! shows) and per file (a flood in an imported file does not hide the
//! errors of the one being edited). Every stage collects into a capped
//! list ([`Diags`], or a [`Cap`] beside its own error list), so what a
//! stage holds is bounded as it runs; the pipeline caps once more after
//! sorting ([`limit`]), so that what is shown of each code is its first
//! [`PER_CODE`] in source order, and the counts of every stage add up in
//! one "and N more" per code and file ([`Diagnostic::omitted`]).

use super::{noun_for, Diagnostic, Severity};
use crate::span::{FileId, Span};
use std::collections::BTreeMap;
use std::rc::Rc;

/// How many diagnostics of one code are shown for one file.
pub const PER_CODE: usize = 100;

/// What the cap is counted by: the file of the primary label (none for a
/// diagnostic without one) and the code.
type Key = (Option<FileId>, &'static str);

#[derive(Clone, Copy, Debug)]
struct Tally {
    kept: usize,
    omitted: usize,
    /// The first (in source order) of those left out: where the "and N
    /// more" diagnostic points.
    first_omitted: Option<Span>,
    severity: Severity,
}

/// The counts of one capped list, for a stage that keeps its own error
/// type until it makes diagnostics (the lexer, the parser).
#[derive(Clone, Debug, Default)]
pub struct Cap {
    tallies: BTreeMap<Key, Tally>,
}

impl Cap {
    /// Counts one diagnostic of `code` at `span`; true when it is kept,
    /// false when it is only counted in the "and N more".
    pub fn admit(&mut self, code: &'static str, severity: Severity, span: Option<Span>) -> bool {
        let tally = self.tally(code, severity, span);
        if tally.kept < PER_CODE {
            tally.kept += 1;
            return true;
        }
        tally.omitted += 1;
        tally.first_omitted = earliest(tally.first_omitted, span);
        false
    }

    /// True when one more diagnostic of `code` in `file` would be kept:
    /// work done only for a diagnostic that is shown (a "did you mean"
    /// search) can ask first.
    pub fn has_room(&self, code: &'static str, file: Option<FileId>) -> bool {
        self.tallies
            .get(&(file, code))
            .is_none_or(|t| t.kept < PER_CODE)
    }

    /// Adds what an "and N more" diagnostic of another list stands for.
    fn absorb(&mut self, d: &Diagnostic) {
        let span = d.primary_span();
        let tally = self.tally(d.code, d.severity, span);
        tally.omitted += d.omitted;
        tally.first_omitted = earliest(tally.first_omitted, span);
    }

    fn tally(&mut self, code: &'static str, severity: Severity, span: Option<Span>) -> &mut Tally {
        self.tallies
            .entry((span.map(|s| s.file), code))
            .or_insert(Tally {
                kept: 0,
                omitted: 0,
                first_omitted: None,
                severity,
            })
    }

    /// The errors a stage kept, as diagnostics, then the "and N more" of
    /// what it did not.
    pub fn with_summaries<T>(
        &self,
        kept: Vec<T>,
        into: impl Fn(T) -> Diagnostic,
    ) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = kept.into_iter().map(into).collect();
        out.extend(self.summaries());
        out
    }

    /// One "and N more" diagnostic for each code and file that went past
    /// the cap, in file and code order.
    pub fn summaries(&self) -> impl Iterator<Item = Diagnostic> + '_ {
        self.tallies
            .iter()
            .filter(|(_, t)| t.omitted > 0)
            .map(|(&(_, code), t)| omitted(code, t))
    }
}

fn earliest(a: Option<Span>, b: Option<Span>) -> Option<Span> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `error[E0001]: and 12 more errors with this code in this file`, at the
/// first of them.
fn omitted(code: &'static str, t: &Tally) -> Diagnostic {
    let noun = match t.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let message = format!(
        "and {} more {} with this code in this file",
        t.omitted,
        noun_for(t.omitted, noun)
    );
    let mut d = match t.severity {
        Severity::Error => Diagnostic::error(code, message),
        Severity::Warning => Diagnostic::warning(code, message),
    };
    if let Some(span) = t.first_omitted {
        d = d.primary(span, "the first of them");
    }
    d.omitted = t.omitted;
    d.note(format!(
        "kdslc shows the first {PER_CODE} diagnostics of each code in each file"
    ))
}

/// The parts of files the parser may have misread: from each syntax error
/// to the end of its line. The later stages' diagnostics there are
/// consequences of the syntax error, not news (see `pipeline.rs`).
#[derive(Debug, Default)]
pub struct Misread {
    /// Sorted, one per line: the first syntax error of the line up to the
    /// start of the next line.
    ranges: Vec<Span>,
}

impl Misread {
    /// `ranges` are any spans from a syntax error to its line's end, in any
    /// order; only the earliest on each line matters.
    pub fn new(mut ranges: Vec<Span>) -> Misread {
        ranges.sort();
        let mut kept: Vec<Span> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match kept.last_mut() {
                // On a line already covered from an earlier error.
                Some(last) if last.file == r.file && r.start < last.end => {
                    last.end = last.end.max(r.end);
                }
                _ => kept.push(r),
            }
        }
        Misread { ranges: kept }
    }

    /// True when some of `span` lies in a misread stretch.
    pub fn touches(&self, span: Span) -> bool {
        let i = self
            .ranges
            .partition_point(|r| (r.file, r.start) < (span.file, span.end.max(span.start + 1)));
        i.checked_sub(1)
            .and_then(|i| self.ranges.get(i))
            .is_some_and(|r| r.file == span.file && r.end > span.start)
    }

    /// True when `d`'s primary label lies in a misread stretch.
    pub fn covers(&self, d: &Diagnostic) -> bool {
        let Some(s) = d.primary_span() else {
            return false;
        };
        let i = self
            .ranges
            .partition_point(|r| (r.file, r.start) <= (s.file, s.start));
        i.checked_sub(1)
            .and_then(|i| self.ranges.get(i))
            .is_some_and(|r| r.file == s.file && s.start < r.end)
    }
}

/// A list of diagnostics that keeps at most [`PER_CODE`] of each code for
/// each file (in the order they arrive) and counts the rest; optionally it
/// drops what falls in a [`Misread`] stretch before counting it.
#[derive(Debug, Default)]
pub struct Diags {
    list: Vec<Diagnostic>,
    cap: Cap,
    misread: Option<Rc<Misread>>,
}

impl Diags {
    /// A list that drops the diagnostics `misread` covers: those of a stage
    /// after the parser.
    pub fn after_syntax(misread: Rc<Misread>) -> Diags {
        Diags {
            misread: Some(misread),
            ..Diags::default()
        }
    }

    pub fn push(&mut self, d: Diagnostic) {
        if self.misread.as_ref().is_some_and(|m| m.covers(&d)) {
            return;
        }
        if d.omitted > 0 {
            self.cap.absorb(&d);
        } else if self.cap.admit(d.code, d.severity, d.primary_span()) {
            self.list.push(d);
        }
    }

    /// True when some of `span` lies where a syntax error may have misread
    /// the source (never for a list without a [`Misread`]).
    pub fn misread(&self, span: Span) -> bool {
        self.misread.as_ref().is_some_and(|m| m.touches(span))
    }

    /// See [`Cap::has_room`].
    pub fn has_room(&self, code: &'static str, file: Option<FileId>) -> bool {
        self.cap.has_room(code, file)
    }

    /// True when a diagnostic of `code` at `span` would be kept: neither
    /// past the cap nor on a misread line. Work done only for a diagnostic
    /// that is shown can ask first.
    pub fn would_keep(&self, code: &'static str, span: Span) -> bool {
        self.has_room(code, Some(span.file)) && !self.misread(span)
    }

    /// Moves every diagnostic of `other` here, its "and N more" included.
    pub fn append(&mut self, other: Diags) {
        self.extend(other.into_vec());
    }

    /// The kept diagnostics, then an "and N more" for each code and file
    /// that went past the cap.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        let mut list = self.list;
        list.extend(self.cap.summaries());
        list
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && self.cap.summaries().next().is_none()
    }

    /// The kept diagnostics (without the "and N more").
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.list.iter()
    }
}

impl Extend<Diagnostic> for Diags {
    fn extend<I: IntoIterator<Item = Diagnostic>>(&mut self, iter: I) {
        for d in iter {
            self.push(d);
        }
    }
}

/// The diagnostics of a compilation, sorted: the first [`PER_CODE`] of each
/// code and file in source order, and one "and N more" for each code and
/// file with more (the counts of every stage's own cap added in), placed
/// at the first of those left out.
pub fn limit(mut diags: Vec<Diagnostic>) -> Vec<Diagnostic> {
    super::sort(&mut diags);
    let mut capped = Diags::default();
    capped.extend(diags);
    let mut out = capped.into_vec();
    super::sort(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: u32, start: usize) -> Diagnostic {
        Diagnostic::error("E0001", "x").primary(Span::new(FileId(file), start, start + 1), "")
    }

    #[test]
    fn keeps_the_first_of_each_code_and_file() {
        let mut all: Vec<Diagnostic> = (0..250).rev().map(|i| at(0, i)).collect();
        all.push(at(1, 0));
        all.push(Diagnostic::error("E0002", "y").primary(Span::new(FileId(0), 7, 8), ""));
        let out = limit(all);
        let kept: Vec<&Diagnostic> = out.iter().filter(|d| d.omitted == 0).collect();
        assert_eq!(kept.len(), PER_CODE + 2);
        let more: Vec<&Diagnostic> = out.iter().filter(|d| d.omitted > 0).collect();
        assert_eq!(more.len(), 1);
        assert_eq!(more[0].omitted, 150);
        assert_eq!(
            more[0].message,
            "and 150 more errors with this code in this file"
        );
        // At the first left out, after the last shown one.
        assert_eq!(more[0].primary_span().map(|s| s.start), Some(100));
        let last_shown = out.iter().rposition(|d| {
            d.omitted == 0 && d.code == "E0001" && d.primary_span().unwrap().file == FileId(0)
        });
        let summary = out.iter().position(|d| d.omitted > 0);
        assert!(summary > last_shown);
    }

    #[test]
    fn counts_of_stages_add_up() {
        let mut first = Diags::default();
        first.extend((0..150).map(|i| at(0, i)));
        let mut second = Diags::default();
        second.extend((150..300).map(|i| at(0, i)));
        let mut all = first.into_vec();
        all.extend(second.into_vec());
        let out = limit(all);
        let total: usize = out.iter().map(Diagnostic::weight).sum();
        assert_eq!(total, 300);
        assert_eq!(out.len(), PER_CODE + 1);
    }

    #[test]
    fn misread_lines_drop_what_follows_on_them() {
        let f = FileId(0);
        let m = Rc::new(Misread::new(vec![
            Span::new(f, 10, 20),
            Span::new(f, 12, 20),
            Span::new(f, 40, 50),
        ]));
        let mut d = Diags::after_syntax(m);
        for start in [5, 10, 15, 20, 39, 45, 50] {
            d.push(at(0, start));
        }
        let starts: Vec<u32> = d
            .iter()
            .filter_map(|d| d.primary_span())
            .map(|s| s.start)
            .collect();
        assert_eq!(starts, [5, 20, 39, 50]);
    }
}
