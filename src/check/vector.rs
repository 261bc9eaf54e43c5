//! Vector loads and stores: `let (a, b, c, d) = load4(x[i]);` and
//! `store4(y[i], a, b, c, d);` (and `load2`/`store2`), one `ld.v4`/`st.v4`
//! of the consecutive elements starting at the place.
//!
//! - E0146: a vector load used as one value, a `let ( ... )` pattern that
//!   is not bound to a vector load, or one whose names do not match its
//!   width;
//! - E0147: more than 16 bytes (`load4` of `f64`);
//! - E0148: an element index the checker can compute that is not a
//!   multiple of the width (the access would be misaligned);
//! - W0325: an index the checker cannot prove to be a multiple of the
//!   width (from constants, multiplications, shifts and sums, immutable
//!   locals and loop variables); the simulator reports a misaligned access
//!   (S0003) and the GPU faults if it is not.

use super::body::BodyChecker;
use super::builtins::{self, Builtin, Entry, Function};
use super::calls::CallResult;
use super::error::CheckError;
use crate::ir::{
    consteval, BinOp, Expr, ExprKind, LocalId, Place, PlaceKind, StmtKind, VECTOR_BYTES,
};
use crate::span::Span;
use crate::syntax::ast;

/// More low zero bits than any index has.
const ALL: u32 = 128;

/// The width of a vector built-in, and whether it loads.
fn vector_op(f: Function) -> Option<(usize, bool)> {
    match f {
        Function::Load2 => Some((2, true)),
        Function::Load4 => Some((4, true)),
        Function::Store2 => Some((2, false)),
        Function::Store4 => Some((4, false)),
        _ => None,
    }
}

