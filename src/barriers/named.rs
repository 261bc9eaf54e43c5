//! W0324: a named-barrier operation (`b.sync()`, `b.arrive()`) under a
//! condition that can split the threads of a warp.
//!
//! The hardware counts arrivals at a named barrier a warp at a time, and
//! roles in a warp-specialised kernel are whole warps (`if warp_id == 0`).
//! A condition that is uniform in each warp (built from `warp_id`,
//! constants, parameters, `block_idx`, uniform locals and immutable locals
//! bound to such values) is fine; one on
//! `thread_idx`, `lane_id`, loads or anything else that varies within a
//! warp is reported, on the innermost such condition around the operation.
//!
//! W0326: when `block(...)` gives the block shape and every condition
//! around each operation on a barrier is a test of `warp_id` against
//! constants (`<`, `<=`, `>`, `>=`, `==`, `!=`, `&&`, `||`, `!`), the warps
//! that can reach that barrier are known; their threads must be the
//! barrier's count. Anything else (another condition, a run-time index, a
//! `return`, `break` or `continue` anywhere in the kernel) says nothing.
//!
//! Divergence that comes from elsewhere (a `return` or `break` some threads
//! took) is not reported here: the analysis does not say whether it splits
//! warps. Either way the PTX writer uses the non-`.aligned` forms wherever
//! the threads may diverge.

use super::error::BarrierError;
use crate::analysis::BodyInfo;
use crate::ir::visit::{self, Visit};
use crate::ir::{
    consteval, BinOp, Expr, ExprKind, Kernel, LocalId, Special, Stmt, StmtKind, UnaryOp,
};
use std::collections::{BTreeMap, HashSet};

pub fn check(k: &Kernel, info: &BodyInfo, out: &mut Vec<BarrierError>) {
    let warps = k
        .block_threads()
        .filter(|_| !jumps(&k.body.block))
        .map(|b| b.div_ceil(32));
    let mut w = Walk {
        k,
        info,
        warp_lets: HashSet::new(),
        reach: Vec::new(),
        warps,
        sites: BTreeMap::new(),
        out,
    };
    w.visit_block(&k.body.block);
    let Some(threads) = k.block_threads() else {
        return;
    };
    let sites = std::mem::take(&mut w.sites);
    for ((group, index), site) in sites {
        let (Some(g), Some(mask)) = (k.named_barriers.get(group as usize), site.warps) else {
            continue;
        };
        // The threads of the warps in `mask`; the last warp may be partial.
        let n: u32 = (0..32u32)
            .filter(|w| mask & (1 << w) != 0)
            .map(|w| threads.saturating_sub(32 * w).min(32))
            .sum();
        if n != g.threads {
            w.out.push(BarrierError::NamedReach {
                name: if g.count > 1 {
                    format!("{}[{index}]", g.name)
                } else {
                    g.name.clone()
                },
                expected: g.threads,
                reaching: n,
                decl: g.spans.decl,
                first: site.span,
            });
        }
    }
}

/// Whether `b` holds a `return`, `break` or `continue`: then which threads
/// reach a statement is more than its conditions.
fn jumps(b: &crate::ir::Block) -> bool {
    struct Find(bool);
    impl<'ir> Visit<'ir> for Find {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            if matches!(
                s.kind,
                StmtKind::Return(_) | StmtKind::Break | StmtKind::Continue
            ) {
                self.0 = true;
            }
            visit::walk_stmt(self, s);
        }
    }
    let mut f = Find(false);
    f.visit_block(b);
    f.0
}

/// The warps that reach the operations on one barrier (`None`: unknown).
struct Site {
    warps: Option<u32>,
    span: crate::span::Span,
}

struct Walk<'a, 'ir> {
    k: &'ir Kernel,
    info: &'a BodyInfo,
    /// Immutable locals bound to `warp_id` itself.
    warp_lets: HashSet<LocalId>,
    /// For each enclosing block, the warps that run it (`None`: unknown),
    /// when the block's warps are counted at all (`warps`).
    reach: Vec<Option<u32>>,
    /// Warps in the block, when W0326 is checked.
    warps: Option<u32>,
    /// Per (group, constant index): the warps that reach it.
    sites: BTreeMap<(u32, u32), Site>,
    out: &'a mut Vec<BarrierError>,
}

impl Walk<'_, '_> {}

impl Walk<'_, '_> {
    /// Every warp of the block.
    fn all_warps(&self) -> u32 {
        match self.warps {
            Some(n) if n >= 32 => u32::MAX,
            Some(n) => (1u32 << n) - 1,
            None => 0,
        }
    }

