//! What a kernel's `wgmma` groups may be doing at each point, followed
//! along every path of a thread (the fence it needs, E0414, E0416), for
//! the PTX writer (where `wgmma.fence` goes) and the warpgroup pass.
//!
//! The state at a point ([`State`]): the accumulators the uncommitted
//! `wgmma`s write, the committed groups that may still be pending (newest
//! last; a `wgmma_wait(n)` keeps the newest `n`), the accumulators an
//! ordinary access touched since the last `wgmma.fence`, and per
//! accumulator the elements written on every path. Paths join at the end
//! of an `if` (the union of what may be pending, the intersection of what
//! is written); a loop's body is walked until the state at its head no
//! longer grows. Only the statements that hold a `wgmma` operation or an
//! accumulator's element are walked (the others leave the state as it
//! is), and past [`WALK_BUDGET`] statements a loop's head is taken as
//! anything at all (every group pending) instead of walked again, so the
//! cost stays linear whatever the nesting.
//!
//! The ISA's rules (PTX ISA 9.7.15.4, 9.7.15.7):
//! - `wgmma.fence` before the first `wgmma.mma_async`, and between a
//!   register access and a `wgmma.mma_async` that accesses the same
//!   registers (accumulators across `wgmma`s of one shape excepted): the
//!   writer puts one before each `wgmma` that some path reaches with its
//!   accumulator touched since the fence before the last `wgmma` on it,
//!   the kernel's start counting as touching every accumulator (so the
//!   first `wgmma` on each accumulator has one: ptxas 13.5 injects a
//!   `wait_group`, C7517, before a first `wgmma` on a second accumulator
//!   that only a fence before another accumulator's `wgmma` precedes);
//! - an accumulator read or written while a `wgmma` writing it may be
//!   pending is undefined (E0414; ptxas would insert a wait, C7517);
//! - a stage of a guarded array (`guards(...)`) released, by an arrival
//!   on a barrier that guards it, while a group reading it may be pending
//!   (E0415): stage indices are compared symbolically, as `(v + c) % m`
//!   of a loop's variable or an immutable local, and a group carried
//!   round a loop's back edge reads `v - step` where it read `v`, so the
//!   lagged release of the previous stage after `wgmma_wait(1)` is told
//!   apart from a release of the stage still being read;
//! - an element read where no path could have written it (E0416): a
//!   `wgmma` writes every element (with `accumulate` a constant `true` it
//!   also reads them first); an element index that is not a constant in
//!   its run, or past the elements (E0418), is not followed, nor is an
//!   accumulator a `wgmma` that failed to check names.

use super::values::{At, Values};
use crate::ir::{
    visit, AccumId, BarrierOpKind, BinOp, Block, Expr, ExprKind, Kernel, LocalId, Place, PlaceKind,
    SharedId, Stmt, StmtId, StmtKind, Value,
};
use crate::span::Span;
use std::collections::HashMap;
use std::collections::{BTreeMap, HashSet};

/// How many statements the walk visits before it stops walking loops
/// again (their heads become [`State::top`]).
pub const WALK_BUDGET: usize = 1 << 20;

/// The most committed groups kept apart: `wgmma_wait(n)` takes `n` up to 7,
/// so an older group is retired by every wait and is kept merged.
const GROUPS: usize = 8;

/// The wgmma facts of a kernel.
#[derive(Clone, Debug, Default)]
pub struct WgmmaFacts {
    /// The `wgmma` statements the writer puts a `wgmma.fence` before.
    pub fence: HashSet<StmtId>,
    /// E0414, by the access's span.
    pub pending: BTreeMap<SpanKey, Pending>,
    /// E0416, by the access's span.
    pub uninit: BTreeMap<SpanKey, Uninit>,
    /// E0415, by the arrival's span.
    pub released: BTreeMap<SpanKey, Released>,
}

/// An arrival on a barrier that guards a stage a pending group may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Released {
    pub arrive: Span,
    pub array: SharedId,
    /// A `wgmma` of the group that reads the stage.
    pub wgmma: Span,
}

/// What is known of a stage index (the first index of a guarded array, or
/// a barrier's index), symbolically: `(v + off) % m` of an integer
/// variable `v` (a loop's or an immutable local's) when `m` is given, or
/// `v + off`; a constant; or nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Const(i128),
    Var {
        var: LocalId,
        off: i128,
        m: Option<i128>,
    },
    Any,
}

