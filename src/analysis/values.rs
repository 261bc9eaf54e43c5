//! What is known of the values of immutable locals: the one owner of
//! those facts, read by the barrier pass (constant barrier indices E0305,
//! arrival counts E0306, transaction sizes E0309, parities E0310, W0323),
//! the named-barrier facts ([`super::warps`]: W0324, W0326), the checker's
//! late checks (zero divisors E0117, the alignment of vector accesses
//! E0148/W0325) and the optimiser (trip counts: `crate::opt::unroll`,
//! W0330).
//!
//! An immutable local has exactly one value wherever it is read, from its
//! `let` (re-run each time its scope is entered, always with the same
//! expression; an assignment to it is an error and is not lowered), so
//! what is known of that value holds at every read. Per local, [`Known`]:
//! - its constant value, when the `let` reads only constants and such
//!   locals (`let s = 5;` makes `full[s]` as constant as `full[5]`);
//! - the range of an unsigned value, from constants, such locals and what
//!   the kernel declares (`block(x, y, z)` bounds `thread_idx` and fixes
//!   `block_dim`): enough to prove that `for i in thread_idx.x..1024 step
//!   128` in a `block(128)` kernel runs 8 times in every thread;
//! - its low bits (`r` modulo `2^z`), from constants, products, shifts and
//!   sums, and for a loop variable from its start and step: what proves a
//!   vector access aligned.
//!
//! A loop over a constant list (`for d in [16u32, 8, 4]`) runs its body
//! once per element, with `d` a constant in each run: its facts, and those
//! of every local declared in its body, are kept per run ([`At`]: which
//! element of each enclosing list), and a check that needs them walks such
//! a body once per element ([`Values::runs`], [`walk_runs`]). Runs multiply
//! with nesting; the checker bounds how far (E0162), so these tables stay
//! as small as the unrolled program would be.
//!
//! Two notions of "constant" are read: [`Values::value`] reads every local
//! with a known value (what the barrier pass calls a constant operand),
//! [`Values::constant`] only the elements of loops over constant lists,
//! which the language makes compile-time constants (what a zero divisor,
//! a transaction size or a trip count is tested with, as if the loop had
//! been unrolled).

use crate::ir::visit::{self, Visit};
use crate::ir::{
    consteval, BinOp, Body, Dim, Expr, ExprKind, Kernel, LocalId, MathFn, Special, Stmt, StmtId,
    StmtKind, Value,
};
use crate::types::Scalar;
use std::collections::HashMap;

/// The inclusive range `lo..=hi` of an unsigned value.
pub type Range = (u128, u128);

/// Known low bits `(z, r)`: the value is `r` modulo `2^z` (`(0, 0)`:
/// nothing known; `z` is [`ALL_BITS`] for a constant).
pub type LowBits = (u32, i128);

/// More low bits than any value has: a constant's.
pub const ALL_BITS: u32 = 128;

/// What is known of one local's value (in one run of the loops over
/// constant lists around it).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Known {
    pub value: Option<Value>,
    pub range: Option<Range>,
    pub low_bits: LowBits,
    /// The element of a loop over a constant list.
    pub element: bool,
}

/// Where a node runs: one run of each loop over a constant list around it
/// (the body's top level is [`At::TOP`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct At {
    /// The innermost loop over a list around the node (0: none).
    frame: u32,
    /// Which of that loop's runs: the runs of the enclosing loops times
    /// its elements, numbered outermost first.
    run: u32,
}

impl At {
    pub const TOP: At = At { frame: 0, run: 0 };
}

/// A loop over a constant list, or the body's top level (frame 0).
#[derive(Clone, Debug)]
struct Frame {
    /// Its elements.
    n: u32,
    /// How many times its body runs: the runs of the loop around it times
    /// `n` (1 for the top level).
    runs: u32,
    /// The elements' values (the loop variable's facts, found from them
    /// when asked: a long list costs no table of facts) and type.
    elements: Vec<Value>,
    ty: Scalar,
}

/// The facts of one local: in which frame it is declared, and per run of
/// that frame what is known (empty: nothing, in every run).
#[derive(Clone, Debug, Default)]
struct Slot {
    frame: u32,
    known: Vec<Known>,
    /// The variable of the loop over a list of frame `frame`.
    element: bool,
}

