//! Completion: the names that may stand at the cursor. After `group.` the
//! operations of that barrier group or named barrier, after a built-in
//! vector value (`thread_idx.`) its fields; elsewhere the built-in
//! functions and values (from the one table, `check::builtins`), the
//! file's device functions and constants, and the kernel's parameters and
//! the locals declared before the cursor.

use super::analysis::{Analysis, ROOT};
use crate::check::builtins::{self, Entry, Form};
use crate::ir::{Body, Module};
use crate::syntax::ast::Item;
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionResponse, Documentation, MarkupContent,
    MarkupKind, Position,
};

pub fn completion(a: &Analysis, pos: Position) -> Option<CompletionResponse> {
    let offset = a.offset(pos)?;
    let text = a.document_text();
    let before = text.get(..offset)?;
    let prefix_start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_name_char(*c))
        .last()
        .map_or(offset, |(i, _)| i);
    let prefix = before.get(prefix_start..)?;
    let items = match before.get(..prefix_start)?.strip_suffix('.') {
        Some(receiver) => after_dot(a, receiver),
        None => names(a, offset),
    };
    let items: Vec<CompletionItem> = items
        .into_iter()
        .filter(|i| i.label.starts_with(prefix))
        .collect();
    Some(CompletionResponse::Array(items))
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The completions after `receiver.`: `receiver` is the text before the
/// dot (`full[s]`, `ready`, `thread_idx`).
fn after_dot(a: &Analysis, receiver: &str) -> Vec<CompletionItem> {
    // `full[s].` names `full`: skip one bracketed index.
    let receiver = receiver.trim_end();
    let base = match receiver.strip_suffix(']') {
        Some(r) => r.rfind('[').and_then(|i| r.get(..i)).unwrap_or(r),
        None => receiver,
    };
    let name_start = base
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_name_char(*c))
        .last()
        .map_or(base.len(), |(i, _)| i);
    let name = base.get(name_start..).unwrap_or("");
    if builtins::value(name).is_some_and(|e| e.form == Form::Vector) {
        return ["x", "y", "z"]
            .into_iter()
            .map(|f| item(f, CompletionItemKind::FIELD, Some("u32".into()), None))
            .collect();
    }
    let kernels = a.module().map(|m| m.kernels.as_slice()).unwrap_or(&[]);
    let form = if kernels
        .iter()
        .any(|k| k.barriers.iter().any(|g| &*g.name == name))
    {
        Form::BarrierMethod
    } else if kernels
        .iter()
        .any(|k| k.named_barriers.iter().any(|g| &*g.name == name))
    {
        Form::NamedMethod
    } else {
        return Vec::new();
    };
    builtins::BUILTINS
        .iter()
        .filter(|e| e.form == form)
        .map(builtin)
        .collect()
}

/// Every name that may start an expression at `offset`.
fn names(a: &Analysis, offset: usize) -> Vec<CompletionItem> {
    let mut items: Vec<CompletionItem> = builtins::BUILTINS
        .iter()
        .filter(|e| matches!(e.form, Form::Function | Form::Scalar | Form::Vector))
        .map(builtin)
        .collect();
    for (_, file) in &a.compilation.files {
        for it in &file.items {
            match it {
                Item::Fn(f) => {
                    items.push(item(&f.name.name, CompletionItemKind::FUNCTION, None, None))
                }
                Item::Const(c) => {
                    items.push(item(&c.name.name, CompletionItemKind::CONSTANT, None, None))
                }
                _ => {}
            }
        }
    }
    if let Some(m) = a.module() {
        items.extend(in_scope(m, offset));
    }
    items
}

/// The parameters of the kernel around `offset` and the locals of the
/// body around it declared before it.
fn in_scope(m: &Module, offset: usize) -> Vec<CompletionItem> {
    let inside = |span: crate::span::Span| {
        span.file == ROOT && (span.start as usize) <= offset && offset <= span.end as usize
    };
    let locals = |body: &Body| -> Vec<CompletionItem> {
        body.locals
            .iter()
            .filter(|l| l.span.file == ROOT && (l.span.end as usize) <= offset)
            .map(|l| {
                item(
                    &l.name,
                    CompletionItemKind::VARIABLE,
                    Some(l.ty.name().into()),
                    None,
                )
            })
            .collect()
    };
    let mut out = Vec::new();
    for k in m.kernels.iter().filter(|k| inside(k.span)) {
        out.extend(
            k.params
                .iter()
                .map(|p| item(&p.name, CompletionItemKind::VARIABLE, None, None)),
        );
        out.extend(locals(&k.body));
    }
    for f in m.functions.iter().filter(|f| inside(f.span)) {
        out.extend(locals(&f.body));
    }
    out
}

/// A built-in's completion: its signature as the detail, its doc line
/// (and the target it needs) as the documentation.
fn builtin(e: &Entry) -> CompletionItem {
    let kind = match e.form {
        Form::Function => CompletionItemKind::FUNCTION,
        Form::Scalar | Form::Vector => CompletionItemKind::CONSTANT,
        Form::BarrierMethod | Form::NamedMethod => CompletionItemKind::METHOD,
    };
    item(
        e.name,
        kind,
        Some(e.signature()),
        Some(super::hover::builtin_doc(e)),
    )
}

fn item(
    label: &str,
    kind: CompletionItemKind,
    detail: Option<String>,
    doc: Option<String>,
) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        documentation: doc.map(|value| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value,
            })
        }),
        ..CompletionItem::default()
    }
}
