//! Kernel constants (`kernel gemm<const BM: u32 = 128, const ELEM: type =
//! bf16>(...)`, docs/language.md §2.6): which instantiations of each kernel
//! are compiled (the defaults, or what `--const` and a wanted entry name
//! ask for: [`plan`]), the constants' values in the checker of one
//! instantiation ([`BodyChecker::bind_kernel_consts`]; the names resolve
//! between the body's own and the global constants), and the note that
//! names the instantiation on each diagnostic found in it ([`merge`]).
//!
//! An instantiation is checked and lowered as a kernel of its own, with
//! the constants' values folded in: every later stage (the analyses, the
//! barrier and warpgroup passes, the optimiser, the PTX writer, the
//! manifest) sees one [`ir::Kernel`] per instantiation, named by
//! [`crate::ptx::names::instance_name`], and needs to know nothing else.

use super::body::BodyChecker;
use super::error::CheckError;
use super::globals::{not_constant, ConstInfo, NamedType};
use crate::diagnostics::Diagnostic;
use crate::ir::{self, consteval, ConstValue, Instance, InstanceConst, Value};
use crate::source::SourceMap;
use crate::span::Span;
use crate::syntax::ast;
use crate::types::{Scalar, Type};
use std::collections::HashMap;

/// The most instantiations one kernel may be asked for: `--const` lists
/// multiply, and each instantiation is a kernel to check and write.
pub const MAX_INSTANCES: usize = 64;

/// `--const [KERNEL.]NAME=VALUE`: a value for the constant `NAME` of every
/// kernel that has one (or of `KERNEL` alone). Given several times for one
/// constant, each value is an instantiation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstArg {
    pub kernel: Option<String>,
    pub name: String,
    pub value: String,
}

impl std::str::FromStr for ConstArg {
    type Err = String;

    fn from_str(s: &str) -> Result<ConstArg, String> {
        let form = "the form is NAME=VALUE or KERNEL.NAME=VALUE, such as `BM=64`";
        let Some((key, value)) = s.split_once('=') else {
            return Err(format!("no `=`: {form}"));
        };
        let (kernel, name) = match key.split_once('.') {
            Some((k, n)) => (Some(k), n),
            None => (None, key),
        };
        for word in kernel.into_iter().chain([name]) {
            if !is_identifier(word) {
                return Err(format!("`{word}` is not a name: {form}"));
            }
        }
        if value.trim().is_empty() {
            return Err(format!("no value: {form}"));
        }
        Ok(ConstArg {
            kernel: kernel.map(str::to_string),
            name: name.to_string(),
            value: value.trim().to_string(),
        })
    }
}

impl std::fmt::Display for ConstArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kernel {
            Some(k) => write!(f, "{k}.{}={}", self.name, self.value),
            None => write!(f, "{}={}", self.name, self.value),
        }
    }
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// What the caller asks to be compiled besides the defaults.
#[derive(Clone, Copy, Debug, Default)]
pub struct Request<'a> {
    /// `--const` values.
    pub consts: &'a [ConstArg],
    /// `.entry` names wanted (`kdslc sim --kernel gemm__BM_64`): an
    /// instantiation's name adds that instantiation.
    pub entries: &'a [String],
}

/// What a kernel constant in the checker's scope is.
#[derive(Clone, Debug)]
pub enum KConst {
    /// An integer or `bool` constant, with its value in this instantiation.
    Value(ConstInfo),
    /// A `type` constant: its value and the span of its name.
    Type(Scalar, Span),
    /// Its declaration failed (already reported): uses are quiet.
    Poisoned,
}

/// What a kernel constant holds, from its written type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer type or `bool`.
    Value(Scalar),
    /// `type`.
    Type,
}

