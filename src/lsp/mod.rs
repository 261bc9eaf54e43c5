//! `kdslc lsp`: a language server over stdin/stdout (LSP 3.17).
//!
//! Each open document is compiled (check only, no PTX) when it is opened,
//! changed or saved, with the document's own path as the root so imports
//! resolve from disk; every feature then reads that [`analysis::Analysis`].
//!
//! It must outlive any client and any file a user can type:
//! - the wire is read by [`transport`], which bounds every message and
//!   answers a malformed one (JSON-RPC's parse and invalid-request errors)
//!   without ending the connection;
//! - the protocol loop ([`server`]) handles one message at a time and never
//!   compiles: each document is checked on a thread of its own ([`jobs`]),
//!   requests about a document wait (cancellably, for a bounded time) for
//!   the analysis of the text they were sent against, and a document whose
//!   check runs long holds up nothing else;
//! - every handler runs under `catch_unwind`: a request whose handler
//!   panicked gets an error response, a document whose compile panicked
//!   gets no diagnostics, and unknown messages are answered
//!   (`MethodNotFound`) or ignored;
//! - nothing a client sends is ever written to stderr.

mod analysis;
mod code_action;
mod completion;
mod definition;
mod diagnostics;
mod documents;
mod hover;
mod jobs;
pub mod position;
mod server;
mod symbols;
pub mod transport;
pub mod uri;
mod walk;

use crate::target::Target;
use analysis::Analysis;
use lsp_server::{Connection, ErrorCode, Message, RequestId, Response};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest,
    Request as _,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, HoverProviderCapability,
    InitializeParams, InitializeResult, OneOf, SaveOptions, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions,
};
use position::Encoding;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::time::Duration;

/// Runs the server on stdin/stdout until the client says `exit`. Returns the
/// process exit status: 0 after a `shutdown` request, 1 when the client
/// exits (or goes away) without one, as the protocol asks.
pub fn run_stdio() -> i32 {
    let (connection, io_threads) = match transport::stdio() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("kdslc lsp: cannot start: {e}");
            return 1;
        }
    };
    // The language server's walks recurse over the trees it holds, and a
    // stack overflow aborts the process rather than unwinding, so the
    // protocol loop runs on a thread with the compiler's big stack (only
    // reserved, not touched, until needed).
    let server = crate::stack::spawn("kdslc-lsp", move || {
        let status = serve(&connection);
        // Dropping the connection closes the writer's channel so its
        // thread can flush and end.
        drop(connection);
        status
    });
    let status = match server.map(std::thread::JoinHandle::join) {
        Ok(Ok(status)) => status,
        Ok(Err(_)) | Err(_) => {
            eprintln!("kdslc lsp: the server thread failed");
            1
        }
    };
    io_threads.join();
    status
}

/// Speaks the protocol on `connection`: the initialize handshake, then the
/// main loop. Returns the exit status (see [`run_stdio`]).
pub fn serve(connection: &Connection) -> i32 {
    let Some((id, params)) = handshake(connection) else {
        return 1;
    };
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let encoding = Encoding::negotiate(
        params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref()),
    );
    let (settings, problems) = Settings::read(params.initialization_options.as_ref());
    let result = InitializeResult {
        capabilities: capabilities(encoding),
        server_info: Some(ServerInfo {
            name: "kdslc".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    let result = serde_json::to_value(result).unwrap_or(Value::Null);
    // `initialized` is not waited for: a client that skips it is served
    // all the same (the notification is ignored when it comes).
    let _ = connection.sender.send(Response::new_ok(id, result).into());
    let mut server = server::Server::new(connection, encoding, settings);
    for problem in problems {
        server.log(lsp_types::MessageType::WARNING, problem);
    }
    server.main_loop()
}

/// Waits for `initialize`, answering every other request with
/// `ServerNotInitialized` and dropping notifications, as the protocol
/// says; `None` when the client exits (or goes away) first.
fn handshake(connection: &Connection) -> Option<(RequestId, Value)> {
    loop {
        match connection.receiver.recv().ok()? {
            Message::Request(req) if req.method == "initialize" => {
                return Some((req.id, req.params))
            }
            Message::Request(req) => {
                let e = error(
                    req.id,
                    ErrorCode::ServerNotInitialized,
                    "kdslc lsp: the server is not initialized yet: send `initialize` first",
                );
                let _ = connection.sender.send(e);
            }
            Message::Notification(n) if n.method == "exit" => return None,
            Message::Notification(_) | Message::Response(_) => {}
        }
    }
}

/// What the client sets in `initializationOptions`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// `"target": "sm_80"` (any `--target` name; default sm_90, as on the
    /// command line).
    pub target: Target,
    /// `"analysisBudgetMs": 2000`: how long a request waits for its
    /// document's analysis before it is answered `RequestFailed`, and how
    /// long a check may run before a newer text of the same document is
    /// checked beside it.
    pub budget: Duration,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            target: Target::default(),
            budget: Duration::from_millis(2000),
        }
    }
}

