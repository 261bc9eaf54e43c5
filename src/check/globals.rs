//! Items visible everywhere: constants (evaluated here) and the signatures of
//! device functions, from the root file and every import.

use super::body::BodyChecker;
use super::error::CheckError;
use crate::diagnostics::Diagnostic;
use crate::ir::{self, FuncId, Value};
use crate::source::SourceMap;
use crate::span::{FileId, Span};
use crate::syntax::ast;
use crate::types::{Scalar, Type};
use std::collections::HashMap;

#[derive(Clone, Debug)]
pub struct ConstInfo {
    pub value: Value,
    pub ty: Scalar,
    pub span: Span,
}

/// A device function's signature and its AST, checked later.
#[derive(Clone, Debug)]
pub struct FnInfo {
    pub ast: ast::FnItem,
    /// `None` where the written type was invalid (already reported).
    pub params: Vec<Option<Scalar>>,
    pub ret: Option<Scalar>,
    /// True when the return type was written but invalid: do not report a
    /// missing return.
    pub bad_ret: bool,
}

impl FnInfo {
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .ast
            .params
            .iter()
            .zip(&self.params)
            .map(|(p, t)| format!("{}: {}", p.name.name, t.map_or("?", Scalar::name)))
            .collect();
        match self.ret {
            Some(r) => format!("fn {}({}) -> {r}", self.ast.name.name, params.join(", ")),
            None => format!("fn {}({})", self.ast.name.name, params.join(", ")),
        }
    }
}

#[derive(Debug, Default)]
pub struct Globals {
    pub consts: HashMap<String, ConstInfo>,
    pub functions: Vec<FnInfo>,
    pub function_ids: HashMap<String, FuncId>,
    /// Every global name with the span that defined it (for E0101).
    defined: HashMap<String, Span>,
    /// Constants whose definition failed (already reported): their uses
    /// are skipped silently.
    pub poisoned: std::collections::HashSet<String>,
}

impl Globals {
    pub fn collect(
        sources: &SourceMap,
        files: &[(FileId, ast::File)],
        diags: &mut Vec<Diagnostic>,
    ) -> Globals {
        let mut g = Globals::default();
        let mut consts = Vec::new();
        for (_, file) in files {
            for item in &file.items {
                match item {
                    ast::Item::Const(c) if g.define(&c.name, diags) => consts.push(c),
                    ast::Item::Fn(f) if g.define(&f.name, diags) => g.add_function(f, diags),
                    _ => {}
                }
            }
        }
        // Constants may refer to constants declared later: evaluate until no
        // more progress, then report what is left (a cycle or a real error).
        let mut pending: Vec<&ast::ConstItem> = consts;
        loop {
            let before = pending.len();
            let mut still = Vec::new();
            for c in pending {
                if !g.try_const(sources, c, false, diags) {
                    still.push(c);
                }
            }
            if still.is_empty() {
                break;
            }
            if still.len() == before {
                for c in still {
                    g.try_const(sources, c, true, diags);
                }
                break;
            }
            pending = still;
        }
        g
    }

    /// Records a global name; false (and E0101) when it already exists.
    fn define(&mut self, name: &ast::Ident, diags: &mut Vec<Diagnostic>) -> bool {
        if let Some(first) = self.defined.get(&name.name) {
            diags.push(
                CheckError::Duplicate {
                    name: name.name.clone(),
                    span: name.span,
                    first: *first,
                }
                .into_diagnostic(),
            );
            return false;
        }
        self.defined.insert(name.name.clone(), name.span);
        true
    }

    fn add_function(&mut self, f: &ast::FnItem, diags: &mut Vec<Diagnostic>) {
        let params = f.params.iter().map(|p| scalar_type(&p.ty, diags)).collect();
        let (ret, bad_ret) = match &f.ret {
            Some(t) => {
                let r = scalar_type(t, diags);
                (r, r.is_none())
            }
            None => (None, false),
        };
        let id = FuncId(self.functions.len() as u32);
        self.function_ids.insert(f.name.name.clone(), id);
        self.functions.push(FnInfo {
            ast: f.clone(),
            params,
            ret,
            bad_ret,
        });
    }

    /// Tries to evaluate a constant; with `report`, reports why it fails.
    fn try_const(
        &mut self,
        sources: &SourceMap,
        c: &ast::ConstItem,
        report: bool,
        diags: &mut Vec<Diagnostic>,
    ) -> bool {
        let mut local = Vec::new();
        let Some(ty) = scalar_type(&c.ty, &mut local) else {
            if report {
                diags.extend(local);
                self.poisoned.insert(c.name.name.clone());
            }
            return report; // a bad type is reported once, then given up
        };
        let mut checker = BodyChecker::for_constants(self, sources);
        let lowered = checker.expr_as(&c.value, ty);
        let errors = checker.finish_diagnostics();
        // An unknown name may be a constant declared later: retry first.
        if !report && errors.iter().any(|d| d.code == "E0100") {
            return false;
        }
        let Some(e) = lowered else {
            diags.extend(errors);
            self.poisoned.insert(c.name.name.clone());
            return true;
        };
        match ir::consteval::eval(&e) {
            Ok(value) => {
                diags.extend(errors);
                self.consts.insert(
                    c.name.name.clone(),
                    ConstInfo {
                        value,
                        ty,
                        span: c.name.span,
                    },
                );
                true
            }
            Err(why) => {
                diags.extend(errors);
                diags.push(not_constant(e.span, why).into_diagnostic());
                self.poisoned.insert(c.name.name.clone());
                true
            }
        }
    }

