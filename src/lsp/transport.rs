//! The wire on stdin/stdout: LSP's base protocol (each JSON-RPC message
//! framed by a `Content-Length` header), read by kdslc itself so that every
//! message is bounded and a malformed one costs that message, not the
//! connection.
//!
//! lsp-server's stdio transport allocates whatever `Content-Length` says
//! before reading a byte of the body, and its reader thread ends (and with
//! it the server) on the first header without a length, the first body that
//! is not JSON and the first lone UTF-16 surrogate in a string. Here:
//!
//! - A header block is at most [`MAX_HEADERS`] lines of [`MAX_HEADER_LINE`]
//!   bytes; a body at most [`MAX_MESSAGE`] bytes, and it is read as it
//!   arrives (never allocated ahead from the header's word).
//! - A framing error (a header line that is not `Name: value`, a block
//!   without `Content-Length`, a length over the limit) is answered and the
//!   reader then skips to the next `Content-Length` header. Inside a valid
//!   JSON body that cannot match: the header needs digits and a line end
//!   after the colon, and a raw line end cannot occur in a JSON string.
//! - A body that is not JSON is answered with JSON-RPC's parse error
//!   (-32700), and JSON that is no request, response or notification with
//!   its invalid-request error (-32600), each with the message's `id` when
//!   it has a readable one and `null` otherwise, as JSON-RPC 2.0 says; the
//!   next message is read as usual.
//! - A `\uD800`-style escape that is half of no surrogate pair is valid
//!   JSON but no Unicode text: it is read as U+FFFD (one UTF-16 unit, like
//!   the lone surrogate, so positions after it do not move).
//!
//! These answers are written by the reader thread itself: the server never
//! sees the message (lsp-server's `RequestId` cannot even be `null`).

use lsp_server::{Connection, Message, Notification, Request, Response};
use serde_json::{json, Value};
use std::io::{self, BufRead, Read, Write};

/// The largest message body read: 64 MiB, room for a document at the
/// compiler's limit of 16 MiB with every character escaped twice over.
pub const MAX_MESSAGE: u64 = 64 << 20;

/// The longest header line (headers are `Content-Length: 123` and
/// `Content-Type: ...`; a longer line is not a header).
pub const MAX_HEADER_LINE: usize = 1024;

/// The most header lines in one message's header block.
pub const MAX_HEADERS: usize = 16;

/// JSON-RPC's error for a message that is not JSON.
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's error for JSON that is not a valid request.
pub const INVALID_REQUEST: i32 = -32600;

/// A message that could not be read: the error response it gets.
#[derive(Debug, Clone, PartialEq)]
pub struct Reject {
    /// The message's `id` (a number or a string), `null` when it has none.
    pub id: Value,
    pub code: i32,
    pub message: String,
    /// Also shown to the user (`window/showMessage`): a message that was too
    /// large is likely a document the editor now thinks is open.
    pub show: bool,
}

impl Reject {
    fn framing(message: String) -> Reject {
        Reject {
            id: Value::Null,
            code: PARSE_ERROR,
            message,
            show: false,
        }
    }

    /// The JSON-RPC error response.
    pub fn response(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code, "message": self.message },
        })
    }
}

/// Reads framed message bodies from a byte stream.
pub struct Reader<R> {
    inner: R,
    /// After a framing error: the stream is skipped up to the next
    /// `Content-Length` header.
    lost: bool,
}

/// The header name that starts a message, lower case.
const CONTENT_LENGTH: &[u8] = b"content-length";

impl<R: BufRead> Reader<R> {
    pub fn new(inner: R) -> Reader<R> {
        Reader { inner, lost: false }
    }

