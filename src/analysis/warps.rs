//! What the threads of a warp do together: which named-barrier
//! operations and matrix accesses (`ldmatrix`, `stmatrix`) every lane of a
//! warp reaches together (the fact behind W0324, E0434 and the PTX
//! writer's choice of `bar.sync` (`.aligned`) over `barrier.sync`), which warps reach each named barrier (W0326), and
//! which `if`s split the threads only between whole warps that all run
//! the same CTA-wide barriers (W0320). The barrier pass
//! (`crate::barriers::named`, `crate::barriers::divergence`) only reports
//! from these facts.
//!
//! A condition is uniform in each warp when it is built from `warp_id`,
//! values uniform in the CTA (constants, parameters, `block_idx`, uniform
//! locals) and immutable locals bound to such values; with a block whose x
//! extent is a multiple of 32 also from `thread_idx.y`/`z` and from
//! `thread_idx.x >> 5` (what the `special` pass makes of `warp_id`),
//! `thread_idx.x / 32k` and comparisons of `thread_idx.x` that split at a
//! warp boundary (`thread_idx.x < 64`). An operation whose
//! enclosing conditions (`if`, loop conditions and ranges, the left operand
//! of `&&`/`||`) are all uniform in each warp, in a kernel without
//! `return`, `break` or `continue`, runs in whole warps.
//!
//! When `block(...)` gives the block shape and every condition around each
//! operation on a barrier is a test of `warp_id` (or an immutable local
//! bound to it) against constants (`<`, `<=`, `>`, `>=`, `==`, `!=`,
//! `&&`, `||`, `!`), the warps that can reach that barrier are known.
//! Anything else (another condition, a run-time index, a jump anywhere in
//! the kernel) leaves them unknown.
//!
//! A *partition* is an `if` whose condition is uniform in each warp and
//! whose branches run the same sequence of CTA-wide barriers
//! (`sync_threads()`, `cluster_sync()`, calls of functions that run one),
//! each branch on every path through it (no loop, jump or condition
//! around a barrier inside it, no barrier after a jump): a warp-specialised
//! kernel's roles (`if warp_id == 0 { ...; cluster_sync(); } else { ...;
//! cluster_sync(); }`). Every thread that reaches the `if` reaches each of
//! those barriers, in whichever branch, and each warp runs one branch
//! whole, as the `.aligned` forms the writer emits need: the barriers
//! inside are as divergent as the `if` itself, no more.
//!
//! The body of a loop over a constant list is walked once per element
//! ([`super::values`]): its element may be the barrier's index or a
//! condition's constant.

use super::values::{At, Values};
use super::{BodyInfo, FunctionInfo};
use crate::ir::visit::{self, Visit};
use crate::ir::{
    BinOp, Block, Body, CtaBarrier, Dim, Expr, ExprKind, FuncId, Kernel, LocalId, NamedBarrier,
    Special, Stmt, StmtClass, StmtId, StmtKind, UnaryOp,
};
use crate::span::Span;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The warp facts of a body.
#[derive(Clone, Debug, Default)]
pub struct WarpFacts {
    /// Per operation (keyed by its statement: each of the writer's and the
    /// barrier pass's lookups is then constant time, however many
    /// named-barrier operations a kernel has), the innermost enclosing
    /// condition that may split a warp (`None`: none), in the first run
    /// (of the loops over constant lists around it) where there is one.
    pub sites: HashMap<StmtId, Option<Span>>,
    /// The kernel jumps (`return`, `break`, `continue`) somewhere.
    pub jumps: bool,
    /// Per barrier (group, index): the warps that reach its operations,
    /// when the block shape gives the warps and every one is known (a
    /// barrier some operation may reach in unknown warps is not here).
    pub reach: BTreeMap<(u32, u32), Reach>,
    /// Per CTA-wide barrier statement inside a partition (see the module's
    /// comment), the outermost partition around it: every thread that
    /// reaches that `if` reaches this barrier or its twin.
    pub partition: HashMap<StmtId, StmtId>,
}

/// The warps that reach the operations on one named barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reach {
    /// Bit `w`: warp `w` of the block.
    pub warps: u32,
    /// The first operation on the barrier.
    pub first: Span,
}

impl WarpFacts {
    /// Whether every lane of a warp runs statement `s` together.
    pub fn converged(&self, s: StmtId) -> bool {
        !self.jumps && self.sites.get(&s).is_some_and(Option::is_none)
    }

