use super::*;
use crate::ir::{
    BarrierId, BarrierOp, BinOp, Dim, LocalId, ParamId, Scope, SharedId, Special, Value,
};
use crate::span::{FileId, Span};
use crate::types::Scalar;

/// A span that names a node by its start.
fn at(n: usize) -> Span {
    Span::new(FileId(0), n, n + 1)
}

fn ex(n: usize, kind: ExprKind) -> Expr {
    Expr::new(kind, Scalar::U32, at(n))
}

fn leaf(n: usize) -> Expr {
    ex(n, ExprKind::Const(Value::Int(n as i128)))
}

fn st(n: usize, kind: StmtKind) -> Stmt {
    Stmt::new(kind, at(n))
}

fn shared(n: usize, indices: Vec<Expr>) -> Place {
    Place {
        kind: PlaceKind::Shared {
            array: SharedId(0),
            indices,
        },
        elem: Scalar::F32,
        span: at(n),
    }
}

fn bar(n: usize, index: Option<Expr>) -> BarrierRef {
    BarrierRef {
        group: BarrierId(0),
        index: index.map(Box::new),
        span: at(n),
    }
}

/// Every kind of child in one body; each node's span start is its position
/// in a pre-order walk, so a correct walk sees 0, 1, 2, ... in order.
pub(crate) fn sample() -> Block {
    let remote = Place {
        kind: PlaceKind::Remote {
            array: SharedId(1),
            rank: leaf(10),
            indices: vec![leaf(11), leaf(12)],
        },
        elem: Scalar::F32,
        span: at(9),
    };
    let if_expr = ex(
        22,
        ExprKind::If {
            cond: Box::new(leaf(23)),
            then_block: Box::new(Block {
                stmts: vec![st(
                    25,
                    StmtKind::Assign {
                        local: LocalId(0),
                        value: leaf(26),
                    },
                )],
                span: at(24),
            }),
            then_value: Box::new(leaf(27)),
            else_block: Box::new(Block {
                stmts: vec![],
                span: at(28),
            }),
            else_value: Box::new(ex(29, ExprKind::Special(Special::ThreadIdx(Dim::X)))),
        },
    );
    let then_block = Block {
        stmts: vec![st(
            17,
            StmtKind::Barrier(Box::new(BarrierOp {
                kind: BarrierOpKind::Wait {
                    parity: Parity::Tracked,
                },
                barrier: bar(18, None),
                method_span: at(100),
            })),
        )],
        span: at(16),
    };
    let else_block = Block {
        stmts: vec![st(21, StmtKind::Expr(if_expr))],
        span: at(20),
    };
    let test = ex(
        36,
        ExprKind::BarrierTest {
            barrier: Box::new(bar(37, None)),
            parity: Box::new(Parity::Explicit(leaf(39))),
            acquire: Scope::Cta,
            method_span: at(101),
        },
    );
    Block {
        span: at(0),
        stmts: vec![
            st(
                1,
                StmtKind::Let {
                    local: LocalId(0),
                    value: ex(
                        2,
                        ExprKind::Binary(
                            BinOp::Add,
                            Box::new(ex(3, ExprKind::Local(LocalId(0)))),
                            Box::new(ex(4, ExprKind::Param(ParamId(0)))),
                        ),
                    ),
                },
            ),
            st(
                5,
                StmtKind::Store {
                    place: Box::new(shared(6, vec![leaf(7)])),
                    op: None,
                    value: ex(8, ExprKind::Load(Box::new(remote))),
                },
            ),
            st(
                13,
                StmtKind::If {
                    cond: Box::new(ex(14, ExprKind::Cast(Box::new(leaf(15))))),
                    then_block,
                    else_block: Some(else_block),
                },
            ),
            st(
                30,
                StmtKind::For {
                    var: LocalId(1),
                    start: Box::new(leaf(31)),
                    end: Box::new(leaf(32)),
                    step: Box::new(leaf(33)),
                    body: Block {
                        stmts: vec![st(35, StmtKind::Expr(test))],
                        span: at(34),
                    },
                    unroll: None,
                },
            ),
            st(
                40,
                StmtKind::CopyAsync {
                    dst: Box::new(shared(41, vec![])),
                    src: Box::new(shared(42, vec![])),
                    bytes: Box::new(leaf(43)),
                    barrier: bar(44, Some(leaf(45))),
                },
            ),
            st(46, StmtKind::Break),
        ],
    }
}