    /// The next message's body, or the answer to a malformed message;
    /// `None` at the end of the stream (or a read error: the client has
    /// gone either way).
    pub fn next_body(&mut self) -> Option<Result<Vec<u8>, Reject>> {
        let mut resumed = false;
        if std::mem::take(&mut self.lost) {
            if !self.skip_to_header().unwrap_or(false) {
                return None;
            }
            resumed = true;
        }
        let mut length = None;
        let mut headers = 0;
        loop {
            let line = match self.header_line() {
                Ok(Some(line)) => line,
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    return self
                        .framing(format!("a header line longer than {MAX_HEADER_LINE} bytes"))
                }
                Ok(None) | Err(_) => return None,
            };
            // After a framing error, the scan that found this header line
            // consumed its name.
            let line = if std::mem::take(&mut resumed) {
                let mut whole = CONTENT_LENGTH.to_vec();
                whole.extend_from_slice(&line);
                whole
            } else {
                line
            };
            if line.is_empty() {
                if headers == 0 {
                    // Blank lines between messages: tolerated.
                    continue;
                }
                break;
            }
            headers += 1;
            if headers > MAX_HEADERS {
                return self.framing(format!("more than {MAX_HEADERS} header lines"));
            }
            match header(&line) {
                Some(Header::Length(n)) => length = Some(n),
                Some(Header::Other) => {}
                None => {
                    return self.framing(
                        "a header line that is not `Name: value` (or a `Content-Length` that is not a number)"
                            .to_string(),
                    )
                }
            }
        }
        let Some(length) = length else {
            return self.framing("a message without a `Content-Length` header".to_string());
        };
        if length > MAX_MESSAGE {
            self.lost = true;
            return Some(Err(Reject {
                id: Value::Null,
                code: INVALID_REQUEST,
                message: format!(
                    "kdslc lsp: a message of {length} bytes is over the limit of {MAX_MESSAGE} bytes (64 MiB); it was skipped"
                ),
                show: true,
            }));
        }
        // Reserved whole, so that it never grows (doubling would touch up
        // to twice the limit), and read as it arrives: the system hands out
        // pages as they are written, so a length with no body behind it
        // costs nothing.
        let mut body = Vec::new();
        if body.try_reserve_exact(length as usize).is_err() {
            self.lost = true;
            return Some(Err(Reject::framing(format!(
                "kdslc lsp: no memory for a message of {length} bytes; it was skipped"
            ))));
        }
        let read = (&mut self.inner).take(length).read_to_end(&mut body).ok()?;
        if (read as u64) < length {
            return None;
        }
        Some(Ok(body))
    }

    fn framing(&mut self, what: String) -> Option<Result<Vec<u8>, Reject>> {
        self.lost = true;
        Some(Err(Reject::framing(format!(
            "kdslc lsp: malformed message header: {what}; skipped to the next `Content-Length`"
        ))))
    }

    /// One header line without its line end (`\r\n`, or a bare `\n`);
    /// `None` at the end of the stream, an `InvalidData` error for a line
    /// over [`MAX_HEADER_LINE`] bytes (left unread past the limit).
    fn header_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut line = Vec::new();
        loop {
            let buf = fill(&mut self.inner)?;
            if buf.is_empty() {
                return Ok(None);
            }
            let room = MAX_HEADER_LINE + 2 - line.len();
            let window = buf.get(..buf.len().min(room)).unwrap_or(buf);
            if let Some(i) = window.iter().position(|&b| b == b'\n') {
                line.extend_from_slice(window.get(..i).unwrap_or_default());
                self.inner.consume(i + 1);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if line.len() > MAX_HEADER_LINE {
                    return Err(io::ErrorKind::InvalidData.into());
                }
                return Ok(Some(line));
            }
            let n = window.len();
            line.extend_from_slice(window);
            self.inner.consume(n);
            if line.len() > MAX_HEADER_LINE + 1 {
                return Err(io::ErrorKind::InvalidData.into());
            }
        }
    }

    /// Consumes the stream up to and including the next `Content-Length`
    /// (in any case); `false` at the end of the stream.
    fn skip_to_header(&mut self) -> io::Result<bool> {
        let mut matched = 0;
        loop {
            let buf = fill(&mut self.inner)?;
            if buf.is_empty() {
                return Ok(false);
            }
            let mut used = 0;
            for &b in buf {
                used += 1;
                let b = b.to_ascii_lowercase();
                // The name has no repeated prefix, so a mismatch can only
                // restart at its first letter.
                if CONTENT_LENGTH.get(matched) == Some(&b) {
                    matched += 1;
                } else {
                    matched = usize::from(CONTENT_LENGTH.first() == Some(&b));
                }
                if matched == CONTENT_LENGTH.len() {
                    self.inner.consume(used);
                    return Ok(true);
                }
            }
            self.inner.consume(used);
        }
    }
}