    /// The innermost condition around operation `s` that may split a warp.
    pub fn split(&self, s: StmtId) -> Option<Span> {
        self.sites.get(&s).copied().flatten()
    }
}

/// What a warp's lanes hold of an immutable local.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Lanes {
    /// Nothing known.
    #[default]
    Unknown,
    /// The same value in every lane of a warp.
    Uniform,
    /// `warp_id` itself.
    WarpId,
}

/// The warp facts of a kernel's body.
pub fn of_kernel(k: &Kernel, info: &BodyInfo, callees: &[FunctionInfo]) -> WarpFacts {
    of_body(&k.body, k.block, &k.named_barriers, info, callees)
}

/// The warp facts of a device function's body (it runs in any block
/// shape, and has no named barriers).
pub fn of_function(body: &Body, info: &BodyInfo, callees: &[FunctionInfo]) -> WarpFacts {
    of_body(body, None, &[], info, callees)
}

fn of_body(
    body: &Body,
    block: Option<[u32; 3]>,
    named: &[NamedBarrier],
    info: &BodyInfo,
    callees: &[FunctionInfo],
) -> WarpFacts {
    let warps = block
        .and_then(|[x, y, z]| x.checked_mul(y)?.checked_mul(z))
        .map(|b| b.div_ceil(32));
    let mut w = Walk {
        body,
        block,
        named,
        info,
        callees,
        values: &info.values,
        at: At::TOP,
        conds: Vec::new(),
        lanes: vec![Lanes::Unknown; body.locals.len()],
        reach: Vec::new(),
        warps,
        found: BTreeMap::new(),
        seqs: Vec::new(),
        partitions: HashSet::new(),
        out: WarpFacts::default(),
    };
    w.seqs.push(Seq::default());
    w.visit_block(&body.block);
    if !w.partitions.is_empty() {
        let mut a = Assign {
            partitions: &w.partitions,
            outermost: None,
            out: &mut w.out.partition,
        };
        a.visit_block(&body.block);
    }
    let mut out = w.out;
    // Which threads reach a statement is more than its conditions where
    // the kernel jumps.
    if !out.jumps {
        out.reach = w
            .found
            .into_iter()
            .filter_map(|(key, (warps, first))| {
                Some((
                    key,
                    Reach {
                        warps: warps?,
                        first,
                    },
                ))
            })
            .collect();
    }
    out
}

struct Walk<'a, 'ir> {
    body: &'ir Body,
    block: Option<[u32; 3]>,
    named: &'ir [NamedBarrier],
    info: &'a BodyInfo,
    callees: &'a [FunctionInfo],
    values: &'a Values,
    /// The run of the loops over constant lists being walked.
    at: At,
    /// The conditions enclosing the node being visited, outermost first.
    conds: Vec<&'ir Expr>,
    /// Per local (overwritten in each run of a loop over a list's body,
    /// where it is declared again).
    lanes: Vec<Lanes>,
    /// For each enclosing block, the warps that run it (`None`: unknown),
    /// when the block's warps are counted at all (`warps`).
    reach: Vec<Option<u32>>,
    /// Warps in the block, when the block shape is known.
    warps: Option<u32>,
    /// Per (group, constant index): the warps that reach it (`None`:
    /// unknown) and its first operation.
    found: BTreeMap<(u32, u32), (Option<u32>, Span)>,
    /// The CTA-wide barriers of each block being walked, innermost last.
    seqs: Vec<Seq>,
    /// The partitions found.
    partitions: HashSet<StmtId>,
    out: WarpFacts,
}

/// A CTA-wide barrier, as a partition's branches must match it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sync {
    Barrier(CtaBarrier),
    Call(FuncId),
}

/// The most barriers a branch of a partition is compared by: past it,
/// no partition (so comparing stays linear however deep `if`s nest).
const MAX_SEQ: usize = 64;

/// What every thread that runs a block does of CTA-wide barriers.
#[derive(Clone, Debug)]
struct Seq {
    /// The barriers every thread running the block runs, in order, the
    /// same on every path (`None`: not so).
    barriers: Option<Vec<Sync>>,
    /// Some path leaves the block early (`return`, `break`, `continue`).
    jumps: bool,
    /// Some path returns.
    returns: bool,
}

impl Default for Seq {
    fn default() -> Seq {
        Seq {
            barriers: Some(Vec::new()),
            jumps: false,
            returns: false,
        }
    }
}

