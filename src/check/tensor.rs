//! Tensor data (`docs/language.md` §15): tensor-map parameters
//! (`a: tensor [bf16; 128, 64] fill(nan)`), the `swizzle(...)` clause of
//! shared arrays and the `guards(...)` clause of barrier groups (E0400,
//! E0403, E0405, E0408).

use super::args::Call;
use super::body::{Binding, BodyChecker};
use super::builtins::Function;
use super::calls::CallResult;
use super::error::{CheckError, Suggestion};
use crate::ir::tensor::{L2Promotion, OobFill, Swizzle, TensorMap};
use crate::ir::{self, ParamId, SharedId};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

/// The parts of a `tensor [...]` type as the grammar read them.
pub struct TensorType<'a> {
    pub word: &'a ast::Ident,
    pub mutable: bool,
    pub elem: &'a ast::TypeExpr,
    pub dims: &'a [ast::Expr],
    pub clauses: &'a [ast::Clause],
    pub span: Span,
}

impl<'a> TensorType<'a> {
    pub fn of(t: &'a ast::TypeExpr) -> Option<TensorType<'a>> {
        match &t.kind {
            ast::TypeExprKind::Tensor {
                word,
                mutable,
                elem,
                dims,
                clauses,
            } => Some(TensorType {
                word,
                mutable: *mutable,
                elem,
                dims,
                clauses,
                span: t.span,
            }),
            _ => None,
        }
    }
}

/// The word of a clause argument that is a bare name (`zero` in
/// `fill(zero)`).
fn word_arg(e: &ast::Expr) -> Option<&str> {
    match &e.kind {
        ast::ExprKind::Name(n) => Some(&n.name),
        _ => None,
    }
}

impl BodyChecker<'_> {
    /// A tensor-map parameter's type: `None` (after its errors) when it is
    /// not one the target and the hardware can have.
    pub fn tensor_param(&mut self, t: &TensorType<'_>) -> Option<TensorMap> {
        let mut ok = true;
        if &*t.word.name != "tensor" {
            let fix = super::body::similar(&t.word.name, ["tensor"]).map(|s| Suggestion {
                message: format!("use `{s}`"),
                span: t.word.span,
                replacement: s,
            });
            self.error(CheckError::TensorDecl {
                why: format!("unknown type `{}`", t.word.name),
                span: t.word.span,
                note: None,
                help: Some(
                    "a tensor-map parameter is written `tensor [T; b0, b1, ...]`, its box outermost first"
                        .into(),
                ),
                fix,
                other: None,
            });
            ok = false;
        }
        ok &= self.require_sm90("a tensor-map parameter", t.span);
        let elem = self.scalar_type(t.elem);
        if let Some(ty) = elem.filter(|t| *t == Scalar::Bool || t.is_packed()) {
            let help = match ty.half_of() {
                Some(h) => format!(
                    "a map of `{h}` with the innermost box dimension doubled moves the same bytes"
                ),
                None => "store flags as `u8`".into(),
            };
            self.error(CheckError::TensorDecl {
                why: format!("a tensor map cannot hold `{ty}`"),
                span: t.elem.span,
                note: Some(
                    "tensor maps hold bf16, f16, f32, tf32, f64, e4m3, e5m2 and the integers"
                        .into(),
                ),
                help: Some(help),
                fix: None,
                other: None,
            });
            ok = false;
        }
        let mut dims = Vec::new();
        for d in t.dims {
            match self.const_size(d, Some(Scalar::U32)) {
                Some(v) if v < 1 || v > i128::from(TensorMap::MAX_BOX) => {
                    self.error(CheckError::TensorBox {
                        why: format!("a box dimension of {v}"),
                        span: d.span,
                        note: "each dimension of a tensor map's box is 1 to 256 elements (`cuTensorMapEncodeTiled`)",
                    });
                    ok = false;
                }
                Some(v) => dims.push(v as u32),
                None => ok = false,
            }
        }
        if t.dims.len() > TensorMap::MAX_RANK {
            let span = t.dims.get(TensorMap::MAX_RANK).map_or(t.span, |d| {
                d.span.to(t.dims.last().map_or(d.span, |l| l.span))
            });
            self.error(CheckError::TensorBox {
                why: format!("a box of {} dimensions", t.dims.len()),
                span,
                note: "a tensor map has 1 to 5 dimensions (PTX's `.1d` to `.5d`)",
            });
            ok = false;
        }
        let (mut fill, mut l2) = (None::<(OobFill, Span)>, None::<(L2Promotion, Span)>);
        for c in t.clauses {
            match &*c.name.name {
                "fill" => {
                    if let Some((_, first)) = fill {
                        self.clause_twice(c, first);
                        ok = false;
                        continue;
                    }
                    let word = match c.args.as_slice() {
                        [a] => word_arg(a),
                        _ => None,
                    };
                    let value = match word {
                        Some("zero") => Some(OobFill::Zero),
                        Some("nan") => Some(OobFill::Nan),
                        _ => None,
                    };
                    match value {
                        Some(f) => fill = Some((f, c.span)),
                        None => {
                            self.bad_clause(
                                c,
                                "`fill` takes `zero` or `nan`: `fill(zero)`, `fill(nan)`",
                            );
                            ok = false;
                        }
                    }
                }
                "l2" => {
                    if let Some((_, first)) = l2 {
                        self.clause_twice(c, first);
                        ok = false;
                        continue;
                    }
                    let value = match c.args.as_slice() {
                        [a] => self.const_size(a, Some(Scalar::U32)),
                        _ => None,
                    };
                    match (value, value.and_then(L2Promotion::from_bytes)) {
                        (_, Some(p)) => l2 = Some((p, c.span)),
                        // The argument's own error says it.
                        (None, None) if c.args.len() == 1 => ok = false,
                        (Some(v), None) => {
                            self.error(CheckError::TensorDecl {
                                why: format!("there is no {v}-byte L2 promotion"),
                                span: c.span,
                                note: None,
                                help: Some(
                                    "`l2` takes the bytes of L2 promotion: 0, 64, 128 or 256"
                                        .into(),
                                ),
                                fix: None,
                                other: None,
                            });
                            ok = false;
                        }
                        (None, None) => {
                            self.bad_clause(
                                c,
                                "`l2` takes the bytes of L2 promotion: 0, 64, 128 or 256",
                            );
                            ok = false;
                        }
                    }
                }
                other => {
                    let fix = super::body::similar(other, ["fill", "l2"]).map(|s| Suggestion {
                        message: format!("use `{s}`"),
                        span: c.name.span,
                        replacement: s,
                    });
                    self.error(CheckError::TensorDecl {
                        why: format!("unknown clause `{other}`"),
                        span: c.name.span,
                        note: None,
                        help: Some(
                            "a tensor type takes `fill(zero | nan)` and `l2(0 | 64 | 128 | 256)`"
                                .into(),
                        ),
                        fix,
                        other: None,
                    });
                    ok = false;
                }
            }
        }
        let elem = elem?;
        if let Some((OobFill::Nan, span)) = fill {
            if !TensorMap::nan_fill_allowed(elem) {
                self.error(CheckError::TensorDecl {
                    why: format!("a tensor of `{elem}` cannot be filled with NaN"),
                    span,
                    note: Some("the driver fills out-of-bounds elements with NaN only for the float types bf16, f16, f32, tf32 and f64 (an fp8 map holds bytes)".into()),
                    help: Some("use `fill(zero)`, the default".into()),
                    fix: None,
                    other: None,
                });
                ok = false;
            }
        }
        let map = TensorMap::new(
            elem,
            &dims,
            t.mutable,
            fill.map_or(OobFill::default(), |f| f.0),
            l2.map_or(L2Promotion::default(), |l| l.0),
        )?;
        if ok && map.inner_bytes() % 16 != 0 {
            let span = t.dims.last().map_or(t.span, |d| d.span);
            self.error(CheckError::TensorBox {
                why: format!(
                    "the innermost box dimension is {} bytes ({} × {}), not a multiple of 16",
                    map.inner_bytes(),
                    map.box_dims().last().copied().unwrap_or(0),
                    elem
                ),
                span,
                note: "a tensor copy moves whole 16-byte units: the box's innermost dimension must be a multiple of 16 bytes (`cuTensorMapEncodeTiled`, PTX ISA §5.5.3.1)",
            });
            ok = false;
        }
        ok.then_some(map)
    }

