//! Kernels: parameters, launch attributes, and the declarations of shared
//! arrays and barrier groups in their bodies.

use super::body::{Binding, BodyChecker, KernelCtx};
use super::error::CheckError;
use super::globals::Globals;
use crate::diagnostics::{Diagnostic, Diags};
use crate::ir::layout::{self, ParamLayout, SharedDecl, SharedLayout};
use crate::ir::{self, consteval, BarrierId, ParamId, SharedId};
use crate::source::SourceMap;
use crate::span::Span;
use crate::syntax::ast;
use crate::target::Target;
use crate::types::{Scalar, Type};

/// Threads per CTA, and the largest `block(x, y, z)` in each dimension
/// (CUDA's `maxThreadsPerBlock` and `maxThreadsDim` on every GPU kdsl
/// targets, sm_80 to sm_120).
pub const MAX_BLOCK_THREADS: u32 = 1024;
pub const MAX_BLOCK_DIMS: [u32; 3] = [1024, 1024, 64];

pub fn check_kernel(
    g: &Globals,
    sources: &SourceMap,
    target: Target,
    k: &ast::KernelItem,
    consts: &[Option<ir::ConstValue>],
    diags: &mut Diags,
    references: &mut Vec<super::Reference>,
) -> ir::Kernel {
    let mut c = BodyChecker::new(g, sources, target);
    c.diags = std::mem::take(diags);
    if let Some(why) = crate::ptx::names::kernel_name_problem(&k.name.name) {
        c.error(CheckError::KernelName {
            name: k.name.name.to_string(),
            why,
            span: k.name.span,
        });
    }
    let mut ctx = KernelCtx {
        name_span: k.name.span,
        ..KernelCtx::default()
    };
    // The kernel's constants first: the parameters' types, the launch
    // attributes and the body may use them.
    let instance = c.bind_kernel_consts(k, consts, &mut ctx.declared);
    for p in &k.params {
        if let Some(&first) = ctx.declared.get(&*p.name.name) {
            c.error(CheckError::Duplicate {
                name: p.name.name.to_string(),
                span: p.name.span,
                first,
            });
            continue;
        }
        ctx.declared.insert(p.name.name.to_string(), p.name.span);
        let (resolved, ty) = match super::tensor::TensorType::of(&p.ty) {
            Some(t) => match c.tensor_param(&t) {
                Some(map) => (true, ir::ParamType::Tensor(map)),
                None => (false, ir::ParamType::Scalar(Scalar::I32)),
            },
            None => match c.resolve_type(&p.ty) {
                Some(Type::Scalar(s)) => (true, ir::ParamType::Scalar(s)),
                Some(Type::Global { elem, mutable }) => (
                    true,
                    ir::ParamType::Global {
                        elem,
                        mutable,
                        written: false,
                    },
                ),
                _ => (false, ir::ParamType::Scalar(Scalar::I32)),
            },
        };
        let id = ParamId(ctx.params.len() as u32);
        ctx.params.push(ir::Param {
            name: p.name.name.to_string(),
            span: p.name.span,
            ty,
        });
        ctx.param_type_spans.push(p.ty.span);
        if resolved {
            c.bind(&p.name.name, Binding::Param(id));
        } else {
            c.poison(&p.name.name);
        }
    }
    // The range loops that index an accumulator, unrolled when their
    // bounds are constants.
    let accums: std::collections::HashSet<String> = k
        .body
        .stmts
        .iter()
        .filter_map(|s| match &s.kind {
            ast::StmtKind::Accum { name, .. } => Some(name.name.to_string()),
            _ => None,
        })
        .collect();
    ctx.accum_loops = super::accum::accum_loops(&k.body, &accums);
    c.array_loops = super::arrays::array_loops(&k.body);
    c.kernel = Some(ctx);
    c.launch_attributes(&k.launch);

    let block = c.block_in_scope(&k.body);
    let ctx = c.kernel.take().unwrap_or_default();
    for (name, mut e) in ctx.cluster_scope_errors {
        if let CheckError::ClusterScopeWithoutCluster { cta_fix, .. } = &mut e {
            *cta_fix = !ctx.cluster_ops_on_poisoned.contains(&name);
        }
        c.push_diag(e.into_diagnostic());
    }
    // The calls a kernel makes matter only to the analysis, which reads
    // them from the IR.
    let (body, _calls) = c.finish_body(block, diags, references);
    let name = match &instance {
        Some(i) => crate::ptx::names::instance_name(&k.name.name, &i.consts),
        None => k.name.name.to_string(),
    };
    let kernel = ir::Kernel {
        name,
        name_span: k.name.span,
        span: k.span,
        params: ctx.params,
        block: ctx.block,
        cluster: ctx.cluster,
        shared: ctx.shared,
        barriers: ctx.barriers,
        named_barriers: ctx.named_barriers,
        accums: ctx.accums,
        instance,
        body,
    };
    diags.extend(shared_memory_limit(&kernel, target));
    diags.extend(parameter_space(&kernel));
    kernel
}