impl Settings {
    /// The settings, and a warning for each option that is not understood
    /// (its default is used instead).
    fn read(options: Option<&Value>) -> (Settings, Vec<String>) {
        let mut s = Settings::default();
        let mut problems = Vec::new();
        let get = |key| options.and_then(|o| o.get(key));
        if let Some(value) = get("target") {
            match value.as_str().and_then(Target::from_name) {
                Some(t) => s.target = t,
                None => problems.push(format!(
                    "kdslc lsp: unknown target {value} in initializationOptions; checking for {}",
                    s.target.name()
                )),
            }
        }
        if let Some(value) = get("analysisBudgetMs") {
            match value.as_u64().filter(|&ms| ms <= 3_600_000) {
                Some(ms) => s.budget = Duration::from_millis(ms),
                None => problems.push(format!(
                    "kdslc lsp: analysisBudgetMs {value} in initializationOptions is not a number of \
                     milliseconds up to 3600000; using {}",
                    s.budget.as_millis()
                )),
            }
        }
        (s, problems)
    }
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: Some(encoding.kind()),
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(lsp_types::CompletionOptions {
            trigger_characters: Some(vec![".".into()]),
            ..lsp_types::CompletionOptions::default()
        }),
        definition_provider: Some(OneOf::Left(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

/// A request's answer, computed once its document's analysis is in
/// (`None`: the document is not open, or the compiler failed on it).
type Answer = Box<dyn FnOnce(Option<&Analysis>) -> Value>;

/// Decodes a request's parameters (or says why they do not decode).
type Route = fn(Value) -> Result<Answer, String>;

/// The requests the server answers, by method. Each is about one document
/// (its `textDocument.uri`) and is answered from that document's analysis:
/// a new kind of request is one entry here, and its capability above.
const REQUESTS: &[(&str, Route)] = &[
    (HoverRequest::METHOD, |p| {
        answer::<HoverRequest, _>(p, |a, p| {
            hover::hover(a, p.text_document_position_params.position)
        })
    }),
    (Completion::METHOD, |p| {
        answer::<Completion, _>(p, |a, p| {
            completion::completion(a, p.text_document_position.position)
        })
    }),
    (GotoDefinition::METHOD, |p| {
        answer::<GotoDefinition, _>(p, |a, p| {
            definition::definition(a, p.text_document_position_params.position)
        })
    }),
    (DocumentSymbolRequest::METHOD, |p| {
        answer::<DocumentSymbolRequest, _>(p, |a, _| {
            Some(lsp_types::DocumentSymbolResponse::Nested(
                symbols::document_symbols(a),
            ))
        })
    }),
    (CodeActionRequest::METHOD, |p| {
        answer::<CodeActionRequest, _>(p, |a, p| Some(code_action::code_actions(a, &p)))
    }),
];

/// Decodes `R`'s parameters now, and answers with `f`'s result later
/// (`null` when there is no analysis: simply nothing to show).
fn answer<R, T>(params: Value, f: fn(&Analysis, R::Params) -> Option<T>) -> Result<Answer, String>
where
    R: lsp_types::request::Request,
    R::Params: DeserializeOwned + 'static,
    T: serde::Serialize + 'static,
{
    let params: R::Params = serde_json::from_value(params).map_err(|e| e.to_string())?;
    Ok(Box::new(move |a| {
        a.and_then(|a| f(a, params))
            .and_then(|r| serde_json::to_value(r).ok())
            .unwrap_or(Value::Null)
    }))
}

fn error(id: RequestId, code: ErrorCode, message: &str) -> Message {
    Response::new_err(id, code as i32, message.to_string()).into()
}

/// Request kinds the server knows, for `MethodNotFound`.
fn route(method: &str) -> Option<Route> {
    REQUESTS.iter().find(|(m, _)| *m == method).map(|&(_, r)| r)
}