impl Stage {
    /// Whether the two may name the same stage.
    fn may_equal(self, o: Stage) -> bool {
        match (self, o) {
            (Stage::Const(a), Stage::Const(b)) => a == b,
            (
                Stage::Var { var, off, m },
                Stage::Var {
                    var: v2,
                    off: o2,
                    m: m2,
                },
            ) if var == v2 && m == m2 => match m {
                Some(m) if m > 0 => (off - o2).rem_euclid(m) == 0,
                _ => off == o2,
            },
            _ => true,
        }
    }

    /// The same stage seen one iteration of the loop over `var` later
    /// (`var` grew by `step`).
    fn shifted(self, v: LocalId, step: Option<i128>) -> Stage {
        match self {
            Stage::Var { var, off, m } if var == v => match step {
                Some(s) => Stage::Var {
                    var,
                    off: off - s,
                    m,
                },
                None => Stage::Any,
            },
            other => other,
        }
    }
}

/// A span as a map key, in source order.
pub type SpanKey = (u32, u32, u32);

fn key(s: Span) -> SpanKey {
    (s.file.0, s.start, s.end)
}

/// An access to an accumulator while a group writing it may be pending,
/// or to a fragment while a group reading it (an RS `wgmma`'s A) may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    pub access: Span,
    pub acc: AccumId,
    /// A `wgmma` of the group.
    pub wgmma: Span,
    /// Whether the group is committed (else: not even committed).
    pub committed: bool,
    /// The group reads `acc` as its A operand (E0451), else writes it
    /// (E0414).
    pub reads: bool,
}

/// A read of an accumulator before it is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uninit {
    pub access: Span,
    pub acc: AccumId,
    /// The read is a `wgmma` that accumulates (`accumulate = true`).
    pub by_wgmma: bool,
    /// The read is an RS `wgmma`'s A slice.
    pub slice: bool,
}

/// A set of accumulators (bit `i` for accumulator `i`; the 64th stands for
/// every one past it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Accs(u64);

impl Accs {
    const ALL: Accs = Accs(u64::MAX);

    fn of(a: AccumId) -> Accs {
        Accs(1 << a.0.min(63))
    }

    fn has(self, a: AccumId) -> bool {
        self.0 & Accs::of(a).0 != 0
    }

    fn or(self, o: Accs) -> Accs {
        Accs(self.0 | o.0)
    }
}

/// The `wgmma`s of one group: the accumulators they write, one of them,
/// the fragments they read as A operands (with one of those), and the
/// stages of guarded arrays they read (with the `wgmma`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Group {
    accs: Accs,
    site: Option<Span>,
    frags: Accs,
    frag_site: Option<Span>,
    reads: Vec<(SharedId, Stage, Span)>,
}

/// The most stages a group's reads keep apart; past it, one read of any
/// stage stands for them.
const READS: usize = 16;

impl Group {
    fn join(mut self, o: &Group) -> Group {
        self.accs = self.accs.or(o.accs);
        self.site = self.site.or(o.site);
        self.frags = self.frags.or(o.frags);
        self.frag_site = self.frag_site.or(o.frag_site);
        for r in &o.reads {
            if !self.reads.contains(r) {
                self.reads.push(*r);
            }
        }
        if let Some(&(a, _, w)) = self.reads.first().filter(|_| self.reads.len() > READS) {
            self.reads.retain(|r| r.0 != a);
            self.reads.push((a, Stage::Any, w));
            self.reads.truncate(READS);
        }
        self
    }

    fn shifted(mut self, v: LocalId, step: Option<i128>) -> Group {
        for r in &mut self.reads {
            r.1 = r.1.shifted(v, step);
        }
        self
    }
}

/// What may be going on at one point of a thread's paths.
#[derive(Clone, Debug, PartialEq, Eq)]
struct State {
    open: Group,
    /// Newest last, at most [`GROUPS`].
    committed: Vec<Group>,
    /// Touched by an ordinary access since the last `wgmma.fence`.
    dirty: Accs,
    /// Per accumulator, the elements some path has written (bit `i`): a
    /// read of one no path wrote is an error; one that only some paths
    /// wrote (a loop that may run no time) is not.
    init: Vec<u128>,
}