/// The buffered bytes, reading more if there are none (empty at the end of
/// the stream); an interrupted read is tried again.
fn fill(r: &mut impl BufRead) -> io::Result<&[u8]> {
    while let Err(e) = r.fill_buf() {
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    // The bytes now buffered (at the end of the stream, asking again finds
    // the end again).
    r.fill_buf()
}

enum Header {
    Length(u64),
    Other,
}

/// `Name: value`, with `Content-Length`'s value a decimal number (a length
/// too large for `u64` reads as `u64::MAX`: over the limit either way).
fn header(line: &[u8]) -> Option<Header> {
    let colon = line.iter().position(|&b| b == b':')?;
    let name = line.get(..colon)?.trim_ascii();
    let value = line.get(colon + 1..)?.trim_ascii();
    if name.is_empty() || !name.iter().all(|b| b.is_ascii_graphic()) {
        return None;
    }
    if !name.eq_ignore_ascii_case(CONTENT_LENGTH) {
        return Some(Header::Other);
    }
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = value.iter().fold(0u64, |n, &d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    Some(Header::Length(n))
}

/// The most JSON values one message may hold. A message is read as a
/// `serde_json::Value` tree, some 20 times larger than its text when the
/// text is many small values (`[{},{},...]`): this keeps a message of any
/// shape to tens of MiB of tree. A document's text is one value; a
/// thousand ranged changes or diagnostics are some ten thousand.
pub const MAX_VALUES: usize = 1 << 20;

/// The message a body holds, or the error response it gets.
pub fn decode(mut body: Vec<u8>) -> Result<Message, Reject> {
    replace_lone_surrogates(&mut body);
    if values_past(&body, MAX_VALUES) {
        return Err(Reject {
            id: Value::Null,
            code: INVALID_REQUEST,
            message: format!(
                "kdslc lsp: the message holds more than {MAX_VALUES} JSON values; it was skipped"
            ),
            show: false,
        });
    }
    let value: Value = serde_json::from_slice(&body).map_err(|e| Reject {
        id: Value::Null,
        code: PARSE_ERROR,
        message: format!("kdslc lsp: the message is not JSON: {e}"),
        show: false,
    })?;
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    let invalid = |why: String| Reject {
        id: id.clone(),
        code: INVALID_REQUEST,
        message: format!(
            "kdslc lsp: the message is not a JSON-RPC request, response or notification: {why}"
        ),
        show: false,
    };
    // Classified by its members, not by trying each shape in turn: a
    // request whose `method` is not a string must not pass for a response.
    let Some(fields) = value.as_object() else {
        return Err(invalid(
            "a message is one JSON object (batches are not supported)".to_string(),
        ));
    };
    let (has_id, has_method) = (fields.contains_key("id"), fields.contains_key("method"));
    let has_outcome = fields.contains_key("result") || fields.contains_key("error");
    let decoded = match (has_method, has_id) {
        (true, true) => serde_json::from_value::<Request>(value).map(Message::Request),
        (true, false) => serde_json::from_value::<Notification>(value).map(Message::Notification),
        (false, true) if has_outcome => {
            serde_json::from_value::<Response>(value).map(Message::Response)
        }
        _ => {
            return Err(invalid(
                "it has neither a `method` nor an `id` with a `result` or an `error`".to_string(),
            ))
        }
    };
    decoded.map_err(|e| invalid(e.to_string()))
}

/// Whether JSON text holds more than `limit` values, counting an opening
/// bracket or a comma outside strings as (the start of) one more value.
fn values_past(json: &[u8], limit: usize) -> bool {
    let (mut count, mut in_string, mut escaped) = (0usize, false, false);
    for &b in json {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'{' | b'[' | b',' => count += 1,
                _ => {}
            }
        }
        if count > limit {
            return true;
        }
    }
    false
}