    /// Kernels share the global namespace with constants and functions.
    pub fn check_kernel_names(&self, files: &[(FileId, ast::File)], diags: &mut Vec<Diagnostic>) {
        let mut kernels: HashMap<&str, Span> = HashMap::new();
        for (i, (_, file)) in files.iter().enumerate() {
            if i > 0 {
                break;
            }
            for item in &file.items {
                if let ast::Item::Kernel(k) = item {
                    let first = kernels
                        .get(k.name.name.as_str())
                        .copied()
                        .or_else(|| self.defined.get(&k.name.name).copied());
                    match first {
                        Some(first) => diags.push(
                            CheckError::Duplicate {
                                name: k.name.name.clone(),
                                span: k.name.span,
                                first,
                            }
                            .into_diagnostic(),
                        ),
                        None => {
                            kernels.insert(&k.name.name, k.name.span);
                        }
                    }
                }
            }
        }
    }
}

pub fn not_constant(span: Span, why: ir::consteval::NotConst) -> CheckError {
    CheckError::NotConstant {
        span,
        why: match why {
            ir::consteval::NotConst::Runtime => None,
            ir::consteval::NotConst::DivideByZero => {
                Some("division by zero in a constant expression".into())
            }
        },
    }
}

/// Resolves a written type that must be a scalar.
pub fn scalar_type(t: &ast::TypeExpr, diags: &mut Vec<Diagnostic>) -> Option<Scalar> {
    match resolve_type(t, diags)? {
        Type::Scalar(s) => Some(s),
        _ => {
            diags.push(CheckError::GlobalOutsideParams { span: t.span }.into_diagnostic());
            None
        }
    }
}

/// Resolves a written type.
pub fn resolve_type(t: &ast::TypeExpr, diags: &mut Vec<Diagnostic>) -> Option<Type> {
    match &t.kind {
        ast::TypeExprKind::Named(name) => match Scalar::from_name(&name.name) {
            Some(s) => Some(Type::Scalar(s)),
            None => {
                let names = Scalar::ALL.map(Scalar::name);
                diags.push(
                    CheckError::NotFound {
                        kind: "type",
                        name: name.name.clone(),
                        span: name.span,
                        similar: super::body::similar(&name.name, names.iter().copied()),
                        help: Some(format!(
                            "the scalar types are {}",
                            names.map(|n| format!("`{n}`")).join(", ")
                        )),
                    }
                    .into_diagnostic(),
                );
                None
            }
        },
        // Too deep to parse (E0124, already reported).
        ast::TypeExprKind::Error => None,
        ast::TypeExprKind::Global { mutable, elem } => {
            let e = scalar_type(elem, diags)?;
            Some(Type::Global {
                elem: e,
                mutable: *mutable,
            })
        }
    }
}

/// Orders the functions the kernels use, callees first, and reports every
/// cycle in the call graph (E0114).
pub fn call_order(
    g: &Globals,
    calls: &[Vec<(FuncId, Span)>],
    roots: &[(FuncId, Span)],
    diags: &mut Vec<Diagnostic>,
) -> Vec<FuncId> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let mut marks = vec![Mark::New; calls.len()];
    let mut order = Vec::new();
    // Every function is visited (so recursion in an unused one is reported);
    // only those reachable from kernels are emitted.
    let mut reachable = vec![false; calls.len()];
    let mut stack: Vec<FuncId> = roots.iter().map(|(f, _)| *f).collect();
    while let Some(f) = stack.pop() {
        if let Some(r) = reachable.get_mut(f.index()) {
            if !*r {
                *r = true;
                stack.extend(calls.get(f.index()).into_iter().flatten().map(|(c, _)| *c));
            }
        }
    }
    fn visit(
        f: FuncId,
        g: &Globals,
        calls: &[Vec<(FuncId, Span)>],
        marks: &mut [Mark],
        order: &mut Vec<FuncId>,
        diags: &mut Vec<Diagnostic>,
    ) {
        if let Some(m) = marks.get_mut(f.index()) {
            *m = Mark::Active;
        }
        for (callee, span) in calls.get(f.index()).into_iter().flatten() {
            match marks.get(callee.index()) {
                Some(Mark::New) => visit(*callee, g, calls, marks, order, diags),
                Some(Mark::Active) => {
                    if let Some(info) = g.functions.get(callee.index()) {
                        diags.push(
                            CheckError::Recursive {
                                name: info.ast.name.name.clone(),
                                call: *span,
                                func: info.ast.name.span,
                            }
                            .into_diagnostic(),
                        );
                    }
                }
                _ => {}
            }
        }
        if let Some(m) = marks.get_mut(f.index()) {
            *m = Mark::Done;
        }
        order.push(f);
    }
    for i in 0..calls.len() {
        if marks.get(i) == Some(&Mark::New) {
            visit(FuncId(i as u32), g, calls, &mut marks, &mut order, diags);
        }
    }
    order.retain(|f| reachable.get(f.index()).copied().unwrap_or(false));
    order
}
