//! Byte offsets ↔ LSP positions.
//!
//! The compiler counts in bytes of UTF-8; an LSP `Position` is a 0-based line
//! and a character offset counted in the code units of the encoding agreed at
//! `initialize`: UTF-8 bytes, UTF-16 code units (the default, and what every
//! client supports) or UTF-32 (Unicode scalar values). Lines end at `\n`,
//! `\r\n` or a lone `\r`, as LSP specifies and as the compiler's own line
//! table counts them.

use lsp_types::{Position, PositionEncodingKind, Range};

/// The position encoding negotiated with the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Encoding {
    Utf8,
    #[default]
    Utf16,
    Utf32,
}

impl Encoding {
    /// Picks the first encoding the client lists that we support (clients
    /// list them in order of preference); UTF-16 when it lists none, as the
    /// protocol requires.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        offered
            .unwrap_or(&[])
            .iter()
            .find_map(Encoding::from_kind)
            .unwrap_or_default()
    }

    pub fn from_kind(kind: &PositionEncodingKind) -> Option<Encoding> {
        match kind.as_str() {
            "utf-8" => Some(Encoding::Utf8),
            "utf-16" => Some(Encoding::Utf16),
            "utf-32" => Some(Encoding::Utf32),
            _ => None,
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    /// How many code units `c` takes in this encoding.
    fn units(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// The start of every line of one text, for converting in both directions.
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(crate::source::line_breaks(text));
        LineIndex {
            line_starts,
            len: text.len(),
        }
    }

    /// The position of byte offset `byte` of `text` (the text this index was
    /// built from). An offset past the end or inside a character is clamped
    /// to the character boundary before it.
    pub fn position(&self, text: &str, byte: usize, enc: Encoding) -> Position {
        let byte = floor_char_boundary(text, byte.min(self.len));
        let line = match self.line_starts.binary_search(&byte) {
            Ok(line) => line,
            Err(next) => next.saturating_sub(1),
        };
        let start = self.line_starts.get(line).copied().unwrap_or(0);
        let character = text
            .get(start..byte)
            .map_or(0, |s| s.chars().map(|c| enc.units(c)).sum());
        Position::new(to_u32(line), to_u32(character))
    }

    pub fn range(&self, text: &str, start: usize, end: usize, enc: Encoding) -> Range {
        Range::new(
            self.position(text, start, enc),
            self.position(text, end, enc),
        )
    }

    /// The byte offset of `pos`. A line past the end gives the end of the
    /// text; a character past the end of its line gives the end of the line
    /// (as the protocol asks), and one inside a character (half a UTF-16
    /// surrogate pair, a byte inside a UTF-8 sequence) gives that
    /// character's start.
    pub fn offset(&self, text: &str, pos: Position, enc: Encoding) -> usize {
        let Some(&start) = self.line_starts.get(pos.line as usize) else {
            return self.len;
        };
        let next = self
            .line_starts
            .get(pos.line as usize + 1)
            .map_or(self.len, |&next| next);
        // The line without its break (`\n`, `\r\n` or `\r`).
        let line = text.get(start..next).unwrap_or("");
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let end = start + line.len();
        let wanted = pos.character as usize;
        let mut units = 0;
        for (i, c) in line.char_indices() {
            let next = units + enc.units(c);
            if next > wanted {
                return start + i;
            }
            units = next;
        }
        end
    }
}

fn floor_char_boundary(text: &str, mut byte: usize) -> usize {
    while byte > 0 && !text.is_char_boundary(byte) {
        byte -= 1;
    }
    byte
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    // "é" is 2 UTF-8 bytes and 1 UTF-16 unit; "😀" (astral) is 4 bytes, 2
    // UTF-16 units and 1 scalar value.
    const TEXT: &str = "ab\nxé😀z\n\nlast";

    fn pos(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn ascii_positions_agree_in_every_encoding() {
        let index = LineIndex::new(TEXT);
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            assert_eq!(index.position(TEXT, 0, enc), pos(0, 0));
            assert_eq!(index.position(TEXT, 2, enc), pos(0, 2));
            assert_eq!(index.position(TEXT, 3, enc), pos(1, 0));
            assert_eq!(index.offset(TEXT, pos(1, 0), enc), 3);
            assert_eq!(index.offset(TEXT, pos(3, 2), enc), TEXT.len() - 2);
        }
    }

    #[test]
    fn multi_byte_and_astral_characters() {
        let index = LineIndex::new(TEXT);
        let z = TEXT.find('z').unwrap_or(0);
        let smiley = TEXT.find('😀').unwrap_or(0);
        assert_eq!(index.position(TEXT, z, Encoding::Utf8), pos(1, 7));
        assert_eq!(index.position(TEXT, z, Encoding::Utf16), pos(1, 4));
        assert_eq!(index.position(TEXT, z, Encoding::Utf32), pos(1, 3));
        assert_eq!(index.position(TEXT, smiley, Encoding::Utf16), pos(1, 2));
        assert_eq!(index.offset(TEXT, pos(1, 7), Encoding::Utf8), z);
        assert_eq!(index.offset(TEXT, pos(1, 4), Encoding::Utf16), z);
        assert_eq!(index.offset(TEXT, pos(1, 3), Encoding::Utf32), z);
        assert_eq!(index.offset(TEXT, pos(1, 2), Encoding::Utf16), smiley);
    }

    #[test]
    fn every_boundary_round_trips() {
        let index = LineIndex::new(TEXT);
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            for (byte, _) in TEXT.char_indices().chain([(TEXT.len(), ' ')]) {
                let p = index.position(TEXT, byte, enc);
                assert_eq!(index.offset(TEXT, p, enc), byte, "{enc:?} at byte {byte}");
            }
        }
    }

    #[test]
    fn inside_a_character_clamps_to_its_start() {
        let index = LineIndex::new(TEXT);
        let smiley = TEXT.find('😀').unwrap_or(0);
        // Half a surrogate pair, and a byte in the middle of the UTF-8 form.
        assert_eq!(index.offset(TEXT, pos(1, 3), Encoding::Utf16), smiley);
        assert_eq!(index.offset(TEXT, pos(1, 5), Encoding::Utf8), smiley);
        assert_eq!(index.position(TEXT, smiley + 1, Encoding::Utf16), pos(1, 2));
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let index = LineIndex::new(TEXT);
        // Past the end of a line: the line's end, not the next line.
        assert_eq!(index.offset(TEXT, pos(0, 99), Encoding::Utf16), 2);
        assert_eq!(
            index.offset(TEXT, pos(2, 5), Encoding::Utf16),
            TEXT.find("\n\n").unwrap_or(0) + 1
        );
        assert_eq!(index.offset(TEXT, pos(40, 0), Encoding::Utf16), TEXT.len());
        assert_eq!(index.position(TEXT, 10_000, Encoding::Utf16), pos(3, 4));
        let empty = LineIndex::new("");
        assert_eq!(empty.position("", 5, Encoding::Utf8), pos(0, 0));
        assert_eq!(empty.offset("", pos(3, 3), Encoding::Utf8), 0);
    }

    #[test]
    fn negotiation_takes_the_clients_first_supported_choice() {
        let kinds = |names: &[&str]| {
            names
                .iter()
                .map(|n| PositionEncodingKind::from(n.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
        assert_eq!(Encoding::negotiate(Some(&kinds(&[]))), Encoding::Utf16);
        assert_eq!(
            Encoding::negotiate(Some(&kinds(&["utf-8", "utf-16"]))),
            Encoding::Utf8
        );
        assert_eq!(
            Encoding::negotiate(Some(&kinds(&["latin-1", "utf-32"]))),
            Encoding::Utf32
        );
        assert_eq!(
            Encoding::negotiate(Some(&kinds(&["latin-1"]))),
            Encoding::Utf16
        );
    }
}
