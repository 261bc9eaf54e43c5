//! Kernels: parameters, launch attributes, and the declarations of shared
//! arrays and barrier groups in their bodies.

use super::body::{Binding, BodyChecker, KernelCtx};
use super::error::CheckError;
use super::globals::{resolve_type, Globals};
use crate::barriers::error::BarrierError;
use crate::diagnostics::Diagnostic;
use crate::ir::{self, consteval, BarrierId, FuncId, ParamId, SharedId};
use crate::source::SourceMap;
use crate::span::Span;
use crate::syntax::ast;
use crate::target::Target;
use crate::types::{Scalar, Type};

/// Static shared memory per CTA (48 KiB).
pub const SHARED_LIMIT: u64 = 48 * 1024;
pub const MAX_BARRIERS: i128 = 64;
pub const MAX_ARRIVALS: i128 = (1 << 20) - 1;

pub fn check_kernel(
    g: &Globals,
    sources: &SourceMap,
    target: Target,
    k: &ast::KernelItem,
    diags: &mut Vec<Diagnostic>,
    references: &mut Vec<super::Reference>,
) -> (ir::Kernel, Vec<(FuncId, Span)>) {
    let mut c = BodyChecker::new(g, sources, target);
    let mut ctx = KernelCtx {
        name_span: k.name.span,
        ..KernelCtx::default()
    };
    for p in &k.params {
        if let Some(first) = ctx.params.iter().find(|q| q.name == p.name.name) {
            c.error(CheckError::Duplicate {
                name: p.name.name.clone(),
                span: p.name.span,
                first: first.span,
            });
            continue;
        }
        let resolved = resolve_type(&p.ty, &mut c.diags);
        let ty = match resolved {
            Some(Type::Scalar(s)) => ir::ParamType::Scalar(s),
            Some(Type::Global { elem, mutable }) => ir::ParamType::Global {
                elem,
                mutable,
                written: false,
            },
            _ => ir::ParamType::Scalar(Scalar::I32),
        };
        let id = ParamId(ctx.params.len() as u32);
        ctx.params.push(ir::Param {
            name: p.name.name.clone(),
            span: p.name.span,
            ty,
        });
        ctx.param_type_spans.push(p.ty.span);
        if resolved.is_some() {
            c.bind(&p.name.name, Binding::Param(id));
        } else {
            c.poison(&p.name.name);
        }
    }
    c.kernel = Some(ctx);
    c.launch_attributes(&k.launch);

    let block = c.block_in_scope(&k.body);
    let ctx = c.kernel.take().unwrap_or_default();
    let (body, calls) = c.finish_body(block, diags, references);
    let kernel = ir::Kernel {
        name: k.name.name.clone(),
        name_span: k.name.span,
        span: k.span,
        params: ctx.params,
        block: ctx.block,
        cluster: ctx.cluster,
        shared: ctx.shared,
        barriers: ctx.barriers,
        body,
    };
    (kernel, calls)
}

