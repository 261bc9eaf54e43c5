//! Hover: what the innermost IR node under the cursor is — an expression's
//! type, a variable's declaration, a barrier group's scope and counts.

use super::analysis::{covers, Analysis};
use super::walk::{self, Node, Owner};
use crate::check::builtins::{self, Entry, Form};
use crate::check::Referent;
use crate::ir::{
    BarrierGroup, ExprKind, Function, Local, Module, Param, ParamType, PlaceKind, SharedArray,
    Value,
};
use crate::span::Span;
use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};

/// Something under the cursor that hover can describe.
#[derive(Clone, Copy)]
enum Target<'m> {
    Node(Owner<'m>, Node<'m>),
    /// The name of a built-in function or value (from the checker's uses).
    Builtin(&'static Entry),
    Local(&'m Local),
    Param(&'m Param),
    Group(&'m BarrierGroup),
    Shared(&'m SharedArray),
}

pub fn hover(a: &Analysis, pos: Position) -> Option<Hover> {
    let module = a.module()?;
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
    candidates.extend(a.compilation.references.iter().filter_map(|r| match r.to {
        Referent::Builtin(b) => Some((r.span, Target::Builtin(builtins::entry(b)?))),
        Referent::Definition(_) => None,
    }));
    let (span, target) = candidates
        .into_iter()
        .filter(|(span, _)| covers(*span, offset))
        .min_by_key(|(span, t)| (rank(*span, offset), tie_break(t)))?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: describe(a, module, span, target)?,
        }),
        range: a.range(span),
    })
}

/// Smaller is better: a span that strictly contains the offset beats one
/// that merely ends at it, then the shortest (innermost) span wins.
fn rank(span: Span, offset: usize) -> (bool, usize) {
    (offset >= span.end as usize, span.len())
}

/// Between nodes with the same span, the more specific description wins: a
/// memory element (which names its array) over the load that reads it, a
/// built-in's documentation over its value's type.
fn tie_break(t: &Target) -> u8 {
    match t {
        Target::Node(_, Node::Expr(_)) => 2,
        // A barrier operation's node knows its parity, the table does not.
        Target::Builtin(_) => 1,
        _ => 0,
    }
}

fn node_span(n: Node) -> Span {
    match n {
        Node::Expr(e) => e.span,
        Node::Place(p) => p.span,
        Node::Barrier(b) => b.span,
        Node::Operation { span, .. } => span,
    }
}

fn code(text: &str) -> String {
    format!("```kdsl\n{text}\n```")
}

