//! The state of checking one body (a function, a kernel, or a constant's
//! expression): scopes, locals, loops, and the kernel's declarations.

use super::builtins::{self, Entry, Form};
use super::error::{CheckError, Suggestion};
use super::globals::{FnInfo, Globals};
use crate::diagnostics::{Diagnostic, Diags};
use crate::ir::{self, BarrierId, FuncId, LocalId, ParamId, SharedId};
use crate::source::SourceMap;
use crate::span::Span;
use crate::syntax::ast;
use crate::target::Target;
use crate::types::Scalar;
use std::collections::HashMap;

/// What a name in a body's scope refers to.
#[derive(Clone, Copy, Debug)]
pub enum Binding {
    Local(LocalId),
    Param(ParamId),
    Shared(SharedId),
    Barrier(BarrierId),
    /// A named-barrier group (`named(threads = k)`).
    Named(ir::NamedBarrierId),
    /// A warpgroup accumulator (`accum acc: [f32; 64, N];`).
    Accum(ir::AccumId),
    /// A name whose declaration had an error (already reported): uses of
    /// it are silently skipped instead of cascading into more errors.
    Poisoned,
}

/// The kernel-only part of a body's state.
#[derive(Debug, Default)]
pub struct KernelCtx {
    pub name_span: Span,
    pub params: Vec<ir::Param>,
    /// The span of each parameter's type, for fixes.
    pub param_type_spans: Vec<Span>,
    pub cluster: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub shared: Vec<ir::SharedArray>,
    pub barriers: Vec<ir::BarrierGroup>,
    pub named_barriers: Vec<ir::NamedBarrier>,
    pub accums: Vec<ir::Accum>,
    /// The range `for` loops (by span) whose body indexes an accumulator:
    /// unrolled when their bounds are constants
    /// ([`super::accum::accum_loops`]).
    pub accum_loops: std::collections::HashSet<Span>,
    /// A `cluster(...)` attribute was written, even if it was invalid
    /// (already reported): what needs one is then not reported again.
    pub cluster_written: bool,
    /// E0308 for each cluster-scope group in a kernel without a cluster,
    /// held back until the body is checked: its fix to scope `cta` is
    /// offered only if no cluster-only operation uses the group.
    pub cluster_scope_errors: Vec<(String, CheckError)>,
    /// Names of groups whose declaration failed that a cluster-only
    /// operation (`arrive_remote`, `wait_cluster`, `test_cluster`) uses.
    pub cluster_ops_on_poisoned: std::collections::HashSet<String>,
    /// The span of the first parameter, shared array or barrier group of
    /// each name (for E0101 in constant time a name).
    pub declared: HashMap<String, Span>,
    /// The swizzle each tensor map's copies gave it first, the array and
    /// the slice that gave it (E0404).
    pub map_swizzles: HashMap<ir::ParamId, (ir::Swizzle, String, Span)>,
}

