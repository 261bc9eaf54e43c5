//! The protocol loop: one thread that reads the client's messages, keeps
//! the documents, starts their analyses ([`jobs`](super::jobs)) and
//! answers requests. It never compiles, so it always answers within a
//! message's handling time.
//!
//! A request about a document waits until the analysis of the text it was
//! sent against is in (answering sooner could give positions in an older
//! text), at most the [budget](super::Settings::budget); then it gets
//! `RequestFailed`. A `$/cancelRequest` answers a waiting request
//! `RequestCancelled`. A document's next text is checked when its running
//! check ends, or beside it once that one has run past the budget (it is
//! left to finish: its result is used if nothing newer has come in). At most
//! [`MAX_JOBS`] checks run at once, and at most two per document.

use super::analysis::Analysis;
use super::documents::Document;
use super::jobs::{Done, Job};
use super::position::Encoding;
use super::{error, route, Answer, Settings};
use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument,
    LogMessage, Notification as _, PublishDiagnostics,
};
use lsp_types::{MessageType, PublishDiagnosticsParams, Uri};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// The most checks running at once (long-running ones included).
pub const MAX_JOBS: usize = 4;

/// The most requests waiting for analyses; past it a request is answered
/// `RequestFailed` at once.
pub const MAX_WAITING: usize = 256;

/// A request waiting for its document's analysis.
struct Waiting {
    id: RequestId,
    uri: Uri,
    /// The document's generation when the request came.
    generation: u64,
    deadline: Instant,
    answer: Answer,
}

pub struct Server<'c> {
    connection: &'c Connection,
    encoding: Encoding,
    settings: Settings,
    documents: HashMap<Uri, Document>,
    /// Documents whose newest text waits for a check to start, in order.
    queue: VecDeque<Uri>,
    waiting: Vec<Waiting>,
    /// Checks running, for every document (closed ones included).
    running: usize,
    generations: u64,
    done_tx: Sender<Done>,
    done_rx: Receiver<Done>,
    /// Old analyses go to a thread of their own to be dropped: freeing a
    /// large document's trees takes as long as building them did.
    dropper: Option<std::sync::mpsc::Sender<Analysis>>,
    shutdown: bool,
}

enum Event {
    Message(Message),
    Done(Box<Done>),
    /// A deadline passed.
    Tick,
    /// The client went away.
    Closed,
}

impl<'c> Server<'c> {
    pub fn new(connection: &'c Connection, encoding: Encoding, settings: Settings) -> Server<'c> {
        let (done_tx, done_rx) = crossbeam_channel::unbounded();
        Server {
            connection,
            encoding,
            settings,
            documents: HashMap::new(),
            queue: VecDeque::new(),
            waiting: Vec::new(),
            running: 0,
            generations: 0,
            done_tx,
            done_rx,
            dropper: None,
            shutdown: false,
        }
    }

    /// Serves until `exit` (or the end of the client's stream); returns
    /// the exit status.
    pub fn main_loop(&mut self) -> i32 {
        loop {
            self.expire();
            self.schedule();
            // Every deadline left is in the future; without one, wake now
            // and then anyway.
            let wait = self.next_deadline().map_or(Duration::from_secs(3600), |d| {
                d.saturating_duration_since(Instant::now())
            });
            let event = crossbeam_channel::select! {
                recv(self.connection.receiver) -> m => m.map_or(Event::Closed, Event::Message),
                recv(self.done_rx) -> d => d.map_or(Event::Tick, |d| Event::Done(Box::new(d))),
                default(wait) => Event::Tick,
            };
            match event {
                Event::Message(Message::Request(req)) => self.request(req),
                Event::Message(Message::Notification(n)) if n.method == "exit" => {
                    return self.status()
                }
                Event::Message(Message::Notification(n)) => {
                    // A panic here loses one update at worst; the next
                    // change checks again.
                    let _ = catch_unwind(AssertUnwindSafe(|| self.notification(n)));
                }
                // We send no requests, so there are no responses to read.
                Event::Message(Message::Response(_)) | Event::Tick => {}
                Event::Done(done) => self.finished(*done),
                Event::Closed => return self.status(),
            }
        }
    }

    fn status(&self) -> i32 {
        if self.shutdown {
            0
        } else {
            1
        }
    }

    fn send(&self, msg: Message) {
        // A send fails only when the writer has gone (stdout closed); the
        // receive loop then ends on its own.
        let _ = self.connection.sender.send(msg);
    }

    pub fn log(&self, typ: MessageType, message: String) {
        let params = lsp_types::LogMessageParams { typ, message };
        self.send(Notification::new(LogMessage::METHOD.to_string(), params).into());
    }

    fn request(&mut self, req: Request) {
        let id = req.id;
        if self.shutdown {
            return self.send(error(
                id,
                ErrorCode::InvalidRequest,
                "the server is shutting down",
            ));
        }
        match req.method.as_str() {
            "shutdown" => {
                self.shutdown = true;
                for w in std::mem::take(&mut self.waiting) {
                    self.send(error(
                        w.id,
                        ErrorCode::RequestFailed,
                        "the server is shutting down",
                    ));
                }
                return self.send(Response::new_ok(id, ()).into());
            }
            "initialize" => {
                return self.send(error(
                    id,
                    ErrorCode::InvalidRequest,
                    "the server is already initialized",
                ))
            }
            _ => {}
        }
        let Some(route) = route(&req.method) else {
            return self.send(error(
                id,
                ErrorCode::MethodNotFound,
                "method not supported by kdslc",
            ));
        };
        let uri = req
            .params
            .pointer("/textDocument/uri")
            .and_then(Value::as_str)
            .and_then(|s| s.parse::<Uri>().ok());
        let answer = match catch_unwind(AssertUnwindSafe(|| route(req.params))) {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => return self.send(error(id, ErrorCode::InvalidParams, &e)),
            Err(_) => return self.internal_error(id),
        };
        let doc = uri.as_ref().and_then(|u| self.documents.get(u));
        match (uri.clone(), doc) {
            (Some(uri), Some(doc)) if doc.analysed < doc.generation => {
                if self.waiting.len() >= MAX_WAITING {
                    return self.send(error(
                        id,
                        ErrorCode::RequestFailed,
                        "kdslc lsp: too many requests are waiting for their documents' analyses",
                    ));
                }
                self.waiting.push(Waiting {
                    id,
                    uri,
                    generation: doc.generation,
                    deadline: Instant::now() + self.settings.budget,
                    answer,
                });
            }
            (_, doc) => self.reply(id, answer, doc.and_then(|d| d.analysis.as_ref())),
        }
    }

    fn reply(&self, id: RequestId, answer: Answer, analysis: Option<&Analysis>) {
        match catch_unwind(AssertUnwindSafe(|| answer(analysis))) {
            Ok(result) => self.send(Response::new_ok(id, result).into()),
            Err(_) => self.internal_error(id),
        }
    }

    fn internal_error(&self, id: RequestId) {
        self.send(error(
            id,
            ErrorCode::InternalError,
            "kdslc lsp: internal error (please report it)",
        ));
    }

    /// Answers the requests about `uri` whose analysis is in.
    fn answer_waiting(&mut self, uri: &Uri) {
        let doc = self.documents.get(uri);
        let analysed = doc.map_or(u64::MAX, |d| d.analysed);
        let (ready, rest) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w| &w.uri == uri && w.generation <= analysed);
        self.waiting = rest;
        for w in ready {
            self.reply(w.id, w.answer, doc.and_then(|d| d.analysis.as_ref()));
        }
    }

