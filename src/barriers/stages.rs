//! Stage discipline (E0407, `docs/language.md` §15.6): the stages of a
//! shared array that barrier groups guard (`guards(sa, sb)`: barrier `i`
//! guards slice `i`).
//!
//! - **Copies**: a copy into a stage of a guarded array completes on a
//!   group that guards it, at the stage's own index (the same constant, or
//!   the same expression of the same locals).
//! - **Reads**: an array is *filled* by the groups its copies complete on;
//!   a read of one of its stages (an element load, a vector load or an
//!   atomic on it, the source of a tensor store, a `wgmma` operand, and whatever
//!   [`slice_reads`] lists) must come after a wait on a filling group at
//!   the stage's index on every path to it, with nothing in between that
//!   may release the stage (an arrival on a group guarding the array at an
//!   index that may be the stage's) or give its index another value. A
//!   wait that only some threads made counts for all after a CTA-wide or
//!   named barrier (`sync_threads()`, `b.sync()`), which orders their
//!   reads after it; a `test()` of the barrier counts as a wait (the
//!   program looked at the phase).
//!
//! Where a statement failed to check, nothing more is said on that path.

use super::error::BarrierError;
use super::transactions::{locals_read, same_value};
use super::walk::{self, Cx, Visitor};
use crate::analysis::values::{At, Values};
use crate::ir::{
    BarrierId, BarrierOpKind, BarrierRef, Block, Expr, ExprKind, Kernel, LocalId, NamedOpKind,
    Place, PlaceKind, SharedId, Stmt, StmtKind, TensorCopyKind,
};
use crate::source::SourceMap;
use crate::span::Span;
use std::collections::{HashMap, HashSet};

/// A read of a stage of a shared array: the array, the slice's first
/// index (`None`: every stage, or an array of one stage read without
/// one), and where.
#[derive(Clone, Copy, Debug)]
pub struct SliceRead<'a> {
    pub array: SharedId,
    pub index: Option<&'a Expr>,
    pub span: Span,
}

/// The reads of shared stages a statement makes itself (its expressions
/// and places, not the statements of its blocks): the one list the stage
/// check reads, so that a new statement that reads shared memory (a wgmma
/// operand) adds its arm here.
pub fn slice_reads(s: &Stmt) -> Vec<SliceRead<'_>> {
    let mut r = Reads(Vec::new());
    match &s.kind {
        // The blocks are walked as statements of their own.
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => {
            walk::expr(cond, Cx::default(), &mut r)
        }
        StmtKind::For {
            start, end, step, ..
        } => {
            for e in [start, end, step] {
                walk::expr(e, Cx::default(), &mut r);
            }
        }
        StmtKind::ForList { items, .. } => {
            for e in items {
                walk::expr(e, Cx::default(), &mut r);
            }
        }
        StmtKind::Poisoned { .. } => {}
        StmtKind::LoadVector { place, .. } => {
            r.place(place);
            walk::place(place, Cx::default(), &mut r);
        }
        // A wgmma reads both operand tiles, from the stage its first
        // index names. (The spans of a transposed tile wider than a span
        // in an array without a stage dimension are read from the first
        // index on; only the first is followed.)
        StmtKind::Wgmma(w) => {
            for p in [&w.a, &w.b] {
                r.place(p);
                walk::place(p, Cx::default(), &mut r);
            }
            walk::expr(&w.accumulate, Cx::default(), &mut r);
        }
        StmtKind::TensorCopy(c) => {
            for e in c.smem.indices.iter().chain(&c.coords) {
                walk::expr(e, Cx::default(), &mut r);
            }
            if !matches!(c.kind, TensorCopyKind::Load { .. }) {
                r.0.push(SliceRead {
                    array: c.smem.array,
                    index: c.smem.indices.first(),
                    span: c.smem.span,
                });
            }
        }
        _ => walk::stmt(s, Cx::default(), &mut r),
    }
    r.0
}

struct Reads<'a>(Vec<SliceRead<'a>>);

impl<'a> Reads<'a> {
    fn place(&mut self, p: &'a Place) {
        if let PlaceKind::Shared { array, indices } = &p.kind {
            self.0.push(SliceRead {
                array: *array,
                index: indices.first(),
                span: p.span,
            });
        }
    }
}