    fn clause_twice(&mut self, c: &ast::Clause, first: Span) {
        self.error(CheckError::TensorDecl {
            why: format!("`{}` is given twice", c.name.name),
            span: c.span,
            note: None,
            help: Some("keep one of them".into()),
            fix: None,
            other: Some((first, "given first here".into())),
        });
    }

    fn bad_clause(&mut self, c: &ast::Clause, help: &str) {
        self.error(CheckError::TensorDecl {
            why: format!("`{}` cannot take these arguments", c.name.name),
            span: c.span,
            note: None,
            help: Some(help.into()),
            fix: None,
            other: None,
        });
    }

    /// The `swizzle(...)` clause of a shared array `name: [elem; dims]`
    /// (its other clauses are E0400): the swizzle, `None` when it is
    /// wrong (already reported), `Some(Swizzle::None)` without a clause.
    pub fn swizzle_clause(
        &mut self,
        name: &ast::Ident,
        elem: Option<Scalar>,
        dims: Option<&[u64]>,
        clauses: &[ast::Clause],
    ) -> Option<Swizzle> {
        let mut found: Option<(Swizzle, &ast::Clause)> = None;
        let mut ok = true;
        for c in clauses {
            if &*c.name.name != "swizzle" {
                let fix = super::body::similar(&c.name.name, ["swizzle"]).map(|s| Suggestion {
                    message: format!("use `{s}`"),
                    span: c.name.span,
                    replacement: s,
                });
                self.error(CheckError::TensorDecl {
                    why: format!("unknown clause `{}`", c.name.name),
                    span: c.name.span,
                    note: None,
                    help: Some("a shared array takes `swizzle(32 | 64 | 128)`".into()),
                    fix,
                    other: None,
                });
                ok = false;
                continue;
            }
            if let Some((_, first)) = found {
                self.clause_twice(c, first.span);
                ok = false;
                continue;
            }
            let value = match c.args.as_slice() {
                [a] => self.const_size(a, Some(Scalar::U32)),
                _ => {
                    self.bad_clause(c, "`swizzle` takes the bytes of a row: 32, 64 or 128");
                    ok = false;
                    continue;
                }
            };
            let Some(v) = value else {
                ok = false;
                continue;
            };
            match Swizzle::from_bytes(v) {
                Some(s) => found = Some((s, c)),
                None => {
                    let help = if v == 0 {
                        "leave the clause out for an array without a swizzle"
                    } else {
                        "`swizzle` takes the bytes of a row: 32, 64 or 128"
                    };
                    self.error(CheckError::TensorDecl {
                        why: format!("there is no {v}-byte swizzle"),
                        span: c.span,
                        note: None,
                        help: Some(help.into()),
                        fix: None,
                        other: None,
                    });
                    ok = false;
                }
            }
        }
        let Some((swizzle, clause)) = found else {
            return ok.then_some(Swizzle::None);
        };
        let (Some(elem), Some(dims)) = (elem, dims) else {
            return None;
        };
        let span_bytes = swizzle.span();
        let size = u64::from(elem.size());
        let inner = dims.last().copied().unwrap_or(1);
        let per_row = span_bytes / size;
        let clause_span = Some(clause.span);
        if inner.checked_mul(size) != Some(span_bytes) {
            let row = inner.saturating_mul(size);
            let help = match Swizzle::from_bytes(i128::from(row)) {
                Some(s) if row <= 128 => format!(
                    "rows of {inner} `{elem}` are {row} bytes: declare `swizzle({})`, or make the innermost dimension {per_row}",
                    s.name()
                ),
                _ => format!(
                    "make the innermost dimension {per_row}; a wider tile is a further dimension of rows ({inner} = {} × {per_row})",
                    if inner % per_row == 0 { (inner / per_row).to_string() } else { "k".into() }
                ),
            };
            self.error(CheckError::SwizzleShape {
                what: name.name.to_string(),
                swizzle: span_bytes,
                why: format!(
                    "a {span_bytes}-byte swizzle needs {per_row} `{elem}` per row; `{}` has {inner}",
                    name.name
                ),
                span: name.span,
                clause: clause_span,
                help: Some(help),
            });
            return None;
        }
        if dims.len() >= 3 {
            let stage = dims
                .iter()
                .skip(1)
                .try_fold(size, |b, &d| b.checked_mul(d))
                .unwrap_or(u64::MAX);
            if stage % swizzle.repeat() != 0 {
                let rows = stage / span_bytes;
                self.error(CheckError::SwizzleShape {
                    what: name.name.to_string(),
                    swizzle: span_bytes,
                    why: format!(
                        "each slice `{}[s]` is {rows} rows ({stage} bytes), not a whole number of {}-byte repeats",
                        name.name,
                        swizzle.repeat()
                    ),
                    span: name.span,
                    clause: clause_span,
                    help: Some(
                        "give each slice along the first index a multiple of 8 rows, so that every stage starts on the pattern's repeat"
                            .into(),
                    ),
                });
                return None;
            }
        }
        Some(swizzle)
    }