pub struct BodyChecker<'a> {
    pub g: &'a Globals,
    pub sources: &'a SourceMap,
    pub target: Target,
    /// The module's diagnostics while this body is checked (moved in and
    /// back out, so that the cap and the checks that ask it count per file,
    /// not per body).
    pub diags: Diags,
    pub locals: Vec<ir::Local>,
    used: Vec<bool>,
    /// Locals that were declared as parameters or `for` variables, for
    /// messages ("`i` is a loop variable").
    local_kind: Vec<&'static str>,
    /// Each name's bindings, innermost last: a lookup takes constant time
    /// however deeply scopes nest.
    bindings: HashMap<String, Vec<Binding>>,
    /// The names each open scope bound, innermost scope last (a name bound
    /// twice in one scope, by shadowing, is listed twice).
    scopes: Vec<Vec<String>>,
    /// The `loop_depth` of the innermost loop over a constant list whose
    /// body is being checked: a `break`/`continue` at that depth would act
    /// on a loop that is unrolled at compile time (E0160).
    pub list_loop: Option<u32>,
    pub loop_depth: u32,
    /// Nesting of blocks below the body's top level (declarations of shared
    /// arrays and barriers need 0).
    pub block_depth: u32,
    pub kernel: Option<KernelCtx>,
    /// The function being checked and its return type.
    pub func: Option<(&'a FnInfo, Option<Scalar>)>,
    /// Device functions called, with the call's span (for the call graph).
    pub calls: Vec<(FuncId, Span)>,
    /// True for a constant's expression: no locals, no run-time values.
    pub const_context: bool,
    /// Every resolved use of a name, with its definition.
    pub references: Vec<super::Reference>,
    /// The barrier groups named by the statement being checked (its nested
    /// statements take theirs off again): a statement that fails to check
    /// keeps them in its [`ir::StmtKind::Poisoned`].
    pub named_groups: Vec<BarrierId>,
    /// Blocks that checked inside a construct that did not (the branches of
    /// an `if` whose condition failed): the statement that holds them keeps
    /// them in its [`ir::StmtKind::Poisoned`].
    pub orphans: Vec<ir::Block>,
    /// The ids of the IR nodes built so far ([`ir::Ids`]).
    pub ids: ir::Ids,
    /// The calls whose arguments are being checked, innermost last (for
    /// the note on a mismatched argument, [`BodyChecker::in_call`]).
    pub calls_open: Vec<super::args::CallContext>,
    /// Above 0 while checking the arguments of a call that failed: their
    /// types are unknown, so untyped literals are not range-checked.
    pub untyped_args: u32,
    /// What unrolling the loops over constant lists adds to the body, in
    /// statements and expressions: one count per list loop being checked
    /// (innermost last) and one for the body (first), for the limit
    /// [`super::stmts::MAX_UNROLLED`] (E0162).
    pub unrolled: Vec<super::stmts::Unrolled>,
    /// The kernel's constants (`kernel k<const N: u32 = 4>`) with their
    /// values in the instantiation being checked
    /// ([`super::instances`]): names between the body's own and the
    /// global constants.
    pub kconsts: HashMap<String, super::instances::KConst>,
    /// The elements of the register arrays declared so far (for the
    /// limit [`super::arrays::MAX_BODY_ELEMENTS`], E0443, and counted as
    /// statements toward E0162: each becomes one).
    pub array_elements: u64,
    /// The range `for` loops (by span) whose variable an index of a
    /// register array depends on: unrolled when their bounds are
    /// constants ([`super::arrays::array_loops`]).
    pub array_loops: std::collections::HashSet<Span>,
}

impl<'a> BodyChecker<'a> {
    pub fn new(g: &'a Globals, sources: &'a SourceMap, target: Target) -> Self {
        BodyChecker {
            g,
            sources,
            target,
            diags: Diags::default(),
            locals: Vec::new(),
            used: Vec::new(),
            local_kind: Vec::new(),
            unrolled: vec![super::stmts::Unrolled::default()],
            bindings: HashMap::new(),
            scopes: vec![Vec::new()],
            loop_depth: 0,
            list_loop: None,
            block_depth: 0,
            kernel: None,
            func: None,
            calls: Vec::new(),
            const_context: false,
            references: Vec::new(),
            named_groups: Vec::new(),
            orphans: Vec::new(),
            ids: ir::Ids::default(),
            calls_open: Vec::new(),
            untyped_args: 0,
            kconsts: HashMap::new(),
            array_elements: 0,
            array_loops: std::collections::HashSet::new(),
        }
    }

    /// Keeps a block that checked although the construct around it did not.
    pub fn orphan(&mut self, b: ir::Block) {
        if !b.stmts.is_empty() {
            self.orphans.push(b);
        }
    }

    pub fn for_constants(g: &'a Globals, sources: &'a SourceMap) -> Self {
        let mut c = BodyChecker::new(g, sources, Target::default());
        c.const_context = true;
        c
    }

    /// Reports `e`; a mismatched argument of the call being checked
    /// (E0110) also names the function and its signature.
    pub fn error(&mut self, e: CheckError) {
        let note = match &e {
            CheckError::Mismatch { span, .. } => self.call_note(*span),
            _ => None,
        };
        let d = e.into_diagnostic();
        self.diags.push(match note {
            Some(n) => d.note(n),
            None => d,
        });
    }