impl<'a> Visitor<'a> for Reads<'a> {
    fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
        match &e.kind {
            ExprKind::Load(p) => self.place(p),
            ExprKind::Atomic { place, .. } => self.place(place),
            _ => {}
        }
    }
}

/// A barrier index as compared here: a constant, or an expression read in
/// a run of the loops over lists around it.
#[derive(Clone, Copy, Debug)]
enum Key<'a> {
    Const(i128),
    Expr(&'a Expr, At),
    /// Every stage (a whole array).
    Whole,
}

/// What is known on a path: the filling waits every thread on it has made
/// (`must`), those some thread may have made (`may`, promoted to `must` by
/// a CTA-wide barrier), and whether a failed statement hides the rest.
#[derive(Clone, Default)]
struct Facts<'a> {
    must: Vec<(BarrierId, Key<'a>)>,
    may: Vec<(BarrierId, Key<'a>)>,
    unknown: bool,
}

/// What a loop's body may change: the locals it assigns or declares, and
/// the barriers it arrives on.
#[derive(Default)]
struct Kills<'a> {
    locals: HashSet<LocalId>,
    arrives: Vec<(BarrierId, Key<'a>)>,
    unknown: bool,
}

struct Stages<'k, 'o> {
    kernel: &'k Kernel,
    values: &'k Values,
    sources: &'k SourceMap,
    out: &'o mut Vec<BarrierError>,
    /// Per array: the groups that guard it.
    guards: HashMap<SharedId, Vec<BarrierId>>,
    /// Per array: the guarding groups its copies complete on.
    fillers: HashMap<SharedId, Vec<BarrierId>>,
    /// Reported reads and copies, once each.
    reported: HashSet<Span>,
}

pub fn check(kernel: &Kernel, values: &Values, sources: &SourceMap, out: &mut Vec<BarrierError>) {
    let mut guards: HashMap<SharedId, Vec<BarrierId>> = HashMap::new();
    for (i, g) in kernel.barriers.iter().enumerate() {
        for a in &g.guards {
            guards.entry(*a).or_default().push(BarrierId(i as u32));
        }
    }
    if guards.is_empty() {
        return;
    }
    let mut fills = Fills(Vec::new());
    walk::body(&kernel.body, &mut fills);
    let mut fillers: HashMap<SharedId, Vec<BarrierId>> = HashMap::new();
    for (array, group) in fills.0 {
        if guards.get(&array).is_some_and(|g| g.contains(&group)) {
            let f = fillers.entry(array).or_default();
            if !f.contains(&group) {
                f.push(group);
            }
        }
    }
    let mut s = Stages {
        kernel,
        values,
        sources,
        out,
        guards,
        fillers,
        reported: HashSet::new(),
    };
    s.block(&kernel.body.block, At::default(), Some(Facts::default()));
}

/// Every copy into a shared array and the group it completes on.
struct Fills(Vec<(SharedId, BarrierId)>);

impl<'a> Visitor<'a> for Fills {
    fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
        match &s.kind {
            StmtKind::TensorCopy(c) => {
                if let TensorCopyKind::Load { barrier, .. } = &c.kind {
                    self.0.push((c.smem.array, barrier.group));
                }
            }
            StmtKind::CopyAsync { dst, barrier, .. } => {
                if let PlaceKind::Shared { array, .. } = dst.kind {
                    self.0.push((array, barrier.group));
                }
            }
            _ => {}
        }
    }
}

