//! Value ranges of unsigned integer expressions, from what a kernel
//! declares: `block(x, y, z)` bounds `thread_idx` and fixes `block_dim`,
//! constants are themselves, and an immutable local has the range of the
//! value it was declared with. Enough to prove that a loop such as
//! `for i in thread_idx.x..1024 step 128` in a `block(128)` kernel runs
//! exactly 8 times in every thread.

use crate::ir::visit::{self, Visit};
use crate::ir::{
    BinOp, Body, Dim, Expr, ExprKind, Kernel, LocalId, MathFn, Special, Stmt, StmtKind, Value,
};
use crate::types::Scalar;
use std::collections::HashMap;

/// The inclusive range `lo..=hi` of an unsigned value.
pub type Range = (u128, u128);

/// What is known about one body's values.
#[derive(Default)]
pub struct Facts {
    block: Option<[u32; 3]>,
    locals: HashMap<LocalId, Range>,
}

impl Facts {
    /// The facts of a kernel's body.
    pub fn of_kernel(k: &Kernel) -> Facts {
        let mut f = Facts {
            block: k.block,
            locals: HashMap::new(),
        };
        f.learn_locals(&k.body);
        f
    }

    /// The facts of a device function's body (it runs in any block shape).
    pub fn of_function(body: &Body) -> Facts {
        let mut f = Facts::default();
        f.learn_locals(body);
        f
    }

    /// Every immutable local has one declaration (re-run each time its
    /// scope is entered, always with the same expression): its value's range
    /// holds wherever the local is read. Declarations are visited in
    /// source order, so a local's range may build on earlier ones.
    fn learn_locals(&mut self, body: &Body) {
        struct Learn<'a> {
            facts: &'a mut Facts,
            body: &'a Body,
        }
        impl<'ir> Visit<'ir> for Learn<'_> {
            fn visit_stmt(&mut self, s: &'ir Stmt) {
                if let StmtKind::Let { local, value } = &s.kind {
                    let immutable = self
                        .body
                        .locals
                        .get(local.index())
                        .is_some_and(|l| !l.mutable);
                    if immutable {
                        if let Some(r) = self.facts.range(value) {
                            self.facts.locals.insert(*local, r);
                        }
                    }
                }
                visit::walk_stmt(self, s);
            }
        }
        let mut l = Learn { facts: self, body };
        l.visit_block(&body.block);
    }

    /// The range of `e`'s values, for an unsigned integer expression whose
    /// value is bounded by what is known (`None` otherwise: unknown, or an
    /// operation that may wrap).
    pub fn range(&self, e: &Expr) -> Option<Range> {
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
            ExprKind::Local(l) => *self.locals.get(l)?,
            ExprKind::Special(s) => self.special(*s)?,
            // A truncation is exact when the range fits (checked below).
            ExprKind::Cast(x) => self.range(x)?,
            ExprKind::Math(f @ (MathFn::Min | MathFn::Max), args) => {
                let [a, b] = args.as_slice() else {
                    return None;
                };
                let ((al, ah), (bl, bh)) = (self.range(a)?, self.range(b)?);
                if *f == MathFn::Min {
                    (al.min(bl), ah.min(bh))
                } else {
                    (al.max(bl), ah.max(bh))
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (al, ah) = self.range(a)?;
                let (bl, bh) = self.range(b)?;
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
}
