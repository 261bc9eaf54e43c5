//! `kdslc lsp`: a language server over stdin/stdout (LSP 3.17).
//!
//! Each open document is compiled (check only, no PTX) when it is opened,
//! changed or saved, with the document's own path as the root so imports
//! resolve from disk; every feature then reads that [`analysis::Analysis`].
//!
//! The server is one thread that handles one message at a time. It must
//! outlive any file a user can type: every handler runs under
//! `catch_unwind`, a request whose handler panicked gets an error response,
//! a document whose compile panicked gets no diagnostics, and unknown
//! messages are answered (`MethodNotFound`) or ignored.

mod analysis;
mod code_action;
mod completion;
mod definition;
mod diagnostics;
mod hover;
pub mod position;
mod symbols;
pub mod uri;
mod walk;

use crate::target::Target;
use analysis::Analysis;
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    LogMessage, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{
    CodeActionRequest, Completion, DocumentSymbolRequest, GotoDefinition, HoverRequest,
    Request as _,
};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, HoverProviderCapability,
    InitializeParams, InitializeResult, OneOf, PublishDiagnosticsParams, SaveOptions,
    ServerCapabilities, ServerInfo, TextDocumentContentChangeEvent, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri,
};
use position::{Encoding, LineIndex};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs the server on stdin/stdout until the client says `exit`. Returns the
/// process exit status: 0 after a `shutdown` request, 1 when the client
/// exits (or goes away) without one, as the protocol asks.
pub fn run_stdio() -> i32 {
    let (connection, io_threads) = Connection::stdio();
    // The compiler's passes recurse over the syntax tree, and a stack
    // overflow aborts the process rather than unwinding, so the server
    // runs on a thread with a stack deep enough for absurdly nested input
    // (it is only reserved, not touched, until needed). Compiling,
    // answering and dropping old analyses all happen on that thread.
    let server = std::thread::Builder::new()
        .name("kdslc-lsp".to_string())
        .stack_size(SERVER_STACK)
        .spawn(move || {
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
    if let Err(e) = io_threads.join() {
        eprintln!("kdslc lsp: {e}");
    }
    status
}

/// The server thread's stack: 1 GiB of address space.
const SERVER_STACK: usize = 1 << 30;

/// Speaks the protocol on `connection`: the initialize handshake, then the
/// main loop.
pub fn serve(connection: &Connection) -> i32 {
    let (id, params) = match connection.initialize_start() {
        Ok(start) => start,
        Err(e) => {
            eprintln!("kdslc lsp: {e}");
            return 1;
        }
    };
    let params: InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let encoding = Encoding::negotiate(
        params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref()),
    );
    let (target, target_problem) = target_option(params.initialization_options.as_ref());
    let result = InitializeResult {
        capabilities: capabilities(encoding),
        server_info: Some(ServerInfo {
            name: "kdslc".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    let result = serde_json::to_value(result).unwrap_or(Value::Null);
    if let Err(e) = connection.initialize_finish(id, result) {
        eprintln!("kdslc lsp: {e}");
        return 1;
    }
    let mut server = Server {
        connection,
        encoding,
        target,
        documents: HashMap::new(),
        shutdown: false,
    };
    if let Some(problem) = target_problem {
        let params = lsp_types::LogMessageParams {
            typ: lsp_types::MessageType::WARNING,
            message: problem,
        };
        server.send(Notification::new(LogMessage::METHOD.to_string(), params).into());
    }
    server.main_loop()
}

/// The target to check for, from `initializationOptions: {"target": "sm_80"}`
/// (default sm_90, as on the command line), and a warning when the option
/// names no target we know.
fn target_option(options: Option<&Value>) -> (Target, Option<String>) {
    let Some(value) = options.and_then(|o| o.get("target")) else {
        return (Target::default(), None);
    };
    match value.as_str().and_then(Target::from_name) {
        Some(t) => (t, None),
        None => (
            Target::default(),
            Some(format!(
                "kdslc lsp: unknown target {value} in initializationOptions; checking for {}",
                Target::default().name()
            )),
        ),
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

struct Document {
    text: String,
    /// `None` when the compiler panicked on this text.
    analysis: Option<Analysis>,
}

struct Server<'c> {
    connection: &'c Connection,
    encoding: Encoding,
    target: Target,
    documents: HashMap<Uri, Document>,
    shutdown: bool,
}

impl Server<'_> {
    fn main_loop(&mut self) -> i32 {
        // Blocks until a message comes; the channel closes when stdin does.
        while let Ok(msg) = self.connection.receiver.recv() {
            match msg {
                Message::Request(req) => self.request(req),
                Message::Notification(n) if n.method == "exit" => {
                    return if self.shutdown { 0 } else { 1 }
                }
                Message::Notification(n) => self.notification(n),
                // We send no requests, so there are no responses to read.
                Message::Response(_) => {}
            }
        }
        if self.shutdown {
            0
        } else {
            1
        }
    }

    fn send(&self, msg: Message) {
        // A send fails only when the writer thread has gone (stdout closed);
        // the receive loop then ends on its own.
        let _ = self.connection.sender.send(msg);
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        if self.shutdown {
            self.send(error(
                id,
                ErrorCode::InvalidRequest,
                "the server is shutting down",
            ));
            return;
        }
        if req.method == "shutdown" {
            self.shutdown = true;
            self.send(Response::new_ok(id, ()).into());
            return;
        }
        let response = match catch_unwind(AssertUnwindSafe(|| self.dispatch(req))) {
            Ok(Some(r)) => r,
            Ok(None) => error(
                id,
                ErrorCode::MethodNotFound,
                "method not supported by kdslc",
            ),
            Err(_) => error(
                id,
                ErrorCode::InternalError,
                "kdslc lsp: internal error (please report it)",
            ),
        };
        self.send(response);
    }

    /// The response to a request, or `None` for a method we do not know.
    fn dispatch(&self, req: Request) -> Option<Message> {
        Some(match req.method.as_str() {
            HoverRequest::METHOD => self.on::<HoverRequest, _>(req, |a, p| {
                hover::hover(a, p.text_document_position_params.position)
            }),
            Completion::METHOD => self.on::<Completion, _>(req, |a, p| {
                completion::completion(a, p.text_document_position.position)
            }),
            GotoDefinition::METHOD => self.on::<GotoDefinition, _>(req, |a, p| {
                definition::definition(a, p.text_document_position_params.position)
            }),
            DocumentSymbolRequest::METHOD => self.on::<DocumentSymbolRequest, _>(req, |a, _| {
                Some(lsp_types::DocumentSymbolResponse::Nested(
                    symbols::document_symbols(a),
                ))
            }),
            CodeActionRequest::METHOD => {
                self.on::<CodeActionRequest, _>(req, |a, p| Some(code_action::code_actions(a, &p)))
            }
            _ => return None,
        })
    }

    /// Decodes a request's parameters, finds its document's analysis and
    /// answers with `f`'s result (`null` when the document is unknown or its
    /// analysis failed: there is simply nothing to show).
    fn on<R, T>(&self, req: Request, f: impl FnOnce(&Analysis, R::Params) -> Option<T>) -> Message
    where
        R: lsp_types::request::Request,
        R::Params: DeserializeOwned + HasDocument,
        T: serde::Serialize,
    {
        let params: R::Params = match serde_json::from_value(req.params) {
            Ok(p) => p,
            Err(e) => return error(req.id, ErrorCode::InvalidParams, &e.to_string()),
        };
        let analysis = self
            .documents
            .get(params.document())
            .and_then(|d| d.analysis.as_ref());
        let result = analysis.and_then(|a| f(a, params));
        Response::new_ok(req.id, result).into()
    }

    fn notification(&mut self, n: Notification) {
        // A panic here loses one update at worst; the next change re-checks.
        let _ = catch_unwind(AssertUnwindSafe(|| self.on_notification(n)));
    }

    fn on_notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Some(p) = params::<lsp_types::DidOpenTextDocumentParams>(n) {
                    self.update(p.text_document.uri, p.text_document.text);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Some(p) = params::<lsp_types::DidChangeTextDocumentParams>(n) {
                    let uri = p.text_document.uri;
                    let mut text = self
                        .documents
                        .get(&uri)
                        .map(|d| d.text.clone())
                        .unwrap_or_default();
                    for change in p.content_changes {
                        apply_change(&mut text, change, self.encoding);
                    }
                    self.update(uri, text);
                }
            }
            DidSaveTextDocument::METHOD => {
                // A saved file may be imported by other open documents:
                // check them all again against what is now on disk.
                let uris: Vec<Uri> = self.documents.keys().cloned().collect();
                for uri in uris {
                    if let Some(text) = self.documents.get(&uri).map(|d| d.text.clone()) {
                        self.update(uri, text);
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Some(p) = params::<lsp_types::DidCloseTextDocumentParams>(n) {
                    self.documents.remove(&p.text_document.uri);
                    self.publish(p.text_document.uri, Vec::new());
                }
            }
            // `initialized`, `$/cancelRequest`, `$/setTrace`, settings and
            // anything else: nothing to do.
            _ => {}
        }
    }

    /// Checks the document's new text and publishes its diagnostics.
    fn update(&mut self, uri: Uri, text: String) {
        let analysis = Analysis::run(&uri, &text, self.encoding, self.target);
        let diags = analysis
            .as_ref()
            .and_then(|a| catch_unwind(AssertUnwindSafe(|| diagnostics::for_document(a))).ok())
            .map(|ds| ds.into_iter().map(|(d, _)| d).collect());
        self.documents
            .insert(uri.clone(), Document { text, analysis });
        if let Some(diags) = diags {
            self.publish(uri, diags);
        }
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version: None,
        };
        self.send(Notification::new(PublishDiagnostics::METHOD.to_string(), params).into());
    }
}

/// A full-text change replaces the text; a ranged one (from a client that
/// sends them anyway) is applied in place.
fn apply_change(text: &mut String, change: TextDocumentContentChangeEvent, enc: Encoding) {
    match change.range {
        None => *text = change.text,
        Some(range) => {
            let index = LineIndex::new(text);
            let start = index.offset(text, range.start, enc);
            let end = index.offset(text, range.end, enc).max(start);
            if text.is_char_boundary(start) && text.is_char_boundary(end) {
                text.replace_range(start..end, &change.text);
            }
        }
    }
}

fn params<P: DeserializeOwned>(n: Notification) -> Option<P> {
    serde_json::from_value(n.params).ok()
}

fn error(id: RequestId, code: ErrorCode, message: &str) -> Message {
    Response::new_err(id, code as i32, message.to_string()).into()
}

/// Request parameters that name a document.
trait HasDocument {
    fn document(&self) -> &Uri;
}

impl HasDocument for lsp_types::HoverParams {
    fn document(&self) -> &Uri {
        &self.text_document_position_params.text_document.uri
    }
}

impl HasDocument for lsp_types::CompletionParams {
    fn document(&self) -> &Uri {
        &self.text_document_position.text_document.uri
    }
}

impl HasDocument for lsp_types::GotoDefinitionParams {
    fn document(&self) -> &Uri {
        &self.text_document_position_params.text_document.uri
    }
}

impl HasDocument for lsp_types::DocumentSymbolParams {
    fn document(&self) -> &Uri {
        &self.text_document.uri
    }
}

impl HasDocument for lsp_types::CodeActionParams {
    fn document(&self) -> &Uri {
        &self.text_document.uri
    }
}