/// What is known of the immutable locals of one body.
#[derive(Clone, Debug, Default)]
pub struct Values {
    /// `block(x, y, z)` of a kernel.
    block: Option<[u32; 3]>,
    frames: Vec<Frame>,
    /// The frame of each loop over a constant list, by its statement.
    lists: HashMap<StmtId, u32>,
    /// Indexed by [`LocalId`].
    locals: Vec<Slot>,
}

impl Values {
    /// The facts of a kernel's body.
    pub fn of_kernel(k: &Kernel) -> Values {
        Values::of(&k.body, k.block)
    }

    /// The facts of a device function's body (it runs in any block shape).
    pub fn of_function(body: &Body) -> Values {
        Values::of(body, None)
    }

    fn of(body: &Body, block: Option<[u32; 3]>) -> Values {
        let mut v = Values {
            block,
            frames: vec![Frame {
                n: 1,
                runs: 1,
                elements: Vec::new(),
                ty: Scalar::U32,
            }],
            lists: HashMap::new(),
            locals: vec![Slot::default(); body.locals.len()],
        };
        let mut b = Build {
            values: &mut v,
            body,
            at: At::TOP,
        };
        b.visit_block(&body.block);
        v
    }

    /// The runs of the body of the loop over a constant list `list` (a
    /// statement of this body) inside `at`, one per element in order
    /// (none for a statement that is not such a loop).
    pub fn runs(&self, at: At, list: StmtId) -> impl Iterator<Item = At> {
        let frame = self.lists.get(&list).copied();
        let n = frame
            .and_then(|f| self.frames.get(f as usize))
            .map_or(0, |f| f.n);
        (0..n).filter_map(move |i| {
            Some(At {
                frame: frame?,
                run: at.run.checked_mul(n)?.checked_add(i)?,
            })
        })
    }

    /// What is known of local `l` where `at` is (a place where it can be
    /// read: inside the loops over lists around its declaration).
    pub fn local(&self, l: LocalId, at: At) -> Known {
        let Some(slot) = self.locals.get(l.index()) else {
            return Known::default();
        };
        if slot.element {
            return self.element_known(slot.frame, at).unwrap_or_default();
        }
        if slot.known.is_empty() {
            return Known::default();
        }
        self.run_of(slot.frame, at)
            .and_then(|r| slot.known.get(r as usize))
            .copied()
            .unwrap_or_default()
    }

    /// What is known of the element of frame `f`'s loop in the run `at` is
    /// in: a constant.
    fn element_known(&self, f: u32, at: At) -> Option<Known> {
        let frame = self.frames.get(f as usize)?;
        let i = self.run_of(f, at)?.checked_rem(frame.n)?;
        let value = *frame.elements.get(i as usize)?;
        let (range, low_bits) = match value {
            Value::Int(v) => {
                let unsigned = matches!(frame.ty, Scalar::U32 | Scalar::U64);
                let range = u128::try_from(v).ok().filter(|_| unsigned).map(|v| (v, v));
                (range, fit((ALL_BITS, v), frame.ty))
            }
            _ => (None, (0, 0)),
        };
        Some(Known {
            value: Some(value),
            range,
            low_bits,
            element: true,
        })
    }

    /// The run of frame `f` (around `at`) that `at` is in.
    fn run_of(&self, f: u32, at: At) -> Option<u32> {
        if f == at.frame {
            return Some(at.run);
        }
        let outer = self.frames.get(f as usize)?.runs;
        let inner = self.frames.get(at.frame as usize)?.runs;
        let per = inner.checked_div(outer).filter(|p| *p > 0)?;
        Some(at.run / per)
    }

    /// The value of `e` at `at`, reading every local with a known value:
    /// the constant operand the barrier pass checks.
    pub fn value(&self, e: &Expr, at: At) -> Option<Value> {
        consteval::eval_with(e, &|l| self.local(l, at).value).ok()
    }

