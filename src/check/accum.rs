//! Tensor cores: warpgroup accumulators (`accum acc: [f32; 64, 256];`),
//! their elements (`acc[i]`), the fragment map (`acc_row`, `acc_col`) and
//! the `wgmma` operations (language.md §16).

use super::args::Call;
use super::body::{Binding, BodyChecker};
use super::calls::CallResult;
use super::error::CheckError;
use crate::ir::{self, AccumId, BinOp, Expr, ExprKind, Place, PlaceKind, Special, StmtKind, Value};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;
use std::collections::HashSet;

impl BodyChecker<'_> {
    /// `accum name: [T; 64, N];`: at a kernel's top level (E0121), `T`
    /// and `N` one of the accumulator shapes of `wgmma` (E0412).
    pub fn accum_decl(
        &mut self,
        name: &ast::Ident,
        elem: &ast::TypeExpr,
        dims: &[ast::Expr],
        span: Span,
    ) {
        let top = self.at_kernel_top_level("accumulator", span);
        let elem_ty = self.scalar_type(elem);
        let mut sizes = Vec::new();
        for d in dims {
            if let Some(v) = self.const_size(d, Some(Scalar::U32)) {
                sizes.push(v);
            }
        }
        if self.already_defined(name, span) {
            return;
        }
        let (Some(ty), true) = (elem_ty, sizes.len() == dims.len()) else {
            self.poison(&name.name);
            return;
        };
        let shape = match sizes.as_slice() {
            [m, n] => Some((*m, *n, false)),
            // A row vector: one value per row.
            [m] => Some((*m, 1, true)),
            _ => None,
        };
        let fragment = ir::Accum::OPERAND_ELEMS.contains(&ty);
        let why = match shape {
            Some((_, _, true)) if ty != Scalar::F32 => Some(format!(
                "a row vector (`[T; 64]`, one value per row) holds `f32`, not `{ty}`"
            )),
            _ if !ir::Accum::ELEMS.contains(&ty) && !fragment => Some(format!(
                "`{ty}` is no accumulator type: `wgmma` accumulates into `f32`, `f16` or `i32`, and a register operand is `bf16` or `f16`"
            )),
            None => Some(format!(
                "an accumulator has 2 dimensions, 64 rows and N columns (or 1, 64 rows, for a row vector), not {}",
                sizes.len()
            )),
            Some((m, _, _)) if m != i128::from(ir::Accum::M) => Some(format!(
                "an accumulator has {} rows (the M of every `wgmma` shape), not {m}",
                ir::Accum::M
            )),
            Some((_, n, false)) if !ir::Accum::valid_n(ty, n) => Some(ir::Accum::n_rule(ty, n)),
            Some(_) => None,
        };
        if let Some(why) = why {
            let dims_text: Vec<String> = sizes.iter().map(i128::to_string).collect();
            self.error(CheckError::BadAccum {
                name: name.name.to_string(),
                shape: format!("[{ty}; {}]", dims_text.join(", ")),
                why,
                span,
            });
            self.poison(&name.name);
            return;
        }
        let Some((_, n, row)) = shape.filter(|_| top) else {
            self.poison(&name.name);
            return;
        };
        let Some(k) = self.kernel.as_mut() else {
            return;
        };
        let id = AccumId(k.accums.len() as u32);
        k.accums.push(ir::Accum {
            name: name.name.to_string(),
            elem: ty,
            n: n as u32,
            row,
            span,
            failed: false,
        });
        self.bind(&name.name, Binding::Accum(id));
    }

    /// `acc[i]`: one index, a `u32` (whether it is a constant where it is
    /// read is the warpgroup pass's question, E0418: a range `for` loop
    /// with constant bounds that indexes an accumulator is unrolled for it,
    /// [`accum_loops`]).
    pub(super) fn accum_place(
        &mut self,
        id: AccumId,
        name: &ast::Ident,
        indices: &[ast::IndexArg],
        index_span: Span,
        span: Span,
    ) -> Option<(Place, Span)> {
        let (elem, decl) = {
            let a = self.kernel.as_ref()?.accums.get(id.index())?;
            (a.elem, a.span)
        };
        self.reference(name.span, decl);
        let idx = self.indices(indices);
        if indices.len() != 1 {
            self.error(CheckError::IndexCount {
                name: name.name.to_string(),
                dims: 1,
                found: indices.len(),
                span: index_span,
                decl: Some(decl),
            });
            return None;
        }
        let index = idx?.into_iter().next()?;
        let index = if index.ty == Scalar::U32 {
            index
        } else {
            let s = index.span;
            Expr {
                kind: ExprKind::Cast(Box::new(index)),
                ty: Scalar::U32,
                span: s,
                id: self.ids.expr(),
            }
        };
        Some((
            Place {
                kind: PlaceKind::Accum { acc: id, index },
                elem,
                span,
            },
            name.span,
        ))
    }

    /// The accumulator an argument names (`acc` in `acc_row(acc, i)`).
    pub(super) fn accum_arg(&mut self, e: &ast::Expr) -> Option<AccumId> {
        let mut e = e;
        while let ast::ExprKind::Paren(inner) = &e.kind {
            e = inner;
        }
        let ast::ExprKind::Name(n) = &e.kind else {
            let _ = self.expr(e, None);
            self.error(CheckError::NotA {
                name: self.text(e.span).to_string(),
                what: "an accumulator",
                span: e.span,
                decl: None,
            });
            return None;
        };
        match self.lookup(&n.name) {
            Some(Binding::Accum(id)) => {
                let decl = self.kernel.as_ref()?.accums.get(id.index())?.span;
                self.reference(n.span, decl);
                Some(id)
            }
            Some(Binding::Poisoned) => None,
            Some(_) => {
                self.error(CheckError::NotA {
                    name: n.name.to_string(),
                    what: "an accumulator",
                    span: n.span,
                    decl: None,
                });
                None
            }
            None => {
                let similar = self.similar_visible(&n.name, n.span);
                self.error(CheckError::NotFound {
                    kind: "accumulator",
                    name: n.name.to_string(),
                    span: n.span,
                    similar,
                    help: None,
                });
                None
            }
        }
    }

    /// `acc_row(acc, i)` and `acc_col(acc, i)`: where this thread's element
    /// `i` of `acc` lies, as the arithmetic of the fragment map
    /// ([`ir::Accum::row`], [`ir::Accum::col`]) on `warp_id` and `lane_id`.
    pub(super) fn accum_coord(&mut self, c: Call<'_>, col: bool) -> Option<CallResult> {
        let [Some(acc), Some(i)] = self.bind_args::<2>(&c)?.args else {
            return None;
        };
        let acc = self.accum_arg(acc);
        let index = self.expr_as(i, Scalar::U32)?;
        let acc = acc?;
        let (elements, row, decl) = {
            let a = self.kernel.as_ref()?.accums.get(acc.index())?;
            (a.elements(), a.row, a.span)
        };
        if row {
            let name = self.kernel.as_ref()?.accums.get(acc.index())?.name.clone();
            self.error(CheckError::BadFragment {
                op: c.entry.name.to_string(),
                why: format!(
                    "`{name}` is a row vector: its elements are rows, not elements of the fragment map; `{}` of an element of the fragment it goes with gives its place",
                    c.entry.name
                ),
                span: c.args.first().map_or(c.span, |a| a.span),
                decl: Some(decl),
            });
            return None;
        }
        if let Some(v) = ir::consteval::eval_int(&index) {
            if v >= i128::from(elements) {
                let name = self.kernel.as_ref()?.accums.get(acc.index())?.name.clone();
                self.error(CheckError::AccumIndex {
                    name,
                    index: v,
                    elements,
                    span: index.span,
                });
                return None;
            }
        }
        let span = c.span;
        let e = if col {
            // 8 (i >> 2) + 2 (lane % 4) + (i & 1)
            let copy = self.ids.copy_expr(&index);
            let blocks = self.coord_op(BinOp::Shr, copy, 2, span);
            let blocks = self.coord_times(8, blocks, span);
            let lane = self.coord_special(Special::LaneId, span);
            let quad = self.coord_op(BinOp::Rem, lane, 4, span);
            let quad = self.coord_times(2, quad, span);
            let odd = self.coord_op(BinOp::BitAnd, index, 1, span);
            let sum = self.coord_add(blocks, quad, span);
            self.coord_add(sum, odd, span)
        } else {
            // 16 (warp % 4) + lane / 4 + 8 ((i >> 1) & 1)
            let warp = self.coord_special(Special::WarpId, span);
            let warp = self.coord_op(BinOp::Rem, warp, 4, span);
            let warp = self.coord_times(16, warp, span);
            let lane = self.coord_special(Special::LaneId, span);
            let lane = self.coord_op(BinOp::Div, lane, 4, span);
            let half = self.coord_op(BinOp::Shr, index, 1, span);
            let half = self.coord_op(BinOp::BitAnd, half, 1, span);
            let half = self.coord_times(8, half, span);
            let sum = self.coord_add(warp, lane, span);
            self.coord_add(sum, half, span)
        };
        Some(CallResult::Value(e))
    }

    fn coord_special(&mut self, s: Special, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Special(s),
            ty: Scalar::U32,
            span,
            id: self.ids.expr(),
        }
    }

    /// `a op c` for a `u32` constant `c`.
    fn coord_op(&mut self, op: BinOp, a: Expr, c: u32, span: Span) -> Expr {
        let c = self.constant(Value::Int(i128::from(c)), Scalar::U32, span);
        Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(c)),
            ty: Scalar::U32,
            span,
            id: self.ids.expr(),
        }
    }

    fn coord_times(&mut self, c: u32, a: Expr, span: Span) -> Expr {
        self.coord_op(BinOp::Mul, a, c, span)
    }

    fn coord_add(&mut self, a: Expr, b: Expr, span: Span) -> Expr {
        Expr {
            kind: ExprKind::Binary(BinOp::Add, Box::new(a), Box::new(b)),
            ty: Scalar::U32,
            span,
            id: self.ids.expr(),
        }
    }

    /// `wgmma(acc, a, b, accumulate = e)`: `a` and `b` elements of swizzled
    /// shared arrays (E0110, E0410), types of a `wgmma` form (E0411).
    pub(super) fn wgmma(&mut self, c: Call<'_>) -> Option<CallResult> {
        let [Some(acc), Some(a), Some(b), accumulate] = self.bind_args::<4>(&c)?.args else {
            return None;
        };
        let in_kernel = self.in_kernel(c.entry.name, c.span);
        let target = self.needs(c.entry, c.span);
        let acc_span = acc.span;
        let acc = self.accum_arg(acc);
        let a = self.wgmma_a_operand(a);
        let b = self.wgmma_operand(b);
        let accumulate = match accumulate {
            Some(e) => self.expr_as(e, Scalar::Bool),
            None => Some(self.constant(Value::Bool(true), Scalar::Bool, c.span)),
        };
        let acc = acc?;
        let checked = self.wgmma_checked(c, acc, acc_span, a, b, accumulate);
        if checked.is_none() {
            // What it holds is unknown: nothing more is said of it.
            if let Some(x) = self
                .kernel
                .as_mut()
                .and_then(|k| k.accums.get_mut(acc.index()))
            {
                x.failed = true;
            }
        }
        // E0200 and E0419 are said: the statement stays, so that nothing
        // that follows from it is said again.
        let _ = (target, in_kernel);
        checked
    }

    /// The rest of [`BodyChecker::wgmma`], once the accumulator is known.
    fn wgmma_checked(
        &mut self,
        c: Call<'_>,
        acc: AccumId,
        acc_span: Span,
        a: Option<(Place, bool)>,
        b: Option<(Place, bool)>,
        accumulate: Option<Expr>,
    ) -> Option<CallResult> {
        let ((a, trans_a), (b, trans_b), accumulate) = (a?, b?, accumulate?);
        let (d, n, name, row, decl) = {
            let x = self.kernel.as_ref()?.accums.get(acc.index())?;
            (x.elem, x.n, x.name.clone(), x.row, x.span)
        };
        if row {
            self.error(CheckError::BadFragment {
                op: "wgmma".into(),
                why: format!(
                    "`{name}` is a row vector (one value per row), not a 64 x N accumulator"
                ),
                span: acc_span,
                decl: Some(decl),
            });
            return None;
        }
        if let PlaceKind::Accum { acc: p, .. } = &a.kind {
            let x = self.kernel.as_ref()?.accums.get(p.index())?;
            if x.row || !ir::Accum::OPERAND_ELEMS.contains(&x.elem) || *p == acc {
                let why = if *p == acc {
                    format!("`{}` is both the accumulator and the A operand", x.name)
                } else if x.row {
                    format!("`{}` is a row vector: the A operand from registers is a `bf16` or `f16` fragment `[T; 64, K]`", x.name)
                } else {
                    format!(
                        "`{}` holds `{}`: the A operand from registers is a fragment of `bf16` or `f16` pairs (`acc_convert` makes one from an `f32` result)",
                        x.name, x.elem
                    )
                };
                let decl = x.span;
                self.error(CheckError::BadFragment {
                    op: "wgmma".into(),
                    why,
                    span: a.span,
                    decl: Some(decl),
                });
                return None;
            }
        }
        let shown = |t: Scalar, trans: bool| {
            if trans {
                format!("transposed `{t}`")
            } else {
                format!("`{t}`")
            }
        };
        let form_text = format!(
            "`{name}: [{d}; 64, {n}]` += {} x {}",
            shown(a.elem, trans_a),
            shown(b.elem, trans_b)
        );
        let form = match ir::WgmmaForm::of(d, a.elem, b.elem) {
            Ok(f) if (trans_a || trans_b) && !f.transposable() => {
                self.error(CheckError::BadWgmmaTypes {
                    form: form_text,
                    why: format!(
                        "only `f16` and `bf16` operands can be transposed (MN-major); `{}` ones are K-major",
                        f.a
                    ),
                    span: c.span,
                    acc: acc_span,
                });
                return None;
            }
            Ok(f) => f,
            Err(why) => {
                self.error(CheckError::BadWgmmaTypes {
                    form: form_text,
                    why,
                    span: c.span,
                    acc: acc_span,
                });
                return None;
            }
        };
        // The tiles: 64 rows of A, N of B, each K = 32 bytes long.
        let mut ok = true;
        for (p, rows, trans, which) in [(&a, ir::Accum::M, trans_a, "A"), (&b, n, trans_b, "B")] {
            // A fragment's slice is the warpgroup pass's (E0410 there).
            if !matches!(p.kind, PlaceKind::Accum { .. }) {
                ok &= self.wgmma_tile(p, rows, form.k(), trans, which);
            }
        }
        ok.then(|| {
            CallResult::Effect(Box::new(StmtKind::Wgmma(Box::new(ir::Wgmma {
                acc,
                a,
                b,
                trans_a,
                trans_b,
                accumulate,
                acc_span,
            }))))
        })
    }

    /// `wgmma`'s A operand: a shared tile ([`BodyChecker::wgmma_operand`])
    /// or an element of a fragment (`p[8 * kk]`, the RS form).
    fn wgmma_a_operand(&mut self, e: &ast::Expr) -> Option<(Place, bool)> {
        if let ast::ExprKind::Index { base, .. } = &e.kind {
            if let ast::ExprKind::Name(n) = &base.kind {
                if let Some(Binding::Accum(_)) = self.lookup(&n.name) {
                    let (p, _) = self.place(e, false)?;
                    return Some((p, false));
                }
            }
        }
        self.wgmma_operand(e)
    }

    /// `row_max(m, s)`, `row_sum(l, s)`, `row_scale(o, c)`, `row_exp2(s,
    /// m, k)`, `acc_convert(p, s)`: the kinds, types and shapes of the
    /// fragments (E0450).
    pub(super) fn fragment_op(&mut self, c: Call<'_>, kind: ir::FragKind) -> Option<CallResult> {
        use ir::FragKind as K;
        let (dst_e, src_e, factor) = if kind == K::RowExp2 {
            let [Some(d), Some(s), Some(k)] = self.bind_args::<3>(&c)?.args else {
                return None;
            };
            (d, s, Some(k))
        } else {
            let [Some(d), Some(s)] = self.bind_args::<2>(&c)?.args else {
                return None;
            };
            (d, s, None)
        };
        let in_kernel = self.in_kernel(c.entry.name, c.span);
        let dst = self.accum_arg(dst_e);
        let src = self.accum_arg(src_e);
        let factor = match factor {
            Some(k) => Some(self.expr_as(k, Scalar::F32)?),
            None => None,
        };
        let (dst, src) = (dst?, src?);
        if !in_kernel {
            return None;
        }
        let (d, s) = {
            let k = self.kernel.as_ref()?;
            (
                k.accums.get(dst.index())?.clone(),
                k.accums.get(src.index())?.clone(),
            )
        };
        let op = kind.name();
        // The first operand whose kind does not fit, and why.
        let wrong: Option<(&ast::Expr, &ir::Accum, String)> = match kind {
            K::RowMax | K::RowSum if !d.row || d.elem != Scalar::F32 => Some((
                dst_e,
                &d,
                format!("`{}` is not a row vector: `{op}` folds each row of `{}` into a row vector `[f32; 64]`", d.name, s.name),
            )),
            K::RowMax | K::RowSum if s.elem != Scalar::F32 => Some((
                src_e,
                &s,
                format!("`{}` holds `{}`: `{op}` reduces the rows of an `f32` fragment", s.name, s.elem),
            )),
            K::RowScale | K::RowExp2 if d.elem != Scalar::F32 => Some((
                dst_e,
                &d,
                format!("`{}` holds `{}`: `{op}` computes on `f32` fragments and row vectors", d.name, d.elem),
            )),
            K::RowScale | K::RowExp2 if !s.row => Some((
                src_e,
                &s,
                format!("`{}` is not a row vector: `{op}` takes each row's value from a row vector `[f32; 64]`", s.name),
            )),
            K::Convert if d.row || !ir::Accum::OPERAND_ELEMS.contains(&d.elem) => Some((
                dst_e,
                &d,
                format!("`{}` is {}: `acc_convert` writes a `bf16` or `f16` fragment `[T; 64, N]`", d.name, if d.row { "a row vector".to_string() } else { format!("a fragment of `{}`", d.elem) }),
            )),
            K::Convert if s.row || s.elem != Scalar::F32 => Some((
                src_e,
                &s,
                format!("`{}` is {}: `acc_convert` reads an `f32` fragment `[f32; 64, N]`", s.name, if s.row { "a row vector".to_string() } else { format!("a fragment of `{}`", s.elem) }),
            )),
            K::Convert if d.n != s.n => Some((
                dst_e,
                &d,
                format!("`{}` is 64 x {} and `{}` 64 x {}: `acc_convert` keeps each element where it is, so the shapes are the same", d.name, d.n, s.name, s.n),
            )),
            _ => None,
        };
        if let Some((e, a, why)) = wrong {
            self.error(CheckError::BadFragment {
                op: op.to_string(),
                why,
                span: e.span,
                decl: Some(a.span),
            });
            return None;
        }
        Some(CallResult::Effect(Box::new(StmtKind::Fragment(Box::new(
            ir::FragOp {
                kind,
                dst,
                src,
                factor,
                dst_span: dst_e.span,
                src_span: src_e.span,
            },
        )))))
    }

    /// A `wgmma` operand: an element of a swizzled shared array of this
    /// CTA (E0110 for another place, E0410 for an array without a
    /// swizzle), and whether it is transposed (`transpose(sa[..])`, an
    /// MN-major tile).
    fn wgmma_operand(&mut self, e: &ast::Expr) -> Option<(Place, bool)> {
        let (e, trans) = match &e.kind {
            ast::ExprKind::Call {
                callee,
                args,
                named,
            } if &*callee.name == "transpose" => {
                let found = args.len() + ast::named_args(named).len();
                match args.as_slice() {
                    [x] if found == 1 => (x, true),
                    _ => {
                        self.error(CheckError::ArgCount {
                            callee: "transpose".to_string(),
                            expected: "1".to_string(),
                            found,
                            span: e.span,
                            signature: Some("transpose(tile: shared element)".to_string()),
                        });
                        return None;
                    }
                }
            }
            _ => (e, false),
        };
        let (p, _) = self.place(e, false)?;
        let PlaceKind::Shared { array, .. } = &p.kind else {
            self.mismatch_text(
                "an element of a swizzled shared array",
                super::calls::place_kind(&p.kind),
                e.span,
            );
            return None;
        };
        let arr = self.kernel.as_ref()?.shared.get(array.index())?;
        if arr.swizzle == ir::Swizzle::None || arr.dims.len() < 2 {
            let (name, decl) = (arr.name.clone(), arr.span);
            self.error(CheckError::BadWgmmaTile {
                why: format!(
                    "`{name}` has no swizzle: a `wgmma` reads its operands in the layout of a 32-, 64- or 128-byte swizzle, rows of one span along K, which `swizzle(...)` gives an array"
                ),
                span: e.span,
                decl,
            });
            return None;
        }
        Some((p, trans))
    }

    /// Whether the array of tile `p` (`rows` x `k` elements, its first
    /// element `p`) has room for it: K-major, the row dimension (its
    /// second to last) at least `rows`, a row (one span) at least `k`
    /// elements; MN-major (`trans`), the second to last dimension at least
    /// `k`, and a tile wider than a span a dimension before it for its
    /// blocks of a span. Where in the array the tile lies is the warpgroup
    /// pass's (E0410 there).
    fn wgmma_tile(&mut self, p: &Place, rows: u32, k: u32, trans: bool, which: &str) -> bool {
        if trans {
            return self.wgmma_mn_tile(p, rows, k, which);
        }
        let PlaceKind::Shared { array, .. } = &p.kind else {
            return false;
        };
        let Some(arr) = self
            .kernel
            .as_ref()
            .and_then(|kc| kc.shared.get(array.index()))
        else {
            return false;
        };
        let r = arr.dims.iter().rev().nth(1).copied().unwrap_or(0);
        let c = arr.dims.last().copied().unwrap_or(0);
        // A tile taller than the row dimension continues into the next
        // slice of the dimension before it, whose rows follow on: whole
        // slices of a multiple of 8 rows (`sb[s, h, 0, k]` of a `[S, 2,
        // 128, K]` array is 256 rows), so that each CTA of a cluster can
        // load one slice of a tile that both multiply.
        let blocks = u64::from(rows).div_ceil(r.max(1));
        let before = arr.dims.iter().rev().nth(2).copied();
        let why = if r < u64::from(rows)
            && !(u64::from(rows) % r.max(1) == 0 && r % 8 == 0 && before >= Some(blocks))
        {
            Some(match before {
                Some(b) if r > 0 && u64::from(rows) % r == 0 && r % 8 == 0 => format!(
                    "the {which} tile has {rows} rows, {blocks} slices of {r}, and `{}` has {b} in its third-to-last dimension",
                    arr.name
                ),
                Some(_) if r > 0 && r % 8 == 0 => format!(
                    "the {which} tile has {rows} rows, not a whole number of the {r} rows of `{}`'s slices",
                    arr.name
                ),
                _ => format!(
                    "the {which} tile has {rows} rows, and `{}` has {r} in its second-to-last dimension",
                    arr.name
                ),
            })
        } else if c < u64::from(k) {
            Some(format!(
                "the {which} tile is {k} `{}` long along K, and a row of `{}` holds {c}",
                arr.elem, arr.name
            ))
        } else {
            None
        };
        if let Some(why) = why {
            let decl = arr.span;
            self.error(CheckError::BadWgmmaTile {
                why,
                span: p.span,
                decl,
            });
            return false;
        }
        true
    }

    /// [`BodyChecker::wgmma_tile`] of a transposed (MN-major) tile.
    fn wgmma_mn_tile(&mut self, p: &Place, rows: u32, k: u32, which: &str) -> bool {
        let PlaceKind::Shared { array, .. } = &p.kind else {
            return false;
        };
        let Some(arr) = self
            .kernel
            .as_ref()
            .and_then(|kc| kc.shared.get(array.index()))
        else {
            return false;
        };
        let span_elems = arr.dims.last().copied().unwrap_or(0);
        let kd = arr.dims.iter().rev().nth(1).copied().unwrap_or(0);
        let blocks = u64::from(rows).div_ceil(span_elems.max(1));
        let why = if kd < u64::from(k) {
            Some(format!(
                "the transposed {which} tile is {k} long along K, and `{}` has {kd} in its second-to-last dimension",
                arr.name
            ))
        } else if blocks > 1 && arr.dims.len() < 3 {
            Some(format!(
                "the transposed {which} tile has {rows} rows, {blocks} spans of {span_elems}, and `{}` has no dimension before K for them",
                arr.name
            ))
        } else if blocks > 1 && arr.dims.iter().rev().nth(2).copied().unwrap_or(0) < blocks {
            Some(format!(
                "the transposed {which} tile has {rows} rows, {blocks} spans of {span_elems}, and `{}` has {} in its third-to-last dimension",
                arr.name,
                arr.dims.iter().rev().nth(2).copied().unwrap_or(0)
            ))
        } else {
            None
        };
        if let Some(why) = why {
            let decl = arr.span;
            self.error(CheckError::BadWgmmaTile {
                why,
                span: p.span,
                decl,
            });
            return false;
        }
        true
    }

    /// E0419 outside a kernel: wgmma groups are followed in kernels only.
    fn in_kernel(&mut self, name: &str, span: Span) -> bool {
        if self.kernel.is_some() {
            return true;
        }
        self.error(CheckError::WgmmaOutsideKernel {
            op: name.to_string(),
            span,
        });
        false
    }

    /// `wgmma_commit()`.
    pub(super) fn wgmma_commit(&mut self, c: Call<'_>) -> Option<CallResult> {
        self.bind_args::<0>(&c)?;
        // Kept after E0200 or E0419: what follows from it is not said again.
        self.in_kernel(c.entry.name, c.span);
        self.needs(c.entry, c.span);
        Some(CallResult::Effect(Box::new(StmtKind::WgmmaCommit)))
    }

    /// `wgmma_wait(n)`: `n` a constant (E0117) of at most 7 (E0417).
    pub(super) fn wgmma_wait(&mut self, c: Call<'_>) -> Option<CallResult> {
        let [Some(n)] = self.bind_args::<1>(&c)?.args else {
            return None;
        };
        let e = self.expr_as(n, Scalar::U32)?;
        let Some(v) = ir::consteval::eval_u64(&e) else {
            self.error(CheckError::NotConstant {
                span: n.span,
                why: Some(
                    "`wgmma_wait` needs a constant count (PTX `wgmma.wait_group` takes an immediate)"
                        .into(),
                ),
            });
            return None;
        };
        let target = self.needs(c.entry, c.span);
        let in_kernel = self.in_kernel(c.entry.name, c.span);
        if v > u64::from(ir::WGMMA_MAX_PENDING) {
            self.error(CheckError::WaitTooDeep { n: v, span: n.span });
            // Said: it stays as a wait for every group, so that nothing
            // that would follow from a missing wait is said (the module
            // has an error and is never written).
            return Some(CallResult::Effect(Box::new(StmtKind::WgmmaWait(0))));
        }
        let _ = (target, in_kernel);
        Some(CallResult::Effect(Box::new(StmtKind::WgmmaWait(v as u32))))
    }
}