    /// The `guards(a, b)` clause of barrier group `group` of `count`
    /// barriers: the arrays it guards (its other clauses are E0400).
    pub fn guards_clause(
        &mut self,
        group: &ast::Ident,
        count: Option<u32>,
        clauses: &[ast::Clause],
    ) -> Vec<SharedId> {
        let mut out: Vec<SharedId> = Vec::new();
        let mut seen: Option<Span> = None;
        for c in clauses {
            if &*c.name.name != "guards" {
                let fix = super::body::similar(&c.name.name, ["guards"]).map(|s| Suggestion {
                    message: format!("use `{s}`"),
                    span: c.name.span,
                    replacement: s,
                });
                self.error(CheckError::TensorDecl {
                    why: format!("unknown clause `{}`", c.name.name),
                    span: c.name.span,
                    note: None,
                    help: Some("a barrier group takes `guards(a, ...)`, the shared arrays whose slice `i` barrier `i` guards".into()),
                    fix,
                    other: None,
                });
                continue;
            }
            if let Some(first) = seen {
                self.clause_twice(c, first);
                continue;
            }
            seen = Some(c.span);
            if c.args.is_empty() {
                self.bad_clause(
                    c,
                    "`guards` names one or more shared arrays: `guards(sa, sb)`",
                );
            }
            for a in &c.args {
                let Some(name) = word_arg(a) else {
                    self.error(CheckError::Guards {
                        group: group.name.to_string(),
                        array: self.sources.slice(a.span).to_string(),
                        why: "not the name of a shared array".into(),
                        span: a.span,
                        decl: None,
                    });
                    continue;
                };
                let id = match self.lookup(name) {
                    Some(Binding::Shared(id)) => id,
                    Some(Binding::Poisoned) => continue,
                    Some(_) => {
                        self.error(CheckError::Guards {
                            group: group.name.to_string(),
                            array: name.to_string(),
                            why: format!("`{name}` is not a shared array"),
                            span: a.span,
                            decl: None,
                        });
                        continue;
                    }
                    None => {
                        let similar = self.similar_visible(name, a.span);
                        self.error(CheckError::NotFound {
                            kind: "shared array",
                            name: name.to_string(),
                            span: a.span,
                            similar,
                            help: Some(
                                "a barrier group guards shared arrays declared before it".into(),
                            ),
                        });
                        continue;
                    }
                };
                let Some(array) = self.kernel.as_ref().and_then(|k| k.shared.get(id.index()))
                else {
                    continue;
                };
                let (first, decl) = (array.dims.first().copied().unwrap_or(1), array.span);
                if out.contains(&id) {
                    self.error(CheckError::Guards {
                        group: group.name.to_string(),
                        array: name.to_string(),
                        why: format!("`{name}` is named twice"),
                        span: a.span,
                        decl: None,
                    });
                    continue;
                }
                if let Some(n) = count {
                    if first != u64::from(n) {
                        self.error(CheckError::Guards {
                            group: group.name.to_string(),
                            array: name.to_string(),
                            why: format!(
                                "`{name}` has {first} {} along its first index, the group {n} {}",
                                if first == 1 { "slice" } else { "slices" },
                                if n == 1 { "barrier" } else { "barriers" }
                            ),
                            span: a.span,
                            decl: Some(decl),
                        });
                        continue;
                    }
                }
                out.push(id);
            }
        }
        out
    }
}