impl State {
    fn start(accums: usize) -> State {
        State {
            open: Group::default(),
            committed: Vec::new(),
            dirty: Accs::ALL,
            init: vec![0; accums],
        }
    }

    /// Anything at all: every accumulator pending in every group, touched,
    /// unwritten.
    fn top(accums: usize, site: Span) -> State {
        let all = Group {
            accs: Accs::ALL,
            site: Some(site),
            frags: Accs::ALL,
            frag_site: Some(site),
            reads: Vec::new(),
        };
        State {
            open: all.clone(),
            committed: vec![all; GROUPS],
            dirty: Accs::ALL,
            init: vec![0; accums],
        }
    }

    fn join(&self, o: &State) -> State {
        let n = self.committed.len().max(o.committed.len());
        // Aligned at the newest.
        let at = |v: &[Group], k: usize| -> Group {
            v.len()
                .checked_sub(n - k)
                .and_then(|i| v.get(i))
                .cloned()
                .unwrap_or_default()
        };
        State {
            open: self.open.clone().join(&o.open),
            committed: (0..n)
                .map(|k| at(&self.committed, k).join(&at(&o.committed, k)))
                .collect(),
            dirty: self.dirty.or(o.dirty),
            init: self.init.iter().zip(&o.init).map(|(a, b)| a | b).collect(),
        }
    }

    /// The same state seen one iteration of the loop over `v` later.
    fn shifted(mut self, v: LocalId, step: Option<i128>) -> State {
        self.open = self.open.shifted(v, step);
        self.committed = self
            .committed
            .into_iter()
            .map(|g| g.shifted(v, step))
            .collect();
        self
    }

    /// A group that may be pending and writes `acc`: a `wgmma` of it,
    /// whether it is committed.
    fn writer(&self, acc: AccumId) -> Option<(Span, bool)> {
        if self.open.accs.has(acc) {
            return self.open.site.map(|s| (s, false));
        }
        self.committed
            .iter()
            .rev()
            .find(|g| g.accs.has(acc))
            .and_then(|g| g.site.map(|s| (s, true)))
    }

    /// A group that may be pending and reads fragment `acc` as its A
    /// operand.
    fn reader(&self, acc: AccumId) -> Option<(Span, bool)> {
        if self.open.frags.has(acc) {
            return self.open.frag_site.map(|s| (s, false));
        }
        self.committed
            .iter()
            .rev()
            .find(|g| g.frags.has(acc))
            .and_then(|g| g.frag_site.map(|s| (s, true)))
    }
}

fn join(a: Option<State>, b: Option<State>) -> Option<State> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.join(&b)),
        (a, b) => a.or(b),
    }
}

/// The wgmma facts of a kernel's body.
pub fn of_kernel(k: &Kernel, values: &Values) -> WgmmaFacts {
    if k.accums.is_empty() && !uses_wgmma(&k.body.block) {
        return WgmmaFacts::default();
    }
    let mut relevant = HashSet::new();
    mark(&k.body.block, &mut relevant);
    let mut w = Walk {
        k,
        values,
        at: At::TOP,
        stages: HashMap::new(),
        relevant,
        visited: 0,
        loops: Vec::new(),
        out: WgmmaFacts::default(),
    };
    let _ = w.block(&k.body.block, Some(State::start(k.accums.len())));
    w.out
}

fn uses_wgmma(b: &Block) -> bool {
    let mut found = HashSet::new();
    mark(b, &mut found)
}

/// Marks the statements whose subtree holds a `wgmma` operation or an
/// accumulator's element; whether `b` holds one.
fn mark(b: &Block, out: &mut HashSet<StmtId>) -> bool {
    let mut any = false;
    for s in &b.stmts {
        any |= mark_stmt(s, out);
    }
    any
}

fn mark_stmt(s: &Stmt, out: &mut HashSet<StmtId>) -> bool {
    let mut finder = Finder { found: false, out };
    visit::Visit::visit_stmt(&mut finder, s);
    finder.found
}

/// Finds the statements that touch wgmma state, bottom up.
struct Finder<'o> {
    found: bool,
    out: &'o mut HashSet<StmtId>,
}

