//! Go-to-definition, from the checker's table of resolved names.

use super::analysis::{covers, Analysis};
use crate::check::Referent;
use crate::span::Span;
use crate::syntax::ast::{Block, ElseBranch, Item, Stmt, StmtKind};
use lsp_types::{GotoDefinitionResponse, Position};

pub fn definition(a: &Analysis, pos: Position) -> Option<GotoDefinitionResponse> {
    let offset = a.offset(pos)?;
    // The innermost use under the cursor; one that strictly contains it
    // beats one that ends right at it (`a+b` with the cursor on `+`).
    let (_, definition) = a
        .compilation
        .references
        .iter()
        .filter_map(|r| match r.to {
            Referent::Definition(d) => Some((r.span, d)),
            Referent::Builtin(_) => None,
        })
        .filter(|(span, _)| covers(*span, offset))
        .min_by_key(|(span, _)| (offset >= span.end as usize, span.len()))?;
    let target = declared_name(a, definition).unwrap_or(definition);
    Some(GotoDefinitionResponse::Scalar(a.location(target)?))
}

/// Where a definition is a whole declaration (`shared tile: [f32; 4];`),
/// the name in it: the cursor should land on the name, as it does for
/// every other kind of definition.
fn declared_name(a: &Analysis, decl: Span) -> Option<Span> {
    let (_, file) = a
        .compilation
        .files
        .iter()
        .find(|(id, _)| *id == decl.file)?;
    file.items.iter().find_map(|item| match item {
        Item::Const(c) if c.span == decl => Some(c.name.span),
        Item::Fn(f) if f.span == decl => Some(f.name.span),
        Item::Fn(f) => params_and_block(&f.params, &f.body, decl),
        Item::Kernel(k) if k.span == decl => Some(k.name.span),
        Item::Kernel(k) => params_and_block(&k.params, &k.body, decl),
        _ => None,
    })
}

fn params_and_block(
    params: &[crate::syntax::ast::Param],
    body: &Block,
    decl: Span,
) -> Option<Span> {
    params
        .iter()
        .find(|p| p.span == decl)
        .map(|p| p.name.span)
        .or_else(|| block(body, decl))
}

fn block(b: &Block, decl: Span) -> Option<Span> {
    b.stmts.iter().find_map(|s| stmt(s, decl))
}

fn stmt(s: &Stmt, decl: Span) -> Option<Span> {
    if !(s.span.start <= decl.start && decl.end <= s.span.end) {
        return None;
    }
    match &s.kind {
        StmtKind::Shared { name, .. } | StmtKind::Accum { name, .. } if s.span == decl => {
            Some(name.span)
        }
        StmtKind::Barrier(b) if s.span == decl => Some(b.name.span),
        StmtKind::Let { name, .. } if s.span == decl => Some(name.span),
        StmtKind::LetTuple { names, .. } => names
            .iter()
            .find(|n| n.name.span == decl)
            .map(|n| n.name.span),
        StmtKind::If {
            then_block,
            else_branch,
            ..
        } => block(then_block, decl).or_else(|| match else_branch {
            Some(ElseBranch::Block(b)) => block(b, decl),
            Some(ElseBranch::If(s)) => stmt(s, decl),
            None => None,
        }),
        StmtKind::While { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::ForList { body, .. } => block(body, decl),
        _ => None,
    }
}
