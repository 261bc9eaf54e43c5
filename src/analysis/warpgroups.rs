//! What the threads of a warpgroup (four consecutive warps: 128 threads
//! whose first warp's index is a multiple of 4) do together, and what each
//! warpgroup does with its registers: the facts behind the warpgroup pass
//! (`crate::warpgroup`: E0413, E0421, E0422) and the PTX writer's choice
//! of `setmaxnreg.inc` or `.dec`.
//!
//! **Warpgroup-uniform conditions.** An operation every thread of a
//! warpgroup must run together (`set_max_regs`) may stand only under
//! conditions that are the same in every thread of a warpgroup: built from
//! values uniform in the CTA, from `warp_id / 4k` and `warp_id >> s`
//! (`s >= 2`), from comparisons of `warp_id` that split at a warpgroup
//! boundary (`warp_id < 4`, `warp_id >= 8`), from the same of `thread_idx.x`
//! with 128 in a block whose x extent is a multiple of 128 (then also
//! `thread_idx.y`/`z`), and from immutable locals bound to such values
//! (`let wg = warp_id / 4;`). A value is classified as a function of the
//! thread's position ([`Class`]): `warp_id` is `floor(t / 32)` of the
//! thread's linear index `t`, `warp_id / 4` is `floor(t / 128)`, the same
//! in each warpgroup. A `return`, `break` or `continue` under a condition
//! that is not warpgroup-uniform lets some threads of a warpgroup skip
//! what follows: every warpgroup operation of the kernel is then taken as
//! split by it (the analysis does not find out which ones follow it).
//!
//! **Register counts.** Every warp starts a kernel with the count at entry
//! ([`crate::ir::entry_registers`]); `set_max_regs(n)` makes it `n` for its
//! warpgroup, an `.inc` from a smaller count or a `.dec` from a larger one.
//! The walk keeps, per warpgroup, the counts it may hold at each point
//! (a set: paths join) and whether a `set_max_regs` ran since the last
//! synchronisation of the CTA (`sync_threads()`, `cluster_sync()`, a named
//! barrier's `sync()`, a call of a function that runs one): the ISA wants
//! the warpgroup's warps synchronised between two `setmaxnreg`s
//! (§9.7.19.5). A condition whose warpgroups are known (a test of
//! `warp_id / 4` against constants) sends each warpgroup down its branch;
//! another sends every warpgroup down both, and the budgets it finds are
//! then not exact (the pool check, E0422, needs them exact). A
//! `set_max_regs` inside a `while` or `for` loop runs again each
//! iteration; such loops are refused (E0421), so the walk goes through
//! each loop body once. Loops over constant lists are walked once per
//! element, as the unrolled code runs.

use super::values::{At, Values};
use super::{BodyInfo, FunctionInfo};
use crate::ir::{
    self, BinOp, Block, Dim, Expr, ExprKind, Kernel, LocalId, NamedOpKind, Place, PlaceKind,
    Special, Stmt, StmtClass, StmtId, StmtKind, UnaryOp, Value,
};
use crate::span::Span;
use std::collections::HashMap;

/// The most warpgroups a block has: 1024 threads.
pub const MAX_WARPGROUPS: usize = 8;

/// The warpgroup facts of a kernel (a device function has none).
#[derive(Clone, Debug, Default)]
pub struct WarpgroupFacts {
    /// The warpgroups of the block, when `block(...)` gives it.
    pub warpgroups: Option<u32>,
    /// The registers per thread at entry, for a kernel with `block(...)`
    /// ([`crate::ir::entry_registers`], counting its largest
    /// `set_max_regs`).
    pub entry: Option<u32>,
    /// Per warpgroup operation, by its statement: a condition around it
    /// (the innermost), or an early exit, that may split a warpgroup.
    /// Absent: every thread of a warpgroup that reaches the kernel's start
    /// runs it together.
    pub split: HashMap<StmtId, Split>,
    /// Per `set_max_regs`, how it changes the count of the warpgroups
    /// that run it.
    pub regs: HashMap<StmtId, RegsChange>,
    /// Per warpgroup, the most registers it may hold after the
    /// `set_max_regs` it runs (the count at entry if it may end without
    /// one), when every warpgroup's path is known: the pool check.
    pub budgets: Option<Vec<Budget>>,
    /// A `set_max_regs` that may follow another in its warpgroup with no
    /// synchronisation between them.
    pub unsynced: Vec<Unsynced>,
    /// A `set_max_regs` inside a `while` or `for` loop (the loop's span).
    pub in_loop: Vec<(Span, Span)>,
    /// The warpgroup operations, in walk order (a statement once).
    pub ops: Vec<Op>,
    /// Per `wgmma` the control flow may reach with a `set_max_regs`'s
    /// count, the smallest such count (W0425).
    pub low: Vec<LowBudget>,
    /// Per warpgroup, the accumulators it may use (a `wgmma` or an
    /// element): bit `i` for accumulator `i`, when `block(...)` gives the
    /// warpgroups.
    pub uses: Option<Vec<u64>>,
}

