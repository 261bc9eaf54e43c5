//! Tensor data (`docs/language.md` §15): tensor-map parameters
//! (`a: tensor [bf16; 128, 64] fill(nan)`), the `swizzle(...)` clause of
//! shared arrays and the `guards(...)` clause of barrier groups (E0400,
//! E0403, E0405, E0408).

use super::body::{Binding, BodyChecker};
use super::error::{CheckError, Suggestion};
use crate::ir::tensor::{L2Promotion, OobFill, Swizzle, TensorMap};
use crate::ir::SharedId;
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
        let elem = super::globals::scalar_type(t.elem, &mut self.diags);
        if elem == Some(Scalar::Bool) {
            self.error(CheckError::TensorDecl {
                why: "a tensor map cannot hold `bool`".into(),
                span: t.elem.span,
                note: Some(
                    "tensor maps hold bf16, f16, f32, tf32, f64, e4m3, e5m2 and the integers"
                        .into(),
                ),
                help: Some("store flags as `u8`".into()),
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
