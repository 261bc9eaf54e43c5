//! The arguments of a built-in call, bound to the parameters its table
//! entry lists ([`super::builtins`]): the argument count (E0111), named
//! arguments (E0140: one the built-in does not take, one given twice, a
//! positional argument after a named one), and the note naming the called
//! function on a mismatched argument (E0110).

use super::body::BodyChecker;
use super::builtins::Entry;
use super::error::CheckError;
use crate::span::Span;
use crate::syntax::ast;

/// A call's arguments by parameter: the positional parameters in order
/// (`None` for one left out), then the named-only ones the call gave.
pub struct Bound<'e, const N: usize> {
    pub args: [Option<&'e ast::Expr>; N],
    /// The arguments given for [`ParamKind::Named`] parameters
    /// (`order = acquire`), each once.
    pub named: Vec<&'e ast::NamedArg>,
}

/// The call whose arguments are being checked: a mismatch of one of them
/// (E0110) gets a note naming the function and its signature.
pub struct CallContext {
    note: String,
    args: Vec<Span>,
}

impl BodyChecker<'_> {
    /// Binds the arguments of a call of `entry`, a built-in with `N`
    /// positional parameters. `None` after E0111 or E0140 (the arguments
    /// are then checked for their own errors only).
    pub fn bind_args<'e, const N: usize>(
        &mut self,
        entry: &Entry,
        args: &'e [ast::Expr],
        named: &'e [ast::NamedArg],
        span: Span,
    ) -> Option<Bound<'e, N>> {
        let taken = self.named_args(entry, args, named);
        let (required, max) = entry.arity();
        if args.len() < required || args.len() > max {
            for n in &taken {
                self.quiet_uses(&n.value);
            }
            return self.wrong_arg_count(entry, args, span);
        }
        // The table and the checker's arm disagree: a compiler bug, which
        // the tests that call every built-in find.
        if N != max {
            return None;
        }
        let mut slots: [Option<&'e ast::Expr>; N] = [None; N];
        for (slot, a) in slots.iter_mut().zip(args) {
            *slot = Some(a);
        }
        let mut only_named = Vec::new();
        let mut ok = true;
        for n in taken {
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
                None => only_named.push(n),
            }
        }
        if !ok {
            for a in slots.into_iter().flatten() {
                self.quiet_args(std::slice::from_ref(a));
            }
            return None;
        }
        Some(Bound {
            args: slots,
            named: only_named,
        })
    }

    /// E0111 for a call of `entry` with `args`, which are still checked
    /// for their own errors; always `None`, for the caller to return.
    pub fn wrong_arg_count<T>(
        &mut self,
        entry: &Entry,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<T> {
        self.quiet_args(args);
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

    /// Checks the named arguments of a call of `entry`: E0140 for one it
    /// does not take, one given twice, and a positional argument after a
    /// named one. Returns those it takes, each once.
    fn named_args<'e>(
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
        let spans = args
            .iter()
            .map(|a| a.span)
            .chain(named.iter().map(|n| n.value.span))
            .collect();
        self.calls_open.push(CallContext { note, args: spans });
        let r = check(self);
        self.calls_open.pop();
        r
    }

    /// The note for a mismatch at `span`, if `span` is an argument of the
    /// innermost call being checked.
    pub fn call_note(&self, span: Span) -> Option<String> {
        let call = self.calls_open.last()?;
        call.args.contains(&span).then(|| call.note.clone())
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