/// The smallest budget a `wgmma` may be reached with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowBudget {
    pub wgmma: Span,
    pub acc: ir::AccumId,
    pub budget: u32,
    /// The `set_max_regs` that sets it.
    pub set_by: Span,
}

/// A warpgroup operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub id: StmtId,
    /// The built-in as written (`wgmma`).
    pub name: &'static str,
    pub span: Span,
    /// A `wgmma`'s accumulator.
    pub acc: Option<ir::AccumId>,
}

/// What may split a warpgroup at an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// A condition that may differ between the threads of a warpgroup.
    pub cond: Span,
    /// The `return`, `break` or `continue` under it that some threads of
    /// a warpgroup may take, when that is the cause.
    pub jump: Option<Span>,
}

/// How a `set_max_regs(n)` changes its warpgroups' count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegsChange {
    pub n: u32,
    pub span: Span,
    /// The counts the warpgroups that run it may hold before it.
    pub from: Counts,
}

impl RegsChange {
    /// `setmaxnreg.inc` (true) or `.dec` (false): from every count before
    /// it the same way (`None`: an increase from some, a decrease from
    /// others). A count equal to `n` is an `.inc` (which then waits for
    /// nothing).
    pub fn increase(&self, entry: u32) -> Option<bool> {
        let mut inc = false;
        let mut dec = false;
        for c in self.from.values(entry) {
            if c <= self.n {
                inc = true;
            } else {
                dec = true;
            }
        }
        match (inc, dec) {
            (_, false) => Some(true),
            (false, true) => Some(false),
            (true, true) => None,
        }
    }
}

/// A set of register counts: bit `(n - 24) / 8` for `n`, and
/// [`Counts::ENTRY`] for the count at entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts(u64);

impl Counts {
    const ENTRY: u64 = 1 << 30;

    fn of(n: u32) -> Counts {
        Counts(1u64 << ((n.saturating_sub(ir::REGS_MIN) / ir::REGS_STEP) & 31))
    }

    /// The counts, with `entry` for the count at entry, in increasing
    /// order of their bits.
    pub fn values(self, entry: u32) -> impl Iterator<Item = u32> {
        (0..=30u32)
            .filter(move |b| self.0 & (1 << b) != 0)
            .map(move |b| {
                if b == 30 {
                    entry
                } else {
                    ir::REGS_MIN + b * ir::REGS_STEP
                }
            })
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// A warpgroup's register budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub regs: u32,
    /// The `set_max_regs` that asks for it (`None`: the count at entry).
    pub set_by: Option<Span>,
}

/// Two `set_max_regs` of one warpgroup with no synchronisation between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsynced {
    pub second: Span,
    pub first: Span,
}

/// What a value is in the threads of a warpgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// May differ between the threads of one warpgroup.
    Varying,
    /// The same in every thread of a warpgroup; for a `bool`, the
    /// warpgroups where it holds (bit `w`), when known.
    Uniform(Option<u8>),
    /// `floor(t / q)` of the thread's position `t`: its linear index in
    /// the CTA when `linear` (its warpgroup is `t / 128`), else
    /// `thread_idx.x` in a block whose x extent is a multiple of 128.
    Index { q: u64, linear: bool },
}

impl Class {
    fn uniform(self) -> bool {
        match self {
            Class::Varying => false,
            Class::Uniform(_) => true,
            Class::Index { q, .. } => q % u64::from(ir::WARPGROUP) == 0,
        }
    }

    /// The warpgroups where a uniform `bool` holds, when known.
    fn set(self) -> Option<u8> {
        match self {
            Class::Uniform(s) => s,
            _ => None,
        }
    }
}

/// What one warpgroup may hold at one point of the walk.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// The counts it may hold here (empty: it does not get here).
    counts: Counts,
    /// A `set_max_regs` it may have run since the last synchronisation.
    pending: Option<Span>,
}

