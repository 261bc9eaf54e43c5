//! Hover: what the innermost IR node under the cursor is — an expression's
//! type, a variable's declaration, a barrier group's scope and counts.

use super::analysis::{covers, Analysis};
use super::walk::{self, Node, Owner};
use crate::ir::{BarrierGroup, ExprKind, Local, Param, ParamType, PlaceKind, SharedArray, Value};
use crate::span::Span;
use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

/// Something under the cursor that hover can describe.
#[derive(Clone, Copy)]
enum Target<'m> {
    Node(Owner<'m>, Node<'m>),
    Local(&'m Local),
    Param(&'m Param),
    Group(&'m BarrierGroup),
    Shared(&'m SharedArray),
}

pub fn hover(a: &Analysis, pos: Position) -> Option<Hover> {
    let module = a.module.as_ref()?;
    let offset = a.offset(pos)?;
    let mut candidates: Vec<(Span, Target)> = Vec::new();
    walk::module(module, &mut |owner, node| {
        candidates.push((node_span(node), Target::Node(owner, node)))
    });
    for k in &module.kernels {
        candidates.extend(k.params.iter().map(|p| (p.span, Target::Param(p))));
        candidates.extend(k.barriers.iter().map(|g| (g.spans.name, Target::Group(g))));
        candidates.extend(k.shared.iter().map(|s| (s.span, Target::Shared(s))));
        candidates.extend(k.body.locals.iter().map(|l| (l.span, Target::Local(l))));
    }
    for f in &module.functions {
        candidates.extend(f.body.locals.iter().map(|l| (l.span, Target::Local(l))));
    }
    let (span, target) = candidates
        .into_iter()
        .filter(|(span, _)| covers(*span, offset))
        .min_by_key(|(span, _)| rank(*span, offset))?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: describe(target)?,
        }),
        range: a.range(span),
    })
}

/// Smaller is better: a span that strictly contains the offset beats one
/// that merely ends at it, then the shortest (innermost) span wins.
fn rank(span: Span, offset: usize) -> (bool, usize) {
    (offset >= span.end as usize, span.len())
}

fn node_span(n: Node) -> Span {
    match n {
        Node::Expr(e) => e.span,
        Node::Place(p) => p.span,
        Node::Barrier(b) => b.span,
    }
}

fn code(text: &str) -> String {
    format!("```kdsl\n{text}\n```")
}

fn describe(t: Target) -> Option<String> {
    Some(match t {
        Target::Local(l) => code(&local(l)),
        Target::Param(p) => code(&param(p)),
        Target::Group(g) => group(g),
        Target::Shared(s) => code(&shared(s)),
        Target::Node(owner, Node::Barrier(r)) => {
            group(owner.kernel()?.barriers.get(r.group.index())?)
        }
        Target::Node(owner, Node::Place(p)) => match &p.kind {
            PlaceKind::Global { param: id, .. } => {
                let k = owner.kernel()?;
                format!(
                    "{}\n\nelement of `{}`",
                    code(p.elem.name()),
                    param(k.params.get(id.index())?)
                )
            }
            PlaceKind::Shared { array, .. } | PlaceKind::Remote { array, .. } => {
                let s = owner.kernel()?.shared.get(array.index())?;
                let remote = if matches!(p.kind, PlaceKind::Remote { .. }) {
                    " (in another CTA of the cluster)"
                } else {
                    ""
                };
                format!(
                    "{}\n\nelement of `{}`{remote}",
                    code(p.elem.name()),
                    shared(s)
                )
            }
        },
        Target::Node(owner, Node::Expr(e)) => match &e.kind {
            ExprKind::Local(id) => code(&local(owner.body().locals.get(id.index())?)),
            ExprKind::Param(id) => code(&param(owner.kernel()?.params.get(id.index())?)),
            ExprKind::Const(v) => code(&format!("{}: {} = {}", "const", e.ty.name(), value(*v))),
            _ => code(e.ty.name()),
        },
    })
}

fn local(l: &Local) -> String {
    format!(
        "let {}{}: {}",
        if l.mutable { "mut " } else { "" },
        l.name,
        l.ty.name()
    )
}

fn param(p: &Param) -> String {
    let ty = match p.ty {
        ParamType::Scalar(s) => s.name().to_string(),
        ParamType::Global { elem, mutable, .. } => {
            format!(
                "global {}[{}]",
                if mutable { "mut " } else { "" },
                elem.name()
            )
        }
    };
    format!("{}: {ty}", p.name)
}

fn shared(s: &SharedArray) -> String {
    let dims: Vec<String> = s.dims.iter().map(u32::to_string).collect();
    format!(
        "shared {}: [{}; {}]",
        s.name,
        s.elem.name(),
        dims.join(", ")
    )
}

fn value(v: Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:?}"),
    }
}

/// "barrier `full[2]`: scope `cta`, 2 barriers, 1 arrival per phase", under
/// the declaration.
pub fn group(g: &BarrierGroup) -> String {
    let shape = if g.count == 1 {
        g.name.clone()
    } else {
        format!("{}[{}]", g.name, g.count)
    };
    let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}\n\nbarrier `{shape}`: scope `{}`, {}, {} per phase",
        code(&format!(
            "barrier {shape}: {}(arrivals = {})",
            g.scope.name(),
            g.arrivals
        )),
        g.scope.name(),
        plural(g.count, "barrier"),
        plural(g.arrivals, "arrival"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BarrierSpans, Scope};

    #[test]
    fn barrier_groups_read_as_a_sentence() {
        let spans = BarrierSpans {
            decl: Span::default(),
            name: Span::default(),
            count: None,
            scope: Span::default(),
            arrivals: Span::default(),
        };
        let g = BarrierGroup {
            name: "full".into(),
            scope: Scope::Cta,
            count: 2,
            arrivals: 1,
            spans,
        };
        assert!(
            group(&g).ends_with("barrier `full[2]`: scope `cta`, 2 barriers, 1 arrival per phase")
        );
        let one = BarrierGroup {
            name: "ready".into(),
            scope: Scope::Cluster,
            count: 1,
            arrivals: 128,
            spans,
        };
        assert!(group(&one)
            .ends_with("barrier `ready`: scope `cluster`, 1 barrier, 128 arrivals per phase"));
    }
}
