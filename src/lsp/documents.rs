//! The open documents: each one's text as the client last sent it, and
//! where it stands with its analyses.
//!
//! What one document may cost is bounded here: its text grows only through
//! messages, which the transport bounds, and ranged changes (which the
//! server does not ask for; see `capabilities`) are followed only while
//! they stay within [`MAX_EDIT_WORK`] per message and the text within
//! [`MAX_TEXT`]: past that the server says it lost track of the text, and
//! checks it again once the client sends it whole.

use super::analysis::Analysis;
use super::position::{Encoding, LineIndex};
use super::transport::MAX_MESSAGE;
use crate::input::{ReadError, MAX_SOURCE_BYTES};
use lsp_types::TextDocumentContentChangeEvent;
use std::time::Instant;

/// The largest text kept for a document: what one message can hold.
pub const MAX_TEXT: usize = MAX_MESSAGE as usize;

/// The most bytes the ranged changes of one message may move (each is
/// applied to the whole text so far: 200,000 of them on a 4 MB document
/// would otherwise be minutes of copying; an editor sends one or a few).
pub const MAX_EDIT_WORK: usize = 256 << 20;

pub struct Document {
    pub text: String,
    /// The client's version of `text`, sent back with its diagnostics.
    pub version: Option<i32>,
    /// The server's count of texts (every document's, so that a document
    /// closed and opened again never meets an old job's result): a new
    /// generation for each change, and for each save (which changes what
    /// its imports read).
    pub generation: u64,
    /// Analyses running for this document: their generations and starts.
    pub running: Vec<(u64, Instant)>,
    /// The generation `analysis` is of (0: none yet).
    pub analysed: u64,
    /// The newest finished analysis; `None` when the compiler panicked on
    /// that text or the text was not checked (see [`Document::refusal`]).
    pub analysis: Option<Analysis>,
    /// Waiting in the server's queue of documents to check.
    pub queued: bool,
    /// Ranged changes could not be followed: the text is unknown until the
    /// client sends it whole.
    pub lost: bool,
}

impl Document {
    pub fn new(text: String, version: Option<i32>) -> Document {
        Document {
            text,
            version,
            generation: 0,
            running: Vec::new(),
            analysed: 0,
            analysis: None,
            queued: false,
            lost: false,
        }
    }

    /// Applies a `didChange`'s changes in order: a full text replaces the
    /// text, a ranged change edits it in place.
    pub fn apply(&mut self, changes: Vec<TextDocumentContentChangeEvent>, enc: Encoding) {
        self.apply_within(changes, enc, MAX_EDIT_WORK);
    }

    fn apply_within(
        &mut self,
        changes: Vec<TextDocumentContentChangeEvent>,
        enc: Encoding,
        max_work: usize,
    ) {
        let mut work = 0usize;
        for change in changes {
            let Some(range) = change.range else {
                self.text = change.text;
                self.lost = false;
                continue;
            };
            if self.lost {
                continue;
            }
            work = work.saturating_add(self.text.len().saturating_add(change.text.len()));
            if work > max_work || self.text.len().saturating_add(change.text.len()) > MAX_TEXT {
                self.lost = true;
                self.text = String::new();
                continue;
            }
            let index = LineIndex::new(&self.text);
            let start = index.offset(&self.text, range.start, enc);
            let end = index.offset(&self.text, range.end, enc).max(start);
            if self.text.is_char_boundary(start) && self.text.is_char_boundary(end) {
                self.text.replace_range(start..end, &change.text);
            }
        }
    }

    /// Why this text is not checked, if it is not: the server lost track of
    /// it, or it is larger than any source file the compiler reads.
    pub fn refusal(&self) -> Option<String> {
        if self.lost {
            return Some(format!(
                "kdslc lost track of this document's text: the ranged changes of one message would have \
                 moved more than {MAX_EDIT_WORK} bytes or made it longer than {MAX_TEXT} bytes; \
                 close and reopen it (or send its whole text) to have it checked again"
            ));
        }
        let len = self.text.len() as u64;
        (len > MAX_SOURCE_BYTES).then(|| {
            format!(
                "kdslc does not check this document: {}",
                ReadError::TooLarge {
                    size: len,
                    limit: crate::input::Limit::Source,
                }
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn ranged(line: u32, from: u32, to: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(
                Position::new(line, from),
                Position::new(line, to),
            )),
            range_length: None,
            text: text.to_string(),
        }
    }

    #[test]
    fn ranged_changes_apply_in_order() {
        let mut d = Document::new("ab\ncd".to_string(), None);
        d.apply(
            vec![ranged(1, 0, 1, "X"), ranged(0, 2, 2, "!")],
            Encoding::Utf16,
        );
        assert_eq!(d.text, "ab!\nXd");
        assert_eq!(d.refusal(), None);
    }

    #[test]
    fn too_much_ranged_work_loses_the_text_until_a_full_one() {
        let mut d = Document::new("x".repeat(1000), None);
        let changes = (0..2000).map(|_| ranged(0, 0, 0, "y")).collect();
        d.apply_within(changes, Encoding::Utf16, 1 << 20);
        assert!(d.lost && d.text.is_empty());
        assert!(d.refusal().unwrap().contains("lost track"));
        d.apply(vec![ranged(0, 0, 0, "z")], Encoding::Utf16);
        assert!(d.lost);
        let full = TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text: "kernel k() {}".to_string(),
        };
        d.apply(vec![full, ranged(0, 0, 0, "// ")], Encoding::Utf16);
        assert!(!d.lost);
        assert_eq!(d.text, "// kernel k() {}");
    }

    #[test]
    fn a_text_over_the_source_limit_is_not_checked() {
        let d = Document::new("x".repeat(MAX_SOURCE_BYTES as usize + 1), None);
        let why = d.refusal().unwrap();
        assert!(why.contains("16777217 bytes long"), "{why}");
    }
}