impl Kind {
    /// The kind of `const N: T`, when `T` is one kernel constants take.
    pub fn of(ty: &ast::TypeExpr) -> Option<Kind> {
        let ast::TypeExprKind::Named(name) = &ty.kind else {
            return None;
        };
        if &*name.name == "type" {
            return Some(Kind::Type);
        }
        Scalar::from_name(&name.name)
            .filter(|s| s.is_int() || *s == Scalar::Bool)
            .map(Kind::Value)
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Value(s) => s.name(),
            Kind::Type => "type",
        }
    }

    /// The value of `text` for a constant of this kind: a literal of the
    /// type (integers in any base, `_` between digits, a sign, the type
    /// as a suffix, range-checked, never wrapped), or a type's name.
    pub fn parse(self, text: &str) -> Result<ConstValue, String> {
        match self {
            Kind::Type => Scalar::from_name(text.trim())
                .map(ConstValue::Type)
                .ok_or_else(|| {
                    let names: Vec<String> = Scalar::every().map(|s| format!("`{s}`")).collect();
                    format!("`{text}` is not a type; the types are {}", names.join(", "))
                }),
            Kind::Value(Scalar::Bool) => match text.trim() {
                "true" => Ok(ConstValue::Value(Value::Bool(true), Scalar::Bool)),
                "false" => Ok(ConstValue::Value(Value::Bool(false), Scalar::Bool)),
                _ => Err(format!("`{text}` is not a bool (true or false)")),
            },
            Kind::Value(s) => {
                let bits = crate::launch::literal::parse(text, s)?;
                // Sign-extended from the type's width for a signed type.
                let shift = 64 - s.bits();
                let v = if s.is_signed_int() {
                    i128::from(((bits << shift) as i64) >> shift)
                } else {
                    i128::from(bits)
                };
                Ok(ConstValue::Value(Value::Int(v), s))
            }
        }
    }

    /// The value in an instantiation's name (`64`, `m3`, `true`, `e4m3`:
    /// [`crate::ptx::names::mangled_value`]).
    fn unmangle(self, text: &str) -> Option<ConstValue> {
        match self {
            Kind::Value(s) if s.is_int() => {
                let (sign, digits) = match text.strip_prefix('m') {
                    Some(d) => ("-", d),
                    None => ("", text),
                };
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                self.parse(&format!("{sign}{digits}")).ok()
            }
            _ => self.parse(text).ok(),
        }
    }
}

/// For each kernel of the root file (in order), the instantiations to
/// compile: for each, the value of each constant given by the request
/// (`None`: its default). A kernel without constants has one, empty.
/// A `--const` that names no constant, has a bad value or asks for too
/// many instantiations is a usage error: the message names the kernels'
/// constants.
pub fn plan(
    sources: &SourceMap,
    kernels: &[&ast::KernelItem],
    request: Request<'_>,
) -> Result<Vec<Vec<Vec<Option<ConstValue>>>>, String> {
    let kinds: Vec<Vec<Option<Kind>>> = kernels
        .iter()
        .map(|k| k.consts.iter().map(|c| Kind::of(&c.ty)).collect())
        .collect();
    // values[kernel][constant]: the values `--const` gives, in order.
    let mut values: Vec<Vec<Vec<ConstValue>>> = kernels
        .iter()
        .map(|k| vec![Vec::new(); k.consts.len()])
        .collect();
    for arg in request.consts {
        if let Some(name) = &arg.kernel {
            if !kernels.iter().any(|k| &*k.name.name == name.as_str()) {
                return Err(format!(
                    "`--const {arg}`: there is no kernel `{name}`; {}",
                    listing(sources, kernels)
                ));
            }
        }
        let mut found = false;
        for (ki, k) in kernels.iter().enumerate() {
            if arg.kernel.as_deref().is_some_and(|n| n != &*k.name.name) {
                continue;
            }
            let Some(ci) = k.consts.iter().position(|c| *c.name.name == arg.name) else {
                continue;
            };
            found = true;
            // A constant whose type is invalid is reported by the checker.
            let Some(kind) = kinds.get(ki).and_then(|ks| ks.get(ci)).copied().flatten() else {
                continue;
            };
            let v = kind.parse(&arg.value).map_err(|why| {
                format!(
                    "`--const {arg}`: invalid value for `{}` ({}) of kernel `{}`: {why}",
                    arg.name,
                    kind.name(),
                    k.name.name
                )
            })?;
            if let Some(list) = values.get_mut(ki).and_then(|v| v.get_mut(ci)) {
                if !list.contains(&v) {
                    list.push(v);
                }
            }
        }
        if !found {
            let whose = match &arg.kernel {
                Some(k) => format!("kernel `{k}` has no constant `{}`", arg.name),
                None => format!("no kernel has a constant `{}`", arg.name),
            };
            return Err(format!(
                "`--const {arg}`: {whose}; {}",
                listing(sources, kernels)
            ));
        }
    }
    let mut plans = Vec::new();
    for (ki, k) in kernels.iter().enumerate() {
        let given = values.get(ki).map(Vec::as_slice).unwrap_or(&[]);
        let mut list: Vec<Vec<Option<ConstValue>>> = Vec::new();
        if given.iter().any(|v| !v.is_empty()) {
            let count = given
                .iter()
                .map(|v| v.len().max(1))
                .try_fold(1usize, usize::checked_mul)
                .unwrap_or(usize::MAX);
            if count > MAX_INSTANCES {
                return Err(format!(
                    "`--const` asks for {count} instantiations of kernel `{}`, more than the {MAX_INSTANCES} one kernel may have",
                    k.name.name
                ));
            }
            list = product(given);
        }
        let kind_list = kinds.get(ki).map(Vec::as_slice).unwrap_or(&[]);
        for entry in request.entries {
            if let Some(wanted) = unmangle(k, kind_list, entry) {
                if !list.contains(&wanted) {
                    list.push(wanted);
                }
            }
        }
        if list.is_empty() {
            list.push(vec![None; k.consts.len()]);
        }
        plans.push(list);
    }
    Ok(plans)
}

