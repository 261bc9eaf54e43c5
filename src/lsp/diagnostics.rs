//! Compiler diagnostics → LSP diagnostics for one document.

use super::analysis::{Analysis, ROOT};
use crate::diagnostics::{Diagnostic, Severity};
use crate::span::Span;
use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, NumberOrString};

/// The source shown next to each diagnostic in the editor.
pub const SOURCE: &str = "kdslc";

/// Every diagnostic of the analysis that belongs in the document, paired
/// with the compiler diagnostic it came from (for code actions).
pub fn for_document(a: &Analysis) -> Vec<(lsp_types::Diagnostic, &Diagnostic)> {
    a.compilation
        .diagnostics
        .iter()
        .filter_map(|d| Some((to_lsp(a, d)?, d)))
        .collect()
}

/// Where a diagnostic shows in the document: its primary span when that is
/// in the document; otherwise (an error in an imported file) the first of
/// its labels that is, such as the import that leads to it. A diagnostic
/// with no label in the document is left to that file's own analysis.
fn anchor(d: &Diagnostic) -> Option<Span> {
    d.primary_span()
        .filter(|s| s.file == ROOT)
        .or_else(|| d.labels.iter().map(|l| l.span).find(|s| s.file == ROOT))
}

pub fn to_lsp(a: &Analysis, d: &Diagnostic) -> Option<lsp_types::Diagnostic> {
    let anchor = anchor(d)?;
    let primary = d
        .labels
        .iter()
        .find(|l| l.primary)
        .or_else(|| d.labels.first());
    let mut message = d.message.clone();
    if let Some(label) = primary.filter(|l| !l.message.is_empty()) {
        message.push('\n');
        message.push_str(&label.message);
    }
    for note in &d.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    // A fix is help too (the terminal shows it so); its edit is a code
    // action.
    let fixes = d.fixes.iter().map(|f| &f.message);
    for help in d.help.iter().chain(fixes) {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    // Every label not shown as the range itself becomes related
    // information, in whichever file it points into.
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| l.span != anchor)
        .filter_map(|l| {
            Some(DiagnosticRelatedInformation {
                location: a.location(l.span)?,
                message: if l.message.is_empty() {
                    d.message.clone()
                } else {
                    l.message.clone()
                },
            })
        })
        .collect();
    Some(lsp_types::Diagnostic {
        range: a.range(anchor)?,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: None,
        source: Some(SOURCE.to_string()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    })
}
