//! Items visible everywhere: constants (evaluated here) and the signatures of
//! device functions, from the root file and every import.

use super::body::BodyChecker;
use super::error::CheckError;
use crate::diagnostics::Diags;
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

/// At most about this many bytes of a device function's parameters are
/// shown in its signature: notes repeat it at each call, and a function
/// may have thousands of parameters or very long names.
const SHOWN_PARAMS: usize = 160;

impl FnInfo {
    /// `fn twice(x: u32) -> u32`; a long parameter list ends in
    /// `… and 40 more`.
    pub fn signature(&self) -> String {
        let all = self.ast.params.iter().zip(&self.params);
        let mut params = String::new();
        for (i, (p, t)) in all.enumerate() {
            let one = format!("{}: {}", p.name.name, t.map_or("?", Scalar::name));
            if i > 0 {
                params.push_str(", ");
            }
            if params.len() + one.len() > SHOWN_PARAMS {
                let rest = self.ast.params.len() - i;
                params.push_str(&format!("… and {rest} more"));
                break;
            }
            params.push_str(&one);
        }
        match self.ret {
            Some(r) => format!("fn {}({params}) -> {r}", self.ast.name.name),
            None => format!("fn {}({params})", self.ast.name.name),
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
    /// The names the constants' expressions use (built-ins and other
    /// constants), for the language server.
    pub references: Vec<super::Reference>,
}

impl Globals {
    /// Collects every item of `files` in definition order (see
    /// [`definition_order`]): E0101 for each name defined again, then the
    /// constants, evaluated each after those it uses (E0125 for a cycle).
    pub fn collect(
        sources: &SourceMap,
        files: &[(FileId, ast::File)],
        imports: &[(Span, FileId)],
        diags: &mut Diags,
    ) -> Globals {
        let mut g = Globals::default();
        let mut consts = Vec::new();
        let mut duplicates = Vec::new();
        for (item, in_root) in definition_order(files, imports) {
            match item {
                ast::Item::Const(c) if g.define(&c.name, diags) => consts.push(c),
                ast::Item::Const(c) => duplicates.push(c),
                ast::Item::Fn(f) => {
                    let first = g.define(&f.name, diags);
                    g.add_function(f, first, diags);
                }
                // Only the root file's kernels are compiled, and only they
                // take a name.
                ast::Item::Kernel(k) if in_root => {
                    g.define(&k.name, diags);
                }
                _ => {}
            }
        }
        let plan = super::cycles::plan(&consts);
        let mut references = Vec::new();
        for cycle in &plan.cycles {
            let uses = cycle
                .iter()
                .filter_map(|(i, span)| Some((consts.get(*i)?.name.name.to_string(), *span)))
                .collect();
            diags.push(CheckError::CyclicConstants { uses }.into_diagnostic());
            for (i, _) in cycle {
                if let Some(c) = consts.get(*i) {
                    g.poisoned.insert(c.name.name.to_string());
                }
            }
        }
        for i in plan.order {
            let Some(c) = consts.get(i) else { continue };
            if g.poisoned.contains(&*c.name.name) {
                continue;
            }
            match g.eval_const(sources, c, diags, &mut references) {
                Some(info) => {
                    g.consts.insert(c.name.name.to_string(), info);
                }
                None => {
                    g.poisoned.insert(c.name.name.to_string());
                }
            }
        }
        // A constant defined twice (E0101) is still checked for its own
        // errors; its name keeps the first definition.
        for c in duplicates {
            let _ = g.eval_const(sources, c, diags, &mut references);
        }
        g.references = references;
        g
    }

    /// Records a global name; false (and E0101 on this later definition)
    /// when it already exists.
    fn define(&mut self, name: &ast::Ident, diags: &mut Diags) -> bool {
        if let Some(first) = self.defined.get(&*name.name) {
            diags.push(
                CheckError::Duplicate {
                    name: name.name.to_string(),
                    span: name.span,
                    first: *first,
                }
                .into_diagnostic(),
            );
            return false;
        }
        self.defined.insert(name.name.to_string(), name.span);
        true
    }

    /// Adds a function; `named` is false for a second definition (E0101),
    /// whose body is still checked but which no call reaches.
    fn add_function(&mut self, f: &ast::FnItem, named: bool, diags: &mut Diags) {
        let params = f.params.iter().map(|p| scalar_type(&p.ty, diags)).collect();
        let (ret, bad_ret) = match &f.ret {
            Some(t) => {
                let r = scalar_type(t, diags);
                (r, r.is_none())
            }
            None => (None, false),
        };
        let id = FuncId(self.functions.len() as u32);
        if named {
            self.function_ids.insert(f.name.name.to_string(), id);
        }
        self.functions.push(FnInfo {
            ast: f.clone(),
            params,
            ret,
            bad_ret,
        });
    }

    /// Evaluates a constant (the constants it uses are already done),
    /// reporting why it has no value if it has none.
    fn eval_const(
        &self,
        sources: &SourceMap,
        c: &ast::ConstItem,
        diags: &mut Diags,
        references: &mut Vec<super::Reference>,
    ) -> Option<ConstInfo> {
        let ty = scalar_type(&c.ty, diags)?;
        let mut checker = BodyChecker::for_constants(self, sources);
        checker.diags = std::mem::take(diags);
        let lowered = checker.expr_as(&c.value, ty);
        references.append(&mut checker.references);
        *diags = checker.finish_diagnostics();
        let e = lowered?;
        match ir::consteval::eval(&e) {
            Ok(value) => Some(ConstInfo {
                value,
                ty,
                span: c.name.span,
            }),
            Err(why) => {
                diags.push(not_constant(e.span, why).into_diagnostic());
                None
            }
        }
    }
}

/// Every item in the order it is defined in: the root file's items in
/// source order, where an `import` stands for the items of the file it
/// loaded (recursively, each file once, where it was first imported). The
/// flag is true for the root file's items. `imports` maps the path span of
/// each import that loaded a file to that file.
pub fn definition_order<'f>(
    files: &'f [(FileId, ast::File)],
    imports: &[(Span, FileId)],
) -> Vec<(&'f ast::Item, bool)> {
    let by_id: HashMap<FileId, &ast::File> = files.iter().map(|(id, f)| (*id, f)).collect();
    let loaded: HashMap<Span, FileId> = imports.iter().copied().collect();
    let mut out = Vec::new();
    let mut seen: std::collections::HashSet<FileId> = std::collections::HashSet::new();
    let Some((root, _)) = files.first() else {
        return out;
    };
    // An explicit stack of (file, next item) so a long import chain cannot
    // overflow the thread's stack.
    let mut stack: Vec<(FileId, usize)> = vec![(*root, 0)];
    seen.insert(*root);
    while let Some((file, next)) = stack.last().copied() {
        let item = by_id.get(&file).and_then(|f| f.items.get(next));
        let Some(item) = item else {
            stack.pop();
            continue;
        };
        if let Some(top) = stack.last_mut() {
            top.1 += 1;
        }
        out.push((item, file == *root));
        if let ast::Item::Import(imp) = item {
            if let Some(&target) = loaded.get(&imp.path_span) {
                if seen.insert(target) {
                    stack.push((target, 0));
                }
            }
        }
    }
    // Files no import statement accounts for (none, when the loader and
    // this agree) still define their items, after everything else.
    for (id, f) in files {
        if seen.insert(*id) {
            out.extend(f.items.iter().map(|i| (i, false)));
        }
    }
    out
}

pub fn not_constant(span: Span, why: ir::consteval::NotConst) -> CheckError {
    match why {
        ir::consteval::NotConst::Runtime => CheckError::NotConstant { span, why: None },
        // The checker reports a zero divisor where it sees one; this is the
        // same error for any that only evaluation finds.
        ir::consteval::NotConst::DivideByZero(op) => CheckError::DivisionByZero {
            op: op.symbol(),
            span,
        },
    }
}

/// What a type name that is not a scalar type's names, as a kernel's
/// constants see it ([`resolve_type_in`]): `None` when no kernel constant
/// has the name.
pub type TypeNames<'a> = dyn FnMut(&ast::Ident) -> Option<NamedType> + 'a;

/// A kernel constant named where a type goes.
pub enum NamedType {
    /// A `type` constant: its value.
    Type(Scalar),
    /// A constant whose declaration failed (already reported).
    Poisoned,
    /// A constant that holds a value, not a type: E0100 with this help.
    NotAType(String),
}

/// Resolves a written type that must be a scalar.
pub fn scalar_type(t: &ast::TypeExpr, diags: &mut Diags) -> Option<Scalar> {
    scalar_type_in(t, &mut |_| None, diags)
}

/// [`scalar_type`], with the type constants of a kernel.
pub fn scalar_type_in(
    t: &ast::TypeExpr,
    names: &mut TypeNames<'_>,
    diags: &mut Diags,
) -> Option<Scalar> {
    match resolve_type_in(t, names, diags)? {
        Type::Scalar(s) => Some(s),
        _ => {
            diags.push(CheckError::GlobalOutsideParams { span: t.span }.into_diagnostic());
            None
        }
    }
}

/// Resolves a written type, where `names` gives the kernel constants that
/// name types (`const ELEM: type = bf16`).
pub fn resolve_type_in(
    t: &ast::TypeExpr,
    names: &mut TypeNames<'_>,
    diags: &mut Diags,
) -> Option<Type> {
    match &t.kind {
        ast::TypeExprKind::Named(name) => {
            if let Some(s) = Scalar::from_name(&name.name) {
                return Some(Type::Scalar(s));
            }
            let help = match names(name) {
                Some(NamedType::Type(s)) => return Some(Type::Scalar(s)),
                Some(NamedType::Poisoned) => return None,
                Some(NamedType::NotAType(help)) => Some(help),
                None => None,
            };
            let names = Scalar::ALL.map(Scalar::name);
            let help = help.unwrap_or_else(|| {
                format!(
                    "the scalar types are {}",
                    names.map(|n| format!("`{n}`")).join(", ")
                )
            });
            diags.push(
                CheckError::NotFound {
                    kind: "type",
                    name: name.name.to_string(),
                    span: name.span,
                    similar: super::body::similar(&name.name, names.iter().copied()),
                    help: Some(help),
                }
                .into_diagnostic(),
            );
            None
        }
        // Too deep to parse (E0124, already reported).
        ast::TypeExprKind::Error => None,
        // A `let`'s type (`check::arrays`), nothing else's.
        ast::TypeExprKind::Array { .. } => {
            diags.push(
                CheckError::ArrayTypeHere {
                    span: t.span,
                    note: "register arrays are a thread's local variables, declared by `let` (`let mut acc: [f32; 8, 8] = [0.0; 8, 8];`); parameters, results, constants, casts and the elements of other arrays are scalars".into(),
                    fix: None,
                }
                .into_diagnostic(),
            );
            None
        }
        // Kernel parameters are checked before this (`check::tensor`).
        ast::TypeExprKind::Tensor { .. } => {
            diags.push(
                CheckError::TensorDecl {
                    why: "tensor maps can only be kernel parameters".into(),
                    span: t.span,
                    note: None,
                    help: Some(
                        "pass the tensor map to the kernel; copy its tiles with `tma_load`".into(),
                    ),
                    fix: None,
                    other: None,
                }
                .into_diagnostic(),
            );
            None
        }
        ast::TypeExprKind::Global { mutable, elem } => {
            let e = scalar_type_in(elem, names, diags)?;
            Some(Type::Global {
                elem: e,
                mutable: *mutable,
            })
        }
    }
}

/// Reports every cycle in the call graph (E0114), once per call that
/// closes one, visiting every function (so recursion in an unused one is
/// reported too). The order functions are written in is the analysis's
/// (`analysis::calls`), computed from the IR.
pub fn report_recursion(g: &Globals, calls: &[Vec<(FuncId, Span)>], diags: &mut Diags) {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Active,
        Done,
    }
    let mut marks = vec![Mark::New; calls.len()];
    fn visit(
        f: FuncId,
        g: &Globals,
        calls: &[Vec<(FuncId, Span)>],
        marks: &mut [Mark],
        diags: &mut Diags,
    ) {
        if let Some(m) = marks.get_mut(f.index()) {
            *m = Mark::Active;
        }
        for (callee, span) in calls.get(f.index()).into_iter().flatten() {
            match marks.get(callee.index()) {
                Some(Mark::New) => visit(*callee, g, calls, marks, diags),
                Some(Mark::Active) => {
                    if let Some(info) = g.functions.get(callee.index()) {
                        diags.push(
                            CheckError::Recursive {
                                name: info.ast.name.name.to_string(),
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
    }
    for i in 0..calls.len() {
        if marks.get(i) == Some(&Mark::New) {
            visit(FuncId(i as u32), g, calls, &mut marks, diags);
        }
    }
}
