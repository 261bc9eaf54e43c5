//! `kdslc lsp` spoken to over pipes, as an editor would: JSON-RPC with
//! `Content-Length` framing on the real binary's stdin and stdout.
//!
//! Every read has a deadline, so a hung server fails the test instead of
//! hanging it.

use crate::common::assert_contains;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(20);

/// A minimal LSP client driving one `kdslc lsp` process.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Everything the server wrote to stderr so far, and the thread that
    /// reads it.
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<std::thread::JoinHandle<()>>,
    messages: Receiver<Value>,
    /// Notifications read while waiting for something else, in order.
    pending: Vec<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kdslc"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kdslc lsp starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut err = child.stderr.take().expect("piped stderr");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let collected = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0; 4096];
            while let Ok(n @ 1..) = err.read(&mut buf) {
                collected
                    .lock()
                    .expect("stderr")
                    .extend_from_slice(&buf[..n]);
            }
        });
        let stdin = child.stdin.take();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut r) {
                if tx.send(msg).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            stderr,
            stderr_reader: Some(stderr_reader),
            messages,
            pending: Vec::new(),
            next_id: 1,
        }
    }

    /// Starts a server and performs the initialize handshake; returns the
    /// client and the server's `InitializeResult`.
    fn initialized(position_encodings: Option<&[&str]>) -> (Client, Value) {
        Client::initialized_with(position_encodings, Value::Null)
    }

    fn initialized_with(position_encodings: Option<&[&str]>, options: Value) -> (Client, Value) {
        let mut c = Client::start();
        let mut caps = json!({
            "textDocument": {
                "publishDiagnostics": { "relatedInformation": true },
                "codeAction": { "codeActionLiteralSupport": {
                    "codeActionKind": { "valueSet": ["quickfix"] } } },
                "hover": { "contentFormat": ["markdown", "plaintext"] },
                "documentSymbol": { "hierarchicalDocumentSymbolSupport": true }
            }
        });
        if let Some(encs) = position_encodings {
            caps["general"] = json!({ "positionEncodings": encs });
        }
        let init = c.request(
            "initialize",
            json!({ "processId": null, "rootUri": null, "capabilities": caps,
                    "initializationOptions": options }),
        );
        let result = init["result"].clone();
        assert!(result.is_object(), "initialize failed: {init}");
        c.notify("initialized", json!({}));
        (c, result)
    }

    fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    /// Writes bytes to the server as they are, framing or not.
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(bytes).expect("write to server");
        stdin.flush().expect("flush to server");
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().expect("stderr")).into_owned()
    }

    /// All the server wrote to stderr, once it has exited.
    fn final_stderr(&mut self) -> String {
        if let Some(reader) = self.stderr_reader.take() {
            reader.join().expect("the stderr reader");
        }
        self.stderr()
    }

    /// The next message that is not a notification (a response; those to
    /// malformed messages have a `null` id).
    fn next_response(&mut self, what: &str) -> Value {
        loop {
            let msg = self.recv(what);
            if msg.get("method").is_none() {
                return msg;
            }
            self.pending.push(msg);
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let msg = self.recv(&format!("the response to {method}"));
            if msg.get("id") == Some(&json!(id)) && msg.get("method").is_none() {
                return msg;
            }
            self.pending.push(msg);
        }
    }

    fn recv(&mut self, what: &str) -> Value {
        match self.messages.recv_timeout(TIMEOUT) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("timed out waiting for {what}"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("the server closed its output while we waited for {what}")
            }
        }
    }

    /// The next `textDocument/publishDiagnostics` for `uri`.
    fn diagnostics_for(&mut self, uri: &str) -> Vec<Value> {
        let is_it = |m: &Value| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        };
        if let Some(i) = self.pending.iter().position(is_it) {
            let m = self.pending.remove(i);
            return m["params"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default();
        }
        loop {
            let m = self.recv(&format!("diagnostics for {uri}"));
            if is_it(&m) {
                return m["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
            }
            self.pending.push(m);
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "kdsl", "version": 1, "text": text } }),
        );
        self.diagnostics_for(uri)
    }

    fn change(&mut self, uri: &str, version: i64, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version },
                    "contentChanges": [{ "text": text }] }),
        );
        self.diagnostics_for(uri)
    }

    /// Shuts the server down politely and returns its exit status.
    fn shutdown(&mut self) -> i32 {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null, "shutdown answered {r}");
        assert!(r.get("error").is_none(), "shutdown answered {r}");
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    fn wait_exit(&mut self) -> i32 {
        self.stdin = None;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the server") {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // A failed test must not leave a server running.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("the server's stderr:\n{}", self.stderr());
        }
    }
}

/// Reads one framed message; `None` at end of stream.
fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length:") {
            length = n.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

#[derive(Clone, Copy, PartialEq)]
enum Enc {
    Utf8,
    Utf16,
}