    /// [`Values::value`] of an integer expression.
    pub fn int(&self, e: &Expr, at: At) -> Option<i128> {
        match self.value(e, at)? {
            Value::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The value of `e` at `at` when it is a compile-time constant: built
    /// from constants and the elements of the loops over constant lists
    /// around it (never other locals).
    pub fn constant(&self, e: &Expr, at: At) -> Option<Value> {
        consteval::eval_with(e, &|l| self.element(l, at)).ok()
    }

    /// [`Values::constant`] of an integer expression.
    pub fn constant_int(&self, e: &Expr, at: At) -> Option<i128> {
        match self.constant(e, at)? {
            Value::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The value of `l` at `at` if it is the element of a loop over a
    /// constant list.
    pub fn element(&self, l: LocalId, at: At) -> Option<Value> {
        let k = self.local(l, at);
        k.value.filter(|_| k.element)
    }

    /// The range of `e`'s values at `at`, for an unsigned integer
    /// expression whose value is bounded by what is known (`None`
    /// otherwise: unknown, or an operation that may wrap).
    pub fn range(&self, e: &Expr, at: At) -> Option<Range> {
        if !matches!(e.ty, Scalar::U32 | Scalar::U64) {
            return None;
        }
        let max = if e.ty == Scalar::U32 {
            u128::from(u32::MAX)
        } else {
            u128::from(u64::MAX)
        };
        let r = match &e.kind {
            ExprKind::Const(Value::Int(v)) => {
                let v = u128::try_from(*v).ok()?;
                (v, v)
            }
            ExprKind::Local(l) => self.local(*l, at).range?,
            ExprKind::Special(s) => self.special(*s)?,
            // A truncation is exact when the range fits (checked below).
            ExprKind::Cast(x) => self.range(x, at)?,
            ExprKind::Math(f @ (MathFn::Min | MathFn::Max), args) => {
                let [a, b] = args.as_slice() else {
                    return None;
                };
                let ((al, ah), (bl, bh)) = (self.range(a, at)?, self.range(b, at)?);
                if *f == MathFn::Min {
                    (al.min(bl), ah.min(bh))
                } else {
                    (al.max(bl), ah.max(bh))
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (al, ah) = self.range(a, at)?;
                let (bl, bh) = self.range(b, at)?;
                match op {
                    BinOp::Add => (al.checked_add(bl)?, ah.checked_add(bh)?),
                    BinOp::Mul => (al.checked_mul(bl)?, ah.checked_mul(bh)?),
                    BinOp::Sub if al >= bh => (al - bh, ah - bl),
                    BinOp::Div if bl > 0 => (al / bh, ah / bl),
                    BinOp::Rem if bl > 0 => {
                        if ah < bl {
                            (al, ah)
                        } else {
                            (0, bh - 1)
                        }
                    }
                    BinOp::BitAnd => (0, ah.min(bh)),
                    BinOp::Shr if bh < 64 => (al >> bh, ah >> bl),
                    _ => return None,
                }
            }
            _ => return None,
        };
        (r.1 <= max).then_some(r)
    }

    fn special(&self, s: Special) -> Option<Range> {
        let dim = |b: [u32; 3], d: Dim| match d {
            Dim::X => b[0],
            Dim::Y => b[1],
            Dim::Z => b[2],
        };
        let block = self.block;
        let threads = block.map(|[x, y, z]| u128::from(x) * u128::from(y) * u128::from(z));
        Some(match s {
            Special::ThreadIdx(d) => match block {
                Some(b) => (0, u128::from(dim(b, d)).checked_sub(1)?),
                None => (0, 1023),
            },
            Special::BlockDim(d) => {
                let n = u128::from(dim(block?, d));
                (n, n)
            }
            Special::LaneId => (0, 31),
            Special::WarpId => (0, threads.map_or(31, |t| t.saturating_sub(1) / 32)),
            _ => return None,
        })
    }

    /// The low bits of `e`'s value at `at` that are known.
    pub fn low_bits(&self, e: &Expr, at: At) -> LowBits {
        let mut memo = consteval::Memo::default();
        self.low_bits_in(e, at, &mut memo)
    }

    /// [`Values::low_bits`], each constant subtree evaluated once.
    fn low_bits_in<'e>(&self, e: &'e Expr, at: At, memo: &mut consteval::Memo<'e>) -> LowBits {
        let constant = memo.eval_with(e, &|l| self.element(l, at));
        if let Ok(Value::Int(v)) = constant {
            return fit((ALL_BITS, v), e.ty);
        }
        let known = match &e.kind {
            ExprKind::Local(l) => self.local(*l, at).low_bits,
            ExprKind::Binary(op, a, b) => {
                let x = self.low_bits_in(a, at, memo);
                let y = self.low_bits_in(b, at, memo);
                match op {
                    BinOp::Mul => mul(x, y),
                    BinOp::Add => add(x, y),
                    BinOp::Sub => add(x, (y.0, y.1.wrapping_neg())),
                    BinOp::Shl => match memo.eval_with(b, &|l| self.element(l, at)) {
                        Ok(Value::Int(k)) if (0..64).contains(&k) => mul(x, (ALL_BITS, 1i128 << k)),
                        _ => (0, 0),
                    },
                    BinOp::BitAnd => {
                        // Known zeros on either side stay zeros.
                        let z = x.0.min(y.0);
                        let r = wrap(x.1 & y.1, z);
                        let zx = zeros(x);
                        let zy = zeros(y);
                        if zx.max(zy) > z {
                            (zx.max(zy), 0)
                        } else {
                            (z, r)
                        }
                    }
                    BinOp::BitOr => {
                        let z = x.0.min(y.0);
                        (z, wrap(x.1 | y.1, z))
                    }
                    BinOp::BitXor => {
                        let z = x.0.min(y.0);
                        (z, wrap(x.1 ^ y.1, z))
                    }
                    _ => (0, 0),
                }
            }
            ExprKind::Cast(inner) if inner.ty.is_int() && e.ty.is_int() => {
                self.low_bits_in(inner, at, memo)
            }
            _ => (0, 0),
        };
        fit(known, e.ty)
    }

    /// What is known of a `let`'s value `e` at `at`.
    fn known(&self, e: &Expr, at: At) -> Known {
        Known {
            value: self.value(e, at),
            range: self.range(e, at),
            low_bits: self.low_bits(e, at),
            element: false,
        }
    }

    fn set(&mut self, l: LocalId, at: At, k: Known) {
        if k == Known::default() {
            return;
        }
        let runs = self.frames.get(at.frame as usize).map_or(1, |f| f.runs);
        let Some(slot) = self.locals.get_mut(l.index()) else {
            return;
        };
        if slot.known.is_empty() {
            slot.frame = at.frame;
            slot.known = vec![Known::default(); runs as usize];
        }
        if let Some(k_slot) = slot.known.get_mut(at.run as usize) {
            *k_slot = k;
        }
    }
}

/// Only the bits the type holds are known (arithmetic wraps there).
fn fit(known: LowBits, ty: Scalar) -> LowBits {
    let bits = if ty.is_int() { ty.size() * 8 } else { 0 };
    let z = known.0.min(bits);
    (z, wrap(known.1, z))
}

/// `r` modulo `2^z` (`r` itself for [`ALL_BITS`] bits).
fn wrap(r: i128, z: u32) -> i128 {
    if z >= 64 {
        r
    } else {
        r.rem_euclid(1i128 << z)
    }
}

/// How many low bits are known to be zero.
fn zeros((z, r): LowBits) -> u32 {
    if r == 0 {
        z
    } else {
        r.trailing_zeros().min(z)
    }
}

/// The known low bits of a sum.
pub fn add(x: LowBits, y: LowBits) -> LowBits {
    let z = x.0.min(y.0);
    (z, wrap(x.1.wrapping_add(y.1), z))
}

/// The known low bits of a product: `(rx + 2^zx·a)(ry + 2^zy·b)` is
/// `rx·ry` modulo `2^min(zx + zeros(y), zy + zeros(x))`.
pub fn mul(x: LowBits, y: LowBits) -> LowBits {
    let z =
        x.0.saturating_add(zeros(y))
            .min(y.0.saturating_add(zeros(x)))
            .min(ALL_BITS);
    (z, wrap(wrap(x.1, 64).wrapping_mul(wrap(y.1, 64)), z))
}

/// The one walk that finds the facts: declarations in source order (a
/// `let` can only read locals declared before it), a loop over a constant
/// list's body once per element.
struct Build<'v, 'b> {
    values: &'v mut Values,
    body: &'b Body,
    at: At,
}

impl<'ir> Visit<'ir> for Build<'_, '_> {
    fn visit_stmt(&mut self, s: &'ir Stmt) {
        match &s.kind {
            StmtKind::Let { local, value } => {
                let immutable = self
                    .body
                    .locals
                    .get(local.index())
                    .is_some_and(|l| !l.mutable);
                if immutable {
                    let k = self.values.known(value, self.at);
                    self.values.set(*local, self.at, k);
                }
                visit::walk_stmt(self, s);
            }
            // `start + k * step`: what both say of the low bits.
            StmtKind::For {
                var, start, step, ..
            } => {
                let (a, st) = (
                    self.values.low_bits(start, self.at),
                    self.values.low_bits(step, self.at),
                );
                let stride = (
                    st.0.min(if st.1 == 0 {
                        st.0
                    } else {
                        st.1.trailing_zeros()
                    }),
                    0,
                );
                let k = Known {
                    low_bits: add(a, stride),
                    ..Known::default()
                };
                self.values.set(*var, self.at, k);
                visit::walk_stmt(self, s);
            }
            StmtKind::ForList { var, items, body } => {
                for e in items {
                    self.visit_expr(e);
                }
                let outer = self.at;
                // One frame, however many runs of the loops around it walk
                // the loop again.
                if !self.values.lists.contains_key(&s.id) {
                    let parent_runs = self
                        .values
                        .frames
                        .get(outer.frame as usize)
                        .map_or(1, |f| f.runs);
                    let n = u32::try_from(items.len()).unwrap_or(u32::MAX);
                    let frame = u32::try_from(self.values.frames.len()).unwrap_or(u32::MAX);
                    let elements = items
                        .iter()
                        .map(|e| consteval::eval(e).unwrap_or(Value::Int(0)))
                        .collect();
                    let ty = self
                        .body
                        .locals
                        .get(var.index())
                        .map_or(Scalar::U32, |l| l.ty);
                    self.values.frames.push(Frame {
                        n,
                        runs: parent_runs.saturating_mul(n),
                        elements,
                        ty,
                    });
                    self.values.lists.insert(s.id, frame);
                    if let Some(slot) = self.values.locals.get_mut(var.index()) {
                        *slot = Slot {
                            frame,
                            known: Vec::new(),
                            element: true,
                        };
                    }
                }
                let runs: Vec<At> = self.values.runs(outer, s.id).collect();
                for at in runs {
                    self.at = at;
                    self.visit_block(body);
                }
                self.at = outer;
            }
            // The locals a vector load declares, and those assigned, have
            // no single known value.
            _ => visit::walk_stmt(self, s),
        }
    }
}

/// Hooks of a walk that sees the body as it runs: each statement and
/// expression with where it runs, a loop over a constant list's body once
/// per element (and not the loop itself). Both default to nothing.
pub trait RunVisit<'ir> {
    fn stmt(&mut self, _s: &'ir Stmt, _at: At) {}
    fn expr(&mut self, _e: &'ir Expr, _at: At) {}
}

/// Walks `body` in [`Visit`] order, each node before its children, with
/// the body of each loop over a constant list walked once per run.
pub fn walk_runs<'ir>(body: &'ir Body, values: &Values, v: &mut impl RunVisit<'ir>) {
    struct Runs<'a, V> {
        values: &'a Values,
        at: At,
        v: &'a mut V,
    }
    impl<'ir, V: RunVisit<'ir>> Visit<'ir> for Runs<'_, V> {
        fn visit_stmt(&mut self, s: &'ir Stmt) {
            if let StmtKind::ForList { body, .. } = &s.kind {
                let outer = self.at;
                let runs: Vec<At> = self.values.runs(outer, s.id).collect();
                for at in runs {
                    self.at = at;
                    self.visit_block(body);
                }
                self.at = outer;
                return;
            }
            self.v.stmt(s, self.at);
            visit::walk_stmt(self, s);
        }
        fn visit_expr(&mut self, e: &'ir Expr) {
            self.v.expr(e, self.at);
            visit::walk_expr(self, e);
        }
    }
    Runs {
        values,
        at: At::TOP,
        v,
    }
    .visit_block(&body.block);
}