fn describe(a: &Analysis, module: &Module, span: Span, t: Target) -> Option<String> {
    Some(match t {
        Target::Local(l) => code(&local(l)),
        Target::Param(p) => code(&param(p)),
        Target::Group(g) => group(g),
        Target::Shared(s) => code(&shared(s)),
        Target::Builtin(e) => {
            // A named barrier's operation reads like a barrier group's.
            let sig = match e.form {
                Form::BarrierMethod | Form::NamedMethod => {
                    let forms: Vec<String> = e.forms().iter().map(|f| format!("b.{f}")).collect();
                    forms.join("\n")
                }
                _ => e.signature(),
            };
            format!("{}\n\n{}", code(&sig), builtin_doc(e))
        }
        Target::Node(
            _,
            Node::Operation {
                method, tracked, ..
            },
        ) => operation(method, tracked)?,
        Target::Node(owner, Node::Barrier(r)) => {
            group(owner.kernel()?.barriers.get(r.group.index())?)
        }
        Target::Node(owner, Node::Place(p)) => match &p.kind {
            PlaceKind::Accum { acc, .. } => {
                let a = owner.kernel()?.accums.get(acc.index())?;
                format!(
                    "{}\n\nelement of `accum {}: [{}; 64, {}]`, this thread's fragment",
                    code(p.elem.name()),
                    a.name,
                    a.elem,
                    a.n
                )
            }
            PlaceKind::Register { array, .. } => {
                let a = owner.body().locals.get(array.index())?;
                format!(
                    "{}\n\nelement of `{}`, a register",
                    code(p.elem.name()),
                    local(a)
                )
            }
            PlaceKind::Global { param: id, .. } => {
                let k = owner.kernel()?;
                format!(
                    "{}\n\nelement of `{}`",
                    code(p.elem.name()),
                    param(k.params.get(id.index())?)
                )
            }
            PlaceKind::Shared { array, .. }
            | PlaceKind::Remote { array, .. }
            | PlaceKind::SharedAt { array, .. } => {
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
            ExprKind::Const(v) => {
                // A named constant was inlined: show its name and value; a
                // literal just its type.
                let text = a.compilation.sources.slice(span);
                if is_identifier(text) {
                    code(&format!(
                        "const {text}: {} = {}",
                        e.ty.name(),
                        value(*v, e.ty)
                    ))
                } else {
                    code(e.ty.name())
                }
            }
            ExprKind::Call { func, .. } => code(&signature(module.functions.get(func.index())?)),
            _ => code(e.ty.name()),
        },
    })
}

/// A barrier operation's signature and what it does (language.md §9),
/// from the table of built-ins, with what the parity of this use is.
fn operation(method: &str, tracked: Option<bool>) -> Option<String> {
    let e = builtins::method(Form::BarrierMethod, method)?;
    let parity = match tracked {
        Some(true) => "\n\nParity: tracked by the compiler, per barrier and per thread (shared by `wait`, `wait_cluster`, `test` and `test_cluster`); it flips after each completed wait and each successful test.",
        Some(false) => "\n\nParity: as written (0 or 1); the tracked parity does not move.",
        None => "",
    };
    let forms: Vec<String> = e.forms().iter().map(|f| format!("b.{f}")).collect();
    let forms = forms.join("\n");
    Some(format!("{}\n\n{}{parity}", code(&forms), e.doc))
}

/// A built-in's documentation line, and the target and launch it needs
/// when that is not every target.
pub fn builtin_doc(e: &Entry) -> String {
    match e.target_text().as_str() {
        "all" => e.doc.to_string(),
        t => format!("{}\n\nNeeds: {t}.", e.doc),
    }
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `fn name(a: u32, b: f32) -> f32`: the parameters are the first locals.
fn signature(f: &Function) -> String {
    let params: Vec<String> = f
        .body
        .locals
        .iter()
        .take(f.params as usize)
        .map(|l| format!("{}: {}", l.name, l.ty.name()))
        .collect();
    let ret = f.ret.map_or(String::new(), |t| format!(" -> {}", t.name()));
    format!("fn {}({}){ret}", f.name, params.join(", "))
}

fn local(l: &Local) -> String {
    format!(
        "let {}{}: {}",
        if l.mutable { "mut " } else { "" },
        l.name,
        l.type_text()
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
        ParamType::Tensor(map) => map.type_text(),
    };
    format!("{}: {ty}", p.name)
}

fn shared(s: &SharedArray) -> String {
    let dims: Vec<String> = s.dims.iter().map(u64::to_string).collect();
    format!(
        "shared {}: [{}; {}]",
        s.name,
        s.elem.name(),
        dims.join(", ")
    )
}

fn value(v: Value, ty: crate::types::Scalar) -> String {
    match (v, crate::fp::Format::of(ty)) {
        (Value::Bool(b), _) => b.to_string(),
        (Value::Int(i), _) => i.to_string(),
        (Value::Float(f), Some(fmt)) => crate::fp::display(f, fmt),
        (Value::Float(f), None) => format!("{f:?}"),
        (Value::Pair(lo, hi), _) => match ty.half_of().and_then(crate::fp::Format::of) {
            Some(fmt) => format!(
                "{ty}({}, {})",
                crate::fp::display(lo, fmt),
                crate::fp::display(hi, fmt)
            ),
            None => format!("{ty}({lo:?}, {hi:?})"),
        },
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

    /// The hover text at the end of the first `needle` of `text` (ASCII).
    fn hover_at(text: &str, needle: &str) -> String {
        let uri: lsp_types::Uri = "file:///h.kdsl".parse().expect("a URI");
        let enc = crate::lsp::position::Encoding::Utf16;
        let a = Analysis::run(&uri, text, enc, crate::target::Target::Sm90).expect("analysis");
        let at = text.find(needle).expect("needle") + needle.len();
        let line = text[..at].matches('\n').count() as u32;
        let col = (at - text[..at].rfind('\n').map_or(0, |i| i + 1)) as u32;
        match hover(&a, Position::new(line, col)).map(|h| h.contents) {
            Some(HoverContents::Markup(m)) => m.value,
            _ => String::new(),
        }
    }

    #[test]
    fn built_ins_are_described_in_constants_and_named_barriers() {
        let text = "const A: u32 = min(3, 4);\n\
            kernel k(out: global mut [u32]) block(64) {\n\
            \x20   barrier nb: named(threads = 64);\n\
            \x20   nb.sync();\n\
            \x20   out[0] = A;\n\
            }\n";
        assert!(hover_at(text, "= mi").contains("min(a: T, b: T) -> T"));
        assert!(hover_at(text, "nb.sy").contains("b.sync()"));
    }

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
            failed: Default::default(),
            guards: Vec::new(),
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
            failed: Default::default(),
            guards: Vec::new(),
        };
        assert!(group(&one)
            .ends_with("barrier `ready`: scope `cluster`, 1 barrier, 128 arrivals per phase"));
    }
}