/// The range `for` loops of a kernel body (by span) whose body indexes one
/// of the accumulators `names` (`acc[i]`): such a loop with constant
/// bounds is unrolled at compile time, like a loop over a constant list,
/// so that each element it names is a register. One walk of the body,
/// bottom up.
pub fn accum_loops(body: &ast::Block, names: &HashSet<String>) -> HashSet<Span> {
    let mut found = HashSet::new();
    if !names.is_empty() {
        block(body, names, &mut found);
    }
    found
}

fn block(b: &ast::Block, names: &HashSet<String>, found: &mut HashSet<Span>) -> bool {
    let mut any = false;
    for s in &b.stmts {
        any |= stmt(s, names, found);
    }
    if let Some(t) = &b.tail {
        any |= expr(t, names, found);
    }
    any
}

fn stmt(s: &ast::Stmt, names: &HashSet<String>, found: &mut HashSet<Span>) -> bool {
    use ast::StmtKind as S;
    match &s.kind {
        S::Let { init, .. } | S::LetTuple { init, .. } => expr(init, names, found),
        S::LetArray { init, .. } => match init.as_ref().map(|v| &v.kind) {
            Some(ast::ArrayValueKind::List(items)) => {
                items.iter().fold(false, |a, x| expr(x, names, found) | a)
            }
            Some(ast::ArrayValueKind::Repeat { value, .. }) => expr(value, names, found),
            None => false,
        },
        S::Assign { place, value, .. } => {
            let a = expr(place, names, found);
            expr(value, names, found) || a
        }
        S::If {
            cond,
            then_block,
            else_branch,
        } => {
            let mut any = expr(cond, names, found);
            any |= block(then_block, names, found);
            any |= match else_branch {
                Some(ast::ElseBranch::Block(b)) => block(b, names, found),
                Some(ast::ElseBranch::If(s)) => stmt(s, names, found),
                None => false,
            };
            any
        }
        S::While { cond, body } => {
            let a = expr(cond, names, found);
            block(body, names, found) || a
        }
        S::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            let mut any = expr(start, names, found) | expr(end, names, found);
            if let Some(st) = step {
                any |= expr(st, names, found);
            }
            let inside = block(body, names, found);
            if inside {
                found.insert(s.span);
            }
            any || inside
        }
        S::ForList { items, body, .. } => {
            let mut any = false;
            for i in items {
                any |= expr(i, names, found);
            }
            block(body, names, found) || any
        }
        S::Return(Some(e)) | S::Expr(e) => expr(e, names, found),
        S::Return(None)
        | S::Break
        | S::Continue
        | S::Shared { .. }
        | S::Barrier(_)
        | S::Accum { .. }
        | S::Error => false,
    }
}