impl BodyChecker<'_> {
    /// `let (names...) = loadN(place);`
    pub fn let_tuple(
        &mut self,
        names: &[ast::LetName],
        pattern: Span,
        init: &ast::Expr,
    ) -> Option<StmtKind> {
        let load = match &init.kind {
            ast::ExprKind::Call {
                callee,
                args,
                named,
            } if !self.g.function_ids.contains_key(&*callee.name) => {
                let entry = builtins::function(&callee.name);
                match entry.map(|e| (e, e.builtin)) {
                    Some((e, Builtin::Function(f))) => match vector_op(f) {
                        Some((n, true)) => Some((e, callee, args, named, n)),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        };
        // A name bound twice in one pattern (as in Rust; `_` may repeat).
        for (k, l) in names.iter().enumerate() {
            let first = names
                .iter()
                .take(k)
                .find(|f| f.name.name == l.name.name && &*l.name.name != "_");
            if let Some(first) = first {
                self.error(CheckError::Duplicate {
                    name: l.name.name.to_string(),
                    span: l.name.span,
                    first: first.name.span,
                });
            }
        }
        let Some((entry, callee, args, named, n)) = load else {
            let _ = self.expr(init, None);
            self.error(CheckError::NotVectorLoad {
                span: init.span,
                pattern,
                names: names.len(),
            });
            self.poison_names(names);
            return None;
        };
        let name = entry.name;
        self.builtin_use(callee.span, entry);
        let place = self.in_call(entry.call_note(), args, &[], |c| {
            match c
                .bind_args::<1>(entry, args, ast::named_args(named), init.span)?
                .args
            {
                [Some(p)] => c.place(p, false),
                [None] => None,
            }
        });
        if names.len() != n {
            self.error(CheckError::VectorNames {
                callee: name.to_string(),
                n,
                names: names.len(),
                pattern,
                call: init.span,
            });
            self.poison_names(names);
            return None;
        }
        let Some((place, _)) = place else {
            self.poison_names(names);
            return None;
        };
        let place_span = args.first().map_or(init.span, |a| a.span);
        if !self.vector_place(name, n, &place, place_span) {
            self.poison_names(names);
            return None;
        }
        let mut locals: Vec<LocalId> = Vec::with_capacity(n);
        for (k, l) in names.iter().enumerate() {
            // A name bound twice (E0101 above): the first is not "unused".
            if let Some(j) = names
                .iter()
                .take(k)
                .position(|f| f.name.name == l.name.name)
            {
                if let Some(first) = locals.get(j) {
                    self.mark_used(*first);
                }
            }
            locals.push(self.declare_local(&l.name, place.elem, l.mutable, "a variable"));
        }
        Some(StmtKind::LoadVector {
            locals,
            place: Box::new(place),
        })
    }

    /// `storeN(place, values...)`.
    pub fn store_vector_call(
        &mut self,
        entry: &Entry,
        args: &[ast::Expr],
        named: &[ast::NamedArg],
        span: Span,
    ) -> Option<CallResult> {
        let Builtin::Function(f) = entry.builtin else {
            return None;
        };
        let (n, _) = vector_op(f)?;
        let (p, values) = match f {
            Function::Store2 => {
                let [Some(p), Some(a), Some(b)] =
                    self.bind_args::<3>(entry, args, named, span)?.args
                else {
                    return None;
                };
                (p, vec![a, b])
            }
            _ => {
                let [Some(p), Some(a), Some(b), Some(c), Some(d)] =
                    self.bind_args::<5>(entry, args, named, span)?.args
                else {
                    return None;
                };
                (p, vec![a, b, c, d])
            }
        };
        let place = self.place(p, true);
        let mut lowered = Vec::with_capacity(n);
        let mut ok = true;
        for v in values {
            let e = match place.as_ref() {
                Some((pl, _)) => self.expr_as(v, pl.elem),
                None => self.expr(v, None),
            };
            match e {
                Some(e) => lowered.push(e),
                None => ok = false,
            }
        }
        let (place, _) = place?;
        if !self.vector_place(entry.name, n, &place, p.span) || !ok {
            return None;
        }
        Some(CallResult::Effect(Box::new(StmtKind::StoreVector {
            place: Box::new(place),
            values: lowered,
        })))
    }

    /// A vector load used as one value.
    pub fn vector_as_value(&mut self, entry: &Entry, args: &[ast::Expr], span: Span) {
        let n = match entry.builtin {
            Builtin::Function(Function::Load2) => 2,
            _ => 4,
        };
        for a in args {
            self.quiet_uses(a);
        }
        self.error(CheckError::VectorAsValue {
            callee: entry.name.to_string(),
            n,
            span,
        });
    }

    fn poison_names(&mut self, names: &[ast::LetName]) {
        for l in names {
            self.poison(&l.name.name);
        }
    }

    /// The width (E0147) and alignment (E0148, W0325) of a vector access
    /// of `n` elements at `place`; whether it may be lowered.
    fn vector_place(&mut self, name: &str, n: usize, place: &Place, span: Span) -> bool {
        let bytes = n as u32 * place.elem.size();
        if bytes > VECTOR_BYTES {
            self.error(CheckError::VectorTooWide {
                callee: name.to_string(),
                elem: place.elem.to_string(),
                n,
                bytes,
                span,
            });
            return false;
        }
        let need = n.trailing_zeros();
        let (z, r) = self.flat_index(place);
        if z >= need && r.rem_euclid(n as i128) != 0 {
            let index = if z >= 32 {
                format!("element {r}")
            } else {
                let m = 1i128 << z.min(64);
                format!("an element index of the form {m}k + {}", r.rem_euclid(m))
            };
            self.error(CheckError::VectorMisaligned {
                callee: name.to_string(),
                n,
                index,
                span,
            });
            return false;
        }
        if z < need {
            self.error(CheckError::VectorUnproven {
                callee: name.to_string(),
                n,
                span,
            });
        }
        true
    }

    /// The element index of a place, row-major, as far as it is known:
    /// `(z, r)` when it is `r` modulo `2^z` (`z` is [`ALL`] for a constant).
    fn flat_index(&self, place: &Place) -> (u32, i128) {
        let (dims, indices): (&[u64], Vec<&Expr>) = match &place.kind {
            PlaceKind::Global { index, .. } => (&[], vec![index]),
            PlaceKind::Shared { array, indices } | PlaceKind::Remote { array, indices, .. } => {
                let dims = self
                    .kernel
                    .as_ref()
                    .and_then(|k| k.shared.get(array.index()))
                    .map_or(&[][..], |a| &a.dims[..]);
                (dims, indices.iter().collect())
            }
            PlaceKind::SharedAt { .. } => return (0, 0),
        };
        // The stride of index k is the product of the dimensions after it.
        let mut strides = vec![1u64; indices.len()];
        for k in (0..indices.len().saturating_sub(1)).rev() {
            let d = dims.get(k + 1).copied().unwrap_or(1);
            let next = strides.get(k + 1).copied().unwrap_or(1);
            if let Some(s) = strides.get_mut(k) {
                *s = next.saturating_mul(d);
            }
        }
        let mut flat = (ALL, 0);
        for (e, s) in indices.iter().zip(&strides) {
            let term = mul(self.low_bits(e), (ALL, i128::from(*s)));
            flat = add(flat, term);
        }
        flat
    }

    /// The low bits of `e`'s value that are known: `(z, r)` when it is `r`
    /// modulo `2^z` (`(0, 0)`: nothing known).
    pub(super) fn low_bits(&self, e: &Expr) -> (u32, i128) {
        if let Some(v) = consteval::eval_int(e) {
            return (ALL, v);
        }
        let known = match &e.kind {
            ExprKind::Local(l) => self.low_bits.get(l.index()).copied().unwrap_or((0, 0)),
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.low_bits(a), self.low_bits(b));
                match op {
                    BinOp::Mul => mul(x, y),
                    BinOp::Add => add(x, y),
                    BinOp::Sub => add(x, (y.0, y.1.wrapping_neg())),
                    BinOp::Shl => match consteval::eval_int(b) {
                        Some(k) if (0..64).contains(&k) => mul(x, (ALL, 1i128 << k)),
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
            ExprKind::Cast(inner) if inner.ty.is_int() && e.ty.is_int() => self.low_bits(inner),
            _ => (0, 0),
        };
        // Only the bits the type holds are known (arithmetic wraps there).
        let bits = if e.ty.is_int() { e.ty.size() * 8 } else { 0 };
        let z = known.0.min(bits);
        (z, wrap(known.1, z))
    }

    /// Records what is known of an immutable local's low bits.
    pub(super) fn learn_low_bits(&mut self, l: LocalId, known: (u32, i128)) {
        if let Some(slot) = self.low_bits.get_mut(l.index()) {
            *slot = known;
        }
    }
}

/// `r` modulo `2^z` (`r` itself for [`ALL`] bits).
fn wrap(r: i128, z: u32) -> i128 {
    if z >= 64 {
        r
    } else {
        r.rem_euclid(1i128 << z)
    }
}

/// How many low bits are known to be zero.
fn zeros((z, r): (u32, i128)) -> u32 {
    if r == 0 {
        z
    } else {
        r.trailing_zeros().min(z)
    }
}

/// The known low bits of a sum.
pub(super) fn add(x: (u32, i128), y: (u32, i128)) -> (u32, i128) {
    let z = x.0.min(y.0);
    (z, wrap(x.1.wrapping_add(y.1), z))
}

/// The known low bits of a product: `(rx + 2^zx·a)(ry + 2^zy·b)` is
/// `rx·ry` modulo `2^min(zx + zeros(y), zy + zeros(x))`.
fn mul(x: (u32, i128), y: (u32, i128)) -> (u32, i128) {
    let z =
        x.0.saturating_add(zeros(y))
            .min(y.0.saturating_add(zeros(x)))
            .min(ALL);
    (z, wrap(wrap(x.1, 64).wrapping_mul(wrap(y.1, 64)), z))
}