/// Rewrites each `\uXXXX` escape of a UTF-16 surrogate that is not half of
/// a pair as `\uFFFD`, in place. A backslash outside a string is a syntax
/// error anyway, so every backslash is read as the start of an escape.
pub fn replace_lone_surrogates(json: &mut [u8]) {
    let mut i = 0;
    while i < json.len() {
        if json.get(i) != Some(&b'\\') {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(json, i) else {
            // `\"`, `\\`, `\n`, ...: two bytes.
            i += 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => {
                let low = escape_at(json, i + 6);
                if low.is_some_and(|u| (0xDC00..=0xDFFF).contains(&u)) {
                    i += 12;
                    continue;
                }
                true
            }
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            if let Some(digits) = json.get_mut(i + 2..i + 6) {
                digits.copy_from_slice(b"FFFD");
            }
        }
        i += 6;
    }
}

/// The code unit of a `\uXXXX` escape starting at `at`.
fn escape_at(json: &[u8], at: usize) -> Option<u32> {
    let e = json.get(at..at + 6)?;
    if e.get(..2)? != b"\\u" {
        return None;
    }
    let hex = std::str::from_utf8(e.get(2..)?).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

/// Writes one framed message, whole, to stdout (which any thread may
/// share: the lock is held for the message).
fn write_frame(body: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
    out.write_all(body)?;
    out.flush()
}

fn write_reject(r: &Reject) -> io::Result<()> {
    write_frame(r.response().to_string().as_bytes())?;
    if r.show {
        let note = json!({
            "jsonrpc": "2.0",
            "method": "window/showMessage",
            "params": { "type": 1, "message": r.message },
        });
        write_frame(note.to_string().as_bytes())?;
    }
    Ok(())
}

/// The threads behind [`stdio`]'s connection.
pub struct IoThreads {
    writer: std::thread::JoinHandle<()>,
}

impl IoThreads {
    /// Waits until everything sent has been written (the connection must
    /// have been dropped). The reader is not waited for: it may be blocked
    /// on a client that keeps stdin open after `exit`.
    pub fn join(self) {
        let _ = self.writer.join();
    }
}

/// A connection on stdin and stdout through [`Reader`] and [`decode`]; the
/// malformed messages are answered on the way and never reach the server.
/// The reader stops after forwarding `exit`.
pub fn stdio() -> io::Result<(Connection, IoThreads)> {
    // A rendezvous channel: the reader holds at most one message while the
    // server is busy, whatever the client sends.
    let (to_server, receiver) = crossbeam_channel::bounded::<Message>(0);
    // Bounded too: a client that does not read its answers stops the
    // server (as it stops any writer) instead of filling its memory.
    let (sender, from_server) = crossbeam_channel::bounded::<Message>(16);
    std::thread::Builder::new()
        .name("kdslc-lsp-reader".to_string())
        .spawn(move || {
            let mut reader = Reader::new(io::stdin().lock());
            while let Some(body) = reader.next_body() {
                let reject = match body.and_then(decode) {
                    Ok(msg) => {
                        let exit = matches!(&msg, Message::Notification(n) if n.method == "exit");
                        if to_server.send(msg).is_err() || exit {
                            break;
                        }
                        continue;
                    }
                    Err(r) => r,
                };
                if write_reject(&reject).is_err() {
                    break;
                }
            }
        })?;
    let writer = std::thread::Builder::new()
        .name("kdslc-lsp-writer".to_string())
        .spawn(move || {
            for msg in from_server {
                let mut out = io::stdout().lock();
                if msg.write(&mut out).is_err() {
                    break;
                }
            }
        })?;
    Ok((Connection { sender, receiver }, IoThreads { writer }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bodies(input: &[u8]) -> Vec<Result<String, Reject>> {
        let mut r = Reader::new(input);
        std::iter::from_fn(|| r.next_body())
            .map(|b| b.map(|b| String::from_utf8(b).unwrap()))
            .collect()
    }

    #[test]
    fn frames_are_read_one_after_the_other() {
        let got = bodies(b"Content-Length: 2\r\n\r\n{}content-length:3\nContent-Type: x\n\n[1]");
        assert_eq!(got, vec![Ok("{}".to_string()), Ok("[1]".to_string())]);
    }

    #[test]
    fn a_header_without_length_is_answered_and_the_next_message_read() {
        let got = bodies(b"Content-Type: x\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}");
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0].as_ref().unwrap_err().code, PARSE_ERROR);
        assert_eq!(got[1], Ok("{}".to_string()));
    }

    #[test]
    fn a_huge_length_is_refused_without_allocating_it() {
        let mut input = b"Content-Length: 4000000000\r\n\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 1000));
        input.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
        let got = bodies(&input);
        let e = got[0].as_ref().unwrap_err();
        assert_eq!((e.code, e.show), (INVALID_REQUEST, true));
        assert!(e.message.contains("4000000000 bytes"), "{}", e.message);
        assert_eq!(got[1], Ok("{}".to_string()));
        // Too large for u64 is over the limit too.
        let got = bodies(b"Content-Length: 99999999999999999999999\r\n\r\n");
        assert_eq!(got[0].as_ref().unwrap_err().code, INVALID_REQUEST);
    }

    #[test]
    fn long_and_bad_header_lines_are_framing_errors() {
        let mut input = vec![b'a'; 100_000];
        input.extend_from_slice(b"\r\nContent-Length: 1\r\n\r\n1");
        let got = bodies(&input);
        assert!(got[0].as_ref().unwrap_err().message.contains("longer than"));
        assert_eq!(got.last(), Some(&Ok("1".to_string())));
        for bad in [
            &b"Content-Length 5\r\n\r\n"[..],
            b"Content-Length: -5\r\n\r\n",
        ] {
            let got = bodies(bad);
            assert_eq!(got.len(), 1, "{got:?}");
            assert!(got[0].is_err());
        }
        let many = "X-A: 1\r\n".repeat(MAX_HEADERS + 1);
        let got = bodies(many.as_bytes());
        assert!(got[0]
            .as_ref()
            .unwrap_err()
            .message
            .contains("header lines"));
    }

    #[test]
    fn a_short_body_is_the_end_of_the_stream() {
        assert!(bodies(b"Content-Length: 10\r\n\r\n{}").is_empty());
        assert!(bodies(b"Content-Len").is_empty());
        assert!(bodies(b"").is_empty());
    }

    #[test]
    fn json_errors_get_json_rpc_codes_and_ids() {
        let e = decode(b"{garbage}".to_vec()).unwrap_err();
        assert_eq!((e.code, &e.id), (PARSE_ERROR, &Value::Null));
        let e = decode(br#"{"jsonrpc":"2.0","id":7,"method":3}"#.to_vec()).unwrap_err();
        assert_eq!((e.code, &e.id), (INVALID_REQUEST, &json!(7)));
        for not_a_message in [&b"[1,2]"[..], b"{}", br#"{"id":1}"#, b"3"] {
            let e = decode(not_a_message.to_vec()).unwrap_err();
            assert_eq!(e.code, INVALID_REQUEST);
        }
        let e = decode(br#"{"id":"x","method":"m","params":3}"#.to_vec());
        assert!(matches!(e, Ok(Message::Request(_))), "{e:?}");
        let e = decode(br#"{"id":null,"result":3}"#.to_vec()).unwrap_err();
        assert_eq!((e.code, &e.id), (INVALID_REQUEST, &Value::Null));
        // Nested too deep for serde_json: a parse error, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert_eq!(decode(deep.into_bytes()).unwrap_err().code, PARSE_ERROR);
    }

    #[test]
    fn a_message_of_too_many_values_is_refused_before_parsing() {
        let many = format!("[{}]", "{},".repeat(MAX_VALUES) + "{}");
        let e = decode(many.into_bytes()).unwrap_err();
        assert_eq!(e.code, INVALID_REQUEST);
        assert!(e.message.contains("JSON values"), "{}", e.message);
        // Brackets and commas in strings are text.
        let text = format!(
            r#"{{"method":"m","params":"{}"}}"#,
            "[,{".repeat(MAX_VALUES)
        );
        assert!(matches!(
            decode(text.into_bytes()),
            Ok(Message::Notification(_))
        ));
        assert!(values_past(b"[1,2,3]", 2));
        assert!(
            values_past(br#"["\\",1,2]"#, 2),
            "an escaped backslash ends no string"
        );
        assert!(
            !values_past(br#"["\",1,2"]"#, 2),
            "an escaped quote ends no string"
        );
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let body = br#"{"jsonrpc":"2.0","method":"m","params":{"t":"a\ud800b\udc00c\ud83d\ude00\\ud800"}}"#;
        let Ok(Message::Notification(n)) = decode(body.to_vec()) else {
            panic!("not decoded");
        };
        assert_eq!(n.params["t"], "a\u{fffd}b\u{fffd}c😀\\ud800");
        let mut tail = br#""\ud800"#.to_vec();
        replace_lone_surrogates(&mut tail);
        assert_eq!(tail, br#""\uFFFD"#);
    }
}