/// The LSP position of the `nth` occurrence of `needle` in `text` (plus
/// `extra` bytes), in the given encoding.
fn pos(text: &str, needle: &str, nth: usize, extra: usize, enc: Enc) -> Value {
    let byte = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` #{nth} in the text"))
        .0
        + extra;
    let before = &text[..byte];
    let line = before.matches('\n').count();
    let line_text = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    let character = match enc {
        Enc::Utf8 => line_text.len(),
        Enc::Utf16 => line_text.encode_utf16().count(),
    };
    json!({ "line": line, "character": character })
}

fn range(text: &str, needle: &str, nth: usize, enc: Enc) -> Value {
    span(text, needle, nth, needle.len(), enc)
}

/// The range of the first `len` bytes of the `nth` occurrence of `needle`.
fn span(text: &str, needle: &str, nth: usize, len: usize, enc: Enc) -> Value {
    json!({ "start": pos(text, needle, nth, 0, enc), "end": pos(text, needle, nth, len, enc) })
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

const LIB: &str = "// Shared helpers.\nfn twice(v: u32) -> u32 {\n    v * 2\n}\n";

/// The flagship error, E0301, with multi-byte text before it on its line so
/// that UTF-8 and UTF-16 columns differ.
const MAIN: &str = r#"// é😀: multi-byte text, so the encodings disagree
import "lib.kdsl";

kernel k(out: global mut [f32]) block(128) cluster(2) {
    barrier ready: cluster(arrivals = 1);
    let x = twice(thread_idx.x);
    if cluster_rank == 1 {
        ready.arrive_remote(0);
    } else {
        /* é😀 */ ready.wait(0);
        out[x] = 1.0;
    }
}
"#;

struct Project {
    _dir: tempfile::TempDir,
    main: PathBuf,
    lib: PathBuf,
}

fn project() -> Project {
    let dir = tempfile::tempdir().expect("temp dir");
    let main = dir.path().join("main.kdsl");
    let lib = dir.path().join("lib.kdsl");
    std::fs::write(&main, MAIN).expect("write main.kdsl");
    std::fs::write(&lib, LIB).expect("write lib.kdsl");
    Project {
        _dir: dir,
        main,
        lib,
    }
}

fn e0301(diags: &[Value]) -> Value {
    diags
        .iter()
        .find(|d| d["code"] == "E0301")
        .cloned()
        .unwrap_or_else(|| panic!("no E0301 among {diags:#?}"))
}

/// The E0301 diagnostic: its range is the `ready.wait(0)` call, and its
/// related information points at `cluster` in the declaration.
fn check_e0301(d: &Value, uri: &str, enc: Enc) {
    assert_eq!(d["severity"], 1, "{d}");
    assert_eq!(d["source"], "kdslc");
    let message = d["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Can only await on CTA-local barriers"),
        "{message}"
    );
    assert!(message.contains("\nhelp: "), "help appended: {message}");
    assert!(message.contains("\nnote: "), "note appended: {message}");
    // The call, without its `;`.
    let start = pos(MAIN, "ready.wait(0)", 0, 0, enc);
    let end_call = pos(MAIN, "ready.wait(0)", 0, "ready.wait(0)".len(), enc);
    assert_eq!(d["range"]["start"], start, "{d}");
    assert_eq!(d["range"]["end"], end_call, "{d}");
    let related = d["relatedInformation"]
        .as_array()
        .expect("related information");
    let scope = related
        .iter()
        .find(|r| r["location"]["range"] == span(MAIN, "cluster(arrivals", 0, 7, enc))
        .unwrap_or_else(|| panic!("no related information at `cluster` in {related:#?}"));
    assert_eq!(scope["location"]["uri"], uri);
    assert!(
        scope["message"]
            .as_str()
            .unwrap_or_default()
            .contains("cluster"),
        "{scope}"
    );
}

#[test]
fn diagnostics_fixes_hover_definition_and_symbols() {
    let p = project();
    let uri = file_uri(&p.main);
    let (mut c, init) = Client::initialized(None);
    assert_eq!(
        init["capabilities"]["positionEncoding"], "utf-16",
        "UTF-16 is the default: {init}"
    );
    assert_eq!(init["serverInfo"]["name"], "kdslc");

    let diags = c.open(&uri, MAIN);
    let d = e0301(&diags);
    check_e0301(&d, &uri, Enc::Utf16);

    // Quick fixes for the diagnostic: `wait` → `wait_cluster`; not the
    // scope → `cta`, since `arrive_remote` needs the group cluster-scope
    // (that fix would lead into E0307), which related information says.
    let actions = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": d["range"],
                "context": { "diagnostics": [d], "only": ["quickfix"] } }),
    );
    let actions = actions["result"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{actions}"));
    let edit_of = |new_text: &str| {
        actions
            .iter()
            .find_map(|a| {
                assert_eq!(a["kind"], "quickfix", "{a}");
                let edits = a["edit"]["changes"][&uri].as_array()?;
                edits.iter().find(|e| e["newText"] == new_text).cloned()
            })
            .unwrap_or_else(|| panic!("no quick fix writing `{new_text}` in {actions:#?}"))
    };
    let to_wait_cluster = edit_of("wait_cluster");
    assert_eq!(
        to_wait_cluster["range"],
        span(MAIN, "wait(0)", 0, 4, Enc::Utf16)
    );
    assert!(
        !actions.iter().any(|a| a["edit"]["changes"][&uri]
            .as_array()
            .is_some_and(|edits| edits.iter().any(|e| e["newText"] == "cta"))),
        "no fix to scope `cta` while `arrive_remote` uses the group: {actions:#?}"
    );
    let related = d["relatedInformation"].as_array().expect("related");
    assert!(
        related.iter().any(|r| r["location"]["range"]
            == span(MAIN, "arrive_remote(0)", 0, 13, Enc::Utf16)
            && r["message"]
                .as_str()
                .is_some_and(|m| m.contains("needs scope `cluster`"))),
        "{related:#?}"
    );

    // An empty range at the cursor on that line finds the same fixes, with
    // no diagnostics in the context (a client that recomputes nothing).
    let cursor = pos(MAIN, "wait(0)", 0, 2, Enc::Utf16);
    let actions = c.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": { "start": cursor, "end": cursor },
                "context": { "diagnostics": [] } }),
    );
    assert!(
        actions["result"].as_array().is_some_and(|a| !a.is_empty()),
        "{actions}"
    );

    // Hover on the barrier reference shows its group.
    let hover = c.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": pos(MAIN, "ready.wait", 0, 2, Enc::Utf16) }),
    );
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("{hover}"));
    assert_eq!(hover["result"]["contents"]["kind"], "markdown");
    assert!(
        value.contains("barrier `ready`: scope `cluster`, 1 barrier, 1 arrival per phase"),
        "{value}"
    );
    assert_eq!(
        hover["result"]["range"],
        span(MAIN, "ready.wait", 0, 5, Enc::Utf16),
        "{hover}"
    );

    // Hover on a variable shows its declaration and type.
    let hover = c.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": pos(MAIN, "out[x]", 0, 4, Enc::Utf16) }),
    );
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("{hover}"));
    assert!(value.contains("let x: u32"), "{value}");

    // Hover on an expression shows its type (the comparison is a `bool`),
    // on a built-in value its entry in the table of built-ins.
    let hover_at = |c: &mut Client, at: usize| -> String {
        let hover = c.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": pos(MAIN, "cluster_rank == 1", 0, at, Enc::Utf16) }),
        );
        hover["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_else(|| panic!("{hover}"))
            .to_string()
    };
    assert_eq!(hover_at(&mut c, 14), "```kdsl\nbool\n```");
    let value = hover_at(&mut c, 3);
    assert!(
        value.starts_with("```kdsl\ncluster_rank: u32\n```\n\nThis CTA's rank"),
        "{value}"
    );

    // Definition of a variable: its `let`.
    let def = c.request(
        "textDocument/definition",
        json!({ "textDocument": { "uri": uri }, "position": pos(MAIN, "out[x]", 0, 4, Enc::Utf16) }),
    );
    let loc = location(&def);
    assert_eq!(loc["uri"], uri);
    assert_eq!(
        loc["range"],
        span(MAIN, "x = twice", 0, 1, Enc::Utf16),
        "{def}"
    );

    // Definition of a barrier group: its declaration's name.
    let def = c.request(
        "textDocument/definition",
        json!({ "textDocument": { "uri": uri }, "position": pos(MAIN, "ready.wait", 0, 1, Enc::Utf16) }),
    );
    let loc = location(&def);
    assert_eq!(loc["range"], range(MAIN, "ready", 0, Enc::Utf16), "{def}");

    // Definition across an import: the function in lib.kdsl.
    let def = c.request(
        "textDocument/definition",
        json!({ "textDocument": { "uri": uri }, "position": pos(MAIN, "twice(", 0, 2, Enc::Utf16) }),
    );
    let loc = location(&def);
    assert_eq!(loc["uri"], file_uri(&p.lib), "{def}");
    assert_eq!(
        loc["range"]["start"],
        pos(LIB, "twice", 0, 0, Enc::Utf16),
        "{def}"
    );

    // The outline: the import and the kernel, whose children are its
    // parameter and its barrier group.
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    let symbols = symbols["result"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{symbols}"));
    let kernel = symbols
        .iter()
        .find(|s| s["name"] == "k")
        .unwrap_or_else(|| panic!("{symbols:#?}"));
    assert_eq!(kernel["kind"], 12, "a function: {kernel}");
    assert_eq!(kernel["selectionRange"], span(MAIN, "k(", 0, 1, Enc::Utf16));
    let children: Vec<&str> = kernel["children"]
        .as_array()
        .map(|cs| cs.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(children, ["out", "ready"], "{kernel}");
    assert!(
        symbols.iter().any(|s| s["name"] == "lib.kdsl"),
        "{symbols:#?}"
    );

    // Fixing the error clears it.
    let fixed = MAIN.replace("ready.wait(0)", "ready.wait_cluster(0)");
    let diags = c.change(&uri, 2, &fixed);
    assert!(diags.iter().all(|d| d["code"] != "E0301"), "{diags:#?}");

    assert_eq!(c.shutdown(), 0);
}

fn location(def: &Value) -> Value {
    let r = &def["result"];
    // A `Location`, or a one-element list of them.
    let loc = if r.is_array() {
        r[0].clone()
    } else {
        r.clone()
    };
    assert!(loc["uri"].is_string(), "no definition: {def}");
    loc
}

#[test]
fn utf8_positions_when_the_client_asks_for_them() {
    let p = project();
    let uri = file_uri(&p.main);
    let (mut c, init) = Client::initialized(Some(&["utf-8", "utf-16"]));
    assert_eq!(init["capabilities"]["positionEncoding"], "utf-8", "{init}");
    let diags = c.open(&uri, MAIN);
    let d = e0301(&diags);
    check_e0301(&d, &uri, Enc::Utf8);
    // The UTF-8 and UTF-16 columns of the call differ on that line.
    assert_ne!(
        pos(MAIN, "ready.wait(0)", 0, 0, Enc::Utf8),
        pos(MAIN, "ready.wait(0)", 0, 0, Enc::Utf16)
    );

    // Hover positions are read as UTF-8 too.
    let hover = c.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": pos(MAIN, "ready.wait", 0, 1, Enc::Utf8) }),
    );
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("{hover}"));
    assert!(value.contains("barrier `ready`"), "{value}");
    assert_eq!(c.shutdown(), 0);
}

/// Text an editor sends while someone types: truncated at every few bytes
/// of a real program, and garbage.
fn broken_texts() -> Vec<String> {
    let mut texts: Vec<String> = (0..MAIN.len())
        .step_by(7)
        .filter(|&i| MAIN.is_char_boundary(i))
        .map(|i| MAIN[..i].to_string())
        .collect();
    texts.extend(
        [
            "kernel k(out: global mut [f32]) block(128) { let y = 1 + ",
            "kernel k( { { { ] ) barrier : cluster(arrivals = ; ready.wait(",
            "\u{0}\u{7f}@@@ }}}} ((( 😀 \"unterminated",
            "/* never closed",
            "kernel kernel kernel fn fn const const = = = ;;;",
            "import \"does-not-exist.kdsl\"; import \"main.kdsl\"; import \"\";",
            "kernel k() block(0, 0, 0, 0) cluster(99999999999999999999) { barrier b[0]: x(y = 1); b[-1].wait(7); }",
            "fn f() -> u32 { f() } kernel k() { let a = f(); a.wait(); shared s: [f32; 0]; s[1, 2, 3] = 1; }",
            "",
        ]
        .map(String::from),
    );
    // Deep nesting, which overflows an ordinary 8 MiB stack in a debug
    // build (the server runs on a thread with a deep one).
    texts.push(format!(
        "kernel k() {{ let x = {}1{}; }}",
        "(".repeat(2000),
        ")".repeat(2000)
    ));
    texts.push(format!(
        "kernel k() {{ let x = 1{}; }}",
        " + 1".repeat(2000)
    ));
    texts.push(format!("kernel k() {{ {}", "if true { ".repeat(1000)));
    // Pseudo-random token soup (fixed seed: the test must be repeatable).
    let tokens = [
        "kernel", "fn", "let", "mut", "barrier", "shared", "{", "}", "(", ")", "[", "]", ";", ":",
        "=", "+", ".", "..", "ready", "wait", "x", "1", "0x", "1.0e", "u32", "cluster", "cta",
        "arrivals", "\"", "/*", "//", "é", "\n",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..20 {
        let mut s = String::new();
        for _ in 0..60 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            s.push_str(tokens[(seed % tokens.len() as u64) as usize]);
            s.push(' ');
        }
        texts.push(s);
    }
    texts
}

#[test]
fn broken_and_half_typed_files_never_kill_the_server() {
    let p = project();
    let uri = file_uri(&p.main);
    let (mut c, _) = Client::initialized(None);
    c.open(&uri, MAIN);
    for (version, text) in broken_texts().iter().enumerate() {
        c.change(&uri, version as i64 + 2, text);
        // Ask about a few positions, including ones past the end.
        let last_line = text.matches('\n').count() as u32;
        for position in [
            json!({"line": 0, "character": 3}),
            json!({"line": last_line, "character": 999}),
        ] {
            for method in ["textDocument/hover", "textDocument/definition"] {
                let r = c.request(
                    method,
                    json!({ "textDocument": { "uri": uri }, "position": position }),
                );
                assert!(r.get("error").is_none(), "{method} on {text:?}: {r}");
            }
        }
        let r = c.request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": uri } }),
        );
        assert!(r.get("error").is_none(), "documentSymbol on {text:?}: {r}");
        let r = c.request(
            "textDocument/codeAction",
            json!({ "textDocument": { "uri": uri },
                    "range": { "start": {"line": 0, "character": 0}, "end": {"line": 999, "character": 0} },
                    "context": { "diagnostics": [] } }),
        );
        assert!(r.get("error").is_none(), "codeAction on {text:?}: {r}");
    }
    // And it still works on a real file afterwards.
    let diags = c.change(&uri, 1000, MAIN);
    check_e0301(&e0301(&diags), &uri, Enc::Utf16);
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn protocol_edges() {
    let p = project();
    let uri = file_uri(&p.main);
    let (mut c, _) = Client::initialized(None);

    // Unknown requests get MethodNotFound; unknown notifications are ignored.
    c.notify("$/somethingNew", json!({ "x": 1 }));
    c.notify("textDocument/didOpen", json!({ "not": "valid params" }));
    let r = c.request("kdsl/unknown", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");

    // Bad parameters are an error response, not a crash.
    let r = c.request("textDocument/hover", json!({ "nonsense": true }));
    assert_eq!(r["error"]["code"], -32602, "{r}");

    // Requests about a document that is not open: no result.
    let r = c.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": "file:///nowhere.kdsl" }, "position": {"line": 0, "character": 0} }),
    );
    assert_eq!(r["result"], Value::Null, "{r}");

    // Closing a document clears its diagnostics.
    assert!(!c.open(&uri, MAIN).is_empty());
    c.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert!(c.diagnostics_for(&uri).is_empty());

    // After shutdown, requests are refused; exit then ends with status 0.
    let r = c.request("shutdown", Value::Null);
    assert!(r.get("error").is_none(), "{r}");
    let r = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    assert_eq!(r["error"]["code"], -32600, "{r}");
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit(), 0);
}

#[test]
fn exit_without_shutdown_is_status_1() {
    let (mut c, _) = Client::initialized(None);
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit(), 1);
}

/// The byte offset of an LSP position (UTF-16) in `text`.
fn offset_of(text: &str, p: &Value) -> usize {
    let line = p["line"].as_u64().expect("line") as usize;
    let character = p["character"].as_u64().expect("character") as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= character || c == '\n' {
            return start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// Every identifier of `text` (outside comments, roughly) with its offset.
fn identifiers(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    for (line_start, line) in text.split_inclusive('\n').scan(0, |at, l| {
        let start = *at;
        *at += l.len();
        Some((start, l))
    }) {
        let code = line.split("//").next().unwrap_or("");
        let mut start = None;
        for (i, c) in code.char_indices().chain([(code.len(), ' ')]) {
            let word = c.is_ascii_alphanumeric() || c == '_';
            match (start, word) {
                (None, true) => start = Some(i),
                (Some(s), false) => {
                    let w = &code[s..i];
                    if w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                        out.push((line_start + s, w));
                    }
                    start = None;
                }
                _ => {}
            }
        }
    }
    out
}

/// Over every sample and test program: go-to-definition on each identifier
/// lands on a definition spelled the same (in whichever file it is), and
/// hover answers without an error.
#[test]
fn definitions_are_spelled_like_their_uses_in_every_program() {
    let root = crate::common::repo_root();
    let mut files = Vec::new();
    for dir in ["samples", "samples/common", "tests/valid", "tests/ui"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            if e.path().extension().is_some_and(|x| x == "kdsl") {
                files.push(e.path());
            }
        }
    }
    files.sort();
    assert!(files.len() > 10, "found the programs: {files:?}");
    let (mut c, _) = Client::initialized(None);
    let mut resolved = 0;
    for path in &files {
        // The position arithmetic below knows `\n` lines of UTF-8 text; the
        // UI tests of other encodings and line ends are left out.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if text.contains('\r') {
            continue;
        }
        let uri = file_uri(path);
        c.open(&uri, &text);
        for (at, word) in identifiers(&text) {
            let line = text[..at].matches('\n').count();
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let character = text[line_start..at].encode_utf16().count();
            let position = json!({ "line": line, "character": character });
            let def = c.request(
                "textDocument/definition",
                json!({ "textDocument": { "uri": uri }, "position": position }),
            );
            assert!(def.get("error").is_none(), "{}: {def}", path.display());
            if def["result"].is_object() {
                let target_uri = def["result"]["uri"].as_str().expect("uri");
                let target = std::fs::read_to_string(target_uri.trim_start_matches("file://"))
                    .expect("definition's file");
                let r = &def["result"]["range"];
                let spelled =
                    &target[offset_of(&target, &r["start"])..offset_of(&target, &r["end"])];
                assert_eq!(
                    spelled,
                    word,
                    "{}:{}: definition of `{word}` at {def}",
                    path.display(),
                    line + 1
                );
                resolved += 1;
            }
            let hover = c.request(
                "textDocument/hover",
                json!({ "textDocument": { "uri": uri }, "position": position }),
            );
            assert!(hover.get("error").is_none(), "{}: {hover}", path.display());
        }
        c.notify(
            "textDocument/didClose",
            json!({ "textDocument": { "uri": uri } }),
        );
        c.diagnostics_for(&uri);
    }
    assert!(resolved > 100, "only {resolved} definitions found");
    assert_eq!(c.shutdown(), 0);
}

/// The editor files the server ships with: the VS Code extension's JSON is
/// valid and wired together, both highlighters know every keyword, and the
/// problem matcher's pattern has the shape `kdslc --message-format short`
/// prints (the Vim errorformat is exercised for real in tests/it/lsp/nvim.rs).
#[test]
fn editor_files_are_consistent() {
    let root = crate::common::repo_root().join("editors");
    let json = |p: &str| -> Value {
        let text = std::fs::read_to_string(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{p}: {e}"))
    };
    let package = json("vscode/package.json");
    let contributes = &package["contributes"];
    assert_eq!(contributes["languages"][0]["id"], "kdsl");
    assert_eq!(contributes["languages"][0]["extensions"][0], ".kdsl");
    assert!(contributes["configuration"]["properties"]["kdsl.server.path"].is_object());
    assert!(package["activationEvents"]
        .as_array()
        .is_some_and(|a| a.contains(&json!("onLanguage:kdsl"))));
    let grammar_path = contributes["grammars"][0]["path"]
        .as_str()
        .expect("grammar path");
    let grammar = json(&format!("vscode/{}", grammar_path.trim_start_matches("./")));
    assert_eq!(
        grammar["scopeName"],
        contributes["grammars"][0]["scopeName"]
    );
    let config_path = contributes["languages"][0]["configuration"]
        .as_str()
        .expect("configuration");
    let config = json(&format!("vscode/{}", config_path.trim_start_matches("./")));
    assert_eq!(config["comments"]["lineComment"], "//");
    let extension =
        std::fs::read_to_string(root.join("vscode/src/extension.ts")).expect("extension.ts");
    assert!(
        extension.contains("kdsl.server") && extension.contains("\"lsp\""),
        "the client starts `kdslc lsp`"
    );

    // Every keyword of language.md §1, in both highlighters.
    let grammar_text = grammar.to_string();
    let vim_syntax = std::fs::read_to_string(root.join("vim/syntax/kdsl.vim")).expect("vim syntax");
    for kw in "kernel fn const let mut if else while for in step break continue return shared barrier global true false as import"
        .split(' ')
    {
        assert!(grammar_text.contains(kw), "TextMate grammar lacks `{kw}`");
        assert!(vim_syntax.split_whitespace().any(|w| w == kw), "Vim syntax lacks `{kw}`");
    }

    let matcher = &contributes["problemMatchers"][0];
    assert_eq!(matcher["name"], "kdslc");
    let pattern = &matcher["pattern"];
    assert_eq!(
        pattern["regexp"], r"^(.+?):(\d+):(\d+): (error|warning)\[([A-Z]\d{4})\]: (.*)$",
        "docs/editors.md shows this pattern"
    );
    let groups: Vec<i64> = ["file", "line", "column", "severity", "code", "message"]
        .iter()
        .map(|k| pattern[k].as_i64().unwrap_or_else(|| panic!("pattern.{k}")))
        .collect();
    assert_eq!(groups, [1, 2, 3, 4, 5, 6]);

    // What that pattern matches, checked by hand on real output.
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("bad.kdsl");
    std::fs::write(
        &file,
        MAIN.replace("import \"lib.kdsl\";", "")
            .replace("twice(thread_idx.x)", "thread_idx.x"),
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_kdslc"))
        .args(["check", "--message-format", "short"])
        .arg(&file)
        .output()
        .expect("run kdslc check");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let line = text
        .lines()
        .find(|l| l.contains("[E0301]"))
        .unwrap_or_else(|| panic!("no E0301 in {text}"));
    let rest = line
        .strip_prefix(&format!("{}:", file.display()))
        .unwrap_or_else(|| panic!("{line}"));
    let mut parts = rest.splitn(3, ':');
    let (l, c, tail) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
    assert!(
        l.is_some_and(|l| l.parse::<u32>().is_ok()) && c.is_some_and(|c| c.parse::<u32>().is_ok()),
        "{line}"
    );
    assert!(
        tail.starts_with(" error[E0301]: Can only await on CTA-local barriers"),
        "{line}"
    );
}

/// `initializationOptions: {"target": "sm_80"}` checks for that target.
#[test]
fn the_target_comes_from_initialization_options() {
    let p = project();
    let uri = file_uri(&p.main);
    let (mut c, _) = Client::initialized_with(None, json!({ "target": "sm_80" }));
    let diags = c.open(&uri, MAIN);
    assert!(
        diags
            .iter()
            .any(|d| d["code"] == "E0200"
                && d["message"].as_str().is_some_and(|m| m.contains("sm_80"))),
        "{diags:#?}"
    );
    assert_eq!(c.shutdown(), 0);

    // An unknown target is a logged warning, and the default is used.
    let (mut c, _) = Client::initialized_with(None, json!({ "target": "sm_7" }));
    let diags = c.open(&uri, MAIN);
    e0301(&diags);
    let log = c
        .pending
        .iter()
        .find(|m| m["method"] == "window/logMessage")
        .cloned();
    assert!(log.is_some_and(|m| m["params"]["message"]
        .as_str()
        .is_some_and(|t| t.contains("sm_7"))));
    assert_eq!(c.shutdown(), 0);
}

/// Diagnostics of a program with imports: an import cycle shows in the
/// document with the other file's import as related information there; an
/// error wholly inside an imported file is left to that file.
#[test]
fn diagnostics_across_imports() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = dir.path().join("a.kdsl");
    let b = dir.path().join("b.kdsl");
    let a_text = "import \"b.kdsl\";\nkernel k(out: global mut [u32]) { out[0] = f(); }\n";
    let b_text = "import \"a.kdsl\";\nfn f() -> u32 { 1.0 }\n";
    std::fs::write(&a, a_text).expect("write a");
    std::fs::write(&b, b_text).expect("write b");
    let (mut c, _) = Client::initialized(None);

    let diags = c.open(&file_uri(&a), a_text);
    let cycle = diags
        .iter()
        .find(|d| d["code"] == "E0131")
        .unwrap_or_else(|| panic!("{diags:#?}"));
    assert_eq!(cycle["range"], range(a_text, "\"b.kdsl\"", 0, Enc::Utf16));
    let related = cycle["relatedInformation"]
        .as_array()
        .expect("related information");
    assert!(
        related.iter().any(|r| r["location"]["uri"] == file_uri(&b)
            && r["location"]["range"] == range(b_text, "\"a.kdsl\"", 0, Enc::Utf16)),
        "{related:#?}"
    );
    assert!(
        diags.iter().all(|d| d["code"] != "E0110"),
        "b's own error stays in b: {diags:#?}"
    );

    // Opened itself, b shows its error.
    let diags = c.open(&file_uri(&b), b_text);
    let e = diags
        .iter()
        .find(|d| d["code"] == "E0110")
        .unwrap_or_else(|| panic!("{diags:#?}"));
    assert_eq!(e["range"], range(b_text, "1.0", 0, Enc::Utf16));
    assert_eq!(c.shutdown(), 0);
}

/// An imported file that is not UTF-8 cannot be opened as a document of
/// its own (an editor shows it decoded), so its E0004 shows in every
/// document that leads to it: at the import of it, or at the import of the
/// file that imports it, with the bad byte as related information.
#[test]
fn an_import_that_is_not_utf8_shows_at_the_import() {
    let dir = tempfile::tempdir().expect("temp dir");
    let main = dir.path().join("main.kdsl");
    let mid = dir.path().join("mid.kdsl");
    let bad = dir.path().join("latin1.kdsl");
    std::fs::write(&bad, b"// caf\xe9\nfn g() -> u32 { 2 }\n").expect("write latin1");
    let mid_text = "import \"latin1.kdsl\";\nfn f() -> u32 { 1 }\n";
    std::fs::write(&mid, mid_text).expect("write mid");
    let text = "import \"mid.kdsl\";\nimport \"latin1.kdsl\";\n\
                kernel k(out: global mut [u32]) { out[0] = f() + g(); }\n";
    let (mut c, _) = Client::initialized(None);
    let diags = c.open(&file_uri(&main), text);
    let e0004: Vec<&Value> = diags.iter().filter(|d| d["code"] == "E0004").collect();
    // `latin1.kdsl` is loaded once, through `mid.kdsl`: its one E0004
    // shows at main's import of mid.
    assert_eq!(e0004.len(), 1, "{diags:#?}");
    let d = e0004[0];
    assert_eq!(
        d["range"],
        range(text, "\"mid.kdsl\"", 0, Enc::Utf16),
        "{d:#?}"
    );
    assert!(
        d["message"]
            .as_str()
            .unwrap_or("")
            .contains("not valid UTF-8"),
        "{d:#?}"
    );
    let related = d["relatedInformation"]
        .as_array()
        .expect("related information");
    assert!(
        related
            .iter()
            .any(|r| r["location"]["uri"] == file_uri(&bad)
                && r["location"]["range"]["start"] == json!({ "line": 0, "character": 6 })),
        "the bad byte: {related:#?}"
    );
    assert!(
        related
            .iter()
            .any(|r| r["location"]["uri"] == file_uri(&mid)
                && r["location"]["range"] == range(mid_text, "\"latin1.kdsl\"", 0, Enc::Utf16)),
        "mid's import: {related:#?}"
    );
    // Opened itself, mid shows it at its own import.
    let diags = c.open(&file_uri(&mid), mid_text);
    let d = diags
        .iter()
        .find(|d| d["code"] == "E0004")
        .unwrap_or_else(|| panic!("{diags:#?}"));
    assert_eq!(
        d["range"],
        range(mid_text, "\"latin1.kdsl\"", 0, Enc::Utf16)
    );
    assert_eq!(c.shutdown(), 0);
}

/// The server publishes exactly what the compiler reports, from its one
/// compilation: an E0301 beside a type error in another statement (the
/// barrier pass runs on what checked), and hover still works in the
/// document with errors, on barrier operations too.
#[test]
fn one_pipeline_reports_every_error_and_hovers_in_a_broken_file() {
    const SRC: &str = "kernel k(out: global mut [f32]) block(128) cluster(2) {
    barrier ready: cluster(arrivals = 1);
    let bad: u32 = 1.5;
    ready.wait(0);
    ready.arrive_remote(1);
    ready.wait_cluster();
    out[0] = 1.0;
}
";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("broken.kdsl");
    std::fs::write(&path, SRC).expect("write");
    let uri = file_uri(&path);
    let (mut c, _) = Client::initialized(None);
    let diags = c.open(&uri, SRC);
    let codes: Vec<&str> = diags.iter().filter_map(|d| d["code"].as_str()).collect();
    let opts = kdsl::Options {
        check_only: true,
        ..kdsl::Options::default()
    };
    let compiled = kdsl::compile_str(&path.display().to_string(), SRC, &opts);
    let want: Vec<&str> = compiled.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(want, ["E0110", "E0301"]);
    assert_eq!(codes, want, "{diags:#?}");

    let hover = |c: &mut Client, needle: &str, extra: usize| {
        let h = c.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": pos(SRC, needle, 0, extra, Enc::Utf16) }),
        );
        h["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_else(|| panic!("{h}"))
            .to_string()
    };
    let v = hover(&mut c, "wait_cluster()", 3);
    assert_contains(
        &v,
        &[
            "b.wait_cluster()",
            "acquire at cluster scope",
            "Parity: tracked",
        ],
    );
    let v = hover(&mut c, "wait(0)", 1);
    assert_contains(&v, &["b.wait(parity: u32)", "Parity: as written"]);
    // The statement after the type error is in the partial IR.
    let v = hover(&mut c, "out[0]", 1);
    assert!(v.contains("out: global mut [f32]"), "{v}");
    assert_eq!(c.shutdown(), 0);
}

/// An import of a FIFO, `/dev/stdin` or `/dev/zero` neither hangs nor
/// exhausts the server: each is E0130 at once, and the server answers the
/// next request. Lines that end in a lone `\r` count as lines, as LSP says.
#[cfg(unix)]
#[test]
fn special_file_imports_do_not_wedge_the_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("pipe.kdsl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let main = dir.path().join("main.kdsl");
    let text =
        "import \"pipe.kdsl\";\rimport \"/dev/stdin\";\rimport \"/dev/zero\";\rkernel k() {}\r";
    let (mut c, _) = Client::initialized(None);
    let diags = c.open(&file_uri(&main), text);
    let e0130: Vec<&Value> = diags.iter().filter(|d| d["code"] == "E0130").collect();
    assert_eq!(e0130.len(), 3, "{diags:#?}");
    for (line, d) in e0130.iter().enumerate() {
        assert_eq!(d["range"]["start"]["line"], line, "{d:#?}");
        assert!(
            d["message"]
                .as_str()
                .unwrap_or("")
                .contains("not a regular file"),
            "{d:#?}"
        );
    }
    assert_eq!(c.shutdown(), 0);
}

/// A use of `e` in a kernel, with the cursor's needle: a call (whatever
/// its arguments: the checker records the name before it checks them), a
/// value, or an operation on a barrier group or named barrier.
fn builtin_use(e: &kdsl::check::builtins::Entry) -> (String, String) {
    use kdsl::check::builtins::Form;
    let n = e.name;
    let (decl, stmt, needle) = match e.form {
        Form::Function => ("", format!("let _x = {n}();"), format!("{n}(")),
        Form::Scalar => ("", format!("let _x = {n};"), format!("= {n}")),
        Form::Vector => ("", format!("let _x = {n}.x;"), format!("{n}.x")),
        Form::BarrierMethod => (
            "barrier b: cta(arrivals = 1);",
            format!("b.{n}();"),
            format!(".{n}("),
        ),
        Form::NamedMethod => (
            "barrier nb: named(threads = 64);",
            format!("nb.{n}();"),
            format!(".{n}("),
        ),
    };
    let text = format!(
        "kernel k(out: global mut [u32]) block(64) cluster(2) {{\n    {decl}\n    {stmt}\n}}\n"
    );
    let needle = match e.form {
        Form::Scalar => needle.trim_start_matches("= ").to_string(),
        _ => needle,
    };
    (text, needle)
}

/// Hover over any built-in shows the table's signature and doc line, and
/// completion offers every built-in function and value where an
/// expression may start, every operation after a barrier group's `.`,
/// each with the table's signature.
#[test]
fn hover_and_completion_come_from_the_table_of_built_ins() {
    use kdsl::check::builtins::{Form, BUILTINS};
    let (mut c, init) = Client::initialized(None);
    assert_eq!(
        init["capabilities"]["completionProvider"]["triggerCharacters"],
        json!(["."])
    );
    for (i, e) in BUILTINS.iter().enumerate() {
        let (text, needle) = builtin_use(e);
        let uri = format!("file:///builtin{i}.kdsl");
        c.open(&uri, &text);
        let hover = c.request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": pos(&text, &needle, 0, needle.find(e.name).unwrap_or(0) + 1, Enc::Utf16) }),
        );
        let value = hover["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_else(|| panic!("no hover on `{}` in\n{text}\n{hover}", e.name));
        let sig = e.signature();
        let first_form = sig.split(" or ").next().unwrap_or(&sig);
        assert!(
            value.contains(first_form) && value.contains(e.doc),
            "hover on `{}` shows\n{value}",
            e.name
        );
    }
    // Completion at the start of a statement: every function and value.
    let text = "kernel k(out: global mut [u32]) block(64) {\n    barrier ready: cta(arrivals = 1);\n    let x = out[0];\n    \n    ready.\n}\n";
    let uri = "file:///complete.kdsl";
    c.open(uri, text);
    let complete = |c: &mut Client, needle: &str, extra: usize| -> Vec<Value> {
        let r = c.request(
            "textDocument/completion",
            json!({ "textDocument": { "uri": uri }, "position": pos(text, needle, 0, extra, Enc::Utf16) }),
        );
        r["result"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("{r}"))
    };
    let items = complete(&mut c, "    \n", 4);
    let label = |i: &Value| i["label"].as_str().unwrap_or("").to_string();
    for e in BUILTINS
        .iter()
        .filter(|e| matches!(e.form, Form::Function | Form::Scalar | Form::Vector))
    {
        let item = items
            .iter()
            .find(|i| label(i) == e.name)
            .unwrap_or_else(|| panic!("completion lacks `{}`", e.name));
        assert_eq!(item["detail"], json!(e.signature()), "`{}`", e.name);
    }
    assert!(items.iter().any(|i| label(i) == "x"), "the local `x`");
    assert!(
        items.iter().any(|i| label(i) == "out"),
        "the parameter `out`"
    );
    assert!(
        !items.iter().any(|i| label(i) == "wait"),
        "no method at a statement's start"
    );
    // After `ready.`: the barrier operations, and nothing else.
    let items = complete(&mut c, "ready.\n", 6);
    let got: std::collections::BTreeSet<String> = items.iter().map(label).collect();
    let want: std::collections::BTreeSet<String> = BUILTINS
        .iter()
        .filter(|e| e.form == Form::BarrierMethod)
        .map(|e| e.name.to_string())
        .collect();
    assert_eq!(got, want);
    // A prefix narrows the list.
    let text2 = "kernel k(out: global mut [u32]) block(64) {\n    out[0] = shfl_\n}\n";
    c.open("file:///prefix.kdsl", text2);
    let r = c.request(
        "textDocument/completion",
        json!({ "textDocument": { "uri": "file:///prefix.kdsl" }, "position": pos(text2, "shfl_", 0, 5, Enc::Utf16) }),
    );
    let got: Vec<String> = r["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(label)
        .collect();
    assert_eq!(got, ["shfl_down", "shfl_up", "shfl_xor", "shfl_idx"]);
    assert_eq!(c.shutdown(), 0);
}

/// A response to a message the server could not read: JSON-RPC's error
/// `code`, with a `null` id.
fn check_rejected(r: &Value, code: i64) {
    assert_eq!(r["id"], Value::Null, "{r}");
    assert_eq!(r["error"]["code"], code, "{r}");
}

/// Whatever a client writes, the server answers what it cannot read per
/// JSON-RPC (-32700 for what is not JSON, -32600 for what is no message;
/// the id when there is one, else null) and reads on: a JSON syntax error,
/// a header block without `Content-Length`, a malformed header, a length of
/// 4·10^9 with 1,000 bytes behind it (not allocated), a lone surrogate in a
/// document's text (read as U+FFFD). Nothing of it reaches stderr.
#[test]
fn malformed_messages_are_answered_and_the_server_reads_on() {
    let p = project();
    let uri = file_uri(&p.main);
    let (mut c, _) = Client::initialized(None);
    let alive = |c: &mut Client| {
        let r = c.request("kdsl/unknown", json!({}));
        assert_eq!(r["error"]["code"], -32601, "{r}");
    };

    c.send_raw(b"Content-Length: 9\r\n\r\n{garbage}");
    check_rejected(&c.next_response("a parse error"), -32700);
    alive(&mut c);

    c.send_raw(b"Content-Type: application/json\r\n\r\n{\"secret\": \"kernel text\"}");
    check_rejected(&c.next_response("no Content-Length"), -32700);
    alive(&mut c);

    c.send_raw(b"Content-Length 12\r\n\r\n");
    check_rejected(&c.next_response("a malformed header"), -32700);
    alive(&mut c);

    let mut huge = b"Content-Length: 4000000000\r\n\r\n".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 1000));
    c.send_raw(&huge);
    let r = c.next_response("a message too large");
    check_rejected(&r, -32600);
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("4000000000 bytes")),
        "{r}"
    );
    alive(&mut c);
    let shown = c
        .pending
        .iter()
        .any(|m| m["method"] == "window/showMessage");
    assert!(shown, "the user is told: {:#?}", c.pending);

    // Valid JSON that is no message; an invalid one with an id.
    c.send(&json!([1, 2]));
    check_rejected(&c.next_response("a batch"), -32600);
    c.send(&json!({ "jsonrpc": "2.0", "id": 77, "method": 5 }));
    let r = c.next_response("a bad method");
    assert_eq!(
        (&r["id"], &r["error"]["code"]),
        (&json!(77), &json!(-32600))
    );

    // A lone surrogate in a document: the text is checked with U+FFFD in
    // its place, and positions after it stay where the client sees them.
    let body = json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": { "uri": uri, "languageId": "kdsl", "version": 1,
                          "text": format!("// LONE lone\n{MAIN}") } } })
    .to_string()
    .replace("LONE", "\\ud800");
    c.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    let diags = c.diagnostics_for(&uri);
    let d = e0301(&diags);
    let line = MAIN.lines().position(|l| l.contains("ready.wait")).unwrap() + 1;
    assert_eq!(d["range"]["start"]["line"], line, "{d}");

    assert_eq!(c.shutdown(), 0);
    let err = c.final_stderr();
    assert!(!err.contains("kernel"), "stderr: {err}");
}

/// A client that sends requests before `initialize` gets
/// `ServerNotInitialized`; one that skips `initialized` is served all the
/// same, and the document never shows on stderr.
#[test]
fn a_client_that_skips_initialized_is_served() {
    let p = project();
    let uri = file_uri(&p.main);
    let mut c = Client::start();
    let r = c.request("textDocument/hover", json!({}));
    assert_eq!(r["error"]["code"], -32002, "{r}");
    let init = c.request("initialize", json!({ "capabilities": {} }));
    assert!(init["result"].is_object(), "{init}");
    let diags = c.open(&uri, MAIN);
    e0301(&diags);
    let h = c.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": pos(MAIN, "ready.wait", 0, 1, Enc::Utf16) }),
    );
    assert!(h["result"]["contents"].is_object(), "{h}");
    let again = c.request("initialize", json!({ "capabilities": {} }));
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert_eq!(c.shutdown(), 0);
    let err = c.final_stderr();
    assert!(err.is_empty(), "stderr: {err}");
}

/// A document that takes seconds to check (a debug build checks this one
/// in well over a second): 12,000 functions and a kernel.
fn slow_text() -> String {
    let mut text = String::new();
    for i in 0..12_000 {
        text.push_str(&format!(
            "fn f{i}(a: u32, b: u32) -> u32 {{ let c = a * {i}u32 + b; if c > 7 {{ c - 1 }} else {{ c + 2 }} }}\n"
        ));
    }
    text.push_str("kernel k(out: global mut [u32]) block(32) { out[0] = f1(1u32, 2u32); }\n");
    text
}

/// Checking runs off the protocol thread: while a slow document is being
/// checked, another document's requests are answered; a request about the
/// slow one can be cancelled, and is answered `RequestFailed` once it has
/// waited the budget; a newer text of the slow document is checked beside
/// the running check once that has run past the budget, so its diagnostics
/// come first; and `shutdown` is answered at once.
#[test]
fn a_slow_document_holds_up_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let slow = file_uri(&dir.path().join("slow.kdsl"));
    let small = file_uri(&dir.path().join("small.kdsl"));
    let (mut c, _) = Client::initialized_with(None, json!({ "analysisBudgetMs": 300 }));
    let is_slow = |m: &Value| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == slow.as_str()
    };
    let opened = Instant::now();
    c.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": slow, "languageId": "kdsl", "version": 1, "text": slow_text() } }),
    );
    let small_text = "kernel k(out: global mut [f32]) block(32) {\n    out[0] = 1.0;\n}\n";
    assert!(c.open(&small, small_text).is_empty());
    let h = c.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": small }, "position": pos(small_text, "out[0]", 0, 1, Enc::Utf16) }),
    );
    assert!(h["result"]["contents"].is_object(), "{h}");

    // A request about the slow document waits; cancelled, it is answered
    // RequestCancelled.
    let id = c.next_id;
    c.next_id += 1;
    c.send(
        &json!({ "jsonrpc": "2.0", "id": id, "method": "textDocument/documentSymbol",
                    "params": { "textDocument": { "uri": slow } } }),
    );
    c.notify("$/cancelRequest", json!({ "id": id }));
    let r = c.next_response("the cancelled request");
    assert_eq!(
        (&r["id"], &r["error"]["code"]),
        (&json!(id), &json!(-32800)),
        "{}",
        r["error"]
    );
    // Not cancelled, it is answered RequestFailed after the budget.
    let r = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": slow } }),
    );
    assert_eq!(r["error"]["code"], -32803, "{}", r["error"]);
    assert!(
        !c.pending.iter().any(is_slow),
        "the slow check finished before the budget ran out: make slow_text slower"
    );

    // A new text, once the slow check has run past the budget: checked at
    // once, beside it.
    std::thread::sleep(Duration::from_millis(300).saturating_sub(opened.elapsed()));
    let fixed = "kernel k() block(32) {\n    let x: u32 = 1.0;\n}\n";
    c.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": slow, "version": 2 }, "contentChanges": [{ "text": fixed }] }),
    );
    let first = loop {
        let m = c.recv("the slow document's diagnostics");
        if is_slow(&m) {
            break m;
        }
        c.pending.push(m);
    };
    assert_eq!(first["params"]["version"], 2, "{first}");
    let diags = first["params"]["diagnostics"]
        .as_array()
        .expect("diagnostics");
    assert!(diags.iter().any(|d| d["severity"] == 1), "{diags:#?}");
    let r = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": slow } }),
    );
    assert!(r["result"].is_array(), "{}", r["error"]);

    // The first check is still running, and does not hold up shutdown.
    let stop = Instant::now();
    assert_eq!(c.shutdown(), 0);
    assert!(
        stop.elapsed() < Duration::from_secs(5),
        "{:?}",
        stop.elapsed()
    );
}

/// A document larger than the compiler's 16 MiB limit for source files is
/// not checked (it would take minutes); the editor is told why.
#[test]
fn a_document_over_the_source_limit_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let uri = file_uri(&dir.path().join("huge.kdsl"));
    let (mut c, _) = Client::initialized(None);
    let mut text = "// ".to_string();
    text.push_str(&"x".repeat(16 << 20));
    let diags = c.open(&uri, &text);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let m = diags[0]["message"].as_str().unwrap_or_default();
    assert!(
        m.contains("does not check this document") && m.contains("16 MiB"),
        "{m}"
    );
    assert_eq!(c.shutdown(), 0);
}

/// One 262,144-character line of bad bytes: the server publishes the
/// capped list (the first 100, then "and N more") at once, and answers the
/// next request (it took 52 s, sending a quarter of a million).
#[test]
fn a_line_of_bad_bytes_gets_the_capped_list() {
    let dir = tempfile::tempdir().expect("temp dir");
    let uri = file_uri(&dir.path().join("flood.kdsl"));
    let text = format!(
        "kernel k(out: global mut [u32]) block(32) {{\n    {}\n}}\n",
        "@".repeat(1 << 18)
    );
    let (mut c, _) = Client::initialized(None);
    let diags = c.open(&uri, &text);
    assert_eq!(diags.len(), kdsl::diagnostics::cap::PER_CODE + 1);
    let last = diags.last().expect("the last");
    let more = format!(
        "and {} more errors with this code in this file",
        (1 << 18) - kdsl::diagnostics::cap::PER_CODE
    );
    assert!(
        last["message"]
            .as_str()
            .is_some_and(|m| m.starts_with(&more)),
        "{last:#?}"
    );
    assert_eq!(last["range"]["start"]["character"], 4 + 100);
    let hover = c.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 8 } }),
    );
    assert!(hover.get("result").is_some(), "{hover}");
    assert_eq!(c.shutdown(), 0);
}

/// A kernel with constants is shown as its defaults' instantiation: a
/// constant's use hovers with its value and leads to its declaration, in a
/// type too; completion and the outline list the constants; an error in
/// the kernel names the instantiation.
#[test]
fn kernel_constants_hover_define_and_outline() {
    const SRC: &str =
        "kernel k<const N: u32 = 64, const ELEM: type = f16>(x: global mut [ELEM]) block(N) {
    shared s: [ELEM; N];
    s[thread_idx.x] = x[thread_idx.x];
    x[thread_idx.x] = s[N - 1 - thread_idx.x];
    let bad: u32 = 1.5;
}
";
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("consts.kdsl");
    std::fs::write(&path, SRC).expect("write");
    let uri = file_uri(&path);
    let (mut c, _) = Client::initialized(None);
    let diags = c.open(&uri, SRC);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert_eq!(diags[0]["code"], "E0110");
    let message = diags[0]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("in instantiation `k` with N = 64, ELEM = f16"),
        "{message}"
    );
    let at = |needle: &str, nth: usize| pos(SRC, needle, nth, 0, Enc::Utf16);
    let hover = c.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": at("N - 1", 0) }),
    );
    let value = hover["result"]["contents"]["value"].as_str().unwrap_or("");
    assert!(value.contains("const N: u32 = 64"), "{hover}");
    for (needle, nth) in [("N - 1", 0), ("ELEM; N", 0), ("N]", 0)] {
        let def = c.request(
            "textDocument/definition",
            json!({ "textDocument": { "uri": uri }, "position": at(needle, nth) }),
        );
        let want = if needle.starts_with("ELEM") {
            range(SRC, "ELEM", 0, Enc::Utf16)
        } else {
            range(SRC, "N", 0, Enc::Utf16)
        };
        assert_eq!(def["result"]["range"], want, "{needle}: {def}");
    }
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({ "textDocument": { "uri": uri } }),
    );
    let children: Vec<&str> = symbols["result"][0]["children"]
        .as_array()
        .expect("children")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(children, ["N", "ELEM", "x", "s"], "{symbols}");
    let completion = c.request(
        "textDocument/completion",
        json!({ "textDocument": { "uri": uri }, "position": pos(SRC, "N - 1", 0, 1, Enc::Utf16) }),
    );
    let n = completion["result"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["label"] == "N")
        .unwrap_or_else(|| panic!("{completion}"));
    assert_eq!(n["detail"], "N: u32 = 64");
    assert_eq!(c.shutdown(), 0);
}