    /// A constant of type `ty` the checker makes (a literal, a named
    /// constant, a default), with its node id.
    pub fn constant(&mut self, value: ir::Value, ty: Scalar, span: Span) -> ir::Expr {
        ir::Expr {
            kind: ir::ExprKind::Const(value),
            ty,
            span,
            id: self.ids.expr(),
        }
    }

    /// Records that `span` uses the name defined at `definition`.
    pub fn reference(&mut self, span: Span, definition: Span) {
        self.references.push(super::Reference {
            span,
            to: super::Referent::Definition(definition),
        });
    }

    /// Records that `span` names the built-in `entry` (for hover).
    pub fn builtin_use(&mut self, span: Span, entry: &Entry) {
        self.references.push(super::Reference {
            span,
            to: super::Referent::Builtin(entry.builtin),
        });
    }

    pub fn push_diag(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    pub fn finish_diagnostics(self) -> Diags {
        self.diags
    }

    /// Ends a function or kernel body: reports unused locals, hands the
    /// diagnostics and name references to the module-wide lists, and returns
    /// the IR body and the calls it makes.
    pub fn finish_body(
        mut self,
        block: ir::Block,
        diags: &mut Diags,
        references: &mut Vec<super::Reference>,
    ) -> (ir::Body, Vec<(FuncId, Span)>) {
        self.report_unused();
        references.append(&mut self.references);
        *diags = std::mem::take(&mut self.diags);
        let body = ir::Body {
            locals: self.locals,
            block,
            ids: self.ids,
        };
        (body, self.calls)
    }

    // ---- scopes -------------------------------------------------------

    pub fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub fn pop_scope(&mut self) {
        for name in self.scopes.pop().unwrap_or_default() {
            if let Some(stack) = self.bindings.get_mut(&name) {
                stack.pop();
                if stack.is_empty() {
                    self.bindings.remove(&name);
                }
            }
        }
    }

    pub fn bind(&mut self, name: &str, b: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(name.to_string());
            self.bindings.entry(name.to_string()).or_default().push(b);
        }
    }

    pub fn lookup(&self, name: &str) -> Option<Binding> {
        self.bindings.get(name).and_then(|s| s.last()).copied()
    }

    /// Every name visible here, for "did you mean" suggestions.
    fn visible_names(&self) -> impl Iterator<Item = &str> {
        self.bindings
            .keys()
            .chain(self.kconsts.keys())
            .chain(self.g.consts.keys())
            .map(String::as_str)
            .chain(builtins::names(Form::Scalar))
            .chain(builtins::names(Form::Vector))
    }

    /// The visible name closest to `name`, for an E0100 at `at`; searched
    /// only for an error that will be shown. (A file of unknown names would
    /// otherwise compare each with every name it defines: 4,000 typos of
    /// 4,000 constants took 20 s. The first [`PER_CODE`] E0100s of a file
    /// are shown, each with its suggestion, as before.)
    ///
    /// [`PER_CODE`]: crate::diagnostics::cap::PER_CODE
    pub fn similar_visible(&self, name: &str, at: Span) -> Option<String> {
        self.similar_name(name, at, || self.visible_names())
    }

    /// The name among `candidates` closest to `name`, for an E0100 at
    /// `at`: `candidates` are listed and searched only for an error that
    /// will be shown (see [`BodyChecker::similar_visible`]).
    pub fn similar_name<'n, C: IntoIterator<Item = &'n str>>(
        &self,
        name: &str,
        at: Span,
        candidates: impl FnOnce() -> C,
    ) -> Option<String> {
        if !self.diags.would_keep("E0100", at) {
            return None;
        }
        similar(name, candidates())
    }

    /// Declares a new local and binds its name in the current scope.
    pub fn declare_local(
        &mut self,
        name: &ast::Ident,
        ty: Scalar,
        mutable: bool,
        kind: &'static str,
    ) -> LocalId {
        let id = LocalId(self.locals.len() as u32);
        self.locals.push(ir::Local::scalar(
            name.name.as_ref(),
            ty,
            mutable,
            name.span,
        ));
        self.used.push(false);
        self.local_kind.push(kind);
        self.bind(&name.name, Binding::Local(id));
        id
    }