impl Seq {
    fn push(&mut self, s: Sync) {
        match &mut self.barriers {
            Some(v) if !self.jumps && v.len() < MAX_SEQ => v.push(s),
            _ => self.barriers = None,
        }
    }

    /// Runs no barrier (on any path).
    fn is_empty(&self) -> bool {
        self.barriers.as_ref().is_some_and(Vec::is_empty)
    }

    /// A block that may run any number of times, or not at all (a loop's
    /// body, an `if` expression's branch): no barrier may be in it.
    fn opaque(&mut self, inner: &Seq) {
        if !inner.is_empty() {
            self.barriers = None;
        }
        self.jumps |= inner.returns;
        self.returns |= inner.returns;
    }
}

/// Maps each CTA-wide barrier statement to the outermost partition
/// around it.
struct Assign<'a> {
    partitions: &'a HashSet<StmtId>,
    outermost: Option<StmtId>,
    out: &'a mut HashMap<StmtId, StmtId>,
}

impl<'ir> Visit<'ir> for Assign<'_> {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        let outer = self.outermost;
        if self.outermost.is_none() && self.partitions.contains(&s.id) {
            self.outermost = Some(s.id);
        }
        if let (Some(p), StmtKind::SyncThreads | StmtKind::ClusterSync | StmtKind::Call { .. }) =
            (self.outermost, &s.kind)
        {
            self.out.insert(s.id, p);
        }
        visit::walk_stmt(self, s);
        self.outermost = outer;
    }
}

impl Walk<'_, '_> {
    fn lanes(&self, l: LocalId) -> Lanes {
        self.lanes.get(l.index()).copied().unwrap_or_default()
    }

    /// A constant operand of a condition: a compile-time constant where
    /// the walk is.
    fn constant(&self, e: &Expr) -> Option<i128> {
        self.values.constant_int(e, self.at)
    }

    /// Whether every thread of a warp computes the same `e`.
    fn warp_uniform(&self, e: &Expr) -> bool {
        if !self.info.varies(e.id) {
            return true;
        }
        // Rows of whole warps: `thread_idx.x` over a multiple of 32 (the
        // `special` pass writes `warp_id` as `thread_idx.x >> 5`), and the
        // other dimensions, are the same in every lane of a warp.
        let rows = self.block.is_some_and(|[x, _, _]| x != 0 && x % 32 == 0);
        let tid_x = |a: &Expr| matches!(a.kind, ExprKind::Special(Special::ThreadIdx(Dim::X)));
        match &e.kind {
            ExprKind::Special(Special::WarpId) => true,
            ExprKind::Special(Special::ThreadIdx(Dim::Y | Dim::Z)) => rows,
            ExprKind::Binary(BinOp::Shr, a, b) if rows && tid_x(a) => {
                self.constant(b).is_some_and(|c| (5..32).contains(&c))
            }
            ExprKind::Binary(BinOp::Div, a, b) if rows && tid_x(a) => {
                self.constant(b).is_some_and(|d| d > 0 && d % 32 == 0)
            }
            // `thread_idx.x < 64`: a split at a warp boundary.
            ExprKind::Binary(op @ (BinOp::Lt | BinOp::Ge | BinOp::Le | BinOp::Gt), a, b)
                if rows && tid_x(a) =>
            {
                let edge = if matches!(op, BinOp::Lt | BinOp::Ge) {
                    0
                } else {
                    31
                };
                self.constant(b).is_some_and(|c| c.rem_euclid(32) == edge)
            }
            ExprKind::Const(_) | ExprKind::Param(_) => true,
            ExprKind::Local(l) => !self.info.local_varies(*l) || self.lanes(*l) != Lanes::Unknown,
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.warp_uniform(a),
            ExprKind::Binary(_, a, b) => self.warp_uniform(a) && self.warp_uniform(b),
            ExprKind::Select(c, a, b) => {
                self.warp_uniform(c) && self.warp_uniform(a) && self.warp_uniform(b)
            }
            _ => false,
        }
    }