/// Every combination of the values given (`None` for a constant given
/// none), the first constant varying slowest.
fn product(given: &[Vec<ConstValue>]) -> Vec<Vec<Option<ConstValue>>> {
    let mut out: Vec<Vec<Option<ConstValue>>> = vec![Vec::new()];
    for values in given {
        let choices: Vec<Option<ConstValue>> = if values.is_empty() {
            vec![None]
        } else {
            values.iter().copied().map(Some).collect()
        };
        out = out
            .into_iter()
            .flat_map(|prefix| {
                choices.iter().map(move |c| {
                    let mut v = prefix.clone();
                    v.push(*c);
                    v
                })
            })
            .collect();
    }
    out
}

/// The constants an instantiation's name (`gemm__BM_64__ELEM_e4m3`) gives
/// kernel `k`, if it is one of its names.
fn unmangle(
    k: &ast::KernelItem,
    kinds: &[Option<Kind>],
    entry: &str,
) -> Option<Vec<Option<ConstValue>>> {
    let sep = crate::ptx::names::INSTANCE_SEPARATOR;
    let rest = entry.strip_prefix(&*k.name.name)?.strip_prefix(sep)?;
    let mut given = vec![None; k.consts.len()];
    let mut next = 0;
    for part in rest.split(sep) {
        let (i, value) =
            k.consts.iter().enumerate().skip(next).find_map(|(i, c)| {
                Some((i, part.strip_prefix(&*c.name.name)?.strip_prefix('_')?))
            })?;
        let kind = kinds.get(i).copied().flatten()?;
        *given.get_mut(i)? = Some(kind.unmangle(value)?);
        next = i + 1;
    }
    Some(given)
}

/// "the kernels' constants: `gemm<const BM: u32 = 128>`", as written.
fn listing(sources: &SourceMap, kernels: &[&ast::KernelItem]) -> String {
    let with: Vec<String> = kernels
        .iter()
        .filter(|k| !k.consts.is_empty())
        .map(|k| {
            let consts: Vec<&str> = k.consts.iter().map(|c| sources.slice(c.span)).collect();
            format!("`{}<{}>`", k.name.name, consts.join(", "))
        })
        .collect();
    if with.is_empty() {
        "no kernel of the file has constants".to_string()
    } else {
        format!("the kernels' constants: {}", with.join("; "))
    }
}