/// What each warpgroup may hold at one point of the walk (warpgroup `w`
/// in slot `w`), and what the point may be reached with along the control
/// flow, whatever the warpgroups (ptxas's view: it allocates registers
/// per region of the control flow, and knows nothing of which warpgroup
/// takes a branch).
#[derive(Clone, Copy, Debug, Default)]
struct State {
    slots: [Slot; MAX_WARPGROUPS],
    cfg: Counts,
}

impl State {
    fn join(mut self, other: State) -> State {
        for (a, b) in self.slots.iter_mut().zip(other.slots) {
            a.counts = Counts(a.counts.0 | b.counts.0);
            a.pending = a.pending.or(b.pending);
        }
        self.cfg = Counts(self.cfg.0 | other.cfg.0);
        self
    }

    /// The part of the state of the warpgroups in `set`.
    fn only(mut self, set: u8) -> State {
        for (w, slot) in self.slots.iter_mut().enumerate() {
            if set & (1 << w) == 0 {
                *slot = Slot::default();
            }
        }
        self
    }

    /// The warpgroups that get here.
    fn reached(&mut self) -> impl Iterator<Item = (usize, &mut Slot)> {
        self.slots
            .iter_mut()
            .enumerate()
            .filter(|(_, s)| !s.counts.is_empty())
    }
}

/// The warpgroup facts of a kernel's body.
pub fn of_kernel(k: &Kernel, info: &BodyInfo, callees: &[FunctionInfo]) -> WarpgroupFacts {
    let threads = k.block_threads();
    let warpgroups = threads.map(|t| t.div_ceil(ir::WARPGROUP));
    let entry = threads.and_then(|t| ir::entry_registers(t, info.usage.max_regs));
    let mut w = Walk {
        info,
        callees,
        values: &info.values,
        at: At::TOP,
        block: k.block,
        groups: warpgroups.map_or(0, |g| g.min(MAX_WARPGROUPS as u32)),
        lanes: vec![Class::Varying; k.body.locals.len()],
        splits: Vec::new(),
        unknown: 0,
        loops: Vec::new(),
        exits: Vec::new(),
        jump: None,
        exact: true,
        ops: std::collections::HashSet::new(),
        setters: HashMap::new(),
        best: [None; MAX_WARPGROUPS],
        ends: [Counts::default(); MAX_WARPGROUPS],
        uses: [0; MAX_WARPGROUPS],
        out: WarpgroupFacts {
            warpgroups,
            entry,
            ..WarpgroupFacts::default()
        },
    };
    let mut start = State::default();
    for slot in start.slots.iter_mut().take(w.groups as usize) {
        slot.counts = Counts(Counts::ENTRY);
    }
    start.cfg = Counts(Counts::ENTRY);
    let end = w.block(&k.body.block, start);
    w.end(&end);
    let mut out = w.out;
    if let Some(jump) = w.jump {
        for s in &w.ops {
            out.split.entry(*s).or_insert(jump);
        }
    }
    if let (true, Some(e), Some(_)) = (w.exact, entry, warpgroups) {
        let budgets = w
            .ends
            .iter()
            .zip(w.best)
            .take(w.groups as usize)
            .map(|(ends, best)| {
                let keeps = ends.0 & Counts::ENTRY != 0;
                match best {
                    Some((n, s)) if n >= e || !keeps => Budget {
                        regs: n,
                        set_by: Some(s),
                    },
                    _ => Budget {
                        regs: e,
                        set_by: None,
                    },
                }
            })
            .collect();
        out.budgets = Some(budgets);
    }
    if warpgroups.is_some() {
        out.uses = Some(w.uses.iter().take(w.groups as usize).copied().collect());
    }
    out
}

struct Walk<'a> {
    info: &'a BodyInfo,
    callees: &'a [FunctionInfo],
    values: &'a Values,
    /// The run of the loops over constant lists being walked.
    at: At,
    block: Option<[u32; 3]>,
    /// Warpgroups in the block (0: unknown).
    groups: u32,
    /// Per local, what it holds (overwritten in each run of a loop over a
    /// list's body, where it is declared again).
    lanes: Vec<Class>,
    /// Per enclosing condition, outermost first: its span when it may
    /// split a warpgroup.
    splits: Vec<Option<Span>>,
    /// Enclosing conditions whose warpgroups are not known.
    unknown: u32,
    /// Enclosing `while` and `for` loops.
    loops: Vec<Span>,
    /// Per enclosing loop, the state where its `break`s and `continue`s
    /// leave.
    exits: Vec<State>,
    /// The first `return`, `break` or `continue` that may split a
    /// warpgroup.
    jump: Option<Split>,
    /// Every warpgroup's path is known.
    exact: bool,
    /// The warpgroup operations met.
    ops: std::collections::HashSet<StmtId>,
    /// The first `set_max_regs` of each count.
    setters: HashMap<u32, Span>,
    /// Per warpgroup, the largest `set_max_regs` it may run.
    best: [Option<(u32, Span)>; MAX_WARPGROUPS],
    /// Per warpgroup, the counts it may leave the kernel with.
    ends: [Counts; MAX_WARPGROUPS],
    /// Per warpgroup, the accumulators it uses.
    uses: [u64; MAX_WARPGROUPS],
    out: WarpgroupFacts,
}