/// E0122, once per kernel: the layout the PTX writer emits
/// ([`SharedLayout`]; dynamic past 48 KiB) needs more than the target lets
/// one CTA have, reported on the declaration that crosses the limit, with
/// the kernel's total.
fn shared_memory_limit(k: &ir::Kernel, target: Target) -> Option<Diagnostic> {
    let layout = SharedLayout::of(k);
    let limit = target.max_shared_per_block();
    let slot = layout.first_over(limit)?;
    let (span, exact) = match slot.decl {
        SharedDecl::Array(id) => {
            let a = k.shared.get(id.index())?;
            (a.span, a.bytes_text())
        }
        SharedDecl::Barriers(id) => (k.barriers.get(id.index())?.spans.decl, String::new()),
    };
    // A total past 64 bits comes from one array that alone is that large:
    // its exact size, however many digits, is the honest number to show.
    let used = match layout.total {
        Some(total) => total.to_string(),
        None => format!("at least {exact}"),
    };
    Some(
        CheckError::SharedTooLarge {
            limit,
            target,
            used,
            start: slot.offset,
            end: slot.end(),
            span,
        }
        .into_diagnostic(),
    )
}

/// E0127: the parameters need more space than any PTX version allows
/// (the writer raises `.version` for what fits; [`ParamLayout::needs`]).
fn parameter_space(k: &ir::Kernel) -> Option<Diagnostic> {
    let layout = ParamLayout::of(k);
    let limit = layout.needs().err()?;
    let sizes = k.params.iter().map(|p| layout::param_size(p.ty));
    let crossing = layout
        .offsets
        .iter()
        .zip(sizes)
        .position(|(at, size)| at.saturating_add(size) > limit)?;
    let param = k.params.get(crossing)?;
    Some(
        CheckError::ParamsTooLarge {
            used: layout.total,
            limit,
            span: param.span,
            kernel: k.name_span,
        }
        .into_diagnostic(),
    )
}

/// E0120 for a `block(...)` dimension past the hardware's limit for it (the
/// product is checked next): x and y at most 1024, z at most 64. ptxas
/// accepts any `.reqntid`; the launch would fail at run time.
fn block_dimension_error(dims: &[i128; 3], a: &ast::LaunchAttr) -> Option<CheckError> {
    let (index, (axis, (&value, &max))) = ["x", "y", "z"]
        .into_iter()
        .zip(dims.iter().zip(&MAX_BLOCK_DIMS))
        .enumerate()
        .find(|(_, (_, (&v, &max)))| v > i128::from(max))?;
    let span = a.args.get(index).map_or(a.span, |e| e.span);
    Some(CheckError::LaunchBounds {
        why: format!("a block's {axis} dimension is at most {max}, found {value}"),
        span,
        help: Some("a CTA is at most 1024 × 1024 × 64 threads, and 1024 in all".into()),
    })
}