/// Records every node's kind and span start, before its children.
#[derive(Default)]
pub(crate) struct Trace(pub(crate) Vec<(&'static str, u32)>);

impl<'ir> Visit<'ir> for Trace {
    fn visit_block(&mut self, b: &'ir Block) {
        self.0.push(("block", b.span.start));
        walk_block(self, b);
    }
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        self.0.push(("stmt", s.span.start));
        walk_stmt(self, s);
    }
    fn visit_expr(&mut self, e: &'ir Expr) {
        self.0.push(("expr", e.span.start));
        walk_expr(self, e);
    }
    fn visit_place(&mut self, p: &'ir Place) {
        self.0.push(("place", p.span.start));
        walk_place(self, p);
    }
    fn visit_barrier_ref(&mut self, r: &'ir BarrierRef) {
        self.0.push(("barrier", r.span.start));
        walk_barrier_ref(self, r);
    }
    fn visit_parity(&mut self, r: &'ir BarrierRef, p: &'ir Parity) {
        // Parities have no span: name them by their barrier's, plus 1.
        self.0.push(("parity", r.span.start + 1));
        walk_parity(self, r, p);
    }
}

#[test]
fn visits_every_node_once_in_source_order() {
    let b = sample();
    let mut t = Trace::default();
    t.visit_block(&b);
    let starts: Vec<u32> = t.0.iter().map(|&(_, s)| s).collect();
    assert_eq!(starts, (0..=46).collect::<Vec<u32>>(), "{:?}", t.0);
    let kind = |n: u32| t.0.iter().find(|&&(_, s)| s == n).map(|&(k, _)| k);
    assert_eq!(kind(0), Some("block"));
    assert_eq!(kind(9), Some("place"));
    assert_eq!(kind(18), Some("barrier"));
    assert_eq!(kind(19), Some("parity"));
    assert_eq!(kind(38), Some("parity"));
    assert_eq!(kind(44), Some("barrier"));
    assert_eq!(kind(45), Some("expr"));
    assert_eq!(kind(46), Some("stmt"));
}

/// Counts expressions only, relying on the default hooks for the rest.
#[derive(Default)]
struct CountExprs(usize);

impl<'ir> Visit<'ir> for CountExprs {
    fn visit_expr(&mut self, e: &'ir Expr) {
        self.0 += 1;
        walk_expr(self, e);
    }
}

#[test]
fn default_hooks_reach_every_expression() {
    let b = sample();
    let mut c = CountExprs::default();
    c.visit_block(&b);
    let t = {
        let mut t = Trace::default();
        t.visit_block(&b);
        t
    };
    let exprs = t.0.iter().filter(|&&(k, _)| k == "expr").count();
    assert_eq!(c.0, exprs);
    assert_eq!(c.0, 22);
}

/// A hook that does not call `walk_*` prunes the node's children.
struct StopAtIf(Vec<u32>);

impl<'ir> Visit<'ir> for StopAtIf {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        self.0.push(s.span.start);
        if !matches!(s.kind, StmtKind::If { .. }) {
            walk_stmt(self, s);
        }
    }
}

#[test]
fn skipping_walk_prunes_children() {
    let b = sample();
    let mut v = StopAtIf(Vec::new());
    v.visit_block(&b);
    assert_eq!(v.0, vec![1, 5, 13, 30, 35, 40, 46]);
}
