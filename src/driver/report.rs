//! Where diagnostics go: human and short text to stderr, JSON lines to
//! stdout; the failures that are not diagnostics (usage, I/O, internal
//! errors) in the same format; and the closing summary, once per run.

use super::cli::{ColorChoice, CommonArgs, MessageFormat};
use super::Fail;
use crate::diagnostics::{render, Diagnostic, Severity};
use crate::source::SourceMap;
use std::io::{IsTerminal, Write};

pub struct Reporter {
    format: MessageFormat,
    color: bool,
    errors: usize,
    warnings: usize,
    /// JSON `error` objects written (usage, I/O and internal errors).
    failures: usize,
}

impl Reporter {
    pub fn new(common: &CommonArgs) -> Reporter {
        Reporter::with_format(common.message_format, use_color(common.color))
    }

    pub fn with_format(format: MessageFormat, color: bool) -> Reporter {
        Reporter {
            format,
            color,
            errors: 0,
            warnings: 0,
            failures: 0,
        }
    }

    /// Reports a failure that is not a diagnostic (nothing for
    /// [`Fail::Exit`], whose news was already reported); returns the exit
    /// status. Under `--message-format json` it is an `error` object on
    /// stdout, otherwise `error: ...` on stderr.
    pub fn fail(&mut self, fail: &Fail) -> i32 {
        let (kind, text, status) = match fail {
            Fail::Exit(code) => return *code,
            Fail::Usage(m) => ("usage", format!("error: {m}\n"), 2),
            Fail::Internal(m) => ("internal", super::ice_message(m), 3),
            Fail::Fault(m) => ("fault", format!("error: {m}\n"), 4),
        };
        match self.format {
            MessageFormat::Json => {
                self.failures += 1;
                stdout(&render::json_error(kind, &text, status));
            }
            MessageFormat::Human | MessageFormat::Short => stderr(&render::escape_text(&text)),
        }
        status
    }

    /// Reports how a command ended and closes the report; the exit status.
    pub fn conclude(mut self, result: Result<(), Fail>) -> i32 {
        let status = match result {
            Ok(()) => 0,
            Err(fail) => self.fail(&fail),
        };
        self.finish();
        status
    }

    pub fn report(&mut self, sources: &SourceMap, diags: &[Diagnostic]) {
        // An "and N more" counts for the diagnostics it stands for.
        for d in diags {
            match d.severity {
                Severity::Error => self.errors += d.weight(),
                Severity::Warning => self.warnings += d.weight(),
            }
        }
        match self.format {
            MessageFormat::Human => stderr(&render::human(sources, diags, self.color)),
            MessageFormat::Short => stderr(&render::short(sources, diags)),
            MessageFormat::Json => stdout(&render::json_diagnostics(sources, diags)),
        }
    }

    /// The last line: rustc's "aborting due to ..." (human), the summary
    /// object (JSON), nothing (short: every line there is a diagnostic).
    /// A JSON stream always ends with its summary, whose `errors` counts the
    /// error diagnostics and the `error` objects.
    fn finish(&self) {
        match self.format {
            MessageFormat::Human => {
                let summary = render::human_summary(self.errors, self.warnings);
                if !summary.is_empty() {
                    stderr(&format!("{}\n", self.paint_severity(&summary)));
                }
            }
            MessageFormat::Short => {}
            MessageFormat::Json => stdout(&render::json_summary(
                self.errors + self.failures,
                self.warnings,
            )),
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
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
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
