//! Why the PTX writer could not write a module (naga's `BackendResult`):
//! the writer never degrades what it cannot express into a comment, a
//! clamped value or a made-up register; it stops with an [`Error`].
//!
//! A module from the checker, without errors, never causes one: every case
//! is either IR that breaks an invariant ([`crate::ir::verify`] reports the
//! same), an operation the target lacks (which the checker rejects, E0200),
//! or facts computed from another module. The pipeline reports one as an
//! internal compiler error (exit 3), asking for a bug report.

use crate::source::SourceMap;
use crate::span::Span;
use crate::target::Target;
use std::fmt;

/// The writer's result type.
pub type Result<T> = std::result::Result<T, Error>;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The kernel or function being written (`kernel k`, `fn f`), or
    /// `module`.
    pub item: String,
    /// The IR node being written, when there is one.
    pub span: Option<Span>,
    pub kind: ErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// An operation that needs sm_90 on an older target.
    NeedsSm90 { what: String, target: Target },
    /// An instruction of architecture-specific targets (`sm_90a`) on
    /// another target.
    NeedsArch {
        what: String,
        arch: Vec<Target>,
        target: Target,
    },
    /// The IR breaks an invariant the writer relies on.
    InvalidIr(String),
    /// The facts ([`crate::analysis::ModuleInfo`]) were not computed from
    /// this module.
    StaleInfo(String),
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::NeedsSm90 { what, target } => {
                write!(f, "{what} requires sm_90 or newer (compiling for {target})")
            }
            ErrorKind::NeedsArch { what, arch, target } => {
                let names: Vec<&str> = arch.iter().map(|t| t.name()).collect();
                write!(
                    f,
                    "{what} requires {} (compiling for {target})",
                    names.join(" or ")
                )
            }
            ErrorKind::InvalidIr(what) => write!(f, "invalid IR: {what}"),
            ErrorKind::StaleInfo(what) => write!(f, "analysis facts of another module: {what}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write PTX for {}: {}", self.item, self.kind)?;
        if let Some(s) = self.span {
            write!(f, " (at bytes {}..{} of file {})", s.start, s.end, s.file.0)?;
        }
        Ok(())
    }
}

impl Error {
    /// The message, with the source position as `file:line:column` where
    /// `sources` knows the span's file.
    pub fn describe(&self, sources: &SourceMap) -> String {
        let place = self.span.and_then(|s| {
            let file = sources.get(s.file)?;
            let (line, col) = file.line_col(s.start as usize);
            Some(format!(" at {}:{line}:{col}", file.name))
        });
        match place {
            Some(p) => format!("cannot write PTX for {}{p}: {}", self.item, self.kind),
            None => self.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    #[test]
    fn errors_say_where_with_the_source_map() {
        let mut sources = SourceMap::new();
        let file = sources.add(SourceFile::new("k.kdsl", None, "kernel k() {\n  x;\n}\n"));
        let e = Error {
            item: "kernel k".into(),
            span: Some(Span::new(file, 15, 16)),
            kind: ErrorKind::NeedsSm90 {
                what: "copy_async".into(),
                target: Target::Sm80,
            },
        };
        assert_eq!(
            e.describe(&sources),
            "cannot write PTX for kernel k at k.kdsl:2:3: copy_async requires sm_90 or newer (compiling for sm_80)"
        );
        assert_eq!(
            e.to_string(),
            "cannot write PTX for kernel k: copy_async requires sm_90 or newer (compiling for sm_80) (at bytes 15..16 of file 0)"
        );
    }
}