    /// Answers the requests that have waited past the budget.
    fn expire(&mut self) {
        let now = Instant::now();
        if self.waiting.iter().all(|w| w.deadline > now) {
            return;
        }
        let (late, rest) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|w: &Waiting| w.deadline <= now);
        self.waiting = rest;
        let message = format!(
            "kdslc lsp: this document's check has run for over {} ms; ask again when its \
             diagnostics arrive",
            self.settings.budget.as_millis()
        );
        for w in late {
            self.send(error(w.id, ErrorCode::RequestFailed, &message));
        }
    }

    fn cancel(&mut self, id: RequestId) {
        if let Some(i) = self.waiting.iter().position(|w| w.id == id) {
            let w = self.waiting.remove(i);
            self.send(error(w.id, ErrorCode::RequestCanceled, "cancelled"));
        }
    }

    /// The next moment something is due: a waiting request's deadline, or
    /// the moment a queued document's running check passes the budget.
    fn next_deadline(&self) -> Option<Instant> {
        let now = Instant::now();
        let requests = self.waiting.iter().map(|w| w.deadline);
        let checks = self
            .queue
            .iter()
            .filter(|_| self.running < MAX_JOBS)
            .filter_map(|u| match self.documents.get(u)?.running.as_slice() {
                [(_, started)] => Some(*started + self.settings.budget),
                _ => None,
            });
        requests.chain(checks).filter(|&d| d > now).min()
    }

    /// Starts the checks of queued documents that may start now.
    fn schedule(&mut self) {
        let mut i = 0;
        while i < self.queue.len() && self.running < MAX_JOBS {
            let Some(uri) = self.queue.get(i) else { break };
            let budget = self.settings.budget;
            let free = self.documents.get(uri).map(|d| match d.running.as_slice() {
                [] => true,
                [(_, started)] => started.elapsed() >= budget,
                _ => false,
            });
            match free {
                Some(false) => i += 1,
                Some(true) => {
                    if let Some(uri) = self.queue.remove(i) {
                        self.start(uri);
                    }
                }
                None => {
                    self.queue.remove(i);
                }
            }
        }
    }

    fn start(&mut self, uri: Uri) {
        let Some(doc) = self.documents.get_mut(&uri) else {
            return;
        };
        doc.queued = false;
        doc.running.push((doc.generation, Instant::now()));
        self.running += 1;
        let job = Job {
            uri,
            generation: doc.generation,
            version: doc.version,
            text: doc.text.clone(),
            encoding: self.encoding,
            target: self.settings.target,
        };
        job.start(&self.done_tx);
    }

    /// A check is done: its result becomes the document's analysis unless
    /// a newer one is in already (or the document was closed).
    fn finished(&mut self, done: Done) {
        self.running = self.running.saturating_sub(1);
        let Some(doc) = self.documents.get_mut(&done.uri) else {
            return;
        };
        // A job of an earlier opening of the same URI.
        let Some(i) = doc.running.iter().position(|&(g, _)| g == done.generation) else {
            return;
        };
        doc.running.remove(i);
        if done.generation <= doc.analysed {
            return;
        }
        doc.analysed = done.generation;
        let old = std::mem::replace(&mut doc.analysis, done.analysis);
        self.retire(old);
        if let Some(diagnostics) = done.diagnostics {
            self.publish(done.uri.clone(), diagnostics, done.version);
        }
        self.answer_waiting(&done.uri);
    }

    /// The document's text changed (or what it imports may have): check it
    /// again, or say why it is not checked.
    fn changed(&mut self, uri: Uri) {
        self.generations += 1;
        let generation = self.generations;
        let Some(doc) = self.documents.get_mut(&uri) else {
            return;
        };
        doc.generation = generation;
        if let Some(why) = doc.refusal() {
            let old = doc.analysis.take();
            doc.analysed = generation;
            let version = doc.version;
            self.retire(old);
            let d = lsp_types::Diagnostic {
                severity: Some(lsp_types::DiagnosticSeverity::ERROR),
                source: Some(super::diagnostics::SOURCE.to_string()),
                message: why,
                ..lsp_types::Diagnostic::default()
            };
            self.publish(uri.clone(), vec![d], version);
            self.answer_waiting(&uri);
            return;
        }
        if !doc.queued {
            doc.queued = true;
            self.queue.push_back(uri);
        }
    }

    fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Some(p) = params::<lsp_types::DidOpenTextDocumentParams>(n) {
                    let doc = p.text_document;
                    let mut fresh = Document::new(doc.text, Some(doc.version));
                    // The queue may hold the URI already (the old
                    // opening's results are dropped: see `finished`).
                    if let Some(old) = self.documents.remove(&doc.uri) {
                        fresh.queued = old.queued;
                        self.retire(old.analysis);
                    }
                    self.documents.insert(doc.uri.clone(), fresh);
                    self.changed(doc.uri);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Some(p) = params::<lsp_types::DidChangeTextDocumentParams>(n) {
                    let uri = p.text_document.uri;
                    let doc = self
                        .documents
                        .entry(uri.clone())
                        .or_insert_with(|| Document::new(String::new(), None));
                    doc.version = Some(p.text_document.version);
                    doc.apply(p.content_changes, self.encoding);
                    self.changed(uri);
                }
            }
            DidSaveTextDocument::METHOD => {
                // A saved file may be imported by other open documents:
                // check them all again against what is now on disk.
                let uris: Vec<Uri> = self.documents.keys().cloned().collect();
                for uri in uris {
                    self.changed(uri);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Some(p) = params::<lsp_types::DidCloseTextDocumentParams>(n) {
                    let uri = p.text_document.uri;
                    if let Some(old) = self.documents.remove(&uri) {
                        self.retire(old.analysis);
                    }
                    self.queue.retain(|u| u != &uri);
                    self.answer_waiting(&uri);
                    self.publish(uri, Vec::new(), None);
                }
            }
            "$/cancelRequest" => {
                if let Some(p) = params::<lsp_types::CancelParams>(n) {
                    self.cancel(match p.id {
                        lsp_types::NumberOrString::Number(n) => RequestId::from(n),
                        lsp_types::NumberOrString::String(s) => RequestId::from(s),
                    });
                }
            }
            // `initialized`, `$/setTrace`, settings and anything else:
            // nothing to do.
            _ => {}
        }
    }

    /// Drops an analysis off this thread (here, should no thread start).
    fn retire(&mut self, analysis: Option<Analysis>) {
        let Some(analysis) = analysis else { return };
        if self.dropper.is_none() {
            let (tx, rx) = std::sync::mpsc::channel::<Analysis>();
            let spawned = std::thread::Builder::new()
                .name("kdslc-lsp-drop".to_string())
                .spawn(move || rx.into_iter().for_each(drop));
            self.dropper = spawned.ok().map(|_| tx);
        }
        if let Some(dropper) = &self.dropper {
            // Should the thread have gone, the analysis comes back in the
            // error and is dropped here.
            let _ = dropper.send(analysis);
        }
    }

    fn publish(&self, uri: Uri, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams {
            uri,
            diagnostics,
            version,
        };
        self.send(Notification::new(PublishDiagnostics::METHOD.to_string(), params).into());
    }
}

fn params<P: DeserializeOwned>(n: Notification) -> Option<P> {
    serde_json::from_value(n.params).ok()
}
