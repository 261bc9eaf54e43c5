//! The arguments of a built-in call, bound to the parameters its table
//! entry lists ([`super::builtins`]): the argument count (E0111), named
//! arguments (E0140: one the built-in does not take, one given twice, a
//! positional argument after a named one), and the note naming the called
//! function on a mismatched argument (E0110).

use super::body::{Binding, BodyChecker};
use super::builtins::{Entry, Operand};
use super::error::CheckError;
use crate::span::Span;
use crate::syntax::ast;

/// A call of a built-in as the checker sees it: the table's entry and what
/// the source gave. The handlers of the built-ins take one.
#[derive(Clone, Copy)]
pub struct Call<'e> {
    pub entry: &'static Entry,
    pub args: &'e [ast::Expr],
    pub named: &'e [ast::NamedArg],
    /// The whole call (E0111 points at it).
    pub span: Span,
}

impl<'e> Call<'e> {
    pub fn new(
        entry: &'static Entry,
        args: &'e [ast::Expr],
        named: &'e [ast::NamedArg],
        span: Span,
    ) -> Call<'e> {
        Call {
            entry,
            args,
            named,
            span,
        }
    }
}

/// A call's arguments by parameter: the positional parameters in order
/// (`None` for one left out, or a parameter with a default given by
/// name in its slot). The named-only ones (`order =`) come from
/// [`BodyChecker::bind_args_and_named`].
pub struct Bound<'e, const N: usize> {
    pub args: [Option<&'e ast::Expr>; N],
}

/// The call whose arguments are being checked: a mismatch of one of them
/// (E0110) gets a note naming the function and its signature.
pub struct CallContext {
    /// Given once: to the call's first mismatched argument.
    note: Option<String>,
    /// The spans of its arguments, sorted (a device function may have
    /// thousands, each of them mismatched).
    args: Vec<Span>,
}