    /// Whether `e` is `warp_id` (or an immutable local bound to it).
    fn is_warp_id(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Special(Special::WarpId) => true,
            ExprKind::Local(l) => self.warp_lets.contains(l),
            _ => false,
        }
    }

    /// The warps for which `cond` is true, when it is a test of `warp_id`
    /// against constants.
    fn warp_set(&self, cond: &Expr) -> Option<u32> {
        let all = self.all_warps();
        match &cond.kind {
            ExprKind::Const(crate::ir::Value::Bool(b)) => Some(if *b { all } else { 0 }),
            ExprKind::Unary(UnaryOp::Not, a) => Some(all & !self.warp_set(a)?),
            ExprKind::Binary(BinOp::And, a, b) => Some(self.warp_set(a)? & self.warp_set(b)?),
            ExprKind::Binary(BinOp::Or, a, b) => Some(self.warp_set(a)? | self.warp_set(b)?),
            ExprKind::Binary(op, a, b) => {
                let (c, flipped) = if self.is_warp_id(a) {
                    (consteval::eval_int(b)?, false)
                } else if self.is_warp_id(b) {
                    (consteval::eval_int(a)?, true)
                } else {
                    return None;
                };
                let test = |w: i128| match (op, flipped) {
                    (BinOp::Eq, _) => Some(w == c),
                    (BinOp::Ne, _) => Some(w != c),
                    (BinOp::Lt, false) | (BinOp::Gt, true) => Some(w < c),
                    (BinOp::Le, false) | (BinOp::Ge, true) => Some(w <= c),
                    (BinOp::Gt, false) | (BinOp::Lt, true) => Some(w > c),
                    (BinOp::Ge, false) | (BinOp::Le, true) => Some(w >= c),
                    _ => None,
                };
                let mut set = 0u32;
                for w in 0..self.warps?.min(32) {
                    if test(i128::from(w))? {
                        set |= 1 << w;
                    }
                }
                Some(set)
            }
            _ => None,
        }
    }

    /// The warps running the current block.
    fn current(&self) -> Option<u32> {
        self.reach.last().copied().unwrap_or(Some(self.all_warps()))
    }
}

impl<'ir> Walk<'_, 'ir> {
    /// Visits `b` as run by `warps` of the enclosing block's.
    fn reached_block(&mut self, b: &'ir crate::ir::Block, warps: Option<u32>) {
        let now = match (self.current(), warps) {
            (Some(c), Some(w)) => Some(c & w),
            _ => None,
        };
        self.reach.push(now);
        self.visit_block(b);
        self.reach.pop();
    }
}

impl<'ir> Visit<'ir> for Walk<'_, 'ir> {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        match &s.kind {
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.visit_expr(cond);
                let set = self.warp_set(cond);
                self.reached_block(then_block, set);
                if let Some(b) = else_block {
                    let all = self.all_warps();
                    self.reached_block(b, set.map(|s| all & !s));
                }
            }
            StmtKind::While { cond, body } => {
                self.visit_expr(cond);
                // A loop's body runs in the warps its condition lets in, at
                // least once or not at all: unknown unless it is uniform.
                let set = if self.info.varies(cond.id) {
                    None
                } else {
                    Some(self.all_warps())
                };
                self.reached_block(body, set);
            }
            StmtKind::For {
                start,
                end,
                step,
                body,
                ..
            } => {
                for e in [start, end, step] {
                    self.visit_expr(e);
                }
                let uniform = [start, end, step].iter().all(|e| !self.info.varies(e.id));
                let set = uniform.then(|| self.all_warps());
                self.reached_block(body, set);
            }
            StmtKind::Let { local, value } => {
                let immutable = self
                    .k
                    .body
                    .locals
                    .get(local.index())
                    .is_some_and(|l| !l.mutable);
                if immutable && self.is_warp_id(value) {
                    self.warp_lets.insert(*local);
                }
                visit::walk_stmt(self, s);
            }
            StmtKind::NamedBarrier(op) => {
                let cond = self.info.named.split(s.id);
                if let (Some(cond), Some(g)) = (cond, self.k.named_barriers.get(op.group.index())) {
                    self.out.push(BarrierError::NamedDivergent {
                        name: g.name.clone(),
                        op: op.kind.method(),
                        span: s.span,
                        cond,
                    });
                }
                if self.warps.is_some() {
                    let index = match &op.index {
                        None => Some(0),
                        Some(i) => consteval::eval_int(i).and_then(|c| u32::try_from(c).ok()),
                    };
                    let reach = self.current();
                    match index {
                        Some(i) => {
                            let site = self.sites.entry((op.group.0, i)).or_insert(Site {
                                warps: Some(0),
                                span: s.span,
                            });
                            site.warps = match (site.warps, reach) {
                                (Some(a), Some(b)) => Some(a | b),
                                _ => None,
                            };
                        }
                        // A run-time index: which barrier is unknown.
                        None => {
                            let count = self
                                .k
                                .named_barriers
                                .get(op.group.index())
                                .map_or(0, |g| g.count);
                            for i in 0..count {
                                self.sites
                                    .entry((op.group.0, i))
                                    .or_insert(Site {
                                        warps: None,
                                        span: s.span,
                                    })
                                    .warps = None;
                            }
                        }
                    }
                }
                visit::walk_stmt(self, s);
            }
            _ => visit::walk_stmt(self, s),
        }
    }
}