impl BodyChecker<'_> {
    /// Binds the constants of kernel `k` with the values `given` (`None`:
    /// the default), each default evaluated with the constants before it;
    /// their names are added to `declared` (E0101 for a second one). The
    /// instantiation, for a kernel with constants.
    pub fn bind_kernel_consts(
        &mut self,
        k: &ast::KernelItem,
        given: &[Option<ConstValue>],
        declared: &mut HashMap<String, Span>,
    ) -> Option<Instance> {
        if k.consts.is_empty() {
            return None;
        }
        let mut consts = Vec::new();
        for (i, c) in k.consts.iter().enumerate() {
            let name = &c.name.name;
            if let Some(&first) = declared.get(&**name) {
                self.error(CheckError::Duplicate {
                    name: name.to_string(),
                    span: c.name.span,
                    first,
                });
                continue;
            }
            declared.insert(name.to_string(), c.name.span);
            let default = self.const_kind(c).and_then(|kind| {
                let default = self.const_default(c, kind)?;
                Some((kind, default))
            });
            let value = match (given.get(i).copied().flatten(), default) {
                (Some(v), d) => Some((v, d.is_some_and(|(_, d)| d == v))),
                (None, Some((_, d))) => Some((d, true)),
                (None, None) => None,
            };
            let Some((value, is_default)) = value else {
                self.kconsts.insert(name.to_string(), KConst::Poisoned);
                continue;
            };
            let bound = match value {
                ConstValue::Value(v, ty) => KConst::Value(ConstInfo {
                    value: v,
                    ty,
                    span: c.name.span,
                }),
                ConstValue::Type(t) => KConst::Type(t, c.name.span),
            };
            self.kconsts.insert(name.to_string(), bound);
            consts.push(InstanceConst {
                name: name.to_string(),
                value,
                default: is_default,
            });
        }
        Some(Instance {
            kernel: k.name.name.to_string(),
            consts,
        })
    }

    /// The kind of constant `c` declares (E0163, or E0100 for an unknown
    /// type name, otherwise).
    fn const_kind(&mut self, c: &ast::KernelConst) -> Option<Kind> {
        if let Some(kind) = Kind::of(&c.ty) {
            return Some(kind);
        }
        let written = self.text(c.ty.span).to_string();
        let what = match &c.ty.kind {
            // Unknown names are E0100.
            ast::TypeExprKind::Named(n) if Scalar::from_name(&n.name).is_none() => {
                self.resolve_type(&c.ty)?;
                format!("a constant of type `{written}`, a type constant")
            }
            ast::TypeExprKind::Error => return None,
            _ => format!("a constant of type `{written}`"),
        };
        self.error(CheckError::KernelConst {
            why: format!("`{}` is {what}", c.name.name),
            span: c.ty.span,
            label: "not an integer type, `bool` or `type`".into(),
            help: Some(
                "pass values of other types as kernel parameters; a float constant is an integer constant converted (`SCALE as f32`)".into(),
            ),
        });
        None
    }

    /// The default of constant `c`: a constant expression of its type
    /// (E0117 otherwise), or for a `type` constant a type's name (E0163).
    fn const_default(&mut self, c: &ast::KernelConst, kind: Kind) -> Option<ConstValue> {
        match kind {
            Kind::Value(ty) => {
                let saved = self.const_context;
                self.const_context = true;
                let lowered = self.expr_as(&c.default, ty);
                self.const_context = saved;
                let e = lowered?;
                match consteval::eval(&e) {
                    Ok(v) => Some(ConstValue::Value(v, ty)),
                    Err(why) => {
                        self.error(not_constant(e.span, why));
                        None
                    }
                }
            }
            Kind::Type => {
                let named = match &c.default.kind {
                    ast::ExprKind::Name(n) => Some(n),
                    _ => None,
                };
                if let Some(n) = named {
                    if let Some(s) = Scalar::from_name(&n.name) {
                        return Some(ConstValue::Type(s));
                    }
                    match self.kconsts.get(&*n.name) {
                        Some(KConst::Type(s, def)) => {
                            let (s, def) = (*s, *def);
                            self.reference(n.span, def);
                            return Some(ConstValue::Type(s));
                        }
                        Some(KConst::Poisoned) => return None,
                        _ => {}
                    }
                }
                self.error(CheckError::KernelConst {
                    why: format!("the default of `{}` is not a type", c.name.name),
                    span: c.default.span,
                    label: "a type constant's default is a type".into(),
                    help: Some(format!(
                        "write a type's name: `const {}: type = bf16`",
                        c.name.name
                    )),
                });
                None
            }
        }
    }

    /// A kernel constant named `name` as a value: its value (`Some(Some)`),
    /// or `Some(None)` after an error (a type where a value goes) or for a
    /// constant whose declaration failed; `None` when no kernel constant
    /// has the name.
    pub fn kernel_const(&mut self, name: &ast::Ident, span: Span) -> Option<Option<ir::Expr>> {
        match self.kconsts.get(&*name.name)?.clone() {
            KConst::Value(c) => {
                self.reference(span, c.span);
                Some(Some(self.constant(c.value, c.ty, span)))
            }
            KConst::Type(t, def) => {
                self.reference(span, def);
                self.error(CheckError::Mismatch {
                    expected: "a value".into(),
                    found: "type".into(),
                    span,
                    note: Some(format!(
                        "`{}` is a kernel constant that names a type (`{t}` here): it goes where a type goes, `x as {0}`, `[{0}; 64]`",
                        name.name
                    )),
                    fix: None,
                });
                Some(None)
            }
            KConst::Poisoned => Some(None),
        }
    }

    /// True when `name` names a type here: a scalar type's name or a
    /// type constant of the kernel (and no local hides it).
    pub fn names_type(&self, name: &ast::Ident) -> bool {
        self.lookup(&name.name).is_none()
            && (Scalar::from_name(&name.name).is_some()
                || matches!(self.kconsts.get(&*name.name), Some(KConst::Type(..))))
    }

    /// `size_of(T)`: the bytes of the type `T`, a `u32` constant.
    pub(super) fn size_of_call(
        &mut self,
        c: super::args::Call<'_>,
    ) -> Option<super::calls::CallResult> {
        let [Some(arg)] = self.bind_args::<1>(&c)?.args else {
            return None;
        };
        let mut inner = arg;
        while let ast::ExprKind::Paren(x) = &inner.kind {
            inner = x;
        }
        let ty = match &inner.kind {
            ast::ExprKind::Name(n) if self.lookup(&n.name).is_none() => {
                match (Scalar::from_name(&n.name), self.kconsts.get(&*n.name)) {
                    (Some(s), _) => Some(s),
                    (None, Some(KConst::Type(s, def))) => {
                        let (s, def) = (*s, *def);
                        self.reference(n.span, def);
                        Some(s)
                    }
                    (None, Some(KConst::Poisoned)) => return None,
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(ty) = ty else {
            if let ast::ExprKind::Name(n) = &inner.kind {
                let known = self.lookup(&n.name).is_some()
                    || self.is_const(&n.name)
                    || self.g.poisoned.contains(&*n.name);
                if !known {
                    let names: Vec<&str> = Scalar::every().map(Scalar::name).collect();
                    self.error(CheckError::NotFound {
                        kind: "type",
                        name: n.name.to_string(),
                        span: n.span,
                        similar: super::body::similar(&n.name, names.iter().copied()),
                        help: Some(
                            "`size_of` takes a type's name, or a kernel's type constant".into(),
                        ),
                    });
                    return None;
                }
            }
            // A value: checked (its locals count as used), then refused.
            let _ = self.expr(arg, None);
            self.error(CheckError::Mismatch {
                expected: "a type".into(),
                found: "a value".into(),
                span: arg.span,
                note: Some("`size_of` takes a type's name: `size_of(bf16)`, or a kernel's type constant, `size_of(ELEM)`".into()),
                fix: None,
            });
            return None;
        };
        Some(super::calls::CallResult::Value(self.constant(
            Value::Int(i128::from(ty.size())),
            Scalar::U32,
            c.span,
        )))
    }

    /// True when `name` is a constant: the kernel's or a global one.
    pub fn is_const(&self, name: &str) -> bool {
        self.kconsts.contains_key(name) || self.g.consts.contains_key(name)
    }

    /// Where the constant `name` is declared.
    pub fn const_decl(&self, name: &str) -> Option<Span> {
        match self.kconsts.get(name) {
            Some(KConst::Value(c)) => Some(c.span),
            Some(KConst::Type(_, span)) => Some(*span),
            Some(KConst::Poisoned) => None,
            None => self.g.consts.get(name).map(|c| c.span),
        }
    }

    /// A written type, where the kernel's `type` constants are types.
    pub fn resolve_type(&mut self, t: &ast::TypeExpr) -> Option<Type> {
        let kconsts = &self.kconsts;
        let references = &mut self.references;
        let mut names = |n: &ast::Ident| -> Option<NamedType> {
            Some(match kconsts.get(&*n.name)? {
                KConst::Type(s, def) => {
                    references.push(super::Reference {
                        span: n.span,
                        to: super::Referent::Definition(*def),
                    });
                    NamedType::Type(*s)
                }
                KConst::Poisoned => NamedType::Poisoned,
                KConst::Value(c) => NamedType::NotAType(format!(
                    "`{}` is a kernel constant of type `{}`, a value; a constant that names a type is declared `const {}: type = bf16`",
                    n.name, c.ty, n.name
                )),
            })
        };
        super::globals::resolve_type_in(t, &mut names, &mut self.diags)
    }

    /// A written type that must be a scalar (E0119 otherwise).
    pub fn scalar_type(&mut self, t: &ast::TypeExpr) -> Option<Scalar> {
        match self.resolve_type(t)? {
            Type::Scalar(s) => Some(s),
            _ => {
                self.error(CheckError::GlobalOutsideParams { span: t.span });
                None
            }
        }
    }
}

/// E0126 for each instantiation whose name another kernel's `.entry` has:
/// `(kernel index, error)`.
pub fn name_clashes(module: &ir::Module) -> Vec<(usize, Diagnostic)> {
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, k) in module.kernels.iter().enumerate() {
        let Some(&j) = first.get(k.name.as_str()) else {
            first.insert(&k.name, i);
            continue;
        };
        let Some(other) = module.kernels.get(j) else {
            continue;
        };
        // Two plain kernels of one name are E0101; one kernel's
        // instantiations have different names.
        let (at, with) = match (&k.instance, &other.instance) {
            (Some(inst), _) => ((i, k, inst), other),
            (None, Some(inst)) => ((j, other, inst), k),
            (None, None) => continue,
        };
        if at.1.span == with.span {
            continue;
        }
        let error = CheckError::InstanceName {
            name: at.1.name.clone(),
            values: at.2.values_text(),
            span: at.1.name_span,
            other: with.name_span,
        };
        out.push((at.0, error.into_diagnostic()));
    }
    out
}

/// The diagnostics found in each instantiation (by index in
/// `module.kernels`), each reported once: one found in every
/// instantiation of its kernel (and there are several) as it is, any other
/// with a note naming the instantiations it was found in and their
/// constants.
pub fn merge(module: &ir::Module, found: Vec<(usize, Vec<Diagnostic>)>) -> Vec<Diagnostic> {
    let mut by_kernel: std::collections::BTreeMap<usize, Vec<Diagnostic>> =
        std::collections::BTreeMap::new();
    for (i, list) in found {
        by_kernel.entry(i).or_default().extend(list);
    }
    // The instantiations of each kernel of the source, in order.
    let mut groups: Vec<(Span, Vec<usize>)> = Vec::new();
    for (i, k) in module.kernels.iter().enumerate() {
        if k.instance.is_none() {
            continue;
        }
        match groups.iter_mut().find(|(span, _)| *span == k.span) {
            Some((_, list)) => list.push(i),
            None => groups.push((k.span, vec![i])),
        }
    }
    let mut out = Vec::new();
    for (_, members) in groups {
        let mut seen: Vec<(Diagnostic, Vec<usize>)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for &i in &members {
            for d in by_kernel.remove(&i).unwrap_or_default() {
                let key = format!("{d:?}");
                match index.get(&key) {
                    Some(&at) => {
                        if let Some((_, list)) = seen.get_mut(at) {
                            if !list.contains(&i) {
                                list.push(i);
                            }
                        }
                    }
                    None => {
                        index.insert(key, seen.len());
                        seen.push((d, vec![i]));
                    }
                }
            }
        }
        for (d, list) in seen {
            let everywhere = list.len() == members.len() && members.len() > 1;
            // Constants whose declarations failed have no values to name.
            let valueless = list.iter().all(|&i| {
                module
                    .kernels
                    .get(i)
                    .and_then(|k| k.instance.as_ref())
                    .is_none_or(|inst| inst.consts.is_empty())
            });
            if everywhere || valueless {
                out.push(d);
            } else {
                out.push(d.note(instances_note(module, &list)));
            }
        }
    }
    // Diagnostics of kernels without instances (none are given).
    out.extend(by_kernel.into_values().flatten());
    out
}

/// The note for a diagnostic found in the `.entry` named `entry`, when it
/// is an instantiation of a kernel with constants (ptxas's advisories).
pub fn entry_note(module: &ir::Module, entry: &str) -> Option<String> {
    let i = module.kernels.iter().position(|k| k.name == entry)?;
    let k = module.kernels.get(i)?;
    if k.instance.as_ref()?.consts.is_empty() {
        return None;
    }
    Some(instances_note(module, &[i]))
}

/// At most this many instantiations are named in one note.
const NAMED_IN_NOTE: usize = 4;

/// "in instantiation `gemm__BM_256` with BM = 256, STAGES = 4".
fn instances_note(module: &ir::Module, list: &[usize]) -> String {
    let named: Vec<String> = list
        .iter()
        .take(NAMED_IN_NOTE)
        .filter_map(|&i| {
            let k = module.kernels.get(i)?;
            let values = k.instance.as_ref()?.values_text();
            Some(if values.is_empty() {
                format!("`{}`", k.name)
            } else {
                format!("`{}` with {values}", k.name)
            })
        })
        .collect();
    let more = list.len().saturating_sub(NAMED_IN_NOTE);
    match (named.as_slice(), more) {
        ([one], 0) => format!("in instantiation {one}"),
        (_, 0) => format!("in instantiations {}", named.join("; ")),
        _ => format!("in instantiations {}; and {more} more", named.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_args_parse_with_and_without_a_kernel() {
        let a: ConstArg = "BM=64".parse().unwrap();
        assert_eq!(
            (a.kernel, a.name.as_str(), a.value.as_str()),
            (None, "BM", "64")
        );
        let b: ConstArg = "gemm.ELEM=e4m3".parse().unwrap();
        assert_eq!(b.kernel.as_deref(), Some("gemm"));
        assert_eq!(b.to_string(), "gemm.ELEM=e4m3");
        for bad in ["BM", "=4", "BM=", "1x=2", "a.b.c=1", "a b=1"] {
            assert!(bad.parse::<ConstArg>().is_err(), "{bad}");
        }
    }

    #[test]
    fn values_parse_by_kind_and_unmangle_from_names() {
        let u32k = Kind::Value(Scalar::U32);
        let i8k = Kind::Value(Scalar::I8);
        let int = |v: i128, s| ConstValue::Value(Value::Int(v), s);
        assert_eq!(u32k.parse("0x40"), Ok(int(64, Scalar::U32)));
        assert!(u32k.parse("-1").is_err());
        assert!(u32k.parse("4294967296").is_err());
        assert_eq!(i8k.parse("-128"), Ok(int(-128, Scalar::I8)));
        assert!(i8k.parse("128").is_err());
        assert_eq!(
            Kind::Value(Scalar::Bool).parse("true"),
            Ok(ConstValue::Value(Value::Bool(true), Scalar::Bool))
        );
        assert!(Kind::Value(Scalar::Bool).parse("1").is_err());
        assert_eq!(Kind::Type.parse("e4m3"), Ok(ConstValue::Type(Scalar::E4M3)));
        assert!(Kind::Type.parse("f33").is_err());
        assert_eq!(i8k.unmangle("m3"), Some(int(-3, Scalar::I8)));
        assert_eq!(u32k.unmangle("64"), Some(int(64, Scalar::U32)));
        assert_eq!(u32k.unmangle("0x40"), None);
        assert_eq!(u32k.unmangle("m3"), None);
    }
}