impl BodyChecker<'_> {
    fn launch_attributes(&mut self, attrs: &[ast::LaunchAttr]) {
        let mut seen: Vec<(&str, Span)> = Vec::new();
        for a in attrs {
            let name = &*a.name.name;
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
            if name == "cluster" {
                if let Some(k) = self.kernel.as_mut() {
                    k.cluster_written = true;
                }
            }
            let Some(dims) = self.launch_dims(a) else {
                continue;
            };
            // Exact, saturating: never wraps.
            let product = dims.iter().fold(1i128, |p, &d| p.saturating_mul(d));
            if name == "block" {
                if let Some(err) = block_dimension_error(&dims, a) {
                    self.error(err);
                    continue;
                }
                if product > i128::from(MAX_BLOCK_THREADS) {
                    self.error(CheckError::LaunchBounds {
                        why: format!("a block of {product} threads is larger than 1024"),
                        span: a.span,
                        help: Some("a CTA holds at most 1024 threads".into()),
                    });
                    continue;
                }
                if let Some(k) = self.kernel.as_mut() {
                    k.block = Some(dims.map(|d| d as u32));
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
                    // Each factor of a product of at most 16 is at most 16.
                    k.cluster = Some(dims.map(|d| d as u32));
                }
            }
        }
    }

    /// The 1–3 positive constant dimensions of a launch attribute, exact
    /// ([`Self::const_size`]).
    fn launch_dims(&mut self, a: &ast::LaunchAttr) -> Option<[i128; 3]> {
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
        let mut dims = [1i128; 3];
        for (slot, arg) in dims.iter_mut().zip(&a.args) {
            let v = self.const_size(arg, Some(Scalar::U32))?;
            if v < 1 {
                self.error(CheckError::LaunchBounds {
                    why: format!("a dimension of {v}"),
                    span: arg.span,
                    help: Some("every dimension must be at least 1".into()),
                });
                return None;
            }
            *slot = v;
        }
        Some(dims)
    }

    /// A size written in the source: a compile-time integer (E0117 if not
    /// constant) of the type `ty` (`u32` for dimensions), or of any integer
    /// type (`None`: counts, whose untyped literals are `u32`), evaluated
    /// exactly ([`consteval::eval_exact`]): `65536 * 65536` is 4294967296
    /// and `0 - 1` is -1 wherever a size is written, never a wrapped value,
    /// so every range check sees the real number.
    pub(super) fn const_size(&mut self, e: &ast::Expr, ty: Option<Scalar>) -> Option<i128> {
        let v = match ty {
            Some(ty) => self.expr_as(e, ty)?,
            None => {
                let v = self.expr(e, Some(Scalar::U32))?;
                if !v.ty.is_int() {
                    self.mismatch_text("integer", v.ty.to_string(), e.span);
                    return None;
                }
                v
            }
        };
        match consteval::eval_exact(&v) {
            Ok(i) => Some(i),
            Err(why) => {
                self.error(super::globals::not_constant(e.span, why));
                None
            }
        }
    }

    /// True (after E0121 otherwise) when declarations are allowed here.
    pub(super) fn at_kernel_top_level(&mut self, what: &'static str, span: Span) -> bool {
        if self.kernel.is_some() && self.block_depth == 0 {
            return true;
        }
        self.error(CheckError::DeclNotTopLevel { what, span });
        false
    }

    /// E0101 when a parameter, shared array or barrier group of this
    /// kernel already has the name; otherwise the name is taken, at `span`
    /// (what a later duplicate points back to).
    pub(super) fn already_defined(&mut self, name: &ast::Ident, span: Span) -> bool {
        let Some(k) = self.kernel.as_mut() else {
            return false;
        };
        if let Some(&first) = k.declared.get(&*name.name) {
            self.error(CheckError::Duplicate {
                name: name.name.to_string(),
                span: name.span,
                first,
            });
            return true;
        }
        k.declared.insert(name.name.to_string(), span);
        false
    }

    pub fn shared_decl(
        &mut self,
        name: &ast::Ident,
        elem: &ast::TypeExpr,
        dims: &[ast::Expr],
        clauses: &[ast::Clause],
        span: Span,
    ) {
        let top = self.at_kernel_top_level("shared array", span);
        let elem = self.scalar_type(elem);
        let mut sizes = Vec::new();
        for (i, d) in dims.iter().enumerate() {
            match self.const_size(d, Some(Scalar::U32)) {
                Some(v) if v < 1 => self.error(CheckError::ZeroLength {
                    name: name.name.to_string(),
                    span: d.span,
                    dim: i,
                    dims: dims.len(),
                    value: v,
                }),
                // Past 64 bits the array is past the limit all the same, and
                // the shared-memory error says "at least" its size.
                Some(v) => sizes.push(u64::try_from(v).unwrap_or(u64::MAX)),
                None => {}
            }
        }
        let swizzle = self.swizzle_clause(
            name,
            elem,
            (sizes.len() == dims.len()).then_some(&sizes[..]),
            clauses,
        );
        if self.already_defined(name, span) {
            return;
        }
        let Some(elem) = elem.filter(|_| top && sizes.len() == dims.len()) else {
            self.poison(&name.name);
            return;
        };
        let Some(swizzle) = swizzle else {
            self.poison(&name.name);
            return;
        };
        let array = ir::SharedArray {
            name: name.name.to_string(),
            elem,
            dims: sizes,
            swizzle,
            span,
        };
        let Some(k) = self.kernel.as_mut() else {
            return;
        };
        let id = SharedId(k.shared.len() as u32);
        k.shared.push(array);
        self.bind(&name.name, Binding::Shared(id));
    }

    pub fn barrier_decl(&mut self, d: &ast::BarrierDecl, span: Span) {
        if &*d.scope.name == "named" {
            if let Some(c) = d.clauses.first() {
                self.error(CheckError::TensorDecl {
                    why: format!("a named-barrier group takes no `{}` clause", c.name.name),
                    span: c.span,
                    note: Some("named barriers are hardware barriers without transactions; `guards(...)` belongs to mbarrier groups (`cta(...)`, `cluster(...)`) that tensor copies complete on".into()),
                    help: None,
                    fix: None,
                    other: None,
                });
            }
            return self.named_barrier_decl(d, span);
        }
        // What failed is a placeholder: the group is declared with the
        // rest, so that the checks that need only the rest go on.
        let mut failed = ir::Failed {
            other: !self.at_kernel_top_level("barrier group", span),
            ..ir::Failed::default()
        };
        let count = match &d.count {
            Some(e) => match self.const_size(e, None) {
                Some(n) if (1..=i128::from(ir::BarrierGroup::MAX_COUNT)).contains(&n) => n as u32,
                Some(n) => {
                    self.push_diag(
                        CheckError::BadBarrierCount {
                            name: d.name.name.to_string(),
                            n,
                            span: e.span,
                        }
                        .into_diagnostic(),
                    );
                    failed.count = true;
                    1
                }
                None => {
                    failed.count = true;
                    1
                }
            },
            None => 1,
        };
        let scope = match &*d.scope.name {
            "cta" => Some(ir::Scope::Cta),
            "cluster" => Some(ir::Scope::Cluster),
            other => {
                let closest = super::body::similar(other, ["cta", "cluster", "named"]);
                self.push_diag(
                    CheckError::UnsupportedScope {
                        scope: other.into(),
                        span: d.scope.span,
                        closest,
                    }
                    .into_diagnostic(),
                );
                None
            }
        };
        failed.scope = scope.is_none();
        // `threads` belongs to `named(...)`: with a misspelt scope, the
        // scope's error says it all.
        if &*d.arg_name.name != "arrivals" && (scope.is_some() || &*d.arg_name.name != "threads") {
            self.error(CheckError::ExpectedWord {
                expected: "arrivals",
                found: d.arg_name.name.to_string(),
                span: d.arg_name.span,
            });
            failed.arrivals = true;
        }
        let arrivals = match self.const_size(&d.arrivals, None) {
            Some(n) if (1..=i128::from(ir::BarrierGroup::MAX_ARRIVALS)).contains(&n) => n as u32,
            Some(n) => {
                self.push_diag(
                    CheckError::ArrivalsOutOfRange {
                        n,
                        span: d.arrivals.span,
                    }
                    .into_diagnostic(),
                );
                failed.arrivals = true;
                1
            }
            None => {
                failed.arrivals = true;
                1
            }
        };
        if scope == Some(ir::Scope::Cluster) {
            let (has_cluster, kernel_span) = self.kernel.as_ref().map_or((true, span), |k| {
                (k.cluster.is_some() || k.cluster_written, k.name_span)
            });
            if !self.require_sm90("a cluster-scope barrier group", d.scope.span) {
                failed.scope = true;
            } else if !failed.other && !has_cluster {
                let e = CheckError::ClusterScopeWithoutCluster {
                    decl: span,
                    scope: d.scope.span,
                    kernel: kernel_span,
                    cta_fix: true,
                };
                if let Some(k) = self.kernel.as_mut() {
                    k.cluster_scope_errors.push((d.name.name.to_string(), e));
                }
                failed.scope = true;
            }
        }
        let guards = self.guards_clause(&d.name, (!failed.count).then_some(count), &d.clauses);
        if self.already_defined(&d.name, d.name.span) {
            return;
        }
        if self.kernel.is_none() {
            // Outside a kernel (E0121) there is no group to declare.
            return self.poison(&d.name.name);
        }
        let group = ir::BarrierGroup {
            name: d.name.name.to_string(),
            scope: scope.filter(|_| !failed.scope).unwrap_or(ir::Scope::Cta),
            count,
            arrivals,
            spans: ir::BarrierSpans {
                decl: span,
                name: d.name.span,
                count: d.count.as_ref().map(|c| c.span),
                scope: d.scope.span,
                arrivals: d.arrivals.span,
            },
            failed,
            guards,
        };
        let Some(k) = self.kernel.as_mut() else {
            return;
        };
        let id = BarrierId(k.barriers.len() as u32);
        k.barriers.push(group);
        self.bind(&d.name.name, Binding::Barrier(id));
    }
}