impl<'ir> visit::Visit<'ir> for Finder<'_> {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        let outer = std::mem::replace(&mut self.found, false);
        // A `break` or `continue` carries the state to its loop's exit or
        // head: the statements around one are walked too.
        if matches!(
            s.kind,
            StmtKind::Wgmma(_)
                | StmtKind::Fragment(_)
                | StmtKind::WgmmaCommit
                | StmtKind::WgmmaWait(_)
                | StmtKind::Barrier(_)
                | StmtKind::Break
                | StmtKind::Continue
        ) {
            self.found = true;
        }
        visit::walk_stmt(self, s);
        if self.found {
            self.out.insert(s.id);
        }
        self.found |= outer;
    }

    fn visit_place(&mut self, p: &'ir Place) {
        if let PlaceKind::Accum { .. } = p.kind {
            self.found = true;
        }
        visit::walk_place(self, p);
    }
}

struct Walk<'a> {
    k: &'a Kernel,
    values: &'a Values,
    at: At,
    /// What is known of each integer local as a stage index.
    stages: HashMap<LocalId, Stage>,
    relevant: HashSet<StmtId>,
    visited: usize,
    /// Per enclosing loop: the states its `continue`s and `break`s leave.
    loops: Vec<(Option<State>, Option<State>)>,
    out: WgmmaFacts,
}

