//! Places: elements of global and shared memory (`x[i]`, `tile[s, i]`,
//! `remote(peer, 0)[0]`).

use super::args::Call;
use super::body::{Binding, BodyChecker};
use super::builtins::{self, Function};
use super::error::{CheckError, Suggestion};
use crate::ir::{Expr, ParamType, Place, PlaceKind, SharedId};
use crate::span::Span;
use crate::syntax::ast;
use crate::types::Scalar;

impl BodyChecker<'_> {
    /// Checks an indexed expression as a memory place. With `for_write`, the
    /// place must be writable (a `global mut` parameter or shared memory)
    /// and a global parameter is marked as written.
    pub fn place(&mut self, e: &ast::Expr, for_write: bool) -> Option<(Place, Span)> {
        let ast::ExprKind::Index {
            base,
            indices,
            index_span,
        } = &e.kind
        else {
            let v = self.expr(e, None)?;
            self.error(CheckError::Mismatch {
                expected: "an array element".into(),
                found: v.ty.to_string(),
                span: e.span,
                note: Some(
                    "this needs an element of a global or shared array, such as `x[i]`".into(),
                ),
                fix: None,
            });
            return None;
        };
        let mut base_expr: &ast::Expr = base;
        while let ast::ExprKind::Paren(inner) = &base_expr.kind {
            base_expr = inner;
        }
        match &base_expr.kind {
            ast::ExprKind::Name(name) => {
                self.named_place(name, indices, *index_span, e.span, for_write)
            }
            ast::ExprKind::Call {
                callee,
                args,
                named,
            } if &*callee.name == "remote" && !self.g.function_ids.contains_key("remote") => {
                let named = ast::named_args(named);
                self.remote_place(callee, args, named, indices, *index_span, e.span)
            }
            _ => {
                let v = self.expr(base_expr, None);
                let _ = self.indices(indices);
                let name = self.text(base_expr.span).to_string();
                if v.is_some() {
                    self.error(CheckError::NotA {
                        name,
                        what: "an array",
                        span: base_expr.span,
                        decl: None,
                    });
                }
                None
            }
        }
    }

    /// [`BodyChecker::place`] for an operation on memory (an atomic, a
    /// vector access): an accumulator's element is a register, E0110.
    pub fn memory_place(&mut self, e: &ast::Expr, for_write: bool) -> Option<(Place, Span)> {
        let r = self.place(e, for_write)?;
        if let PlaceKind::Accum { .. } | PlaceKind::Register { .. } = r.0.kind {
            self.mismatch_text(
                "an element of a global or shared array",
                super::calls::place_kind(&r.0.kind),
                e.span,
            );
            return None;
        }
        Some(r)
    }

    fn named_place(
        &mut self,
        name: &ast::Ident,
        indices: &[ast::IndexArg],
        index_span: Span,
        span: Span,
        for_write: bool,
    ) -> Option<(Place, Span)> {
        match self.lookup(&name.name) {
            Some(Binding::Param(p)) => {
                let (param, type_span) = {
                    let k = self.kernel.as_ref()?;
                    (
                        k.params.get(p.index())?.clone(),
                        k.param_type_spans.get(p.index()).copied(),
                    )
                };
                self.reference(name.span, param.span);
                let ParamType::Global { elem, mutable, .. } = param.ty else {
                    let _ = self.indices(indices);
                    self.error(CheckError::NotA {
                        name: name.name.to_string(),
                        what: "an array",
                        span: name.span,
                        decl: Some(param.span),
                    });
                    return None;
                };
                let idx = self.indices(indices);
                if indices.len() != 1 {
                    self.error(CheckError::IndexCount {
                        name: name.name.to_string(),
                        dims: 1,
                        found: indices.len(),
                        span: index_span,
                        decl: Some(param.span),
                    });
                    return None;
                }
                if for_write && !mutable {
                    let fix = type_span.and_then(|ts| {
                        let text = self.text(ts);
                        let bracket = text.find('[')?;
                        let at = ts.start + bracket as u32;
                        Some(Suggestion {
                            message: format!(
                                "declare the parameter writable: `{}: global mut {}`",
                                name.name,
                                text.get(bracket..).unwrap_or("")
                            ),
                            span: Span {
                                start: at,
                                end: at,
                                ..ts
                            },
                            replacement: "mut ".into(),
                        })
                    });
                    self.error(CheckError::StoreReadOnly {
                        name: name.name.to_string(),
                        span,
                        param: param.span,
                        fix,
                    });
                    return None;
                }
                if for_write {
                    if let Some(crate::ir::ParamType::Global { written, .. }) = self
                        .kernel
                        .as_mut()
                        .and_then(|k| k.params.get_mut(p.index()))
                        .map(|p| &mut p.ty)
                    {
                        *written = true;
                    }
                }
                let index = idx?.into_iter().next()?;
                Some((
                    Place {
                        kind: PlaceKind::Global { param: p, index },
                        elem,
                        span,
                    },
                    name.span,
                ))
            }
            Some(Binding::Shared(s)) => {
                let (elem, dims, decl) = self.shared_info(s)?;
                self.reference(name.span, decl);
                let idx = self.indices(indices);
                if indices.len() != dims {
                    self.error(CheckError::IndexCount {
                        name: name.name.to_string(),
                        dims,
                        found: indices.len(),
                        span: index_span,
                        decl: Some(decl),
                    });
                    return None;
                }
                Some((
                    Place {
                        kind: PlaceKind::Shared {
                            array: s,
                            indices: idx?,
                        },
                        elem,
                        span,
                    },
                    name.span,
                ))
            }
            Some(Binding::Accum(id)) => self.accum_place(id, name, indices, index_span, span),
            Some(Binding::Barrier(_)) | Some(Binding::Named(_)) => {
                self.error(CheckError::Mismatch {
                    expected: "a value".into(),
                    found: "barrier".into(),
                    span,
                    note: Some(
                        "a barrier is used through its operations, e.g. `full[s].wait()`".into(),
                    ),
                    fix: None,
                });
                None
            }
            Some(Binding::Poisoned) => {
                let _ = self.indices(indices);
                None
            }
            Some(Binding::Local(l)) if self.is_array(l) => {
                self.register_place(l, name, indices, index_span, span, for_write)
            }
            Some(Binding::Local(_)) => {
                let _ = self.name_value(name);
                let _ = self.indices(indices);
                let decl = self.lookup_local_span(&name.name);
                self.error(CheckError::NotA {
                    name: name.name.to_string(),
                    what: "an array",
                    span: name.span,
                    decl,
                });
                None
            }
            None => {
                if self.is_const(&name.name) {
                    self.error(CheckError::NotA {
                        name: name.name.to_string(),
                        what: "an array",
                        span: name.span,
                        decl: self.const_decl(&name.name),
                    });
                } else {
                    let similar = self.similar_visible(&name.name, name.span);
                    self.error(CheckError::NotFound {
                        kind: "array",
                        name: name.name.to_string(),
                        span: name.span,
                        similar,
                        help: None,
                    });
                }
                let _ = self.indices(indices);
                None
            }
        }
    }

    fn lookup_local_span(&self, name: &str) -> Option<Span> {
        match self.lookup(name) {
            Some(Binding::Local(l)) => self.local(l).map(|l| l.span),
            _ => None,
        }
    }

    fn shared_info(&self, s: SharedId) -> Option<(Scalar, usize, Span)> {
        let arr = self.kernel.as_ref()?.shared.get(s.index())?;
        Some((arr.elem, arr.dims.len(), arr.span))
    }

    /// `remote(array, rank)[indices]`
    fn remote_place(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        named: &[ast::NamedArg],
        indices: &[ast::IndexArg],
        index_span: Span,
        span: Span,
    ) -> Option<(Place, Span)> {
        let entry = builtins::of(Function::Remote)?;
        self.builtin_use(callee.span, entry);
        let bound = self.in_call(entry.call_note(), args, named, |c| {
            c.bind_args::<2>(&Call::new(entry, args, named, callee.span.to(span)))
        });
        let [Some(arr_arg), Some(rank_arg)] = bound?.args else {
            return None;
        };
        let cluster = self.needs(entry, callee.span);
        let rank = self.in_call(entry.call_note(), args, named, |c| {
            c.expr_as(rank_arg, Scalar::U32)
        });
        let idx = self.indices(indices);
        let ast::ExprKind::Name(arr_name) = &arr_arg.kind else {
            self.error(CheckError::NotA {
                name: self.text(arr_arg.span).to_string(),
                what: "a shared array",
                span: arr_arg.span,
                decl: None,
            });
            return None;
        };
        let Some(Binding::Shared(s)) = self.lookup(&arr_name.name) else {
            match self.lookup(&arr_name.name) {
                Some(Binding::Poisoned) => {}
                Some(_) => self.error(CheckError::NotA {
                    name: arr_name.name.to_string(),
                    what: "a shared array",
                    span: arr_arg.span,
                    decl: None,
                }),
                None => {
                    let similar = self.similar_visible(&arr_name.name, arr_name.span);
                    self.error(CheckError::NotFound {
                        kind: "shared array",
                        name: arr_name.name.to_string(),
                        span: arr_name.span,
                        similar,
                        help: None,
                    });
                }
            }
            return None;
        };
        let (elem, dims, decl) = self.shared_info(s)?;
        self.reference(arr_name.span, decl);
        if indices.len() != dims {
            self.error(CheckError::IndexCount {
                name: format!("remote({})", arr_name.name),
                dims,
                found: indices.len(),
                span: index_span,
                decl: Some(decl),
            });
            return None;
        }
        if !cluster {
            return None;
        }
        Some((
            Place {
                kind: PlaceKind::Remote {
                    array: s,
                    rank: rank?,
                    indices: idx?,
                },
                elem,
                span,
            },
            arr_name.span,
        ))
    }

    /// Index expressions: any integer type (untyped literals are `u32`).
    pub fn indices(&mut self, indices: &[ast::IndexArg]) -> Option<Vec<Expr>> {
        let mut out = Vec::new();
        let mut ok = true;
        for i in indices {
            match i {
                ast::IndexArg::Expr(e) => match self.expr(e, Some(Scalar::U32)) {
                    Some(v) if v.ty.is_int() => out.push(v),
                    Some(v) => {
                        self.mismatch_text("integer", v.ty.to_string(), e.span);
                        ok = false;
                    }
                    None => ok = false,
                },
                ast::IndexArg::Range { span, .. } => {
                    self.mismatch_text("integer", "range", *span);
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }
}
