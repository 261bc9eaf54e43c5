//! Completion: the names that may stand at the cursor. After `group.` the
//! operations of that barrier group or named barrier, after a built-in
//! vector value (`thread_idx.`) its fields; elsewhere the built-in
//! functions and values (from the one table, `check::builtins`), the
//! file's device functions and constants, and the kernel's constants,
//! parameters, shared arrays and barriers and the locals declared before
//! the cursor.

use super::analysis::{Analysis, ROOT};
use crate::check::builtins::{self, Entry, Form};
use crate::ir::{Body, Module};
use crate::syntax::ast::Item;
use crate::syntax::lexer::Token;
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionResponse, Documentation, MarkupContent,
    MarkupKind, Position,
};

pub fn completion(a: &Analysis, pos: Position) -> Option<CompletionResponse> {
    let offset = a.offset(pos)?;
    let text = a.document_text();
    let before = text.get(..offset)?;
    if !in_code(before) {
        return Some(CompletionResponse::Array(Vec::new()));
    }
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

/// Whether the end of `before` is code, not inside a comment or a string:
/// a name written there would be a name token of its own.
fn in_code(before: &str) -> bool {
    let probe = format!("{before}x");
    let (tokens, _) = crate::syntax::lexer::lex(ROOT, &probe);
    tokens
        .last()
        .is_some_and(|(_, t, end)| *end == probe.len() && matches!(t, Token::Ident(_)))
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The completions after `receiver.`: `receiver` is the text before the
/// dot (`full[s]`, `ready`, `thread_idx`).
fn after_dot(a: &Analysis, receiver: &str) -> Vec<CompletionItem> {
    // `full[s].` names `full`: skip one bracketed index (which may hold
    // brackets of its own, `full[ks[i]].`).
    let receiver = receiver.trim_end();
    let base = match receiver.strip_suffix(']') {
        Some(r) => index_start(r).and_then(|i| r.get(..i)).unwrap_or(r),
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
    // The groups of the kernel the cursor is in (another kernel may give
    // the name to a group of the other kind).
    let offset = receiver.len();
    let kernels: Vec<_> = a
        .module()
        .map(|m| m.kernels.as_slice())
        .unwrap_or(&[])
        .iter()
        .filter(|k| inside(k.span, offset))
        .collect();
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

/// Where the bracketed index that `r` ends in (its `]` removed) starts:
/// the byte of its matching `[`.
fn index_start(r: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in r.char_indices().rev() {
        match c {
            ']' => depth += 1,
            '[' if depth == 0 => return Some(i),
            '[' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// Does `span` (in the document) hold byte `offset`?
fn inside(span: crate::span::Span, offset: usize) -> bool {
    span.file == ROOT && (span.start as usize) <= offset && offset <= span.end as usize
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

/// The parameters, shared arrays and barriers of the kernel around
/// `offset` and the locals of the body around it declared before it.
fn in_scope(m: &Module, offset: usize) -> Vec<CompletionItem> {
    let inside = |span| inside(span, offset);
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
        // Its constants, with their values in the instantiation shown.
        out.extend(k.instance.iter().flat_map(|i| &i.consts).map(|c| {
            let detail = format!("{}: {} = {}", c.name, c.value.type_name(), c.value.text());
            item(&c.name, CompletionItemKind::CONSTANT, Some(detail), None)
        }));
        out.extend(
            k.params
                .iter()
                .map(|p| item(&p.name, CompletionItemKind::VARIABLE, None, None)),
        );
        // The kernel's declarations: `tile[i]`, `ready.wait()`.
        let declared = k.shared.iter().map(|s| &*s.name);
        let declared = declared.chain(k.barriers.iter().map(|g| &*g.name));
        let declared = declared.chain(k.named_barriers.iter().map(|g| &*g.name));
        out.extend(declared.map(|n| item(n, CompletionItemKind::VARIABLE, None, None)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::position::Encoding;
    use crate::target::Target;

    /// The labels completion offers just after the `n`th occurrence of
    /// `needle` in `text` (ASCII).
    fn labels(text: &str, needle: &str, n: usize) -> Vec<String> {
        let uri: lsp_types::Uri = "file:///c.kdsl".parse().expect("a URI");
        let a = Analysis::run(&uri, text, Encoding::Utf16, Target::Sm90).expect("analysis");
        let at = text
            .match_indices(needle)
            .nth(n)
            .map(|(i, _)| i + needle.len())
            .expect("needle");
        let line = text[..at].matches('\n').count() as u32;
        let col = (at - text[..at].rfind('\n').map_or(0, |i| i + 1)) as u32;
        match completion(&a, Position::new(line, col)) {
            Some(CompletionResponse::Array(items)) => items.into_iter().map(|i| i.label).collect(),
            _ => Vec::new(),
        }
    }

    const TEXT: &str = "import \"x.\";\n\
        kernel k(out: global mut [u32]) block(64) {\n\
        \x20   barrier ready[2]: cta(arrivals = 1);\n\
        \x20   let i = out[0];\n\
        \x20   // see ready.\n\
        \x20   /* a /* nested */ ready. */ ready[out[(i + 1) % 2]].\n\
        }\n\
        kernel j(out: global mut [u32]) block(64) {\n\
        \x20   barrier ready: named(threads = 64);\n\
        \x20   ready.\n\
        }\n";

    #[test]
    fn nothing_is_offered_in_comments_and_strings() {
        assert_eq!(labels(TEXT, "\"x.", 0), Vec::<String>::new());
        assert_eq!(labels(TEXT, "see ready.", 0), Vec::<String>::new());
        assert_eq!(labels(TEXT, "see re", 0), Vec::<String>::new());
        assert_eq!(labels(TEXT, "*/ ready.", 0), Vec::<String>::new());
        assert!(labels(TEXT, "*/ ", 1).contains(&"ready".to_string()));
    }

    #[test]
    fn methods_come_from_the_group_of_the_kernel_at_the_cursor() {
        let cta: Vec<String> = builtins::names(Form::BarrierMethod)
            .map(String::from)
            .collect();
        let named: Vec<String> = builtins::names(Form::NamedMethod)
            .map(String::from)
            .collect();
        // An index with brackets of its own still names `ready`.
        assert_eq!(labels(TEXT, "% 2]].", 0), cta);
        assert_eq!(labels(TEXT, "    ready.", 0), named);
    }
}
