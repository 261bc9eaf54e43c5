//! The language server's document handling on arbitrary text and edits:
//! a real server (`kdsl::lsp::serve`) on an in-memory connection, driven
//! through a session of opens, ranged and full changes, saves, closes,
//! hovers, definitions, document symbols and code actions at arbitrary
//! positions, with each position encoding. Every request must get its own
//! answer and none may be an internal error (a caught panic); the server
//! must exit with status 0 after `shutdown`/`exit`. The same bytes are
//! also read as the wire would carry them (framing and JSON-RPC decoding).

use arbitrary::Arbitrary;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{json, Value};
use std::time::Duration;

/// One session: its settings and edits (decoded with `arbitrary` from the
/// head of the input) and the document's first text (the rest of the
/// input, so that a kdsl file is a good seed).
#[derive(Arbitrary, Debug)]
pub struct Session {
    /// 0: utf-8, 1: utf-16, 2: utf-32, else none offered (utf-16).
    pub encoding: u8,
    /// Check for sm_80 instead of sm_90.
    pub sm80: bool,
    pub ops: Vec<Op>,
}

/// Splits an input: its first byte says how many bytes after it describe
/// the session; the rest is the text. The whole input is also read as the
/// wire would be (see [`read_wire`]).
pub fn run_bytes(data: &[u8]) {
    read_wire(data);
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let (head, text) = rest.split_at(usize::from(n).min(rest.len()));
    let Ok(session) = Session::arbitrary_take_rest(arbitrary::Unstructured::new(head)) else {
        return;
    };
    run(session, String::from_utf8_lossy(text).into_owned());
}

/// The bytes as a client's stream on stdin (`kdsl::lsp::transport`):
/// every message is read or answered, the framing never panics, and no
/// body is longer than the limit.
pub fn read_wire(data: &[u8]) {
    use kdsl::lsp::transport::{decode, Reader, MAX_MESSAGE};
    let mut reader = Reader::new(data);
    while let Some(body) = reader.next_body() {
        match body {
            Ok(body) => {
                assert!(body.len() as u64 <= MAX_MESSAGE);
                let _ = decode(body);
            }
            Err(reject) => assert!(reject.code == -32700 || reject.code == -32600),
        }
    }
}

/// A position as a client may send it: any line, any character.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Pos {
    pub line: u16,
    pub character: u16,
}

#[derive(Arbitrary, Debug)]
pub enum Op {
    /// A ranged change (`contentChanges` with a range).
    Edit {
        start: Pos,
        end: Pos,
        text: String,
    },
    /// A full-text change.
    Replace(String),
    /// Insert one of a few kdsl fragments at a position.
    Insert {
        at: Pos,
        fragment: u8,
    },
    Hover(Pos),
    Definition(Pos),
    CodeAction {
        start: Pos,
        end: Pos,
    },
    Symbols,
    Save,
    /// Close the document and open it again with this text.
    Reopen(String),
}

/// Fragments worth inserting: constructs the server must resolve.
const FRAGMENTS: &[&str] = &[
    "import \"lib.kdsl\";\n",
    "import \"bad.kdsl\";\n",
    "import \"cycle.kdsl\";\n",
    "import \"deep/inner.kdsl\";\n",
    "kernel k(x: global mut [f32]) block(32) { x[0] = square(1.0); }\n",
    "barrier b: cluster(arrivals = 1);\n",
    "b.wait();\n",
    "let v = TILE;\n",
    "é𝄞\r\n",
    "}",
    "{",
];

