//! The document outline, from the syntax tree of the document itself:
//! imports, constants, functions and kernels, with a kernel's parameters,
//! shared arrays and barrier groups as its children.

use super::analysis::{Analysis, ROOT};
use crate::span::Span;
use crate::syntax::ast::{self, Item, StmtKind};
use lsp_types::{DocumentSymbol, SymbolKind};

pub fn document_symbols(a: &Analysis) -> Vec<DocumentSymbol> {
    let Some((_, file)) = a.compilation.files.iter().find(|(id, _)| *id == ROOT) else {
        return Vec::new();
    };
    file.items
        .iter()
        .filter_map(|item| item_symbol(a, item))
        .collect()
}

fn item_symbol(a: &Analysis, item: &Item) -> Option<DocumentSymbol> {
    match item {
        Item::Import(i) => symbol(
            a,
            i.path.clone(),
            None,
            SymbolKind::FILE,
            i.span,
            i.path_span,
            Vec::new(),
        ),
        Item::Const(c) => symbol(
            a,
            c.name.name.to_string(),
            Some(source(a, c.ty.span)),
            SymbolKind::CONSTANT,
            c.span,
            c.name.span,
            Vec::new(),
        ),
        Item::Fn(f) => {
            let detail = signature(a, &f.params, f.ret.as_ref());
            let children = params(a, &f.params);
            symbol(
                a,
                f.name.name.to_string(),
                Some(detail),
                SymbolKind::FUNCTION,
                f.span,
                f.name.span,
                children,
            )
        }
        Item::Kernel(k) => {
            let mut detail = format!("kernel {}", signature(a, &k.params, None));
            for attr in &k.launch {
                detail.push(' ');
                detail.push_str(&source(a, attr.span));
            }
            // The kernel's constants first, as written: `const N: u32 = 64`.
            let mut children: Vec<DocumentSymbol> = k
                .consts
                .iter()
                .filter_map(|c| {
                    symbol(
                        a,
                        c.name.name.to_string(),
                        Some(source(a, c.span)),
                        SymbolKind::CONSTANT,
                        c.span,
                        c.name.span,
                        Vec::new(),
                    )
                })
                .collect();
            children.extend(params(a, &k.params));
            children.extend(k.body.stmts.iter().filter_map(|s| kernel_decl(a, s)));
            symbol(
                a,
                k.name.name.to_string(),
                Some(detail),
                SymbolKind::FUNCTION,
                k.span,
                k.name.span,
                children,
            )
        }
        Item::Error(_) => None,
    }
}

/// A shared array or barrier group declared at the top of a kernel body.
fn kernel_decl(a: &Analysis, s: &ast::Stmt) -> Option<DocumentSymbol> {
    match &s.kind {
        StmtKind::Shared { name, .. } | StmtKind::Accum { name, .. } => {
            let detail = source(a, s.span).trim_end_matches(';').to_string();
            symbol(
                a,
                name.name.to_string(),
                Some(detail),
                SymbolKind::ARRAY,
                s.span,
                name.span,
                Vec::new(),
            )
        }
        StmtKind::Barrier(b) => {
            let detail = source(a, s.span).trim_end_matches(';').to_string();
            symbol(
                a,
                b.name.name.to_string(),
                Some(detail),
                SymbolKind::EVENT,
                s.span,
                b.name.span,
                Vec::new(),
            )
        }
        _ => None,
    }
}

fn params(a: &Analysis, ps: &[ast::Param]) -> Vec<DocumentSymbol> {
    ps.iter()
        .filter_map(|p| {
            let detail = source(a, p.ty.span);
            symbol(
                a,
                p.name.name.to_string(),
                Some(detail),
                SymbolKind::VARIABLE,
                p.span,
                p.name.span,
                Vec::new(),
            )
        })
        .collect()
}

fn signature(a: &Analysis, ps: &[ast::Param], ret: Option<&ast::TypeExpr>) -> String {
    let list: Vec<String> = ps.iter().map(|p| source(a, p.span)).collect();
    let ret = ret.map_or(String::new(), |t| format!(" -> {}", source(a, t.span)));
    format!("({}){ret}", list.join(", "))
}

/// The source text of a span, on one line.
fn source(a: &Analysis, span: Span) -> String {
    a.compilation
        .sources
        .slice(span)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn symbol(
    a: &Analysis,
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    span: Span,
    name_span: Span,
    children: Vec<DocumentSymbol>,
) -> Option<DocumentSymbol> {
    let range = a.range(span)?;
    // The protocol wants the selection inside the range; after error
    // recovery the name might not be.
    let selection_range = a
        .range(name_span)
        .filter(|s| range.start <= s.start && s.end <= range.end)
        .unwrap_or(range);
    #[allow(deprecated)] // `deprecated` is a required field of the struct.
    Some(DocumentSymbol {
        // Clients reject empty names; a half-typed item may have one.
        name: if name.is_empty() {
            "_".to_string()
        } else {
            name
        },
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range,
        children: (!children.is_empty()).then_some(children),
    })
}