impl BodyChecker<'_> {
    /// Binds the arguments of a call `c` of a built-in with `N`
    /// positional parameters. `None` after E0111 or E0140 (the arguments
    /// are then checked for their own errors only).
    pub fn bind_args<'e, const N: usize>(&mut self, c: &Call<'e>) -> Option<Bound<'e, N>> {
        let (args, _) = self.bind_args_and_named::<N>(c);
        Some(Bound { args: args? })
    }

    /// [`Self::bind_args`], with the arguments of the named-only
    /// parameters (`order =`, `scope =`) apart: they are given back even
    /// when the positional ones fail to bind, since what they say does
    /// not depend on those (E0141 and E0142 are still reported).
    #[allow(clippy::type_complexity)]
    pub fn bind_args_and_named<'e, const N: usize>(
        &mut self,
        c: &Call<'e>,
    ) -> (Option<[Option<&'e ast::Expr>; N]>, Vec<&'e ast::NamedArg>) {
        let Call {
            entry,
            args,
            named,
            span,
        } = *c;
        let taken = self.named_args(entry, args, named);
        let (by_position, only_named): (Vec<_>, Vec<_>) = taken
            .into_iter()
            .partition(|n| entry.positional().any(|p| p.name == &*n.name.name));
        let (required, max) = entry.arity();
        if args.len() < required || args.len() > max {
            for n in &by_position {
                self.quiet_uses(&n.value);
            }
            return (self.wrong_arg_count(entry, args, span), only_named);
        }
        // The table and the checker's arm disagree: a compiler bug, which
        // the tests that call every built-in find.
        if N != max {
            return (None, only_named);
        }
        let mut slots: [Option<&'e ast::Expr>; N] = [None; N];
        for (slot, a) in slots.iter_mut().zip(args) {
            *slot = Some(a);
        }
        let mut ok = true;
        for n in by_position {
            let position = entry.positional().position(|p| p.name == &*n.name.name);
            match position.and_then(|i| slots.get_mut(i)) {
                Some(slot @ None) => *slot = Some(&n.value),
                Some(Some(first)) => {
                    self.error(CheckError::DuplicateNamedArg {
                        name: n.name.name.to_string(),
                        span: n.name.span,
                        first: first.span,
                    });
                    self.quiet_uses(&n.value);
                    ok = false;
                }
                None => {}
            }
        }
        if !ok {
            let given: Vec<&ast::Expr> = slots.into_iter().flatten().collect();
            self.untyped_args += 1;
            for a in given {
                self.quiet_arg(Some(entry), a);
            }
            self.untyped_args -= 1;
            return (None, only_named);
        }
        (Some(slots), only_named)
    }

    /// E0111 for a call of `entry` with `args`, which are still checked
    /// for their own errors; always `None`, for the caller to return.
    pub fn wrong_arg_count<T>(
        &mut self,
        entry: &Entry,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<T> {
        self.quiet_call_args(Some(entry), args);
        self.error(CheckError::ArgCount {
            callee: entry.name.into(),
            expected: entry.expected_args(),
            found: args.len(),
            span,
            signature: Some(entry.signature()),
        });
        None
    }

    /// Checks the arguments of a call that failed for their own errors
    /// only. Their types are unknown, so an untyped literal is not judged
    /// against a default type (no E0003 for `0xffffffff` as an `i32`).
    pub fn quiet_args(&mut self, args: &[ast::Expr]) {
        self.untyped_args += 1;
        for a in args {
            let _ = self.expr(a, None);
        }
        self.untyped_args -= 1;
    }

    /// [`Self::quiet_args`] for the arguments of a failed call of
    /// `callee` (`None`: a function that does not exist). An array or a
    /// barrier named as a whole is an operand, not a value, where the
    /// callee takes one (`remote(tile, 1)`, `copy_async(..., full[s])`;
    /// any, for an unknown function): which argument is which is not
    /// known, so it is left alone rather than checked as a value (E0112,
    /// E0110 would only follow from the failed call).
    pub fn quiet_call_args(&mut self, callee: Option<&Entry>, args: &[ast::Expr]) {
        self.untyped_args += 1;
        for a in args {
            self.quiet_arg(callee, a);
        }
        self.untyped_args -= 1;
    }

    fn quiet_arg(&mut self, callee: Option<&Entry>, a: &ast::Expr) {
        let takes = |o: Operand| callee.is_none_or(|e| e.takes(o));
        let skip = match self.operand_of(a) {
            // A whole array is a slice of itself too (`tma_load(sa, ...)`).
            Some(Operand::Array) => takes(Operand::Array) || takes(Operand::Slice),
            Some(o) => takes(o),
            None => false,
        };
        if !skip {
            let _ = self.expr(a, None);
        }
    }

    /// What `e` names when it is an array, a slice of one, a box of a
    /// tensor map or a barrier as a whole: `tile`, `sa[s]`, `a[m0, k0]`,
    /// `full`, `full[s]` (parenthesised or not).
    fn operand_of(&self, e: &ast::Expr) -> Option<Operand> {
        let mut e = e;
        while let ast::ExprKind::Paren(inner) = &e.kind {
            e = inner;
        }
        let (name, indices) = match &e.kind {
            ast::ExprKind::Name(n) => (n, None),
            ast::ExprKind::Index { base, indices, .. } => match &base.kind {
                ast::ExprKind::Name(n) => (n, Some(indices.len())),
                _ => return None,
            },
            _ => return None,
        };
        let kernel = self.kernel.as_ref();
        if indices.is_none() && self.names_type(name) {
            return Some(Operand::Type);
        }
        match self.lookup(&name.name)? {
            Binding::Barrier(_) | Binding::Named(_) => Some(Operand::Barrier),
            Binding::Accum(_) if indices.is_none() => Some(Operand::Accum),
            Binding::Shared(_) if indices.is_none() => Some(Operand::Array),
            Binding::Shared(s) => {
                let dims = kernel?.shared.get(s.index())?.dims.len();
                (indices? < dims).then_some(Operand::Slice)
            }
            Binding::Param(p) => match kernel?.params.get(p.index())?.ty {
                crate::ir::ParamType::Global { .. } if indices.is_none() => Some(Operand::Array),
                crate::ir::ParamType::Tensor(_) if indices.is_some() => Some(Operand::Box),
                _ => None,
            },
            _ => None,
        }
    }

    /// Checks the named arguments of a call of `entry`: E0140 for one it
    /// does not take, one given twice, and a positional argument after a
    /// named one. Returns those it takes, each once.
    pub(super) fn named_args<'e>(
        &mut self,
        entry: &Entry,
        positional: &[ast::Expr],
        named: &'e [ast::NamedArg],
    ) -> Vec<&'e ast::NamedArg> {
        if let Some(first) = named.iter().find(|n| n.position < positional.len()) {
            if let Some(after) = positional.get(first.position) {
                self.error(CheckError::PositionalAfterNamed {
                    span: after.span,
                    named: first.span(),
                });
            }
        }
        let allowed: Vec<&'static str> = entry.named_params().collect();
        let mut taken: Vec<&'e ast::NamedArg> = Vec::new();
        for n in named {
            let positional = entry
                .positional()
                .position(|p| p.name == &*n.name.name && !allowed.contains(&p.name));
            if let Some(position) = positional {
                // The value stands where the parameter does: dropping
                // `name =` is the fix.
                let unname = (n.position == position).then(|| {
                    Span::new(
                        n.name.span.file,
                        n.name.span.start as usize,
                        n.value.span.start as usize,
                    )
                });
                self.error(CheckError::PositionalByName {
                    callee: entry.name.to_string(),
                    name: n.name.name.to_string(),
                    span: n.name.span,
                    position,
                    unname,
                });
                self.quiet_uses(&n.value);
                continue;
            }
            if !allowed.contains(&&*n.name.name) {
                self.error(CheckError::UnknownNamedArg {
                    callee: entry.name.to_string(),
                    name: n.name.name.to_string(),
                    span: n.name.span,
                    similar: super::body::similar(&n.name.name, allowed.iter().copied()),
                    takes: allowed.clone(),
                });
                self.quiet_uses(&n.value);
                continue;
            }
            if let Some(first) = taken.iter().find(|t| t.name.name == n.name.name) {
                self.error(CheckError::DuplicateNamedArg {
                    name: n.name.name.to_string(),
                    span: n.name.span,
                    first: first.name.span,
                });
                self.quiet_uses(&n.value);
                continue;
            }
            taken.push(n);
        }
        taken
    }

    /// The named arguments of a call that takes none (a device function):
    /// E0140 for each, their values checked for their own errors.
    pub fn no_named_args(&mut self, callee: &str, named: &[ast::NamedArg]) {
        for n in named {
            self.error(CheckError::UnknownNamedArg {
                callee: callee.to_string(),
                name: n.name.name.to_string(),
                span: n.name.span,
                takes: Vec::new(),
                similar: None,
            });
            self.quiet_uses(&n.value);
        }
    }

    /// Runs `check` on a call whose arguments are `args` and `named`: a
    /// mismatched argument (E0110) gets `note`, which names the function
    /// and its signature. Calls nest: the innermost call's arguments are
    /// the ones a mismatch is matched against.
    pub fn in_call<R>(
        &mut self,
        note: String,
        args: &[ast::Expr],
        named: &[ast::NamedArg],
        check: impl FnOnce(&mut Self) -> R,
    ) -> R {
        // A parenthesised argument is the argument: a mismatch inside
        // `(1.5)` is reported at `1.5`.
        let mut spans = Vec::new();
        for a in args.iter().chain(named.iter().map(|n| &n.value)) {
            let mut a = a;
            spans.push(a.span);
            while let ast::ExprKind::Paren(inner) = &a.kind {
                a = inner;
                spans.push(a.span);
            }
        }
        spans.sort_unstable();
        self.calls_open.push(CallContext {
            note: Some(note),
            args: spans,
        });
        let r = check(self);
        self.calls_open.pop();
        r
    }

    /// The note for a mismatch at `span`, if `span` is an argument of the
    /// innermost call being checked and the first of its arguments to be
    /// mismatched (the note names the function once per call).
    pub fn call_note(&mut self, span: Span) -> Option<String> {
        let call = self.calls_open.last_mut()?;
        if call.args.binary_search(&span).is_ok() {
            call.note.take()
        } else {
            None
        }
    }

    /// The value of a named argument that is not checked as a word: a
    /// variable it names counts as used (no W0001 follows from the error);
    /// any other expression is checked for its own errors.
    pub(super) fn quiet_uses(&mut self, e: &ast::Expr) {
        match &e.kind {
            ast::ExprKind::Name(n) => {
                if let Some(super::body::Binding::Local(id)) = self.lookup(&n.name) {
                    self.mark_used(id);
                }
            }
            _ => self.quiet_args(std::slice::from_ref(e)),
        }
    }
}