    /// Binds a name whose declaration failed, so its uses stay quiet.
    pub fn poison(&mut self, name: &str) {
        self.bind(name, Binding::Poisoned);
    }

    pub fn mark_used(&mut self, id: LocalId) {
        if let Some(u) = self.used.get_mut(id.index()) {
            *u = true;
        }
    }

    pub fn local(&self, id: LocalId) -> Option<&ir::Local> {
        self.locals.get(id.index())
    }

    pub fn local_kind(&self, id: LocalId) -> &'static str {
        self.local_kind
            .get(id.index())
            .copied()
            .unwrap_or("a variable")
    }

    /// W0001 for every local never read (names starting with `_` excepted).
    pub fn report_unused(&mut self) {
        let unused: Vec<(String, Span)> = self
            .locals
            .iter()
            .zip(&self.used)
            .filter(|(l, used)| !**used && !l.name.starts_with('_'))
            .map(|(l, _)| (l.name.clone(), l.span))
            .collect();
        for (name, span) in unused {
            self.error(CheckError::Unused { name, span });
        }
    }

    // ---- helpers for messages -----------------------------------------

    pub fn text(&self, span: Span) -> &str {
        self.sources.slice(span)
    }

    /// E0110 for `found` where `expected` was needed, with an `as` fix when
    /// both are scalars that convert (neither `bool`, a pair nor a storage
    /// type, or a storage conversion the target has) and the expression is
    /// simple enough to convert.
    pub fn mismatch(&mut self, expected: Scalar, found: &ir::Expr, ast: &ast::Expr) {
        let converts = |t: Scalar| t != Scalar::Bool && !t.is_storage_only() && !t.is_packed();
        let storage = found.ty.converts_storage(expected)
            && (self.target.sm() >= 89 || !(expected.is_fp8() || found.ty.is_fp8()));
        let note = [expected, found.ty]
            .into_iter()
            .find(|t| t.is_storage_only())
            .map(super::exprs::storage_note)
            .or_else(|| {
                [found.ty, expected]
                    .into_iter()
                    .find(|t| t.is_packed())
                    .map(super::exprs::pair_note)
            });
        let fix = ((converts(expected) && converts(found.ty)) || storage).then(|| {
            let text = self.text(ast.span);
            let simple = matches!(
                ast.kind,
                ast::ExprKind::Name(_)
                    | ast::ExprKind::Field { .. }
                    | ast::ExprKind::Index { .. }
                    | ast::ExprKind::Call { .. }
                    | ast::ExprKind::MethodCall { .. }
                    | ast::ExprKind::Paren(_)
                    | ast::ExprKind::Int { .. }
                    | ast::ExprKind::WideInt(_)
                    | ast::ExprKind::Float { .. }
            );
            let replacement = if simple {
                format!("{text} as {expected}")
            } else {
                format!("({text}) as {expected}")
            };
            Suggestion {
                message: format!("convert with `as`: `{replacement}`"),
                span: ast.span,
                replacement,
            }
        });
        self.error(CheckError::Mismatch {
            expected: expected.to_string(),
            found: found.ty.to_string(),
            span: ast.span,
            note,
            fix,
        });
    }

    pub fn mismatch_text(
        &mut self,
        expected: impl Into<String>,
        found: impl Into<String>,
        span: Span,
    ) {
        self.error(CheckError::Mismatch {
            expected: expected.into(),
            found: found.into(),
            span,
            note: None,
            fix: None,
        });
    }

    /// E0200 unless the target has Hopper features.
    pub fn require_sm90(&mut self, feature: impl Into<String>, span: Span) -> bool {
        self.require_target(Target::Sm90, feature.into(), span)
    }

    /// E0200 unless the target is `min` or newer.
    pub fn require_target(&mut self, min: Target, feature: String, span: Span) -> bool {
        if self.target.sm() >= min.sm() {
            return true;
        }
        self.error(CheckError::TargetTooOld {
            feature,
            needs: min.name(),
            current: self.target.name().to_string(),
            span,
        });
        false
    }

    /// What the table says `entry` needs of the target (E0200) and of the
    /// launch (a cluster, E0123), checked at `span`.
    pub fn needs(&mut self, entry: &Entry, span: Span) -> bool {
        let feature = entry.feature();
        let target = if entry.needs.arch.is_empty() {
            self.require_target(entry.needs.target, feature.clone(), span)
        } else {
            self.require_arch(entry.needs.arch, feature.clone(), span)
        };
        target && (!entry.needs.cluster || self.require_cluster(feature, span))
    }

    /// E0200 unless the target is one of the architecture-specific
    /// `targets` (`sm_90a`): their instructions exist on that architecture
    /// only, neither on the plain target nor on later ones.
    pub fn require_arch(&mut self, targets: &[Target], feature: String, span: Span) -> bool {
        if targets.contains(&self.target) {
            return true;
        }
        let names: Vec<&str> = targets.iter().map(|t| t.name()).collect();
        self.error(CheckError::TargetNotArch {
            feature,
            needs: names.join(" or "),
            first: targets.first().map_or("", |t| t.name()),
            current: self.target.name().to_string(),
            span,
        });
        false
    }

    /// E0123 unless the kernel has a `cluster(...)` attribute (one that was
    /// written but is invalid is already reported and counts as present).
    pub fn require_cluster(&mut self, feature: impl Into<String>, span: Span) -> bool {
        let kernel = match &self.kernel {
            Some(k) if k.cluster.is_some() || k.cluster_written => return true,
            Some(k) => k.name_span,
            None => span,
        };
        self.error(CheckError::NeedsCluster {
            feature: feature.into(),
            span,
            kernel,
        });
        false
    }
}

