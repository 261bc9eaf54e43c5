//! Reading files from disk: the one place that decides what kdslc reads and
//! how a failure is worded. Every file the program reads comes through
//! [`read_file`]: the `.kdsl` root and every import (and so the language
//! server's, whose imports come through the same pipeline), a `.ptx` input,
//! the sources a PTX module's `.file` directives name, `--arg @FILE` arrays,
//! the cubin ptxas writes, `/proc/meminfo`.
//!
//! - Only **regular files** are read. A FIFO, a terminal or `/dev/stdin`
//!   would block until someone writes (a compiler, or a language server,
//!   that hangs), and `/dev/zero` never ends; such paths are refused before
//!   they are opened, and the opened file is checked again (it is opened
//!   non-blocking, so a FIFO swapped in between cannot hang the open).
//! - At most a [`Limit`] of bytes is read, and the buffer is allocated
//!   fallibly: a larger file is refused with its size. A source file has at
//!   most [`MAX_SOURCE_BYTES`] (spans are 32-bit offsets, and no
//!   hand-written kernel comes near); data (an array) at most the memory
//!   the machine has available.
//! - A source's text must be UTF-8 ([`read_source`]). A file that is not is
//!   still loaded (with the bad bytes shown as U+FFFD) so that diagnostic
//!   E0004 can show where the first bad byte is; nothing else is done with
//!   it.
//!
//! A UTF-8 byte-order mark is kept in the text (spans count the file's own
//! bytes); the lexer skips it and line 1's columns start after it.

use crate::diagnostics::Diagnostic;
use crate::span::{FileId, Span};
use std::fmt;
use std::io::Read;
use std::path::Path;

/// The largest source file kdslc reads: 16 MiB.
pub const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

/// The most bytes a file may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A source file (`.kdsl`, `.ptx`, a `.file`'s source, a system file):
    /// [`MAX_SOURCE_BYTES`].
    Source,
    /// Data kept in memory (an array argument, a cubin): the bytes of
    /// memory available, as `crate::launch::memory::available` finds them
    /// (`None`: not known, and only the allocation itself can fail).
    Memory(Option<u64>),
}

impl Limit {
    fn bytes(self) -> u64 {
        match self {
            Limit::Source => MAX_SOURCE_BYTES,
            Limit::Memory(free) => free.unwrap_or(u64::MAX),
        }
    }
}

/// Why a file could not be read. `Display` gives the reason as it follows
/// "cannot read `path`: ".
#[derive(Debug)]
pub enum ReadError {
    /// The operating system said no (no such file, permission denied, ...).
    Io(std::io::Error),
    /// Not a regular file: what it is instead ("a directory", "a FIFO").
    NotRegular(&'static str),
    /// Larger than its limit (the size seen, or a lower bound).
    TooLarge { size: u64, limit: Limit },
    /// The memory for its bytes could not be allocated.
    NoMemory(u64),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Io(e) => f.write_str(&io_reason(e)),
            ReadError::NotRegular(what) => write!(
                f,
                "it is {what}, not a regular file (kdslc reads only regular files)"
            ),
            ReadError::TooLarge {
                size,
                limit: Limit::Source,
            } => write!(
                f,
                "it is {size} bytes long, and source files may be at most {MAX_SOURCE_BYTES} bytes (16 MiB)"
            ),
            ReadError::TooLarge {
                size,
                limit: Limit::Memory(free),
            } => write!(
                f,
                "it is {size} bytes long, more than the {} bytes of memory this machine has available",
                free.unwrap_or(u64::MAX)
            ),
            ReadError::NoMemory(size) => {
                write!(f, "its {size} bytes cannot be allocated")
            }
        }
    }
}

impl std::error::Error for ReadError {}

/// "no such file", "permission denied", or the system's own words.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        // `std` spells the rest well enough, minus the "(os error N)".
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s.get(..i).unwrap_or(&s).to_string(),
                None => s,
            }
        }
    }
}

/// A source file's text as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    /// The text; when the file is not UTF-8, each invalid sequence shows as
    /// U+FFFD (after the first one, offsets no longer match the file).
    pub text: String,
    /// Where the file stops being UTF-8, if it does.
    pub bad_utf8: Option<BadUtf8>,
}

/// The first bytes of a file that are not UTF-8.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadUtf8 {
    /// Byte offset of the first bad byte (also its offset in
    /// [`Decoded::text`]: everything before it is valid).
    pub offset: usize,
    /// The invalid sequence (1 to 3 bytes).
    pub bytes: Vec<u8>,
    /// The file ends inside a character that started well.
    pub truncated: bool,
}

impl BadUtf8 {
    /// E0004, at the first bad byte of `file`.
    pub fn into_diagnostic(self, file: FileId) -> Diagnostic {
        let hex: Vec<String> = self.bytes.iter().map(|b| format!("0x{b:02X}")).collect();
        let label = if self.truncated {
            format!("the file ends inside a UTF-8 character ({})", hex.join(" "))
        } else if let [one] = hex.as_slice() {
            format!("byte {one} is not UTF-8 here")
        } else {
            format!("bytes {} are not UTF-8", hex.join(" "))
        };
        let at = Span::new(file, self.offset, self.offset);
        Diagnostic::error("E0004", "source file is not valid UTF-8")
            .primary(at, label)
            .note("kdsl source files are UTF-8 text, so this file was not compiled")
            .help("save the file as UTF-8 (for a Latin-1 file: `iconv -f latin1 -t utf-8 FILE`)")
    }
}

