//! One compilation of an open document, and the span ↔ position
//! arithmetic that every feature needs on it.

use super::position::{Encoding, LineIndex};
use super::uri;
use crate::ir;
use crate::span::{FileId, Span};
use crate::target::Target;
use crate::{compile_str, Compilation, Options};
use lsp_types::{Location, Position, Range, Uri};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The root file of every compilation (the document itself).
pub const ROOT: FileId = FileId(0);

/// Everything the features read comes from this one compilation: its
/// diagnostics, its name references and its IR (partial when the document
/// has errors, which still serves hover). Nothing is checked a second time.
pub struct Analysis {
    pub compilation: Compilation,
    /// One per file of `compilation.sources`, in the same order.
    files: Vec<FileInfo>,
    pub encoding: Encoding,
}

struct FileInfo {
    index: LineIndex,
    uri: Option<Uri>,
}

impl Analysis {
    /// Compiles `text` as the document `doc_uri`. Imports are resolved from
    /// disk relative to the document's path. `None` if the compiler
    /// panicked (a bug, reported on stderr; the server carries on).
    pub fn run(doc_uri: &Uri, text: &str, encoding: Encoding, target: Target) -> Option<Analysis> {
        let name = uri::to_path(doc_uri)
            .map_or_else(|| doc_uri.as_str().to_string(), |p| p.display().to_string());
        catch_unwind(AssertUnwindSafe(|| {
            let opts = Options {
                check_only: true,
                target,
                ..Options::default()
            };
            let compilation = compile_str(&name, text, &opts);
            let files = compilation
                .sources
                .iter()
                .map(|(id, f)| FileInfo {
                    index: LineIndex::new(&f.text),
                    uri: if id == ROOT {
                        Some(doc_uri.clone())
                    } else {
                        f.path.as_deref().and_then(uri::from_path)
                    },
                })
                .collect();
            Analysis {
                compilation,
                files,
                encoding,
            }
        }))
        .ok()
    }

    /// The IR of the document and its imports.
    pub fn module(&self) -> Option<&ir::Module> {
        self.compilation.module.as_ref()
    }

    /// The document's text, as compiled.
    pub fn document_text(&self) -> &str {
        self.text(ROOT)
    }

    fn text(&self, file: FileId) -> &str {
        self.compilation
            .sources
            .get(file)
            .map_or("", |f| f.text.as_str())
    }

    /// The LSP range of a span (in whichever file it points into).
    pub fn range(&self, span: Span) -> Option<Range> {
        let info = self.files.get(span.file.0 as usize)?;
        Some(info.index.range(
            self.text(span.file),
            span.start as usize,
            span.end as usize,
            self.encoding,
        ))
    }

    pub fn uri(&self, file: FileId) -> Option<&Uri> {
        self.files.get(file.0 as usize)?.uri.as_ref()
    }

    pub fn location(&self, span: Span) -> Option<Location> {
        Some(Location::new(
            self.uri(span.file)?.clone(),
            self.range(span)?,
        ))
    }

    /// The byte offset of a position in the document.
    pub fn offset(&self, pos: Position) -> Option<usize> {
        let info = self.files.get(ROOT.0 as usize)?;
        Some(info.index.offset(self.text(ROOT), pos, self.encoding))
    }
}

/// Does `span` (in the document) cover byte `offset`? The end counts too, so
/// that a cursor just after a name still finds it.
pub fn covers(span: Span, offset: usize) -> bool {
    span.file == ROOT && span.start as usize <= offset && offset <= span.end as usize
}

/// Do two ranges overlap (touching counts, as an empty range at a cursor
/// must select the diagnostic under it)?
pub fn ranges_touch(a: &Range, b: &Range) -> bool {
    a.start <= b.end && b.start <= a.end
}