impl Walk<'_> {
    fn all(&self) -> u8 {
        match self.groups {
            0 => 0,
            g if g >= 8 => u8::MAX,
            g => (1u8 << g) - 1,
        }
    }

    /// A path ends (`return`, the end of the kernel) in `st`.
    fn end(&mut self, st: &State) {
        for (e, s) in self.ends.iter_mut().zip(st.slots) {
            *e = Counts(e.0 | s.counts.0);
        }
    }

    /// The innermost enclosing condition that may split a warpgroup.
    fn split(&self) -> Option<Span> {
        self.splits.iter().rev().find_map(|s| *s)
    }

    /// A constant operand: a compile-time constant, or an immutable local
    /// bound to one, where the walk is.
    fn int(&self, e: &Expr) -> Option<i128> {
        self.values.int(e, self.at)
    }

    /// The block's x extent is a multiple of 128: `thread_idx.x` counts
    /// rows of whole warpgroups.
    fn rows(&self) -> bool {
        self.block
            .is_some_and(|[x, _, _]| x != 0 && x % ir::WARPGROUP == 0)
    }

    fn class(&self, e: &Expr) -> Class {
        if !self.info.varies(e.id) {
            return match e.kind {
                ExprKind::Const(Value::Bool(b)) => {
                    Class::Uniform(Some(if b { self.all() } else { 0 }))
                }
                _ => Class::Uniform(None),
            };
        }
        match &e.kind {
            ExprKind::Special(Special::WarpId) => Class::Index {
                q: u64::from(crate::ir::NamedBarrier::WARP),
                linear: true,
            },
            ExprKind::Special(Special::ThreadIdx(Dim::X)) if self.rows() => Class::Index {
                q: 1,
                linear: self.block.is_some_and(|[_, y, z]| y == 1 && z == 1),
            },
            ExprKind::Special(Special::ThreadIdx(Dim::Y | Dim::Z)) if self.rows() => {
                Class::Uniform(None)
            }
            ExprKind::Local(l) => self.local(*l),
            ExprKind::Cast(a) => match self.class(a) {
                // Positions are below 1024: every integer of 16 bits or
                // more holds them.
                c @ Class::Index { .. } if e.ty.is_int() && e.ty.size() >= 2 => c,
                Class::Index { .. } => Class::Varying,
                c => c,
            },
            ExprKind::Unary(UnaryOp::Not, a) => match self.class(a) {
                Class::Uniform(s) => Class::Uniform(s.map(|s| self.all() & !s)),
                c if c.uniform() => Class::Uniform(None),
                _ => Class::Varying,
            },
            ExprKind::Unary(_, a) => {
                if self.class(a).uniform() {
                    Class::Uniform(None)
                } else {
                    Class::Varying
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b),
            ExprKind::Select(c, a, b) => {
                if [c, a, b].iter().all(|x| self.class(x).uniform()) {
                    Class::Uniform(None)
                } else {
                    Class::Varying
                }
            }
            _ => Class::Varying,
        }
    }

    fn local(&self, l: LocalId) -> Class {
        match self.lanes.get(l.index()) {
            Some(Class::Varying) | None if !self.info.local_varies(l) => Class::Uniform(None),
            Some(c) => *c,
            None => Class::Varying,
        }
    }

    fn binary(&self, op: BinOp, a: &Expr, b: &Expr) -> Class {
        let (ca, cb) = (self.class(a), self.class(b));
        match (op, ca, cb) {
            (BinOp::And, Class::Uniform(x), Class::Uniform(y)) => {
                return Class::Uniform(x.zip(y).map(|(x, y)| x & y))
            }
            (BinOp::Or, Class::Uniform(x), Class::Uniform(y)) => {
                return Class::Uniform(x.zip(y).map(|(x, y)| x | y))
            }
            (BinOp::Div, Class::Index { q, linear }, _) => {
                if let Some(d) = self.int(b).and_then(|d| u64::try_from(d).ok()) {
                    if d > 0 {
                        return index(q.saturating_mul(d), linear);
                    }
                }
            }
            (BinOp::Shr, Class::Index { q, linear }, _) => {
                if let Some(s) = self.int(b).and_then(|s| u32::try_from(s).ok()) {
                    let d = 1u64.checked_shl(s).unwrap_or(u64::MAX);
                    return index(q.saturating_mul(d), linear);
                }
            }
            (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge, _, _) => {
                let cmp = match (ca, cb) {
                    (Class::Index { q, linear }, _) => self.int(b).map(|c| (q, linear, op, c)),
                    (_, Class::Index { q, linear }) => {
                        self.int(a).map(|c| (q, linear, flip(op), c))
                    }
                    _ => None,
                };
                if let Some((q, linear, op, c)) = cmp {
                    return self.compare(q, linear, op, c);
                }
            }
            _ => {}
        }
        if ca.uniform() && cb.uniform() {
            Class::Uniform(None)
        } else {
            Class::Varying
        }
    }

    /// `floor(t / q) op c`: in which warpgroups it holds, when it is the
    /// same in every thread of each.
    fn compare(&self, q: u64, linear: bool, op: BinOp, c: i128) -> Class {
        let Some([x, y, z]) = self.block else {
            return Class::Varying;
        };
        // The positions: the linear index over the whole block, or
        // `thread_idx.x` over a row.
        let extent = if linear {
            u64::from(x) * u64::from(y) * u64::from(z)
        } else {
            u64::from(x)
        };
        let wg = u64::from(ir::WARPGROUP);
        let test = |v: u64| {
            let v = i128::from(v);
            match op {
                BinOp::Eq => v == c,
                BinOp::Ne => v != c,
                BinOp::Lt => v < c,
                BinOp::Le => v <= c,
                BinOp::Gt => v > c,
                _ => v >= c,
            }
        };
        let mut set = 0u8;
        for g in 0..extent.div_ceil(wg) {
            let lo = g * wg / q.max(1);
            let hi = (g * wg + wg - 1).min(extent.saturating_sub(1)) / q.max(1);
            let holds = test(lo);
            let same = match op {
                BinOp::Eq | BinOp::Ne => lo == hi || !(lo as i128..=hi as i128).contains(&c),
                _ => holds == test(hi),
            };
            if !same {
                return Class::Varying;
            }
            if holds && g < 8 {
                set |= 1 << g;
            }
        }
        Class::Uniform(linear.then_some(set))
    }

    /// A condition around what follows: pushed on the stacks (popped by
    /// [`Walk::leave`]); its warpgroups, when known.
    fn enter(&mut self, cond: Class, span: Span) -> Option<u8> {
        self.splits.push((!cond.uniform()).then_some(span));
        let set = cond.set();
        if set.is_none() {
            self.unknown += 1;
        }
        set
    }

    fn leave(&mut self, set: Option<u8>) {
        self.splits.pop();
        if set.is_none() {
            self.unknown = self.unknown.saturating_sub(1);
        }
    }

    fn block(&mut self, b: &Block, mut st: State) -> State {
        for s in &b.stmts {
            st = self.stmt(s, st);
        }
        st
    }

    /// A block that runs where `set` holds (all warpgroups where unknown).
    fn branch(&mut self, b: Option<&Block>, st: State, set: Option<u8>) -> State {
        let st = st.only(set.unwrap_or(u8::MAX));
        match b {
            Some(b) => self.block(b, st),
            None => st,
        }
    }

    /// Synchronises the warpgroups that get here.
    fn sync(st: &mut State) {
        for slot in &mut st.slots {
            slot.pending = None;
        }
    }

    fn stmt(&mut self, s: &Stmt, mut st: State) -> State {
        match &s.kind {
            StmtKind::Let { local, value } => {
                st = self.expr(value, st);
                let c = self.class(value);
                if let Some(slot) = self.lanes.get_mut(local.index()) {
                    *slot = c;
                }
            }
            StmtKind::Assign { local, value } => {
                st = self.expr(value, st);
                if let Some(slot) = self.lanes.get_mut(local.index()) {
                    *slot = Class::Varying;
                }
            }
            StmtKind::Store { place, value, .. } => {
                st = self.place(place, st);
                st = self.expr(value, st);
            }
            // Its elements are read through places, never as a local.
            StmtKind::LetArray { values, .. } => st = self.exprs(values, st),
            StmtKind::LoadVector { place, .. } => st = self.place(place, st),
            StmtKind::StoreVector { place, values, .. } => {
                st = self.place(place, st);
                st = self.exprs(values, st);
            }
            StmtKind::Expr(e) | StmtKind::SyncWarp(e) => st = self.expr(e, st),
            StmtKind::If {
                cond,
                then_block,
                else_block,
            } => {
                st = self.expr(cond, st);
                let c = self.class(cond);
                let set = self.enter(c, cond.span);
                let then = self.branch(Some(then_block), st, set);
                let other = set.map(|s| self.all() & !s);
                let els = self.branch(else_block.as_ref(), st, other);
                self.leave(set);
                st = then.join(els);
            }
            StmtKind::While { cond, body } => {
                st = self.expr(cond, st);
                let c = self.class(cond);
                st = self.looped(s.span, c, cond.span, body, st);
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
                    st = self.expr(e, st);
                }
                let uniform = [start, end, step].iter().all(|e| self.class(e).uniform());
                if let Some(slot) = self.lanes.get_mut(var.index()) {
                    *slot = if uniform {
                        Class::Uniform(None)
                    } else {
                        Class::Varying
                    };
                }
                let c = if uniform {
                    Class::Uniform(None)
                } else {
                    Class::Varying
                };
                st = self.looped(s.span, c, start.span.to(end.span), body, st);
            }
            StmtKind::ForList { var, items, body } => {
                st = self.exprs(items, st);
                let outer = self.at;
                let runs: Vec<At> = self.values.runs(outer, s.id).collect();
                for at in runs {
                    self.at = at;
                    if let Some(slot) = self.lanes.get_mut(var.index()) {
                        *slot = Class::Uniform(None);
                    }
                    st = self.block(body, st);
                }
                self.at = outer;
            }
            StmtKind::Break | StmtKind::Continue => {
                self.diverging_jump(s.span);
                if let Some(exit) = self.exits.last_mut() {
                    *exit = exit.join(st);
                }
                st = State::default();
            }
            StmtKind::Return(value) => {
                if let Some(v) = value {
                    st = self.expr(v, st);
                }
                self.diverging_jump(s.span);
                if self.unknown > 0 || !self.loops.is_empty() {
                    self.exact = false;
                }
                self.end(&st);
                st = State::default();
            }
            StmtKind::Call { args, func } => {
                st = self.exprs(args, st);
                if self
                    .callees
                    .get(func.index())
                    .is_none_or(|c| c.sync.is_some())
                {
                    Self::sync(&mut st);
                }
            }
            StmtKind::NamedBarrier(op) => {
                if let Some(i) = &op.index {
                    st = self.expr(i, st);
                }
                if op.kind == NamedOpKind::Sync {
                    Self::sync(&mut st);
                }
            }
            StmtKind::SetMaxRegs(n) => self.set_max_regs(s, *n, &mut st),
            StmtKind::TensorCopy(c) => {
                st = self.exprs(&c.smem.indices, st);
                st = self.exprs(&c.coords, st);
                if let ir::TensorCopyKind::Load { barrier, mask } = &c.kind {
                    if let Some(i) = &barrier.index {
                        st = self.expr(i, st);
                    }
                    if let Some(m) = mask {
                        st = self.expr(m, st);
                    }
                }
            }
            StmtKind::Wgmma(w) => {
                st = self.place(&w.a, st);
                st = self.place(&w.b, st);
                st = self.expr(&w.accumulate, st);
                self.warpgroup_op(s);
                self.uses_accum(w.acc, &mut st);
                self.wgmma_budget(s, w.acc, &st);
            }
            StmtKind::Fragment(f) => {
                if let Some(k) = &f.factor {
                    st = self.expr(k, st);
                }
                self.warpgroup_op(s);
                self.uses_accum(f.dst, &mut st);
                self.uses_accum(f.src, &mut st);
            }
            StmtKind::Barrier(op) => {
                if let Some(i) = &op.barrier.index {
                    st = self.expr(i, st);
                }
            }
            StmtKind::CopyAsync {
                dst, src, bytes, ..
            }
            | StmtKind::CopyAsyncStore { dst, src, bytes } => {
                st = self.place(dst, st);
                st = self.place(src, st);
                st = self.expr(bytes, st);
            }
            // What failed may have been a condition: its blocks may run
            // or not.
            StmtKind::Poisoned { blocks, .. } => {
                for b in blocks {
                    let inner = self.block(b, st);
                    st = st.join(inner);
                }
            }
            StmtKind::SyncThreads
            | StmtKind::ClusterSync
            | StmtKind::FenceProxyAsync
            | StmtKind::Fence(_)
            | StmtKind::CopyAsyncCommit
            | StmtKind::CopyAsyncWait(_) => {}
            StmtKind::WgmmaCommit | StmtKind::WgmmaWait(_) => self.warpgroup_op(s),
        }
        if let StmtClass::CtaBarrier(_) = s.kind.class() {
            Self::sync(&mut st);
        }
        st
    }

    /// A `while` or `for` loop: its body runs zero or more times.
    fn looped(
        &mut self,
        span: Span,
        cond: Class,
        cond_span: Span,
        body: &Block,
        st: State,
    ) -> State {
        let set = self.enter(cond, cond_span);
        self.loops.push(span);
        self.exits.push(State::default());
        let end = self.block(body, st);
        let exits = self.exits.pop().unwrap_or_default();
        self.loops.pop();
        self.leave(set);
        st.join(end).join(exits)
    }

    /// A `return`, `break` or `continue` here: if only some threads of a
    /// warpgroup may take it, the rest of the warpgroup goes on alone.
    fn diverging_jump(&mut self, at: Span) {
        if let Some(cond) = self.split() {
            self.jump.get_or_insert(Split {
                cond,
                jump: Some(at),
            });
        }
    }

    /// A warpgroup operation: what may split a warpgroup around it.
    fn warpgroup_op(&mut self, s: &Stmt) {
        if let Some(cond) = self.split() {
            self.out.split.insert(s.id, Split { cond, jump: None });
        }
        if self.ops.insert(s.id) {
            let (name, acc) = match &s.kind {
                StmtKind::SetMaxRegs(_) => ("set_max_regs", None),
                StmtKind::Wgmma(w) => ("wgmma", Some(w.acc)),
                StmtKind::WgmmaCommit => ("wgmma_commit", None),
                StmtKind::Fragment(f) => (f.kind.name(), None),
                _ => ("wgmma_wait", None),
            };
            self.out.ops.push(Op {
                id: s.id,
                name,
                span: s.span,
                acc,
            });
        }
    }

    fn set_max_regs(&mut self, s: &Stmt, n: u32, st: &mut State) {
        self.warpgroup_op(s);
        if let Some(l) = self.loops.last() {
            self.out.in_loop.push((s.span, *l));
        }
        if self.unknown > 0 {
            self.exact = false;
        }
        let mut from = Counts(st.reached().fold(0, |m, (_, s)| m | s.counts.0));
        if from.is_empty() {
            // Reached by no warpgroup (after every path returned): as if
            // from the count at entry.
            from = Counts(Counts::ENTRY);
        }
        // Each run of the loops over lists around it adds its counts.
        let change = self.out.regs.entry(s.id).or_insert(RegsChange {
            n,
            span: s.span,
            from: Counts::default(),
        });
        change.from = Counts(change.from.0 | from.0);
        st.cfg = Counts::of(n);
        self.setters.entry(n).or_insert(s.span);
        let mut first = None;
        for (w, slot) in st.reached() {
            first = first.or(slot.pending);
            slot.counts = Counts::of(n);
            slot.pending = Some(s.span);
            if let Some(best) = self.best.get_mut(w) {
                if best.is_none_or(|(b, _)| n > b) {
                    *best = Some((n, s.span));
                }
            }
        }
        if let Some(first) = first {
            self.out.unsynced.push(Unsynced {
                second: s.span,
                first,
            });
        }
    }

    /// The smallest count the control flow may reach `wgmma` statement
    /// `s` with, when a `set_max_regs` set it (W0425).
    fn wgmma_budget(&mut self, s: &Stmt, acc: ir::AccumId, st: &State) {
        let entry = self.out.entry.unwrap_or(0);
        let low = st.cfg.values(entry).min();
        let Some(c) = low else {
            return;
        };
        if let Some(&set_by) = self.setters.get(&c) {
            let l = LowBudget {
                wgmma: s.span,
                acc,
                budget: c,
                set_by,
            };
            if !self.out.low.contains(&l) {
                self.out.low.push(l);
            }
        }
    }

    /// The warpgroups that may get here use accumulator `acc` (under a
    /// condition whose warpgroups are unknown, each that gets to it: a
    /// use is a "may").
    fn uses_accum(&mut self, acc: ir::AccumId, st: &mut State) {
        for (w, _) in st.reached() {
            if let Some(u) = self.uses.get_mut(w) {
                *u |= 1 << acc.0.min(63);
            }
        }
    }

    fn place(&mut self, p: &Place, mut st: State) -> State {
        if let PlaceKind::Accum { acc, .. } = p.kind {
            self.uses_accum(acc, &mut st);
        }
        match &p.kind {
            PlaceKind::Global { index, .. } => self.expr(index, st),
            PlaceKind::Shared { indices, .. } => self.exprs(indices, st),
            PlaceKind::Remote { rank, indices, .. } => {
                let st = self.expr(rank, st);
                self.exprs(indices, st)
            }
            PlaceKind::SharedAt { addr, .. } => self.expr(addr, st),
            PlaceKind::Accum { index, .. } => self.expr(index, st),
            PlaceKind::Register { indices, .. } => self.exprs(indices, st),
        }
    }

    fn exprs(&mut self, es: &[Expr], mut st: State) -> State {
        for e in es {
            st = self.expr(e, st);
        }
        st
    }

    /// The blocks inside an expression (an `if` expression's) may hold
    /// statements; the right operand of `&&`/`||` runs where the left
    /// one lets it.
    fn expr(&mut self, e: &Expr, st: State) -> State {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Param(_) | ExprKind::Special(_) => {
                st
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a, st),
            ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
                let st = self.expr(a, st);
                let c = self.class(a);
                let set = self.enter(c, a.span);
                let right = self.expr(b, st);
                self.leave(set);
                st.join(right)
            }
            ExprKind::Binary(_, a, b) => {
                let st = self.expr(a, st);
                self.expr(b, st)
            }
            ExprKind::Select(c, a, b) => {
                let st = self.expr(c, st);
                let st = self.expr(a, st);
                self.expr(b, st)
            }
            ExprKind::If {
                cond,
                then_block,
                then_value,
                else_block,
                else_value,
            } => {
                let st = self.expr(cond, st);
                let c = self.class(cond);
                let set = self.enter(c, cond.span);
                let then = self.branch(Some(then_block), st, set);
                let then = self.expr(then_value, then);
                let other = set.map(|s| self.all() & !s);
                let els = self.branch(Some(else_block), st, other);
                let els = self.expr(else_value, els);
                self.leave(set);
                then.join(els)
            }
            ExprKind::Load(p) | ExprKind::AddrOf(p) => self.place(p, st),
            ExprKind::Call { args, .. } | ExprKind::Math(_, args) | ExprKind::Warp(_, args) => {
                self.exprs(args, st)
            }
            ExprKind::Atomic { place, args, .. } => {
                let st = self.place(place, st);
                self.exprs(args, st)
            }
            ExprKind::BarrierTest {
                barrier, parity, ..
            } => {
                let st = match &barrier.index {
                    Some(i) => self.expr(i, st),
                    None => st,
                };
                match parity.as_ref() {
                    ir::Parity::Explicit(p) => self.expr(p, st),
                    ir::Parity::Tracked => st,
                }
            }
        }
    }
}