pub fn run(s: Session, text: String) {
    // Positions mostly inside the text, some past it (clients send those).
    let lines = text.lines().count() + 2;
    let columns = text.lines().map(str::len).max().unwrap_or(0) + 2;
    let fit = |p: Pos| Pos {
        line: (usize::from(p.line) % lines) as u16,
        character: (usize::from(p.character) % columns) as u16,
    };
    let uri = format!("file://{}/main.kdsl", crate::workdir().display());
    let (server, client) = Connection::memory();
    let handle = std::thread::Builder::new()
        .stack_size(1 << 30)
        .spawn(move || kdsl::lsp::serve(&server))
        .expect("server thread");
    let encodings: Value = match s.encoding {
        0 => json!(["utf-8"]),
        1 => json!(["utf-16"]),
        2 => json!(["utf-32"]),
        _ => Value::Null,
    };
    let mut c = Client {
        conn: &client,
        next_id: 0,
    };
    c.request(
        "initialize",
        json!({
            "capabilities": { "general": { "positionEncodings": encodings } },
            "initializationOptions": { "target": if s.sm80 { "sm_80" } else { "sm_90" } },
        }),
    );
    c.notify("initialized", json!({}));
    c.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri, "languageId": "kdsl", "version": 1, "text": text } }),
    );
    for (version, op) in s.ops.iter().enumerate() {
        let doc = json!({ "uri": uri });
        let versioned = json!({ "uri": uri, "version": version + 2 });
        match op {
            Op::Edit { start, end, text } => c.notify(
                "textDocument/didChange",
                json!({ "textDocument": versioned,
                        "contentChanges": [{ "range": range(fit(*start), fit(*end)), "text": text }] }),
            ),
            Op::Replace(text) => c.notify(
                "textDocument/didChange",
                json!({ "textDocument": versioned, "contentChanges": [{ "text": text }] }),
            ),
            Op::Insert { at, fragment } => {
                let text = FRAGMENTS[usize::from(*fragment) % FRAGMENTS.len()];
                c.notify(
                    "textDocument/didChange",
                    json!({ "textDocument": versioned,
                            "contentChanges": [{ "range": range(fit(*at), fit(*at)), "text": text }] }),
                )
            }
            Op::Hover(p) => c.request(
                "textDocument/hover",
                json!({ "textDocument": doc, "position": pos(fit(*p)) }),
            ),
            Op::Definition(p) => c.request(
                "textDocument/definition",
                json!({ "textDocument": doc, "position": pos(fit(*p)) }),
            ),
            Op::CodeAction { start, end } => c.request(
                "textDocument/codeAction",
                json!({ "textDocument": doc, "range": range(fit(*start), fit(*end)),
                        "context": { "diagnostics": [] } }),
            ),
            Op::Symbols => c.request(
                "textDocument/documentSymbol",
                json!({ "textDocument": doc }),
            ),
            Op::Save => c.notify("textDocument/didSave", json!({ "textDocument": doc })),
            Op::Reopen(text) => {
                c.notify("textDocument/didClose", json!({ "textDocument": doc }));
                c.notify(
                    "textDocument/didOpen",
                    json!({ "textDocument": { "uri": uri, "languageId": "kdsl",
                                              "version": version + 2, "text": text } }),
                );
            }
        }
    }
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    let status = handle.join().expect("the server thread panicked");
    assert_eq!(
        status, 0,
        "the server exited with status {status} after shutdown"
    );
    // Anything left are notifications (diagnostics): they must decode.
    while let Ok(msg) = client.receiver.try_recv() {
        if let Message::Notification(n) = msg {
            check_notification(&n);
        }
    }
}

fn pos(p: Pos) -> Value {
    json!({ "line": p.line, "character": p.character })
}

fn range(a: Pos, b: Pos) -> Value {
    json!({ "start": pos(a), "end": pos(b) })
}

struct Client<'c> {
    conn: &'c Connection,
    next_id: i32,
}

impl Client<'_> {
    fn notify(&mut self, method: &str, params: Value) {
        let n = Notification::new(method.to_string(), params);
        self.conn
            .sender
            .send(n.into())
            .expect("the server is listening");
    }

    /// Sends a request and waits for its answer, checking the notifications
    /// that come before it.
    fn request(&mut self, method: &str, params: Value) {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        let req = Request::new(id.clone(), method.to_string(), params);
        self.conn
            .sender
            .send(req.into())
            .expect("the server is listening");
        loop {
            // libFuzzer's own timeout reports a hang; this bound only keeps
            // a stuck server from blocking a replay forever.
            let msg = match self.conn.receiver.recv_timeout(Duration::from_secs(60)) {
                Ok(m) => m,
                Err(e) => panic!("no answer to {method}: {e}"),
            };
            match msg {
                Message::Response(r) => {
                    check_response(method, &id, &r);
                    return;
                }
                Message::Notification(n) => check_notification(&n),
                Message::Request(r) => panic!("the server sent a request: {r:?}"),
            }
        }
    }
}

fn check_response(method: &str, id: &RequestId, r: &Response) {
    assert_eq!(&r.id, id, "{method}: the answer has another id");
    if let Some(e) = &r.error {
        // Internal errors are panics the server caught.
        assert_ne!(
            e.code,
            lsp_server::ErrorCode::InternalError as i32,
            "{method}: internal error: {}",
            e.message
        );
    }
}

fn check_notification(n: &Notification) {
    if n.method == "textDocument/publishDiagnostics" {
        if let Err(e) =
            serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(n.params.clone())
        {
            panic!("diagnostics that do not decode: {e}");
        }
    }
}
