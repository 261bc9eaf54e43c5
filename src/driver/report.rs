//! Where diagnostics go: human and short text to stderr, JSON lines to
//! stdout; and the closing summary, once per run.

use super::cli::{ColorChoice, CommonArgs, MessageFormat};
use crate::diagnostics::{render, Diagnostic, Severity};
use crate::source::SourceMap;
use std::io::{IsTerminal, Write};

pub struct Reporter {
    format: MessageFormat,
    color: bool,
    errors: usize,
    warnings: usize,
    /// Whether any file got as far as the compiler (and so has been
    /// reported on, if only with silence).
    compiled: bool,
}

impl Reporter {
    pub fn new(common: &CommonArgs) -> Reporter {
        Reporter {
            format: common.message_format,
            color: use_color(common.color),
            errors: 0,
            warnings: 0,
            compiled: false,
        }
    }

    pub fn report(&mut self, sources: &SourceMap, diags: &[Diagnostic]) {
        let errors = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        self.compiled = true;
        self.errors += errors;
        self.warnings += diags.len() - errors;
        match self.format {
            MessageFormat::Human => stderr(&render::human(sources, diags, self.color)),
            MessageFormat::Short => stderr(&render::short(sources, diags)),
            MessageFormat::Json => stdout(&render::json_diagnostics(sources, diags)),
        }
    }

    /// The last line: rustc's "aborting due to ..." (human), the summary
    /// object (JSON), nothing (short: every line there is a diagnostic).
    /// JSON has a summary whenever a file was compiled, even without
    /// diagnostics; a run that stopped before (an unreadable input) prints
    /// no JSON at all.
    pub fn finish(&self) {
        match self.format {
            MessageFormat::Human => {
                let summary = render::human_summary(self.errors, self.warnings);
                if !summary.is_empty() {
                    stderr(&format!("{}\n", self.paint_severity(&summary)));
                }
            }
            MessageFormat::Short => {}
            MessageFormat::Json if self.compiled => {
                stdout(&render::json_summary(self.errors, self.warnings))
            }
            MessageFormat::Json => {}
        }
    }

    /// Colours the leading `error`/`warning` word of a summary line the way
    /// codespan colours diagnostic headers.
    fn paint_severity(&self, line: &str) -> String {
        if !self.color {
            return line.to_string();
        }
        for (word, code) in [("error", "\x1b[1;31m"), ("warning", "\x1b[1;33m")] {
            if let Some(rest) = line.strip_prefix(word) {
                return format!("{code}{word}\x1b[0m\x1b[1m{rest}\x1b[0m");
            }
        }
        line.to_string()
    }
}

/// `auto`: colour when stderr is a terminal and `NO_COLOR` is unset or
/// empty (no-color.org); `always`/`never` win over both.
fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal()
                && std::env::var_os("NO_COLOR").map_or(true, |v| v.is_empty())
        }
    }
}

/// Writes to stderr; a closed stderr is no reason to fail the build.
pub fn stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Diagnostics on stdout (JSON). A reader that went away (`| head`) loses
/// the rest of the stream, and that is all.
fn stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}
