//! Where reports point: the source span of a PTX position, for each kind
//! of [`PtxSource`].

use super::decode;
use super::ptx;
use super::PtxSource;
use crate::source::{SourceFile, SourceMap};
use crate::span::{FileId, Span};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The most `.file` directives of a module that are read.
const MAX_FILES: usize = 256;
/// The most bytes of the sources `.file` directives name that are read (the
/// last file read may pass it by up to a source's 16 MiB).
const MAX_FILE_BYTES: u64 = 4 * crate::input::MAX_SOURCE_BYTES;

/// Maps PTX positions to source spans for one [`PtxSource`].
pub(crate) struct SpanResolver<'a> {
    source: PtxSource<'a>,
    /// `.file` number → the file in the source map.
    files: HashMap<u32, FileId>,
}

impl<'a> SpanResolver<'a> {
    pub(crate) fn new(source: PtxSource<'a>) -> SpanResolver<'a> {
        SpanResolver {
            source,
            files: HashMap::new(),
        }
    }

    /// Reads the files `.file` names (relative ones next to the PTX file),
    /// those that are readable source files (`crate::input`): at most
    /// [`MAX_FILES`] directives are looked at, a file named twice (by any
    /// path) is read once, and reading stops once [`MAX_FILE_BYTES`] have
    /// been read, so that a module cannot make the simulator hold more
    /// than that whatever its directives name.
    pub(crate) fn add_files(&mut self, files: &[(u32, String)]) {
        let PtxSource::File { file, sources } = &mut self.source else {
            return;
        };
        let dir: Option<PathBuf> = sources
            .get(*file)
            .and_then(|f| f.path.as_ref())
            .and_then(|p| p.parent().map(Path::to_path_buf));
        let mut read: HashMap<PathBuf, FileId> = HashMap::new();
        let mut bytes = 0u64;
        for (n, name) in files.iter().take(MAX_FILES) {
            let existing = sources
                .iter()
                .find(|(_, f)| f.name == *name || f.path.as_deref() == Some(Path::new(name)))
                .map(|(id, _)| id);
            let id = match existing {
                Some(id) => Some(id),
                None => {
                    let path = PathBuf::from(name);
                    let path = match (&dir, path.is_relative()) {
                        (Some(d), true) => d.join(path),
                        _ => path,
                    };
                    let canonical = std::fs::canonicalize(&path).ok();
                    match canonical.as_ref().and_then(|c| read.get(c)) {
                        Some(&id) => Some(id),
                        None if bytes >= MAX_FILE_BYTES => None,
                        None => {
                            // A source like any other: a regular file of
                            // bounded size (a `.file` naming a FIFO must not
                            // hang the simulator), UTF-8; one that is not
                            // is not shown.
                            let text = crate::input::read_source(&path)
                                .ok()
                                .filter(|d| d.bad_utf8.is_none())
                                .map(|d| d.text);
                            text.map(|text| {
                                bytes += text.len() as u64;
                                let id =
                                    sources.add(SourceFile::new(name.clone(), Some(path), text));
                                if let Some(c) = canonical {
                                    read.insert(c, id);
                                }
                                id
                            })
                        }
                    }
                }
            };
            if let Some(id) = id {
                self.files.insert(*n, id);
            }
        }
    }

    /// The span of a site: the `.kdsl` span of its PTX line, its `.loc`
    /// position, or its PTX text.
    pub(crate) fn span(&self, ptx: &str, site: &decode::Site) -> Option<Span> {
        match &self.source {
            PtxSource::Kdsl { line_spans } => line_spans
                .get((site.pos.line as usize).checked_sub(1)?)
                .copied()
                .flatten(),
            PtxSource::File { file, sources } => {
                if let Some(loc) = site.loc {
                    let (f, line, col) = loc.outermost.unwrap_or((loc.file, loc.line, loc.col));
                    if let Some(id) = self.files.get(&f) {
                        if let Some(s) = line_span(sources, *id, line, col) {
                            return Some(s);
                        }
                    }
                }
                let _ = ptx;
                Some(Span::new(
                    *file,
                    site.pos.start as usize,
                    site.pos.end as usize,
                ))
            }
        }
    }

    /// The span of a raw PTX position (load errors).
    pub(crate) fn ptx_span(&self, pos: ptx::ast::Pos) -> Option<Span> {
        match &self.source {
            PtxSource::Kdsl { line_spans } => line_spans
                .get((pos.line as usize).checked_sub(1)?)
                .copied()
                .flatten(),
            PtxSource::File { file, .. } => {
                Some(Span::new(*file, pos.start as usize, pos.end as usize))
            }
        }
    }
}

/// Line `line` (1-based) of a file from column `col` (1-based; 0: the first
/// non-blank character) to the end of the line's text.
fn line_span(sources: &SourceMap, id: FileId, line: u32, col: u32) -> Option<Span> {
    let f = sources.get(id)?;
    let l = (line as usize).checked_sub(1)?;
    if l >= f.line_count() {
        return None;
    }
    let start = f.line_start(l);
    let end = if l + 1 < f.line_count() {
        f.line_start(l + 1)
    } else {
        f.text.len()
    };
    let text = f.text.get(start..end)?;
    let trimmed_end = start + text.trim_end().len();
    let first = start + (text.len() - text.trim_start().len());
    let from = if col == 0 {
        first
    } else {
        (start + col as usize - 1).clamp(first.min(trimmed_end), trimmed_end)
    };
    Some(Span::new(id, from, trimmed_end.max(from)))
}