/// The closest name to `name` among `candidates`, if one is close enough:
/// at most a third of the longer name's length in edits (at least one).
/// Ties go to the name that sorts first.
pub fn similar<'n>(name: &str, candidates: impl IntoIterator<Item = &'n str>) -> Option<String> {
    let close_enough = |c: &str| (name.len().max(c.len()) / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        // Names whose lengths differ by more than that are never close
        // enough (each edit changes the length by one at most): skip them
        // without computing the distance.
        .filter(|c| name.len().abs_diff(c.len()) <= close_enough(c))
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|(d, c)| *d <= close_enough(c))
        .min()
        .map(|(_, c)| c.to_string())
}

/// Checks one device function.
pub fn check_function(
    g: &Globals,
    sources: &SourceMap,
    target: Target,
    id: FuncId,
    info: &FnInfo,
    diags: &mut Diags,
    references: &mut Vec<super::Reference>,
) -> (ir::Function, Vec<(FuncId, Span)>) {
    let _ = id;
    let mut c = BodyChecker::new(g, sources, target);
    c.diags = std::mem::take(diags);
    c.func = Some((info, info.ret));
    let f = &info.ast;
    let mut seen: HashMap<&str, Span> = HashMap::new();
    for (p, ty) in f.params.iter().zip(&info.params) {
        if let Some(&first) = seen.get(&*p.name.name) {
            c.error(CheckError::Duplicate {
                name: p.name.name.to_string(),
                span: p.name.span,
                first,
            });
        } else {
            seen.insert(&p.name.name, p.name.span);
        }
        // A parameter whose type was invalid is still declared (as i32) so
        // that its uses do not report "cannot find".
        let local = c.declare_local(
            &p.name,
            ty.unwrap_or(Scalar::I32),
            false,
            "a function parameter",
        );
        if ty.is_none() {
            c.mark_used(local);
            c.poison(&p.name.name);
        }
    }
    c.array_loops = super::arrays::array_loops(&f.body);
    let block = c.function_body(&f.body, info);
    let (body, calls) = c.finish_body(block, diags, references);
    let func = ir::Function {
        name: f.name.name.to_string(),
        span: f.name.span,
        params: f.params.len() as u32,
        ret: info.ret,
        body,
    };
    (func, calls)
}
