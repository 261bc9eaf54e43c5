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
//!   locals, loop variables and the elements of loops over constant
//!   lists); the simulator reports a misaligned access (S0003) and the GPU
//!   faults if it is not.
//!
//! E0148 and W0325 read what the analysis knows of the index's low bits
//! (`crate::analysis::values`), once the body is lowered ([`alignment`]).

use super::args::Call;
use super::body::BodyChecker;
use super::builtins::{self, Builtin, Entry, Function};
use super::calls::CallResult;
use super::error::CheckError;
use crate::analysis::values::{self, walk_runs, At, LowBits, RunVisit, Values, ALL_BITS};
use crate::ir::{
    Body, Expr, LocalId, Matrix, Place, PlaceKind, SharedArray, Stmt, StmtId, StmtKind,
    VECTOR_BYTES,
};
use crate::span::Span;
use crate::syntax::ast;
use std::collections::HashMap;

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
                    Some((e, Builtin::Function(f))) => {
                        match vector_op(f).or_else(|| super::matrix::matrix_op(f)) {
                            Some((n, true)) => Some((e, callee, args, named, n, f)),
                            _ => None,
                        }
                    }
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
        let Some((entry, callee, args, named, n, f)) = load else {
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
        if let Function::LdMatrix(_) = f {
            let named = ast::named_args(named);
            return self.let_matrix(names, pattern, init, entry, args, named, n);
        }
        let place = self.in_call(entry.call_note(), args, &[], |c| {
            match c
                .bind_args::<1>(&Call::new(entry, args, ast::named_args(named), init.span))?
                .args
            {
                [Some(p)] => c.memory_place(p, false),
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
            matrix: None,
        })
    }

    /// `let (names...) = ldmatrix_xN(place, trans = t);`
    #[allow(clippy::too_many_arguments)]
    fn let_matrix(
        &mut self,
        names: &[ast::LetName],
        pattern: Span,
        init: &ast::Expr,
        entry: &'static Entry,
        args: &[ast::Expr],
        named: &[ast::NamedArg],
        n: usize,
    ) -> Option<StmtKind> {
        let name = entry.name;
        let checked = self.in_call(entry.call_note(), args, named, |c| {
            let call = Call::new(entry, args, named, init.span);
            let [Some(p), t] = c.bind_args::<2>(&call)?.args else {
                return None;
            };
            let place = c.memory_place(p, false);
            let reg = match &place {
                Some((pl, _)) => c.matrix_place(name, pl, p.span),
                None => None,
            };
            let trans = c.matrix_trans(t);
            let needs = c.needs(entry, init.span);
            Some((place?.0, reg?, trans?)).filter(|_| needs)
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
        let Some((place, reg, trans)) = checked else {
            self.poison_names(names);
            return None;
        };
        let mut locals: Vec<LocalId> = Vec::with_capacity(n);
        for (k, l) in names.iter().enumerate() {
            if let Some(j) = names
                .iter()
                .take(k)
                .position(|f| f.name.name == l.name.name)
            {
                if let Some(first) = locals.get(j) {
                    self.mark_used(*first);
                }
            }
            locals.push(self.declare_local(&l.name, reg, l.mutable, "a variable"));
        }
        Some(StmtKind::LoadVector {
            locals,
            place: Box::new(place),
            matrix: Some(crate::ir::Matrix { trans }),
        })
    }

    /// `storeN(place, values...)`.
    pub fn store_vector_call(&mut self, call: Call<'_>) -> Option<CallResult> {
        let entry = call.entry;
        let Builtin::Function(f) = entry.builtin else {
            return None;
        };
        let (n, _) = vector_op(f)?;
        let (p, values) = match f {
            Function::Store2 => {
                let [Some(p), Some(a), Some(b)] = self.bind_args::<3>(&call)?.args else {
                    return None;
                };
                (p, vec![a, b])
            }
            _ => {
                let [Some(p), Some(a), Some(b), Some(c), Some(d)] =
                    self.bind_args::<5>(&call)?.args
                else {
                    return None;
                };
                (p, vec![a, b, c, d])
            }
        };
        let place = self.memory_place(p, true);
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
            matrix: None,
        })))
    }

    /// A vector load used as one value.
    pub fn vector_as_value(&mut self, entry: &Entry, args: &[ast::Expr], span: Span) {
        let n = match entry.builtin {
            Builtin::Function(Function::Load2) => 2,
            Builtin::Function(Function::LdMatrix(n)) => usize::from(n),
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

    /// The width of a vector access of `n` elements at `place` (E0147);
    /// whether it may be lowered. Its alignment is checked once the body
    /// is lowered and its facts are known ([`alignment`]).
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
        true
    }
}