impl Walk<'_> {
    fn block(&mut self, b: &Block, mut st: Option<State>) -> Option<State> {
        for s in &b.stmts {
            if st.is_none() {
                break;
            }
            st = self.stmt(s, st);
        }
        st
    }

    fn stmt(&mut self, s: &Stmt, st: Option<State>) -> Option<State> {
        if !self.relevant.contains(&s.id) {
            // Nothing here touches wgmma state; a jump still ends the path,
            // and a `let` may name a stage.
            if let StmtKind::Let { local, value } = &s.kind {
                let immutable = self
                    .k
                    .body
                    .locals
                    .get(local.index())
                    .is_some_and(|l| !l.mutable);
                let stage = if immutable {
                    self.stage(value)
                } else {
                    Stage::Any
                };
                self.stages.insert(*local, stage);
            }
            return match s.kind {
                StmtKind::Return(_) => None,
                StmtKind::Break | StmtKind::Continue => {
                    self.jump(matches!(s.kind, StmtKind::Break), st);
                    None
                }
                _ => st,
            };
        }
        self.visited += 1;
        let mut st = st?;
        match &s.kind {
            StmtKind::Let { value, local } => {
                self.expr(value, &mut st);
                let immutable = self
                    .k
                    .body
                    .locals
                    .get(local.index())
                    .is_some_and(|l| !l.mutable);
                let stage = if immutable {
                    self.stage(value)
                } else {
                    Stage::Any
                };
                self.stages.insert(*local, stage);
                Some(st)
            }
            StmtKind::Assign { value, .. } => {
                self.expr(value, &mut st);
                Some(st)
            }
            StmtKind::LetArray { values, .. } => {
                for v in values {
                    self.expr(v, &mut st);
                }
                Some(st)
            }
            StmtKind::Expr(e) | StmtKind::SyncWarp(e) => {
                self.expr(e, &mut st);
                Some(st)
            }
            StmtKind::Store { place, op, value } => {
                self.place_indices(place, &mut st);
                self.expr(value, &mut st);
                if let PlaceKind::Accum { acc, index } = &place.kind {
                    if op.is_some() {
                        self.access(*acc, index, place.span, false, &mut st);
                    }
                    self.access(*acc, index, place.span, true, &mut st);
                }
                Some(st)
            }
            StmtKind::LoadVector { place, .. } => {
                self.place_indices(place, &mut st);
                Some(st)
            }
            StmtKind::StoreVector { place, values, .. } => {
                self.place_indices(place, &mut st);
                for v in values {
                    self.expr(v, &mut st);
                }
                Some(st)
            }
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                self.expr(cond, &mut st);
                let then = self.block(then_block, Some(st.clone()));
                let els = match else_block {
                    Some(b) => self.block(b, Some(st)),
                    None => Some(st),
                };
                join(then, els)
            }
            StmtKind::While { cond, body } => {
                self.expr(cond, &mut st);
                self.looped(s.span, body, st, None)
            }
            StmtKind::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                for e in [start, end, step] {
                    self.expr(e, &mut st);
                }
                self.stages.insert(
                    *var,
                    Stage::Var {
                        var: *var,
                        off: 0,
                        m: None,
                    },
                );
                let step = self.values.int(step, self.at);
                self.looped(s.span, body, st, Some((*var, step)))
            }
            StmtKind::ForList { items, body, .. } => {
                for e in items {
                    self.expr(e, &mut st);
                }
                let outer = self.at;
                let runs: Vec<At> = self.values.runs(outer, s.id).collect();
                let mut cur = Some(st);
                for at in runs {
                    self.at = at;
                    cur = self.block(body, cur);
                }
                self.at = outer;
                cur
            }
            StmtKind::Poisoned { blocks, .. } => {
                let mut cur = Some(st);
                for b in blocks {
                    let inner = self.block(b, cur.clone());
                    cur = join(cur, inner);
                }
                cur
            }
            StmtKind::Wgmma(w) => {
                self.place_indices(&w.a, &mut st);
                self.place_indices(&w.b, &mut st);
                self.expr(&w.accumulate, &mut st);
                let frag = w.a_fragment();
                if st.dirty.has(w.acc) || frag.is_some_and(|(p, _)| st.dirty.has(p)) {
                    self.out.fence.insert(s.id);
                }
                // A fence orders every register access before it, but
                // ptxas 13.5 also wants one before the first `wgmma` on
                // each accumulator (without it, it injects a wait, C7517):
                // it cleans this `wgmma`'s accumulator (and A fragment)
                // only.
                if self.out.fence.contains(&s.id) {
                    st.dirty = Accs(st.dirty.0 & !Accs::of(w.acc).0);
                    if let Some((p, _)) = frag {
                        st.dirty = Accs(st.dirty.0 & !Accs::of(p).0);
                    }
                }
                // The A fragment's slice: read where some path wrote it.
                if let Some((p, index)) = frag {
                    self.slice_read(p, index, w.a.span, &st);
                    st.open.frags = st.open.frags.or(Accs::of(p));
                    st.open.frag_site = st.open.frag_site.or(Some(s.span));
                }
                let full = self.full(w.acc);
                let init = st.init.get(w.acc.index()).copied().unwrap_or(full);
                let always = matches!(
                    crate::ir::consteval::eval(&w.accumulate),
                    Ok(Value::Bool(true))
                );
                let failed = self.k.accums.get(w.acc.index()).is_some_and(|a| a.failed);
                if always && init != full && !failed {
                    self.out.uninit.entry(key(w.acc_span)).or_insert(Uninit {
                        access: w.acc_span,
                        acc: w.acc,
                        by_wgmma: true,
                        slice: false,
                    });
                }
                if let Some(i) = st.init.get_mut(w.acc.index()) {
                    *i = full;
                }
                let reads = self.reads(w, s.span);
                st.open = st.open.join(&Group {
                    accs: Accs::of(w.acc),
                    site: Some(s.span),
                    reads,
                    ..Group::default()
                });
                Some(st)
            }
            StmtKind::Fragment(f) => {
                if let Some(k) = &f.factor {
                    self.expr(k, &mut st);
                }
                self.whole(f.src, f.src_span, false, &mut st);
                if f.kind.reads_dst() {
                    self.whole(f.dst, f.dst_span, false, &mut st);
                }
                self.whole(f.dst, f.dst_span, true, &mut st);
                Some(st)
            }
            StmtKind::WgmmaCommit => {
                let open = std::mem::take(&mut st.open);
                st.committed.push(open);
                if st.committed.len() > GROUPS {
                    let old = st.committed.remove(0);
                    if let Some(first) = st.committed.first_mut() {
                        *first = first.clone().join(&old);
                    }
                }
                Some(st)
            }
            StmtKind::WgmmaWait(n) => {
                let keep = (*n as usize).min(st.committed.len());
                let drop = st.committed.len() - keep;
                st.committed.drain(..drop);
                Some(st)
            }
            StmtKind::Return(value) => {
                if let Some(v) = value {
                    self.expr(v, &mut st);
                }
                None
            }
            StmtKind::Break | StmtKind::Continue => {
                self.jump(matches!(s.kind, StmtKind::Break), Some(st));
                None
            }
            StmtKind::Call { args, .. } => {
                for a in args {
                    self.expr(a, &mut st);
                }
                Some(st)
            }
            StmtKind::Barrier(op) => {
                if let Some(i) = &op.barrier.index {
                    self.expr(i, &mut st);
                }
                if matches!(
                    op.kind,
                    BarrierOpKind::Arrive { .. } | BarrierOpKind::ArriveRemote { .. }
                ) {
                    self.release(op, s.span, &st);
                }
                Some(st)
            }
            StmtKind::NamedBarrier(op) => {
                if let Some(i) = &op.index {
                    self.expr(i, &mut st);
                }
                Some(st)
            }
            StmtKind::CopyAsync {
                dst, src, bytes, ..
            }
            | StmtKind::CopyAsyncStore { dst, src, bytes } => {
                self.place_indices(dst, &mut st);
                self.place_indices(src, &mut st);
                self.expr(bytes, &mut st);
                Some(st)
            }
            StmtKind::TensorCopy(c) => {
                c.smem.indices.iter().for_each(|i| self.expr(i, &mut st));
                c.coords.iter().for_each(|i| self.expr(i, &mut st));
                if let crate::ir::TensorCopyKind::Load { barrier, mask } = &c.kind {
                    if let Some(i) = &barrier.index {
                        self.expr(i, &mut st);
                    }
                    if let Some(m) = mask {
                        self.expr(m, &mut st);
                    }
                }
                Some(st)
            }
            StmtKind::SyncThreads
            | StmtKind::ClusterSync
            | StmtKind::FenceProxyAsync
            | StmtKind::Fence(_)
            | StmtKind::CopyAsyncCommit
            | StmtKind::CopyAsyncWait(_)
            | StmtKind::SetMaxRegs(_) => Some(st),
        }
    }

    /// The stages of guarded arrays a `wgmma` reads.
    fn reads(&self, w: &crate::ir::Wgmma, site: Span) -> Vec<(SharedId, Stage, Span)> {
        let mut out = Vec::new();
        let n = self.k.accums.get(w.acc.index()).map_or(0, |a| a.n);
        for (p, rows, trans) in [(&w.a, crate::ir::Accum::M, w.trans_a), (&w.b, n, w.trans_b)] {
            let PlaceKind::Shared { array, indices } = &p.kind else {
                continue;
            };
            let guarded = self.k.barriers.iter().any(|g| g.guards.contains(array));
            if !guarded {
                continue;
            }
            // A transposed tile wider than a span also reads the blocks of
            // its third-to-last dimension: a stage index comes before them.
            let span = self.k.shared.get(array.index()).and_then(|a| a.dims.last());
            let wide = trans && span.is_some_and(|&s| u64::from(rows) > s);
            let stage = match indices.first() {
                Some(i) if indices.len() >= 3 + usize::from(wide) => self.stage(i),
                _ if indices.len() >= 3 => Stage::Any,
                _ => continue,
            };
            out.push((*array, stage, site));
        }
        out
    }

    /// An index as a [`Stage`].
    fn stage(&self, e: &Expr) -> Stage {
        if let Some(c) = self.values.int(e, self.at) {
            return Stage::Const(c);
        }
        match &e.kind {
            ExprKind::Local(l) => self.stages.get(l).copied().unwrap_or(Stage::Any),
            ExprKind::Cast(a) if e.ty.is_int() => self.stage(a),
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                match (self.stage(a), self.values.int(b, self.at)) {
                    (Stage::Var { var, off, m: None }, Some(c)) => Stage::Var {
                        var,
                        off: if *op == BinOp::Add { off + c } else { off - c },
                        m: None,
                    },
                    _ => Stage::Any,
                }
            }
            ExprKind::Binary(BinOp::Rem, a, b) => {
                match (self.stage(a), self.values.int(b, self.at)) {
                    (Stage::Var { var, off, m: None }, Some(c)) if c > 0 => Stage::Var {
                        var,
                        off,
                        m: Some(c),
                    },
                    _ => Stage::Any,
                }
            }
            _ => Stage::Any,
        }
    }

    /// An arrival on `op`'s barrier: a stage it guards that a pending
    /// group may read is released too early (E0415).
    fn release(&mut self, op: &crate::ir::BarrierOp, span: Span, st: &State) {
        let Some(g) = self.k.barriers.get(op.barrier.group.index()) else {
            return;
        };
        if g.guards.is_empty() {
            return;
        }
        let index = match &op.barrier.index {
            Some(i) => self.stage(i),
            None => Stage::Const(0),
        };
        let groups = std::iter::once(&st.open).chain(st.committed.iter());
        for group in groups {
            for &(array, stage, wgmma) in &group.reads {
                if g.guards.contains(&array) && stage.may_equal(index) {
                    self.out.released.entry(key(span)).or_insert(Released {
                        arrive: span,
                        array,
                        wgmma,
                    });
                    return;
                }
            }
        }
    }

    /// Every element of accumulator `acc` written.
    fn full(&self, acc: AccumId) -> u128 {
        let n = self.k.accums.get(acc.index()).map_or(0, |a| a.elements());
        if n >= 128 {
            u128::MAX
        } else {
            (1u128 << n) - 1
        }
    }

    /// A `break` (or `continue`) leaves the innermost loop in `st`.
    fn jump(&mut self, brk: bool, st: Option<State>) {
        if let Some((cont, exit)) = self.loops.last_mut() {
            if brk {
                *exit = join(exit.take(), st);
            } else {
                *cont = join(cont.take(), st);
            }
        }
    }

    /// A `while` or `for` loop: its body is walked until the state at its
    /// head stops growing; what leaves it is the head's state and its
    /// `break`s.
    fn looped(
        &mut self,
        span: Span,
        body: &Block,
        entry: State,
        var: Option<(LocalId, Option<i128>)>,
    ) -> Option<State> {
        let mut head = entry.clone();
        loop {
            if self.visited > WALK_BUDGET {
                head = State::top(self.k.accums.len(), span);
            }
            self.loops.push((None, None));
            let end = self.block(body, Some(head.clone()));
            let (cont, exit) = self.loops.pop().unwrap_or((None, None));
            // What the next iteration sees of this one's stages: the loop's
            // variable has grown by its step.
            let back = join(end, cont).map(|b| match var {
                Some((v, step)) => b.shifted(v, step),
                None => b,
            });
            let next = match back {
                Some(b) => entry.join(&b).join(&head),
                None => head.clone(),
            };
            if next == head {
                return join(Some(head), exit);
            }
            head = next;
        }
    }

    /// The index expressions of a place (an accumulator's are no access
    /// of their own).
    fn place_indices(&mut self, p: &Place, st: &mut State) {
        match &p.kind {
            PlaceKind::Global { index, .. } => self.expr(index, st),
            PlaceKind::Shared { indices, .. } => indices.iter().for_each(|i| self.expr(i, st)),
            PlaceKind::Remote { rank, indices, .. } => {
                self.expr(rank, st);
                indices.iter().for_each(|i| self.expr(i, st));
            }
            PlaceKind::SharedAt { addr, .. } => self.expr(addr, st),
            PlaceKind::Accum { index, .. } => self.expr(index, st),
            PlaceKind::Register { indices, .. } => indices.iter().for_each(|i| self.expr(i, st)),
        }
    }

    /// An ordinary access to `acc`'s registers: E0414 while a group
    /// writing it may be pending, E0451 while one reading it; touched.
    fn touch(&mut self, acc: AccumId, span: Span, st: &mut State) {
        let found = st
            .writer(acc)
            .map(|(w, c)| (w, c, false))
            .or_else(|| st.reader(acc).map(|(w, c)| (w, c, true)));
        if let Some((wgmma, committed, reads)) = found {
            self.out.pending.entry(key(span)).or_insert(Pending {
                access: span,
                acc,
                wgmma,
                committed,
                reads,
            });
        }
        st.dirty = st.dirty.or(Accs::of(acc));
    }

    /// A whole-fragment operation's read (`write` false) or write of every
    /// element of `acc`.
    fn whole(&mut self, acc: AccumId, span: Span, write: bool, st: &mut State) {
        self.touch(acc, span, st);
        if self.k.accums.get(acc.index()).is_none_or(|a| a.failed) {
            return;
        }
        let full = self.full(acc);
        let Some(init) = st.init.get_mut(acc.index()) else {
            return;
        };
        if write {
            *init = full;
        } else if *init != full {
            self.out.uninit.entry(key(span)).or_insert(Uninit {
                access: span,
                acc,
                by_wgmma: false,
                slice: false,
            });
        }
    }

    /// An RS `wgmma`'s read of the slice of fragment `acc` from element
    /// `index`: each of its elements written on some path (E0416).
    fn slice_read(&mut self, acc: AccumId, index: &Expr, span: Span, st: &State) {
        let Some(a) = self.k.accums.get(acc.index()).filter(|a| !a.failed) else {
            return;
        };
        let n = crate::ir::Accum::SLICE_ELEMENTS;
        let Some(i) = self
            .values
            .int(index, self.at)
            .and_then(|i| u32::try_from(i).ok())
            .filter(|i| i.checked_add(n).is_some_and(|e| e <= a.elements().min(128)))
        else {
            return;
        };
        let bits = (((1u128 << n) - 1) << i) & self.full(acc);
        let init = st.init.get(acc.index()).copied().unwrap_or(u128::MAX);
        if init & bits != bits {
            self.out.uninit.entry(key(span)).or_insert(Uninit {
                access: span,
                acc,
                by_wgmma: false,
                slice: true,
            });
        }
    }

    /// An ordinary read (`write` false) or write of element `index` of
    /// `acc`.
    fn access(&mut self, acc: AccumId, index: &Expr, span: Span, write: bool, st: &mut State) {
        self.touch(acc, span, st);
        let Some(a) = self.k.accums.get(acc.index()).filter(|a| !a.failed) else {
            return;
        };
        let Some(i) = self
            .values
            .int(index, self.at)
            .and_then(|i| u32::try_from(i).ok())
            .filter(|i| *i < a.elements().min(128))
        else {
            return;
        };
        let bit = 1u128 << i;
        let Some(init) = st.init.get_mut(acc.index()) else {
            return;
        };
        if write {
            *init |= bit;
        } else if *init & bit == 0 {
            self.out.uninit.entry(key(span)).or_insert(Uninit {
                access: span,
                acc,
                by_wgmma: false,
                slice: false,
            });
        }
    }

    /// Walks an expression in evaluation order for its accesses to
    /// accumulators (and the statements of its `if` expressions).
    fn expr(&mut self, e: &Expr, st: &mut State) {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => {
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a, st),
            ExprKind::Binary(_, a, b) => {
                self.expr(a, st);
                self.expr(b, st);
            }
            ExprKind::Select(c, a, b) => {
                self.expr(c, st);
                self.expr(a, st);
                self.expr(b, st);
            }
            ExprKind::If {
                cond,
                then_block,
                then_value,
                else_block,
                else_value,
            } => {
                self.expr(cond, st);
                let mut results = Vec::new();
                for (b, v) in [(then_block, then_value), (else_block, else_value)] {
                    if let Some(mut s) = self.block(b, Some(st.clone())) {
                        self.expr(v, &mut s);
                        results.push(s);
                    }
                }
                let mut joined: Option<State> = None;
                for r in results {
                    joined = join(joined, Some(r));
                }
                if let Some(j) = joined {
                    *st = j;
                }
            }
            ExprKind::Load(p) => {
                self.place_indices(p, st);
                if let PlaceKind::Accum { acc, index } = &p.kind {
                    self.access(*acc, index, p.span, false, st);
                }
            }
            ExprKind::AddrOf(p) => self.place_indices(p, st),
            ExprKind::Call { args, .. } | ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
                args.iter().for_each(|a| self.expr(a, st))
            }
            ExprKind::Atomic { place, args, .. } => {
                self.place_indices(place, st);
                args.iter().for_each(|a| self.expr(a, st));
            }
            ExprKind::BarrierTest {
                barrier, parity, ..
            } => {
                if let Some(i) = &barrier.index {
                    self.expr(i, st);
                }
                if let crate::ir::Parity::Explicit(p) = parity.as_ref() {
                    self.expr(p, st);
                }
            }
        }
    }
}
