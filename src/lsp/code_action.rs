//! Quick fixes: each compiler diagnostic's machine-applicable fixes, offered
//! for the diagnostics the client asks about.

use super::analysis::{ranges_touch, Analysis};
use super::diagnostics;
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, NumberOrString, TextEdit,
    Uri, WorkspaceEdit,
};
use std::collections::HashMap;

// `WorkspaceEdit` keys its changes by `Uri`, whose parsed form caches
// internally; its hash and equality use only the text, so it is a sound key.
#[allow(clippy::mutable_key_type)]
pub fn code_actions(a: &Analysis, params: &CodeActionParams) -> Vec<CodeActionOrCommand> {
    if let Some(only) = &params.context.only {
        if !only
            .iter()
            .any(|k| CodeActionKind::QUICKFIX.as_str().starts_with(k.as_str()))
        {
            return Vec::new();
        }
    }
    let mut actions = Vec::new();
    for (lsp_diag, diag) in diagnostics::for_document(a) {
        if diag.fixes.is_empty() || !wanted(&lsp_diag, params) {
            continue;
        }
        for (i, fix) in diag.fixes.iter().enumerate() {
            let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
            let mut complete = true;
            for edit in &fix.edits {
                match (a.uri(edit.span.file), a.range(edit.span)) {
                    (Some(uri), Some(range)) => changes
                        .entry(uri.clone())
                        .or_default()
                        .push(TextEdit::new(range, edit.replacement.clone())),
                    _ => complete = false,
                }
            }
            // Half a fix would leave the program in a state nobody asked for.
            if !complete || changes.is_empty() {
                continue;
            }
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: fix.message.clone(),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![lsp_diag.clone()]),
                edit: Some(WorkspaceEdit::new(changes)),
                command: None,
                is_preferred: Some(i == 0),
                disabled: None,
                data: None,
            }));
        }
    }
    actions
}

/// Is the diagnostic one the request is about: one the client sent in its
/// context (same code and range), or one under the requested range?
fn wanted(d: &lsp_types::Diagnostic, params: &CodeActionParams) -> bool {
    let sent = params.context.diagnostics.iter().any(|c| {
        c.range == d.range
            && match (&c.code, &d.code) {
                (Some(NumberOrString::String(x)), Some(NumberOrString::String(y))) => x == y,
                (None, _) => true,
                _ => false,
            }
    });
    sent || ranges_touch(&d.range, &params.range)
}
