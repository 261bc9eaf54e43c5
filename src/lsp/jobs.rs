//! Analyses off the server's thread. Each document's compilation runs on a
//! thread of its own and comes back to the server as a [`Done`]; meanwhile
//! the server goes on reading and answering. A compilation cannot be
//! stopped halfway, so one that runs long is left to finish while a newer
//! text starts beside it (see `Server::schedule`): a slow document holds up
//! neither the other documents nor its own next text.

use super::analysis::Analysis;
use super::diagnostics;
use super::position::Encoding;
use crate::target::Target;
use crossbeam_channel::Sender;
use lsp_types::Uri;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// One text of one document to check.
pub struct Job {
    pub uri: Uri,
    pub generation: u64,
    pub version: Option<i32>,
    pub text: String,
    pub encoding: Encoding,
    pub target: Target,
}

/// A finished job.
pub struct Done {
    pub uri: Uri,
    pub generation: u64,
    pub version: Option<i32>,
    /// `None` when the compiler panicked on the text.
    pub analysis: Option<Analysis>,
    /// The document's diagnostics, ready to publish (`None` if converting
    /// them panicked: the editor keeps the ones it has).
    pub diagnostics: Option<Vec<lsp_types::Diagnostic>>,
}

impl Job {
    fn run(self) -> Done {
        let analysis = Analysis::run(&self.uri, &self.text, self.encoding, self.target);
        let diagnostics = analysis.as_ref().and_then(|a| {
            catch_unwind(AssertUnwindSafe(|| {
                diagnostics::for_document(a)
                    .into_iter()
                    .map(|(d, _)| d)
                    .collect()
            }))
            .ok()
        });
        Done {
            uri: self.uri,
            generation: self.generation,
            version: self.version,
            analysis,
            diagnostics,
        }
    }

    /// Runs the job on a thread of its own (with the compiler's big stack),
    /// which sends the result on `done`. Should the system refuse a thread,
    /// the job runs here instead: slower to answer, never lost.
    pub fn start(self, done: &Sender<Done>) {
        let job = Arc::new(Mutex::new(Some(self)));
        let take = |job: &Mutex<Option<Job>>| job.lock().ok().and_then(|mut j| j.take());
        let (theirs, tx) = (Arc::clone(&job), done.clone());
        let spawned = crate::stack::spawn("kdslc-lsp-check", move || {
            if let Some(job) = take(&theirs) {
                // The server may have ended meanwhile: nobody to tell.
                let _ = tx.send(job.run());
            }
        });
        if spawned.is_err() {
            if let Some(job) = take(&job) {
                let _ = done.send(job.run());
            }
        }
    }
}