/// The alignment of every vector access of a lowered body (E0148, W0325),
/// from what is known of its index ([`Values::low_bits`]): in each run of
/// the loops over constant lists around it, reported once per access
/// (E0148 for the first run whose index is never a multiple of the width,
/// else W0325 if some run's cannot be proven one). `shared` are the
/// kernel's shared arrays (none in a function).
pub fn alignment(body: &Body, shared: &[SharedArray], values: &Values) -> Vec<CheckError> {
    struct Access {
        callee: String,
        matrix: bool,
        n: usize,
        span: Span,
        misaligned: Option<String>,
        unproven: bool,
    }
    struct Find<'a> {
        shared: &'a [SharedArray],
        values: &'a Values,
        /// In the order the accesses are first met.
        found: Vec<Access>,
        seen: HashMap<StmtId, usize>,
    }
    impl<'ir> RunVisit<'ir> for Find<'_> {
        fn stmt(&mut self, s: &'ir Stmt, at: At) {
            let (n, place, load, matrix) = match &s.kind {
                StmtKind::LoadVector {
                    locals,
                    place,
                    matrix,
                } => (locals.len(), place, true, matrix.is_some()),
                StmtKind::StoreVector {
                    place,
                    values,
                    matrix,
                } => (values.len(), place, false, matrix.is_some()),
                _ => return,
            };
            // A matrix row is 8 elements, whatever the count of matrices.
            let (n, callee) = match (matrix, load) {
                (true, true) => (Matrix::ROW as usize, format!("ldmatrix_x{n}")),
                (true, false) => (Matrix::ROW as usize, format!("stmatrix_x{n}")),
                (false, true) => (n, format!("load{n}")),
                (false, false) => (n, format!("store{n}")),
            };
            let need = n.trailing_zeros();
            let (z, r) = flat_index(self.shared, self.values, place, at);
            let i = *self.seen.entry(s.id).or_insert_with(|| {
                self.found.push(Access {
                    callee,
                    matrix,
                    n,
                    span: place.span,
                    misaligned: None,
                    unproven: false,
                });
                self.found.len() - 1
            });
            let Some(a) = self.found.get_mut(i) else {
                return;
            };
            if z >= need && r.rem_euclid(n as i128) != 0 {
                if a.misaligned.is_none() {
                    a.misaligned = Some(if z >= 32 {
                        format!("element {r}")
                    } else {
                        let m = 1i128 << z.min(64);
                        format!("an element index of the form {m}k + {}", r.rem_euclid(m))
                    });
                }
            } else if z < need {
                a.unproven = true;
            }
        }
    }
    let mut f = Find {
        shared,
        values,
        found: Vec::new(),
        seen: HashMap::new(),
    };
    walk_runs(body, values, &mut f);
    f.found
        .into_iter()
        .filter_map(|a| match a.misaligned {
            Some(index) if a.matrix => Some(CheckError::MatrixMisaligned {
                callee: a.callee,
                index,
                span: a.span,
            }),
            None if a.unproven && a.matrix => Some(CheckError::MatrixUnproven {
                callee: a.callee,
                span: a.span,
            }),
            Some(index) => Some(CheckError::VectorMisaligned {
                callee: a.callee,
                n: a.n,
                index,
                span: a.span,
            }),
            None if a.unproven => Some(CheckError::VectorUnproven {
                callee: a.callee,
                n: a.n,
                span: a.span,
            }),
            None => None,
        })
        .collect()
}

/// The element index of a place at `at`, row-major, as far as it is
/// known: `(z, r)` when it is `r` modulo `2^z` (`z` is [`ALL_BITS`] for a
/// constant).
fn flat_index(shared: &[SharedArray], values: &Values, place: &Place, at: At) -> LowBits {
    let (dims, indices): (&[u64], Vec<&Expr>) = match &place.kind {
        PlaceKind::Global { index, .. } => (&[], vec![index]),
        PlaceKind::Shared { array, indices } | PlaceKind::Remote { array, indices, .. } => {
            let dims = shared.get(array.index()).map_or(&[][..], |a| &a.dims[..]);
            (dims, indices.iter().collect())
        }
        PlaceKind::SharedAt { .. } | PlaceKind::Accum { .. } | PlaceKind::Register { .. } => {
            return (0, 0)
        }
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
    let mut flat = (ALL_BITS, 0);
    for (e, s) in indices.iter().zip(&strides) {
        let term = values::mul(values.low_bits(e, at), (ALL_BITS, i128::from(*s)));
        flat = values::add(flat, term);
    }
    flat
}