/// Splits raw bytes into text and, when they are not UTF-8, where they
/// stop being so.
pub fn decode(bytes: Vec<u8>) -> Decoded {
    match String::from_utf8(bytes) {
        Ok(text) => Decoded {
            text,
            bad_utf8: None,
        },
        Err(e) => {
            let utf8 = e.utf8_error();
            let bytes = e.as_bytes();
            let offset = utf8.valid_up_to();
            let len = utf8
                .error_len()
                .unwrap_or(bytes.len().saturating_sub(offset));
            let bad = bytes
                .get(offset..offset.saturating_add(len))
                .unwrap_or(&[])
                .to_vec();
            Decoded {
                text: String::from_utf8_lossy(bytes).into_owned(),
                bad_utf8: Some(BadUtf8 {
                    offset,
                    bytes: bad,
                    truncated: utf8.error_len().is_none(),
                }),
            }
        }
    }
}

/// Reads the source file at `path` (see the module documentation for what
/// is refused).
pub fn read_source(path: &Path) -> Result<Decoded, ReadError> {
    read_file(path, Limit::Source).map(decode)
}

/// Reads the bytes of the regular file at `path`, at most `limit` of them
/// (see the module documentation for what is refused).
pub fn read_file(path: &Path, limit: Limit) -> Result<Vec<u8>, ReadError> {
    let max = limit.bytes();
    // `metadata` follows links: `/dev/stdin` is judged by what it points to.
    let meta = std::fs::metadata(path).map_err(ReadError::Io)?;
    check_kind(&meta, limit)?;
    let file = open_nonblocking(path).map_err(ReadError::Io)?;
    // The path may have been replaced since; judge what was opened.
    let meta = file.metadata().map_err(ReadError::Io)?;
    check_kind(&meta, limit)?;
    let mut bytes = Vec::new();
    // Room for the whole file and the one byte that tells it grew, so that
    // reading it does not grow the buffer (infallibly) on the way.
    let room = usize::try_from(meta.len().saturating_add(1)).unwrap_or(usize::MAX);
    bytes
        .try_reserve_exact(room)
        .map_err(|_| ReadError::NoMemory(meta.len()))?;
    // One byte more than allowed tells a file that grew past the limit.
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    let read = bytes.len() as u64;
    if read > max {
        return Err(ReadError::TooLarge {
            size: read.max(meta.len()),
            limit,
        });
    }
    Ok(bytes)
}

/// Regular files within the limit pass.
fn check_kind(meta: &std::fs::Metadata, limit: Limit) -> Result<(), ReadError> {
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(meta)));
    }
    if meta.len() > limit.bytes() {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    Ok(())
}

/// What a non-regular file is, in words.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Opens for reading without blocking on a FIFO that has no writer (the
/// kind checks above refuse it afterwards).
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_passes_through() {
        let d = decode(b"kernel k() {}\n".to_vec());
        assert_eq!(d.text, "kernel k() {}\n");
        assert_eq!(d.bad_utf8, None);
    }

    #[test]
    fn the_first_bad_byte_is_found() {
        let d = decode(b"ab\xffcd\xfe".to_vec());
        let bad = d.bad_utf8.unwrap();
        assert_eq!(
            (bad.offset, bad.bytes, bad.truncated),
            (2, vec![0xff], false)
        );
        assert!(d.text.starts_with("ab\u{fffd}cd"));
        // A character cut off by the end of the file.
        let d = decode(b"x\xe2\x82".to_vec());
        let bad = d.bad_utf8.unwrap();
        assert_eq!(
            (bad.offset, bad.bytes, bad.truncated),
            (1, vec![0xe2, 0x82], true)
        );
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_source(dir.path()),
            Err(ReadError::NotRegular("a directory"))
        ));
        assert!(matches!(
            read_source(Path::new("/dev/zero")),
            Err(ReadError::NotRegular("a character device"))
        ));
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        assert!(matches!(
            read_source(&fifo),
            Err(ReadError::NotRegular("a FIFO (named pipe)"))
        ));
    }

    #[test]
    fn large_files_are_refused_with_their_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.kdsl");
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(MAX_SOURCE_BYTES + 1).unwrap();
        let e = read_source(&path).unwrap_err();
        assert!(matches!(
            e,
            ReadError::TooLarge { size, limit: Limit::Source } if size == MAX_SOURCE_BYTES + 1
        ));
        assert!(e.to_string().contains("at most 16777216 bytes"), "{e}");
        f.set_len(MAX_SOURCE_BYTES).unwrap();
        assert!(read_source(&path).is_ok());
    }

    #[test]
    fn data_is_bounded_by_the_memory_available() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.bin");
        std::fs::write(&path, [7u8; 11]).unwrap();
        let e = read_file(&path, Limit::Memory(Some(10))).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is 11 bytes long, more than the 10 bytes of memory this machine has available"
        );
        assert_eq!(read_file(&path, Limit::Memory(Some(11))).unwrap(), [7; 11]);
        assert_eq!(read_file(&path, Limit::Memory(None)).unwrap(), [7; 11]);
        let e = read_file(&dir.path().join("none"), Limit::Source).unwrap_err();
        assert_eq!(e.to_string(), "no such file");
    }
}