/// A tensor copy's shared end as checked: the IR slice and what the
/// checks of the copy need of its array.
struct CheckedSlice {
    slice: ir::Slice,
    elem: Scalar,
    /// The dimensions the slice keeps (the box's shape).
    shape: Vec<u64>,
    swizzle: Swizzle,
    name: String,
    /// The array's declaration.
    decl: Span,
}

/// A tensor copy's box as checked.
struct CheckedBox {
    map_id: ParamId,
    map: TensorMap,
    name: String,
    coords: Vec<ir::Expr>,
    span: Span,
    /// The parameter's name, and its type (for a fix adding `mut`).
    param: Span,
    type_span: Option<Span>,
}

/// `a × b × c`, for messages.
fn shape_text(dims: &[u64]) -> String {
    let parts: Vec<String> = dims.iter().map(u64::to_string).collect();
    match parts.len() {
        0 => "one element".into(),
        _ => parts.join(" × "),
    }
}

impl BodyChecker<'_> {
    /// `tma_load(dst, src, barrier, mask = m)`, `tma_store(dst, src)`,
    /// `tma_reduce_add(dst, src)`.
    pub(super) fn tensor_copy_call(&mut self, c: Call<'_>, f: Function) -> Option<CallResult> {
        let (entry, span) = (c.entry, c.span);
        let load = f == Function::TmaLoad;
        let (smem, boxed, barrier, mask) = if load {
            let (args, named) = self.bind_args_and_named::<3>(&c);
            let mask = named
                .iter()
                .find(|n| &*n.name.name == "mask")
                .map(|n| &n.value);
            let Some([Some(dst), Some(src), Some(bar)]) = args else {
                if let Some(m) = mask {
                    self.quiet_uses(m);
                }
                return None;
            };
            (dst, src, Some(bar), mask)
        } else {
            let [Some(dst), Some(src)] = self.bind_args::<2>(&c)?.args else {
                return None;
            };
            (src, dst, None, None)
        };
        let sm90 = self.needs(entry, span);
        let slice = self.shared_slice(smem);
        let b = self.tensor_box(boxed, !load);
        let barrier = match barrier {
            Some(bar) => Some(self.barrier_ref(bar)?),
            None => None,
        };
        let mask = match mask {
            Some(m) => Some(self.cta_mask(entry.name, m)?),
            None => None,
        };
        let (slice, b) = (slice?, b?);
        if !sm90 {
            return None;
        }
        self.box_fits_slice(entry.name, &b, &slice, span)?;
        let kind = match f {
            Function::TmaLoad => ir::TensorCopyKind::Load {
                barrier: barrier?,
                mask: mask.map(Box::new),
            },
            Function::TmaStore => ir::TensorCopyKind::Store,
            _ => {
                if !matches!(
                    b.map.elem,
                    Scalar::U32
                        | Scalar::I32
                        | Scalar::U64
                        | Scalar::F32
                        | Scalar::F16
                        | Scalar::BF16
                ) {
                    self.error(CheckError::TensorCopy {
                        callee: entry.name,
                        why: format!("a tensor reduction cannot add `{}`", b.map.elem),
                        span: b.span,
                        note: Some("`cp.reduce.async.bulk.tensor` adds u32, i32, u64, f32, f16 and bf16 (PTX ISA §9.7.9.25.5.3)".into()),
                        help: None,
                    });
                    return None;
                }
                ir::TensorCopyKind::ReduceAdd
            }
        };
        Some(CallResult::Effect(Box::new(ir::StmtKind::TensorCopy(
            Box::new(ir::TensorCopy {
                kind,
                smem: slice.slice,
                map: b.map_id,
                coords: b.coords,
                box_span: b.span,
            }),
        ))))
    }

    /// `bytes_of(sa[s])`: the slice's bytes, a `u32` constant. Its indices
    /// are checked, not evaluated (they name the slice, whose size does not
    /// depend on them).
    pub(super) fn bytes_of_call(&mut self, c: Call<'_>) -> Option<CallResult> {
        let [Some(arg)] = self.bind_args::<1>(&c)?.args else {
            return None;
        };
        let slice = self.shared_slice(arg)?;
        let bytes = slice
            .shape
            .iter()
            .try_fold(u64::from(slice.elem.size()), |b, &d| b.checked_mul(d))
            .and_then(|b| u32::try_from(b).ok());
        let Some(bytes) = bytes else {
            self.error(CheckError::TensorCopy {
                callee: "bytes_of",
                why: format!("`{}` has more bytes than a `u32` holds", slice.name),
                span: arg.span,
                note: Some(
                    "`bytes_of` is a `u32`, like the byte counts of the barrier operations".into(),
                ),
                help: None,
            });
            return None;
        };
        Some(CallResult::Value(self.constant(
            ir::Value::Int(i128::from(bytes)),
            Scalar::U32,
            c.span,
        )))
    }

    /// A slice of a shared array: `sa` or `sa[i, ...]` with fewer indices
    /// than dimensions.
    fn shared_slice(&mut self, e: &ast::Expr) -> Option<CheckedSlice> {
        let mut inner = e;
        while let ast::ExprKind::Paren(x) = &inner.kind {
            inner = x;
        }
        let (name, indices) = match &inner.kind {
            ast::ExprKind::Name(n) => (n, &[][..]),
            ast::ExprKind::Index { base, indices, .. } => match &base.kind {
                ast::ExprKind::Name(n) => (n, &indices[..]),
                _ => return self.not_a_slice(e),
            },
            _ => return self.not_a_slice(e),
        };
        let id = match self.lookup(&name.name) {
            Some(Binding::Shared(id)) => id,
            Some(Binding::Poisoned) => {
                let _ = self.indices(indices);
                return None;
            }
            None => {
                let similar = self.similar_visible(&name.name, name.span);
                let _ = self.indices(indices);
                self.error(CheckError::NotFound {
                    kind: "shared array",
                    name: name.name.to_string(),
                    span: name.span,
                    similar,
                    help: None,
                });
                return None;
            }
            Some(_) => return self.not_a_slice(e),
        };
        let array = self.kernel.as_ref()?.shared.get(id.index())?.clone();
        self.reference(name.span, array.span);
        let idx = self.indices(indices)?;
        if idx.len() >= array.dims.len() {
            self.error(CheckError::TensorCopy {
                callee: "tma_load",
                why: format!(
                    "`{}` is an element, not a slice: `{}` has {} dimensions",
                    self.text(e.span),
                    array.name,
                    array.dims.len()
                ),
                span: e.span,
                note: Some("tensor copies and `bytes_of` take a slice of a shared array: its name with the leading indices, `sa[s]` (or `sa` for all of it)".into()),
                help: None,
            });
            return None;
        }
        Some(CheckedSlice {
            shape: array.dims.get(idx.len()..).unwrap_or(&[]).to_vec(),
            slice: ir::Slice {
                array: id,
                indices: idx,
                span: e.span,
            },
            elem: array.elem,
            swizzle: array.swizzle,
            name: self.text(e.span).to_string(),
            decl: array.span,
        })
    }

    fn not_a_slice<T>(&mut self, e: &ast::Expr) -> Option<T> {
        let found = match self.expr(e, None) {
            Some(v) => v.ty.to_string(),
            None => return None,
        };
        self.error(CheckError::Mismatch {
            expected: "a slice of a shared array".into(),
            found,
            span: e.span,
            note: Some("this needs a shared array's name with its leading indices, `sa[s]` (or `sa` for all of it)".into()),
            fix: None,
        });
        None
    }

    /// A box of a tensor map, `a[c0, c1]`: one 32-bit coordinate per
    /// dimension, outermost first. With `write`, the map must be `tensor
    /// mut` (E0103).
    fn tensor_box(&mut self, e: &ast::Expr, write: bool) -> Option<CheckedBox> {
        let mut inner = e;
        while let ast::ExprKind::Paren(x) = &inner.kind {
            inner = x;
        }
        let not_a_box = |c: &mut Self| {
            let found = c.expr(e, None).map(|v| v.ty.to_string());
            if let Some(found) = found {
                c.error(CheckError::Mismatch {
                    expected: "a box of a tensor map".into(),
                    found,
                    span: e.span,
                    note: Some("this needs a tensor parameter with one coordinate per dimension of its box, outermost first: `a[m0, k0]`".into()),
                    fix: None,
                });
            }
            None
        };
        let ast::ExprKind::Index { base, indices, .. } = &inner.kind else {
            return not_a_box(self);
        };
        let ast::ExprKind::Name(name) = &base.kind else {
            return not_a_box(self);
        };
        let p = match self.lookup(&name.name) {
            Some(Binding::Param(p)) => p,
            Some(Binding::Poisoned) => {
                let _ = self.coordinates(indices);
                return None;
            }
            _ => return not_a_box(self),
        };
        let (param, type_span) = {
            let k = self.kernel.as_ref()?;
            (
                k.params.get(p.index())?.clone(),
                k.param_type_spans.get(p.index()).copied(),
            )
        };
        let ir::ParamType::Tensor(map) = param.ty else {
            return not_a_box(self);
        };
        self.reference(name.span, param.span);
        let coords = self.coordinates(indices);
        if indices.len() != map.rank() {
            self.error(CheckError::TensorBox {
                why: format!(
                    "{} {} for `{}`, a map of {} {}",
                    indices.len(),
                    if indices.len() == 1 { "coordinate" } else { "coordinates" },
                    name.name,
                    map.rank(),
                    if map.rank() == 1 { "dimension" } else { "dimensions" }
                ),
                span: e.span,
                note: "a box is named by one coordinate per dimension of its map, outermost first: the element of the tensor at its first corner",
            });
            return None;
        }
        if write && !map.mutable {
            let fix = type_span.and_then(|ts| {
                let text = self.text(ts);
                let at = text.find("tensor")? + "tensor".len();
                let at = ts.start + at as u32;
                Some(Suggestion {
                    message: format!("declare the map writable: `{}: tensor mut ...`", name.name),
                    span: Span {
                        start: at,
                        end: at,
                        ..ts
                    },
                    replacement: " mut".into(),
                })
            });
            self.error(CheckError::StoreReadOnly {
                name: name.name.to_string(),
                span: e.span,
                param: param.span,
                fix,
            });
            return None;
        }
        Some(CheckedBox {
            map_id: p,
            map,
            name: name.name.to_string(),
            coords: coords?,
            span: e.span,
            param: param.span,
            type_span,
        })
    }

    /// The coordinates of a box: `i32` or `u32` (the hardware reads 32
    /// bits, signed: a negative coordinate of a load reads the fill).
    fn coordinates(&mut self, indices: &[ast::IndexArg]) -> Option<Vec<ir::Expr>> {
        let mut out = Vec::new();
        let mut ok = true;
        for i in indices {
            match i {
                ast::IndexArg::Expr(e) => match self.expr(e, Some(Scalar::I32)) {
                    Some(v) if matches!(v.ty, Scalar::I32 | Scalar::U32) => out.push(v),
                    Some(v) => {
                        self.mismatch_text("`i32` or `u32`", v.ty.to_string(), e.span);
                        ok = false;
                    }
                    None => ok = false,
                },
                ast::IndexArg::Range { span, .. } => {
                    self.mismatch_text("a coordinate", "range", *span);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// A multicast's CTA mask: a `u32` whose 16 low bits name the CTAs by
    /// rank, in a kernel with `cluster(...)` on sm_90a or sm_100a.
    fn cta_mask(&mut self, callee: &'static str, m: &ast::Expr) -> Option<ir::Expr> {
        let v = self.expr_as(m, Scalar::U32);
        let cluster = self.require_cluster("a multicast tensor copy (`mask =`)", m.span);
        let arch = self.target.is_arch_specific() && self.target.sm() >= 90;
        if !arch {
            self.error(CheckError::TargetTooOld {
                feature: "a multicast tensor copy (`mask =`, `.multicast::cluster`)".into(),
                needs: "sm_90a",
                current: self.target.name().to_string(),
                span: m.span,
            });
        }
        let v = v?;
        if let Some(c) = ir::consteval::eval_int(&v) {
            let size = self
                .kernel
                .as_ref()
                .and_then(|k| k.cluster)
                .map(|[x, y, z]| x * y * z);
            let limit = size.map_or(16, |s| s.min(16));
            if c == 0 || c >> limit != 0 {
                let why = if c == 0 {
                    "a multicast to no CTA: the mask is 0".to_string()
                } else {
                    format!("the mask {c:#x} names a CTA past the cluster's {limit}")
                };
                self.error(CheckError::TensorCopy {
                    callee,
                    why,
                    span: m.span,
                    note: Some("bit `r` of the mask is the cluster's CTA of rank `r` (`cluster_rank`); the copy lands in the same slice of each".into()),
                    help: None,
                });
                return None;
            }
        }
        (cluster && arch).then_some(v)
    }

    /// E0401–E0404 and the slice's alignment (E0409): the box is the
    /// slice's shape and elements, the slice starts on the swizzle's repeat
    /// (or 128 bytes), and the map has one swizzle.
    fn box_fits_slice(
        &mut self,
        callee: &'static str,
        b: &CheckedBox,
        s: &CheckedSlice,
        span: Span,
    ) -> Option<()> {
        let boxed: Vec<u64> = b.map.box_dims().iter().map(|&d| u64::from(d)).collect();
        if boxed != s.shape {
            self.error(CheckError::BoxShape {
                map: b.name.clone(),
                boxed: shape_text(&boxed),
                slice: s.name.clone(),
                shape: shape_text(&s.shape),
                span: b.span,
                param: b.param,
            });
            return None;
        }
        if b.map.elem != s.elem {
            self.error(CheckError::BoxElem {
                map: b.name.clone(),
                map_elem: b.map.elem.to_string(),
                slice: s.name.clone(),
                slice_elem: s.elem.to_string(),
                span: s.slice.span,
                param: b.param,
            });
            return None;
        }
        // Where the slice starts, relative to the array's start (which is
        // on the swizzle's repeat): each index's stride must keep it there.
        let array = self
            .kernel
            .as_ref()?
            .shared
            .get(s.slice.array.index())?
            .clone();
        let align = s.swizzle.repeat().max(128);
        let size = u64::from(array.elem.size());
        let mut misaligned = None;
        for (k, idx) in s.slice.indices.iter().enumerate() {
            let stride = array
                .dims
                .iter()
                .skip(k + 1)
                .fold(size, |a, &d| a.saturating_mul(d));
            let offset = match ir::consteval::eval_int(idx) {
                Some(c) => u64::try_from(c).ok().map(|c| c.saturating_mul(stride)),
                None => None,
            };
            let ok = match offset {
                Some(o) => o % align == 0,
                None => stride % align == 0,
            };
            if !ok {
                misaligned = Some((idx.span, stride));
                break;
            }
        }
        if let Some((at, stride)) = misaligned {
            if s.swizzle == Swizzle::None {
                self.error(CheckError::TensorCopy {
                    callee,
                    why: format!(
                        "`{}` may start off a 128-byte boundary: its slices are {stride} bytes apart",
                        s.name
                    ),
                    span: at,
                    note: Some("a tensor copy's shared memory starts on a 128-byte boundary (PTX ISA §9.7.9.25.5)".into()),
                    help: Some("make the slices a multiple of 128 bytes, or copy a slice of fewer indices".into()),
                });
            } else {
                self.error(CheckError::SwizzleShape {
                    what: s.name.clone(),
                    swizzle: s.swizzle.span(),
                    why: format!(
                        "a tensor copy's slice starts on the swizzle's {}-byte repeat, and the slices of this index are {stride} bytes apart",
                        s.swizzle.repeat()
                    ),
                    span: at,
                    clause: Some(s.decl),
                    help: Some("copy whole stages (`sa[s]`): a box of one row of a swizzled array is not a swizzled tile".into()),
                });
            }
            return None;
        }
        // One swizzle per map: the first copy's.
        let first = self
            .kernel
            .as_ref()
            .and_then(|k| k.map_swizzles.get(&b.map_id).cloned());
        match first {
            Some((sw, _, _)) if sw == s.swizzle => {}
            Some((sw, first_array, first_span)) => {
                let name = |w: Swizzle| match w {
                    Swizzle::None => "no swizzle".to_string(),
                    w => format!("a {}-byte swizzle", w.name()),
                };
                self.error(CheckError::MapSwizzle {
                    map: b.name.clone(),
                    array: array.name.clone(),
                    swizzle: name(s.swizzle),
                    first_array,
                    first_swizzle: name(sw),
                    span: s.slice.span,
                    first: first_span,
                });
                return None;
            }
            None => {
                if let Some(k) = self.kernel.as_mut() {
                    k.map_swizzles
                        .insert(b.map_id, (s.swizzle, array.name.clone(), s.slice.span));
                    if let Some(ir::ParamType::Tensor(m)) =
                        k.params.get_mut(b.map_id.index()).map(|p| &mut p.ty)
                    {
                        m.swizzle = s.swizzle;
                    }
                }
            }
        }
        let _ = (span, b.type_span);
        Some(())
    }
}