impl<'a> Stages<'_, '_> {
    fn key(&self, index: Option<&'a Expr>, at: At) -> Key<'a> {
        match index {
            None => Key::Const(0),
            Some(e) => match self.values.constant_int(e, at) {
                Some(c) => Key::Const(c),
                None => Key::Expr(e, at),
            },
        }
    }

    /// The two keys name the same barrier or stage, provably.
    fn same(&self, a: Key<'a>, b: Key<'a>) -> bool {
        match (a, b) {
            (Key::Const(x), Key::Const(y)) => x == y,
            (Key::Expr(x, ax), Key::Expr(y, ay)) => same_value(self.values, (x, ax), (y, ay)),
            _ => false,
        }
    }

    /// The two keys may name the same barrier or stage.
    fn may_equal(&self, a: Key<'a>, b: Key<'a>) -> bool {
        match (a, b) {
            (Key::Const(x), Key::Const(y)) => x == y,
            _ => true,
        }
    }

    /// Whether groups `a` and `b` guard an array in common (an arrival on
    /// one may release what a wait on the other acquired).
    fn related(&self, a: BarrierId, b: BarrierId) -> bool {
        a == b
            || self
                .guards
                .values()
                .any(|gs| gs.contains(&a) && gs.contains(&b))
    }

    fn block(&mut self, b: &'a Block, at: At, mut facts: Option<Facts<'a>>) -> Option<Facts<'a>> {
        for s in &b.stmts {
            let f = facts?;
            facts = self.stmt(s, at, f);
        }
        facts
    }

    fn stmt(&mut self, s: &'a Stmt, at: At, mut facts: Facts<'a>) -> Option<Facts<'a>> {
        for r in slice_reads(s) {
            self.read(r, at, &facts);
        }
        match &s.kind {
            StmtKind::If {
                then_block,
                else_block,
                ..
            } => {
                let then = self.block(then_block, at, Some(facts.clone()));
                let other = match else_block {
                    Some(e) => self.block(e, at, Some(facts)),
                    None => Some(facts),
                };
                join(self, then, other)
            }
            StmtKind::While { body, .. } | StmtKind::For { body, .. } => {
                let mut kills = Kills::default();
                if let StmtKind::For { var, .. } = &s.kind {
                    kills.locals.insert(*var);
                }
                self.kills(body, at, &mut kills);
                let head = self.apply(facts, &kills);
                // The body starts from the head's facts in every iteration;
                // after the loop (perhaps run zero times) they are all
                // that is known.
                self.block(body, at, Some(head.clone()));
                Some(head)
            }
            StmtKind::ForList { body, .. } => {
                let mut f = Some(facts);
                for run in self.values.runs(at, s.id) {
                    f = self.block(body, run, f);
                }
                f
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => None,
            StmtKind::Poisoned { blocks, .. } => {
                facts.unknown = true;
                for b in blocks {
                    self.block(b, at, Some(facts.clone()));
                }
                Some(facts)
            }
            StmtKind::Let { local, .. } | StmtKind::Assign { local, .. } => {
                let mut kills = Kills::default();
                kills.locals.insert(*local);
                Some(self.apply(facts, &kills))
            }
            StmtKind::LoadVector { locals, .. } => {
                let mut kills = Kills::default();
                kills.locals.extend(locals.iter().copied());
                Some(self.apply(facts, &kills))
            }
            StmtKind::Barrier(op) => {
                let key = self.key(op.barrier.index.as_deref(), at);
                match &op.kind {
                    BarrierOpKind::Wait { .. } | BarrierOpKind::WaitCluster { .. } => {
                        self.waited(&mut facts, op.barrier.group, key);
                        Some(facts)
                    }
                    BarrierOpKind::Arrive { .. }
                    | BarrierOpKind::ArriveExpectTx { .. }
                    | BarrierOpKind::ArriveRemote { .. } => {
                        let kills = Kills {
                            arrives: vec![(op.barrier.group, key)],
                            ..Kills::default()
                        };
                        Some(self.apply(facts, &kills))
                    }
                    BarrierOpKind::ExpectTx { .. } => Some(facts),
                }
            }
            StmtKind::SyncThreads | StmtKind::ClusterSync => Some(promote(facts)),
            StmtKind::NamedBarrier(op) if op.kind == NamedOpKind::Sync => Some(promote(facts)),
            StmtKind::TensorCopy(c) => {
                if let TensorCopyKind::Load { barrier, .. } = &c.kind {
                    self.copy(c.smem.array, c.smem.indices.first(), barrier, at, s.span);
                }
                Some(self.tests(s, at, facts))
            }
            StmtKind::CopyAsync { dst, barrier, .. } => {
                if let PlaceKind::Shared { array, indices } = &dst.kind {
                    self.copy(*array, indices.first(), barrier, at, s.span);
                }
                Some(self.tests(s, at, facts))
            }
            _ => Some(self.tests(s, at, facts)),
        }
    }

    /// A `test()` of a barrier in the statement's expressions counts as a
    /// wait on it.
    fn tests(&mut self, s: &'a Stmt, at: At, mut facts: Facts<'a>) -> Facts<'a> {
        struct Tests<'a>(Vec<&'a BarrierRef>);
        impl<'a> Visitor<'a> for Tests<'a> {
            fn expr(&mut self, e: &'a Expr, _cx: Cx<'a>) {
                if let ExprKind::BarrierTest { barrier, .. } = &e.kind {
                    self.0.push(barrier);
                }
            }
        }
        let mut t = Tests(Vec::new());
        walk::stmt(s, Cx::default(), &mut t);
        for r in t.0 {
            let key = self.key(r.index.as_deref(), at);
            self.waited(&mut facts, r.group, key);
        }
        facts
    }

    /// A wait on `group` at `key`: known on this path from now on (once).
    fn waited(&self, facts: &mut Facts<'a>, group: BarrierId, key: Key<'a>) {
        for list in [&mut facts.must, &mut facts.may] {
            if !list.iter().any(|(g, k)| *g == group && self.same(*k, key)) {
                list.push((group, key));
            }
        }
    }

    /// The facts that survive `kills`.
    fn apply(&self, mut facts: Facts<'a>, kills: &Kills<'a>) -> Facts<'a> {
        if kills.unknown {
            facts.unknown = true;
        }
        let keep = |(g, k): &(BarrierId, Key<'a>)| {
            if let Key::Expr(e, _) = k {
                if locals_read(e).iter().any(|l| kills.locals.contains(l)) {
                    return false;
                }
            }
            !kills
                .arrives
                .iter()
                .any(|(a, ak)| self.related(*a, *g) && self.may_equal(*ak, *k))
        };
        facts.must.retain(keep);
        facts.may.retain(keep);
        facts
    }

    /// What a loop body may change, nested blocks included.
    fn kills(&self, b: &'a Block, at: At, kills: &mut Kills<'a>) {
        struct Gather<'s, 'k, 'o, 'a> {
            st: &'s Stages<'k, 'o>,
            at: At,
            kills: &'s mut Kills<'a>,
        }
        impl<'a> Visitor<'a> for Gather<'_, '_, '_, 'a> {
            fn stmt(&mut self, s: &'a Stmt, _cx: Cx<'a>) {
                match &s.kind {
                    StmtKind::Let { local, .. } | StmtKind::Assign { local, .. } => {
                        self.kills.locals.insert(*local);
                    }
                    StmtKind::LoadVector { locals, .. } => {
                        self.kills.locals.extend(locals.iter().copied())
                    }
                    StmtKind::For { var, .. } | StmtKind::ForList { var, .. } => {
                        self.kills.locals.insert(*var);
                    }
                    StmtKind::Barrier(op)
                        if matches!(
                            op.kind,
                            BarrierOpKind::Arrive { .. }
                                | BarrierOpKind::ArriveExpectTx { .. }
                                | BarrierOpKind::ArriveRemote { .. }
                        ) =>
                    {
                        // Read in the loop's own run: an index that is
                        // constant only in some run of an inner list loop
                        // counts as any index.
                        let key = match op.barrier.index.as_deref() {
                            None => Key::Const(0),
                            Some(e) => Key::Expr(e, self.at),
                        };
                        let key = match key {
                            Key::Expr(e, at) => match self.st.values.constant_int(e, at) {
                                Some(c) => Key::Const(c),
                                None => Key::Whole,
                            },
                            k => k,
                        };
                        self.kills.arrives.push((op.barrier.group, key));
                    }
                    StmtKind::Poisoned { .. } => self.kills.unknown = true,
                    _ => {}
                }
            }
        }
        walk::block(
            b,
            Cx {
                at,
                ..Cx::default()
            },
            &mut Gather {
                st: self,
                at,
                kills,
            },
        );
    }

    /// A read of a stage: after a filling wait at its index on every path.
    fn read(&mut self, r: SliceRead<'a>, at: At, facts: &Facts<'a>) {
        let Some(fillers) = self.fillers.get(&r.array) else {
            return;
        };
        if facts.unknown || self.reported.contains(&r.span) {
            return;
        }
        let whole = r.index.is_none()
            && self
                .kernel
                .shared
                .get(r.array.index())
                .is_some_and(|a| a.dims.len() > 1 && a.dims.first() != Some(&1));
        let key = if whole {
            Key::Whole
        } else {
            self.key(r.index, at)
        };
        let waited = facts
            .must
            .iter()
            .any(|(g, k)| fillers.contains(g) && (matches!(key, Key::Whole) || self.same(*k, key)));
        if waited {
            return;
        }
        let Some(array) = self.kernel.shared.get(r.array.index()) else {
            return;
        };
        let Some(group) = fillers
            .first()
            .and_then(|g| self.kernel.barriers.get(g.index()))
        else {
            return;
        };
        self.reported.insert(r.span);
        let stage = r
            .index
            .map_or("0".to_string(), |e| self.sources.slice(e.span).to_string());
        let barrier = if group.count > 1 {
            format!("{}[{stage}]", group.name)
        } else {
            group.name.clone()
        };
        self.out.push(BarrierError::UnwaitedRead {
            array: array.name.clone(),
            read: self.sources.slice(r.span).to_string(),
            barrier,
            span: r.span,
            guards: group.spans.decl,
        });
    }

    /// A copy into a stage of a guarded array completes on a group that
    /// guards it, at the stage's index.
    fn copy(
        &mut self,
        array: SharedId,
        index: Option<&'a Expr>,
        barrier: &'a BarrierRef,
        at: At,
        span: Span,
    ) {
        let Some(guards) = self.guards.get(&array) else {
            return;
        };
        if self.reported.contains(&span) {
            return;
        }
        let (Some(a), Some(g)) = (
            self.kernel.shared.get(array.index()),
            self.kernel.barriers.get(barrier.group.index()),
        ) else {
            return;
        };
        if g.failed.count {
            return;
        }
        let bar_text = super::reference_text(self.sources, self.kernel, barrier);
        let stage = index.map_or(String::new(), |e| self.sources.slice(e.span).to_string());
        let why = if !guards.contains(&barrier.group) {
            let names: Vec<String> = guards
                .iter()
                .filter_map(|g| self.kernel.barriers.get(g.index()))
                .map(|g| format!("`{}`", g.name))
                .collect();
            Some(format!(
                "`{}` guards no stage of `{}` (its guards are {})",
                g.name,
                a.name,
                names.join(" and ")
            ))
        } else if index.is_none() && a.dims.first().is_some_and(|d| *d > 1) {
            Some(format!(
                "the copy fills every stage of `{}`, but `{bar_text}` guards one",
                a.name
            ))
        } else {
            let (s, b) = (self.key(index, at), self.key(barrier.index.as_deref(), at));
            match (s, b) {
                _ if self.same(s, b) => None,
                (Key::Const(x), Key::Const(y)) => Some(format!(
                    "stage {x} of `{}` is filled on `{bar_text}`, which guards stage {y}",
                    a.name
                )),
                _ => Some(format!(
                    "stage `{stage}` of `{}` is filled on `{bar_text}`, which guards another stage (write the stage's own index)",
                    a.name
                )),
            }
        };
        if let Some(why) = why {
            self.reported.insert(span);
            self.out.push(BarrierError::StageCopy {
                why,
                span: barrier.span,
                copy: span,
                guards: g.spans.decl,
            });
        }
    }
}

fn join<'a>(st: &Stages<'_, '_>, a: Option<Facts<'a>>, b: Option<Facts<'a>>) -> Option<Facts<'a>> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => {
            let must = a
                .must
                .iter()
                .copied()
                .filter(|(g, k)| b.must.iter().any(|(h, l)| g == h && st.same(*k, *l)))
                .collect();
            let mut may = a.may;
            for (h, l) in b.may {
                if !may.iter().any(|(g, k)| *g == h && st.same(*k, l)) {
                    may.push((h, l));
                }
            }
            Some(Facts {
                must,
                may,
                unknown: a.unknown || b.unknown,
            })
        }
    }
}

/// After a barrier of the CTA: what some thread waited for, every thread
/// may read.
fn promote(mut facts: Facts<'_>) -> Facts<'_> {
    facts.must = facts.may.clone();
    facts
}