    /// Whether `e` is `warp_id` (or an immutable local bound to it).
    fn is_warp_id(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Special(Special::WarpId) => true,
            ExprKind::Local(l) => self.lanes(*l) == Lanes::WarpId,
            _ => false,
        }
    }

    /// Every warp of the block.
    fn all_warps(&self) -> u32 {
        match self.warps {
            Some(n) if n >= 32 => u32::MAX,
            Some(n) => (1u32 << n) - 1,
            None => 0,
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
                    (self.constant(b)?, false)
                } else if self.is_warp_id(b) {
                    (self.constant(a)?, true)
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

    /// Where statement `s`, a warp-collective operation, may split a warp:
    /// the innermost enclosing condition that may differ between its
    /// lanes, in the first run that has one.
    fn split_site(&mut self, s: &Stmt) {
        let split = self
            .conds
            .iter()
            .rev()
            .find(|c| !self.warp_uniform(c))
            .map(|c| c.span);
        let first = self.out.sites.entry(s.id).or_insert(split);
        if first.is_none() {
            *first = split;
        }
    }

    /// A named-barrier operation at statement `s`: where it may split a
    /// warp, and the warps that reach its barrier.
    fn site(&mut self, s: &Stmt, op: &crate::ir::NamedBarrierOp) {
        self.split_site(s);
        if self.warps.is_none() {
            return;
        }
        let count = self.named.get(op.group.index()).map_or(0, |g| g.count);
        let index = match &op.index {
            None => Some(0),
            Some(i) => self.constant(i).and_then(|c| u32::try_from(c).ok()),
        };
        let reach = self.current();
        match index {
            // Outside the group (E0305): no barrier is reached.
            Some(i) if i >= count => {}
            Some(i) => {
                let found = self
                    .found
                    .entry((op.group.0, i))
                    .or_insert((Some(0), s.span));
                found.0 = match (found.0, reach) {
                    (Some(a), Some(b)) => Some(a | b),
                    _ => None,
                };
            }
            // A run-time index: which barrier is unknown.
            None => {
                for i in 0..count {
                    self.found
                        .entry((op.group.0, i))
                        .or_insert((None, s.span))
                        .0 = None;
                }
            }
        }
    }
}

impl<'ir> Walk<'_, 'ir> {
    /// Visits `b` as run by `warps` of the enclosing block's; what its
    /// threads do of CTA-wide barriers.
    fn reached_block(&mut self, b: &'ir Block, warps: Option<u32>) -> Seq {
        let now = match (self.current(), warps) {
            (Some(c), Some(w)) => Some(c & w),
            _ => None,
        };
        self.reach.push(now);
        self.seqs.push(Seq::default());
        visit::walk_block(self, b);
        self.reach.pop();
        self.seqs.pop().unwrap_or_default()
    }

    /// The barriers of the block being walked.
    fn seq(&mut self) -> Option<&mut Seq> {
        self.seqs.last_mut()
    }
}

impl<'ir> Visit<'ir> for Walk<'_, 'ir> {
    /// A block walked on its own (an `if` expression's): it may not run.
    fn visit_block(&mut self, b: &'ir Block) {
        self.seqs.push(Seq::default());
        visit::walk_block(self, b);
        let inner = self.seqs.pop().unwrap_or_default();
        if let Some(seq) = self.seq() {
            seq.opaque(&inner);
        }
    }