impl BodyChecker<'_> {
    fn launch_attributes(&mut self, attrs: &[ast::LaunchAttr]) {
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for a in attrs {
            let name = a.name.name.as_str();
            if !matches!(name, "block" | "cluster") {
                self.error(CheckError::LaunchBounds {
                    why: format!("unknown launch attribute `{name}`"),
                    span: a.name.span,
                    help: Some(
                        "the launch attributes are `block(x, y, z)` and `cluster(x, y, z)`".into(),
                    ),
                });
                continue;
            }
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
                let first = *first;
                self.error(CheckError::Duplicate {
                    name: name.into(),
                    span: a.span,
                    first,
                });
                continue;
            }
            seen.push((name, a.span));
            let Some(dims) = self.launch_dims(a) else {
                continue;
            };
            // Exact: three `u32`s multiply to less than 2^96.
            let product: u128 = dims.iter().map(|&d| u128::from(d)).product();
            if name == "block" {
                if product > 1024 {
                    self.error(CheckError::LaunchBounds {
                        why: format!("a block of {product} threads is larger than 1024"),
                        span: a.span,
                        help: Some("a CTA holds at most 1024 threads".into()),
                    });
                    continue;
                }
                if let Some(k) = self.kernel.as_mut() {
                    k.block = Some(dims);
                }
            } else {
                if !self.require_sm90("`cluster(...)`", a.span) {
                    continue;
                }
                if product > 16 {
                    self.error(CheckError::LaunchBounds {
                        why: format!("a cluster of {product} CTAs is larger than 16"),
                        span: a.span,
                        help: Some("a cluster holds at most 16 CTAs (8 portably)".into()),
                    });
                    continue;
                }
                if product > 8 {
                    self.error(CheckError::NonPortableCluster {
                        size: product as u32,
                        span: a.span,
                    });
                }
                if let Some(k) = self.kernel.as_mut() {
                    k.cluster = Some(dims);
                }
            }
        }
    }

    /// The 1–3 positive constant dimensions of a launch attribute.
    fn launch_dims(&mut self, a: &ast::LaunchAttr) -> Option<[u32; 3]> {
        if a.args.is_empty() || a.args.len() > 3 {
            self.error(CheckError::LaunchBounds {
                why: format!(
                    "`{}` takes 1 to 3 dimensions, found {}",
                    a.name.name,
                    a.args.len()
                ),
                span: a.span,
                help: None,
            });
            return None;
        }
        let mut dims = [1u32; 3];
        for (slot, arg) in dims.iter_mut().zip(&a.args) {
            let v = self.const_u32(arg)?;
            if v == 0 {
                self.error(CheckError::LaunchBounds {
                    why: "a dimension of 0".into(),
                    span: arg.span,
                    help: Some("every dimension must be at least 1".into()),
                });
                return None;
            }
            *slot = v;
        }
        Some(dims)
    }

    /// A compile-time `u32` (E0117 if not constant).
    fn const_u32(&mut self, e: &ast::Expr) -> Option<u32> {
        let v = self.expr_as(e, Scalar::U32)?;
        match consteval::eval(&v) {
            Ok(ir::Value::Int(i)) => u32::try_from(i).ok(),
            Ok(_) => None,
            Err(why) => {
                self.error(super::globals::not_constant(e.span, why));
                None
            }
        }
    }

    /// A compile-time integer of any integer type, kept wide for range checks.
    fn const_int(&mut self, e: &ast::Expr) -> Option<i128> {
        let v = self.expr(e, Some(Scalar::U32))?;
        if !v.ty.is_int() {
            self.mismatch_text("integer", v.ty.to_string(), e.span);
            return None;
        }
        match consteval::eval(&v) {
            Ok(ir::Value::Int(i)) => Some(i),
            Ok(_) => None,
            Err(why) => {
                self.error(super::globals::not_constant(e.span, why));
                None
            }
        }
    }

    /// True (after E0121 otherwise) when declarations are allowed here.
    fn at_kernel_top_level(&mut self, what: &'static str, span: Span) -> bool {
        if self.kernel.is_some() && self.block_depth == 0 {
            return true;
        }
        self.error(CheckError::DeclNotTopLevel { what, span });
        false
    }

    fn already_defined(&mut self, name: &ast::Ident) -> bool {
        let first = self.kernel.as_ref().and_then(|k| {
            k.shared
                .iter()
                .map(|s| (s.name.as_str(), s.span))
                .chain(k.barriers.iter().map(|b| (b.name.as_str(), b.spans.name)))
                .chain(k.params.iter().map(|p| (p.name.as_str(), p.span)))
                .find(|(n, _)| *n == name.name)
                .map(|(_, s)| s)
        });
        if let Some(first) = first {
            self.error(CheckError::Duplicate {
                name: name.name.clone(),
                span: name.span,
                first,
            });
            return true;
        }
        false
    }

    /// Adds `bytes` (aligned to `align`) to the kernel's shared memory; E0122
    /// when the total goes over the limit.
    fn reserve_shared(&mut self, bytes: u64, align: u64, span: Span) -> bool {
        let Some(k) = self.kernel.as_mut() else {
            return false;
        };
        // In 128 bits: the sum of two 64-bit sizes never wraps.
        let start = u128::from(k.shared_bytes).div_ceil(u128::from(align)) * u128::from(align);
        let used = start + u128::from(bytes);
        k.shared_bytes = u64::try_from(used).unwrap_or(u64::MAX);
        if used > u128::from(SHARED_LIMIT) {
            self.error(CheckError::SharedTooLarge {
                limit: SHARED_LIMIT,
                used: used.to_string(),
                span,
            });
            return false;
        }
        true
    }

    pub fn shared_decl(
        &mut self,
        name: &ast::Ident,
        elem: &ast::TypeExpr,
        dims: &[ast::Expr],
        span: Span,
    ) {
        let top = self.at_kernel_top_level("shared array", span);
        let elem = super::globals::scalar_type(elem, &mut self.diags);
        let mut sizes = Vec::new();
        for d in dims {
            match self.const_u32(d) {
                Some(0) => self.error(CheckError::NotConstant {
                    span: d.span,
                    why: Some("array dimensions must be at least 1".into()),
                }),
                Some(v) => sizes.push(v),
                None => {}
            }
        }
        if self.already_defined(name) {
            return;
        }
        let Some(elem) = elem.filter(|_| top && sizes.len() == dims.len()) else {
            self.poison(&name.name);
            return;
        };
        let array = ir::SharedArray {
            name: name.name.clone(),
            elem,
            dims: sizes,
            span,
        };
        let reserved = match array.bytes() {
            Some(bytes) => self.reserve_shared(bytes, 128, span),
            // Its size does not even fit 64 bits: the real size, exactly.
            None => {
                self.error(CheckError::SharedTooLarge {
                    limit: SHARED_LIMIT,
                    used: array.bytes_text(),
                    span,
                });
                false
            }
        };
        if !reserved {
            self.poison(&name.name);
            return;
        }
        let Some(k) = self.kernel.as_mut() else {
            return;
        };
        let id = SharedId(k.shared.len() as u32);
        k.shared.push(array);
        self.bind(&name.name, Binding::Shared(id));
    }

    pub fn barrier_decl(&mut self, d: &ast::BarrierDecl, span: Span) {
        let top = self.at_kernel_top_level("barrier group", span);
        let mut ok = top;
        let count = match &d.count {
            Some(e) => match self.const_int(e) {
                Some(n) if (1..=MAX_BARRIERS).contains(&n) => n as u32,
                Some(n) => {
                    self.push_diag(
                        BarrierError::BadCount {
                            name: d.name.name.clone(),
                            n,
                            span: e.span,
                        }
                        .into_diagnostic(),
                    );
                    ok = false;
                    1
                }
                None => {
                    ok = false;
                    1
                }
            },
            None => 1,
        };
        let scope = match d.scope.name.as_str() {
            "cta" => Some(ir::Scope::Cta),
            "cluster" => Some(ir::Scope::Cluster),
            other => {
                let closest = super::body::similar(other, ["cta", "cluster"]);
                self.push_diag(
                    BarrierError::UnsupportedScope {
                        scope: other.into(),
                        span: d.scope.span,
                        closest,
                    }
                    .into_diagnostic(),
                );
                None
            }
        };
        if d.arg_name.name != "arrivals" {
            self.error(CheckError::ExpectedWord {
                expected: "arrivals",
                found: d.arg_name.name.clone(),
                span: d.arg_name.span,
            });
            ok = false;
        }
        let arrivals = match self.const_int(&d.arrivals) {
            Some(n) if (1..=MAX_ARRIVALS).contains(&n) => n as u32,
            Some(n) => {
                self.push_diag(
                    BarrierError::ArrivalsOutOfRange {
                        n,
                        span: d.arrivals.span,
                    }
                    .into_diagnostic(),
                );
                ok = false;
                1
            }
            None => {
                ok = false;
                1
            }
        };
        if scope == Some(ir::Scope::Cluster) {
            let (has_cluster, kernel_span) = self
                .kernel
                .as_ref()
                .map_or((true, span), |k| (k.cluster.is_some(), k.name_span));
            if !self.require_sm90("a cluster-scope barrier group", d.scope.span) {
                ok = false;
            } else if top && !has_cluster {
                self.push_diag(
                    BarrierError::ClusterScopeWithoutCluster {
                        decl: span,
                        scope: d.scope.span,
                        kernel: kernel_span,
                    }
                    .into_diagnostic(),
                );
                ok = false;
            }
        }
        if self.already_defined(&d.name) {
            return;
        }
        let Some(scope) = scope.filter(|_| ok) else {
            self.poison(&d.name.name);
            return;
        };
        if !self.reserve_shared(8 * count as u64, 8, span) {
            self.poison(&d.name.name);
            return;
        }
        let group = ir::BarrierGroup {
            name: d.name.name.clone(),
            scope,
            count,
            arrivals,
            spans: ir::BarrierSpans {
                decl: span,
                name: d.name.span,
                count: d.count.as_ref().map(|c| c.span),
                scope: d.scope.span,
                arrivals: d.arrivals.span,
            },
        };
        let Some(k) = self.kernel.as_mut() else {
            return;
        };
        let id = BarrierId(k.barriers.len() as u32);
        k.barriers.push(group);
        self.bind(&d.name.name, Binding::Barrier(id));
    }
}
