use super::*;
use crate::ir::visit::tests::{sample, Trace};
use crate::ir::visit::Visit;
use crate::ir::{Body, ExprId, Local, LocalId, StmtId, Value};
use crate::span::{FileId, Span};
use crate::types::Scalar;

/// [`Trace`] on mutable nodes: kind and span start, before the children.
#[derive(Default)]
struct TraceMut(Vec<(&'static str, u32)>);

impl VisitMut for TraceMut {
    fn visit_block_mut(&mut self, b: &mut Block) {
        self.0.push(("block", b.span.start));
        walk_block_mut(self, b);
    }
    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        self.0.push(("stmt", s.span.start));
        walk_stmt_mut(self, s);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        self.0.push(("expr", e.span.start));
        walk_expr_mut(self, e);
    }
    fn visit_place_mut(&mut self, p: &mut Place) {
        self.0.push(("place", p.span.start));
        walk_place_mut(self, p);
    }
    fn visit_barrier_ref_mut(&mut self, r: &mut BarrierRef) {
        self.0.push(("barrier", r.span.start));
        walk_barrier_ref_mut(self, r);
    }
}

#[test]
fn visits_what_visit_visits_in_the_same_order() {
    let mut b = sample();
    let mut t = Trace::default();
    t.visit_block(&b);
    let mut m = TraceMut::default();
    m.visit_block_mut(&mut b);
    // `Visit` also reports parities, which have no span of their own.
    let want: Vec<(&str, u32)> = t.0.into_iter().filter(|(k, _)| *k != "parity").collect();
    assert_eq!(m.0, want);
}

fn local(name: &str) -> Local {
    Local::scalar(name, Scalar::U32, true, Span::new(FileId(0), 0, 1))
}

#[test]
fn renumbering_gives_each_node_its_own_id_in_visit_order() {
    let body = Body::new(vec![local("a"), local("b")], sample());
    let mut exprs = Vec::new();
    let mut stmts = Vec::new();
    struct Ids<'a>(&'a mut Vec<ExprId>, &'a mut Vec<StmtId>);
    impl<'ir> Visit<'ir> for Ids<'_> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            self.1.push(s.id);
            crate::ir::visit::walk_stmt(self, s);
        }
        fn visit_expr(&mut self, e: &'ir Expr) {
            self.0.push(e.id);
            crate::ir::visit::walk_expr(self, e);
        }
    }
    Ids(&mut exprs, &mut stmts).visit_block(&body.block);
    assert_eq!(exprs, (0..22).map(ExprId).collect::<Vec<_>>());
    assert_eq!(
        stmts,
        (0..exprs_stmts(&body)).map(StmtId).collect::<Vec<_>>()
    );
    assert_eq!(body.ids.exprs(), 22);
}

fn exprs_stmts(b: &Body) -> u32 {
    b.ids.stmts() as u32
}

/// A pass in the style the optimisations will take: every `let` whose
/// value is a constant other than 0 is split into `let $t = value;` and
/// `let x = $t;`, through a fresh local and fresh ids.
struct SplitLets<'b> {
    body_locals: &'b mut Vec<Local>,
    ids: &'b mut crate::ir::Ids,
}

impl VisitMut for SplitLets<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in std::mem::take(&mut b.stmts) {
            self.visit_stmt_mut(&mut s);
            if let StmtKind::Let { value, .. } = &mut s.kind {
                if matches!(value.kind, ExprKind::Const(Value::Int(v)) if v != 0) {
                    let t = LocalId(self.body_locals.len() as u32);
                    self.body_locals.push(Local::scalar(
                        format!("$t{}", t.0),
                        value.ty,
                        true,
                        value.span,
                    ));
                    let read = Expr {
                        kind: ExprKind::Local(t),
                        ty: value.ty,
                        span: value.span,
                        id: self.ids.expr(),
                    };
                    let first = std::mem::replace(value, read);
                    out.push(Stmt {
                        span: s.span,
                        kind: StmtKind::Let {
                            local: t,
                            value: first,
                        },
                        id: self.ids.stmt(),
                    });
                }
            }
            out.push(s);
        }
        b.stmts = out;
    }
}

#[test]
fn a_rewriting_pass_keeps_the_ir_valid() {
    let src = "kernel k(out: global mut [u32]) block(32) {
    let a = 5u32;
    if thread_idx.x < 3 { let b = 7u32; out[b] = a; }
    out[0] = a;
}";
    let opts = crate::Options {
        check_only: true,
        ..crate::Options::default()
    };
    let c = crate::compile_str("t.kdsl", src, &opts);
    let mut m = c.module.expect("a module");
    let k = m.kernels.first_mut().expect("a kernel");
    let before = k.body.locals.len();
    let body = &mut k.body;
    let mut block = std::mem::take(&mut body.block);
    SplitLets {
        body_locals: &mut body.locals,
        ids: &mut body.ids,
    }
    .visit_block_mut(&mut block);
    body.block = block;
    assert_eq!(k.body.locals.len(), before + 2);
    assert_eq!(
        crate::ir::verify::module(&m, crate::ir::verify::Mode::Complete),
        Ok(())
    );
    let text = crate::ir::print::print(&m);
    assert!(text.contains("let %2 $t2: u32 = 5u32\n"), "{text}");
    assert!(text.contains("let %0 a: u32 = %2\n"), "{text}");
}

#[test]
fn fresh_locals_and_copied_subtrees_get_new_handles() {
    let mut body = Body::new(vec![local("a")], sample());
    let t = body.fresh_local(Scalar::F32, Span::new(FileId(0), 3, 4));
    assert_eq!(t, LocalId(1));
    assert_eq!(body.locals.get(1).map(|l| l.name.as_str()), Some("$t1"));
    let (exprs, stmts) = (body.ids.exprs(), body.ids.stmts());
    let mut copy = body.block.clone();
    body.renumber_block(&mut copy);
    assert_eq!(body.ids.exprs(), 2 * exprs);
    assert_eq!(body.ids.stmts(), 2 * stmts);
    let first = copy.stmts.first().map(|s| s.id);
    assert_eq!(first, Some(StmtId(stmts as u32)));
}