    fn visit_stmt(&mut self, s: &'ir Stmt) {
        match &s.kind {
            StmtKind::Return(_) | StmtKind::Break | StmtKind::Continue => {
                self.out.jumps = true;
                if let Some(seq) = self.seq() {
                    seq.jumps = true;
                    seq.returns |= matches!(s.kind, StmtKind::Return(_));
                }
                visit::walk_stmt(self, s);
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.visit_expr(cond);
                let set = self.warp_set(cond);
                self.conds.push(cond);
                let then_seq = self.reached_block(then_block, set);
                let else_seq = match else_block {
                    Some(b) => {
                        let all = self.all_warps();
                        self.reached_block(b, set.map(|s| all & !s))
                    }
                    None => Seq::default(),
                };
                self.conds.pop();
                let same = then_seq.barriers.is_some() && then_seq.barriers == else_seq.barriers;
                if same && !then_seq.is_empty() && self.warp_uniform(cond) {
                    self.partitions.insert(s.id);
                }
                if let Some(seq) = self.seq() {
                    match (&then_seq.barriers, same) {
                        (Some(v), true) => v.iter().for_each(|b| seq.push(*b)),
                        _ => seq.barriers = None,
                    }
                    seq.jumps |= then_seq.jumps || else_seq.jumps;
                    seq.returns |= then_seq.returns || else_seq.returns;
                }
            }
            StmtKind::While { cond, body } => {
                self.visit_expr(cond);
                // A loop's body runs in the warps its condition lets in, at
                // least once or not at all: unknown unless it is uniform.
                let set = (!self.info.varies(cond.id)).then(|| self.all_warps());
                self.conds.push(cond);
                let inner = self.reached_block(body, set);
                self.conds.pop();
                if let Some(seq) = self.seq() {
                    seq.opaque(&inner);
                }
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
                self.conds.extend([&**start, &**end, &**step]);
                let inner = self.reached_block(body, set);
                self.conds.truncate(self.conds.len().saturating_sub(3));
                if let Some(seq) = self.seq() {
                    seq.opaque(&inner);
                }
            }
            // Each run in turn, as if unrolled; its jumps are those of the
            // loops around it.
            StmtKind::ForList { items, body, .. } => {
                for e in items {
                    self.visit_expr(e);
                }
                let outer = self.at;
                let runs: Vec<At> = self.values.runs(outer, s.id).collect();
                for at in runs {
                    self.at = at;
                    let all = self.current();
                    let inner = self.reached_block(body, all);
                    if let Some(seq) = self.seq() {
                        match &inner.barriers {
                            Some(v) => v.iter().for_each(|b| seq.push(*b)),
                            None => seq.barriers = None,
                        }
                        seq.jumps |= inner.jumps;
                        seq.returns |= inner.returns;
                    }
                }
                self.at = outer;
            }
            // What failed may have been a loop or a condition.
            StmtKind::Poisoned { blocks, .. } => {
                for b in blocks {
                    let all = self.current();
                    let inner = self.reached_block(b, all);
                    if let Some(seq) = self.seq() {
                        seq.opaque(&inner);
                        seq.jumps |= inner.jumps;
                    }
                }
            }
            StmtKind::Let { local, value } => {
                let immutable = self
                    .body
                    .locals
                    .get(local.index())
                    .is_some_and(|l| !l.mutable);
                let lanes = if !immutable {
                    Lanes::Unknown
                } else if self.is_warp_id(value) {
                    Lanes::WarpId
                } else if self.warp_uniform(value) {
                    Lanes::Uniform
                } else {
                    Lanes::Unknown
                };
                if let Some(slot) = self.lanes.get_mut(local.index()) {
                    *slot = lanes;
                }
                visit::walk_stmt(self, s);
            }
            StmtKind::NamedBarrier(op) => {
                self.site(s, op);
                visit::walk_stmt(self, s);
            }
            // A warp's matrix access (`.sync.aligned`): where it may split
            // a warp (E0434).
            StmtKind::LoadVector {
                matrix: Some(_), ..
            }
            | StmtKind::StoreVector {
                matrix: Some(_), ..
            } => {
                self.split_site(s);
                visit::walk_stmt(self, s);
            }
            StmtKind::Call { func, .. } => {
                // Its arguments first, as they are evaluated.
                visit::walk_stmt(self, s);
                let syncs = self
                    .callees
                    .get(func.index())
                    .is_none_or(|c| c.sync.is_some());
                if let (true, Some(seq)) = (syncs, self.seq()) {
                    seq.push(Sync::Call(*func));
                }
            }
            // By its class (`ir::StmtClass`): a new kind of CTA-wide
            // barrier is classified there.
            _ => {
                if let (StmtClass::CtaBarrier(b), Some(seq)) = (s.kind.class(), self.seq()) {
                    seq.push(Sync::Barrier(b));
                }
                visit::walk_stmt(self, s);
            }
        }
    }

    fn visit_expr(&mut self, e: &'ir Expr) {
        // A call in an expression that runs a barrier: no sequence to match
        // (conservatively: it may be in any operand).
        if let ExprKind::Call { func, .. } = &e.kind {
            let syncs = self
                .callees
                .get(func.index())
                .is_none_or(|c| c.sync.is_some());
            if let (true, Some(seq)) = (syncs, self.seq()) {
                seq.barriers = None;
            }
        }
        // The right operand of `&&`/`||` runs only where the left allows.
        if let ExprKind::Binary(BinOp::And | BinOp::Or, a, b) = &e.kind {
            self.visit_expr(a);
            self.conds.push(a);
            self.visit_expr(b);
            self.conds.pop();
            return;
        }
        visit::walk_expr(self, e);
    }
}