fn expr(e: &ast::Expr, names: &HashSet<String>, found: &mut HashSet<Span>) -> bool {
    use ast::ExprKind as E;
    match &e.kind {
        E::Int { .. } | E::WideInt(_) | E::Float { .. } | E::Bool(_) | E::Name(_) | E::Error => {
            false
        }
        E::Field { base, .. } => expr(base, names, found),
        E::Index { base, indices, .. } => {
            let named = matches!(&base.kind, E::Name(n) if names.contains(&*n.name));
            let mut any = named | expr(base, names, found);
            for i in indices {
                any |= match i {
                    ast::IndexArg::Expr(x) => expr(x, names, found),
                    ast::IndexArg::Range { lo, hi, .. } => lo
                        .iter()
                        .chain(hi)
                        .fold(false, |a, x| expr(x, names, found) | a),
                };
            }
            any
        }
        E::Call { args, named, .. } => {
            let mut any = false;
            for a in args {
                any |= expr(a, names, found);
            }
            for n in ast::named_args(named) {
                any |= expr(&n.value, names, found);
            }
            any
        }
        E::MethodCall { receiver, args, .. } => {
            let mut any = expr(receiver, names, found);
            for a in args {
                any |= expr(a, names, found);
            }
            any
        }
        E::Unary { operand, .. } => expr(operand, names, found),
        E::Binary { lhs, rhs, .. } => {
            let a = expr(lhs, names, found);
            expr(rhs, names, found) || a
        }
        E::Cast { expr: x, .. } | E::Paren(x) => expr(x, names, found),
        E::If {
            cond,
            then_block,
            else_block,
        } => {
            let mut any = expr(cond, names, found);
            any |= block(then_block, names, found);
            any |= block(else_block, names, found);
            any
        }
    }
}