/// `floor(t / q)`: the same in each warpgroup once `q` is a multiple of
/// 128.
fn index(q: u64, linear: bool) -> Class {
    Class::Index { q, linear }
}

/// `c op v` as `v op' c`.
fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_hold_each_register_count_and_the_entry() {
        let c = Counts(Counts::of(40).0 | Counts::of(232).0 | Counts::ENTRY);
        assert_eq!(c.values(168).collect::<Vec<_>>(), [40, 232, 168]);
        assert_eq!(Counts::of(256).values(0).collect::<Vec<_>>(), [256]);
        assert_eq!(Counts::of(24).values(0).collect::<Vec<_>>(), [24]);
    }

    #[test]
    fn a_change_is_an_increase_or_a_decrease_from_every_count_before_it() {
        let entry = RegsChange {
            n: 232,
            span: Span::default(),
            from: Counts(Counts::ENTRY),
        };
        assert_eq!(entry.increase(168), Some(true));
        let dec = RegsChange { n: 40, ..entry };
        assert_eq!(dec.increase(168), Some(false));
        let same = RegsChange { n: 168, ..entry };
        assert_eq!(same.increase(168), Some(true));
        let mixed = RegsChange {
            n: 100,
            span: Span::default(),
            from: Counts(Counts::of(40).0 | Counts::of(232).0),
        };
        assert_eq!(mixed.increase(168), None);
    }
}
