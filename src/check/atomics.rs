//! The atomics (`atomic_add(place, v, order = acquire, scope = cluster)`,
//! ...) and `fence(order = ..., scope = ...)`, with their named arguments
//! (E0140), whose values are words read where they stand, like a barrier
//! group's scope (E0141, E0142; E0200 for `cluster` before sm_90; E0143
//! for `cta` on another CTA's memory).

use super::args::Call;
use super::body::BodyChecker;
use super::calls::CallResult;
use super::error::CheckError;
use crate::ir::{AtomicOp, ExprKind, MemOrder, MemScope, MemSem, PlaceKind, StmtKind};
use crate::syntax::ast;

/// The note E0118 gives for an element type `op` does not take.
fn accepted_note(op: AtomicOp) -> &'static str {
    match op {
        AtomicOp::Add | AtomicOp::Sub => {
            "`atomic_add` and `atomic_sub` take `u32`, `i32`, `u64`, `i64`, `f32` and `f64` elements"
        }
        AtomicOp::Max | AtomicOp::Min => {
            "`atomic_max` and `atomic_min` take integer elements (`u32`, `i32`, `u64`, `i64`)"
        }
        AtomicOp::Exch => "`atomic_exch` takes `u32`, `i32`, `u64`, `i64`, `f32` and `f64` elements",
        AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => {
            "`atomic_and`, `atomic_or` and `atomic_xor` take integer elements (`u32`, `i32`, `u64`, `i64`)"
        }
        AtomicOp::Inc | AtomicOp::Dec => {
            "`atomic_inc` and `atomic_dec` take `u32` elements (PTX's `atom.inc`/`atom.dec` are `.u32` only)"
        }
        AtomicOp::Cas => {
            "`atomic_cas` takes integer elements (`u32`, `i32`, `u64`, `i64`, and `u16`, `i16`)"
        }
    }
}

/// The orders an atomic may have, and a fence.
fn atomic_order(o: MemOrder) -> bool {
    o != MemOrder::Sc
}

fn fence_order(o: MemOrder) -> bool {
    matches!(o, MemOrder::AcqRel | MemOrder::Sc)
}

impl BodyChecker<'_> {
    /// An atomic: `op(place, value)`, `atomic_inc(place, limit)` or
    /// `atomic_cas(place, compare, value)`, with optional `order` and
    /// `scope`.
    /// Its own function (not inlined) so that nested calls pay only for
    /// the frame of the group they use.
    #[inline(never)]
    pub fn atomic_call(&mut self, c: Call<'_>, op: AtomicOp) -> Option<CallResult> {
        let (name, args, span) = (c.entry.name, c.args, c.span);
        // The order and scope are words, checked whatever the positional
        // arguments are.
        let (place, values, sem, taken) = if op == AtomicOp::Cas {
            let (bound, taken) = self.bind_args_and_named::<3>(&c);
            let sem = self.mem_sem(name, &taken, MemSem::ATOMIC, atomic_order);
            let [Some(p), Some(cmp), Some(v)] = bound? else {
                return None;
            };
            let place = self.memory_place(p, true);
            let (cmp, v) = match place.as_ref() {
                Some((pl, _)) => (self.expr_as(cmp, pl.elem), self.expr_as(v, pl.elem)),
                None => (self.expr(cmp, None), self.expr(v, None)),
            };
            (place, vec![cmp, v], sem, taken)
        } else {
            let (bound, taken) = self.bind_args_and_named::<2>(&c);
            let sem = self.mem_sem(name, &taken, MemSem::ATOMIC, atomic_order);
            let [Some(p), Some(v)] = bound? else {
                return None;
            };
            let place = self.memory_place(p, true);
            let v = match place.as_ref() {
                Some((pl, _)) => self.expr_as(v, pl.elem),
                None => self.expr(v, None),
            };
            (place, vec![v], sem, taken)
        };
        let (place, _) = place?;
        let place_span = args.first().map_or(span, |a| a.span);
        if !op.accepts(place.elem) {
            let note = match (place.elem.is_narrow_int(), op) {
                (true, AtomicOp::Cas) => {
                    "`atomic_cas` supports 16-, 32- and 64-bit integer elements (PTX has `atom.cas.b16`, but no 8-bit compare-and-swap)"
                }
                (true, _) => {
                    "PTX has no atomic arithmetic on 8- or 16-bit integers: keep such counters in `u32` or `i32` elements and convert the result with `as`"
                }
                _ => accepted_note(op),
            };
            self.bad(name, place.elem, place_span, note)?;
        }
        let sem = sem?;
        if sem.scope == MemScope::Cta && matches!(place.kind, PlaceKind::Remote { .. }) {
            if let Some(scope) = taken.iter().find(|a| &*a.name.name == "scope") {
                self.error(CheckError::ScopeTooNarrow {
                    callee: name.to_string(),
                    scope: scope.value.span,
                    place: place_span,
                });
                return None;
            }
        }
        let mut lowered = Vec::with_capacity(values.len());
        for v in values {
            lowered.push(v?);
        }
        let ty = place.elem;
        self.value(
            ExprKind::Atomic {
                op,
                sem,
                place: Box::new(place),
                args: lowered,
            },
            Some(ty),
            span,
        )
    }

    /// `fence(order = ..., scope = ...)`: `fence.acq_rel.gpu` by default.
    pub fn fence_call(&mut self, c: Call<'_>) -> Option<CallResult> {
        let (bound, taken) = self.bind_args_and_named::<0>(&c);
        let sem = self.mem_sem(c.entry.name, &taken, MemSem::FENCE, fence_order);
        bound?;
        Some(CallResult::Effect(Box::new(StmtKind::Fence(sem?))))
    }

    /// The order and scope of an atomic or fence from its `order` and
    /// `scope` arguments, `default`'s where not given; `None` after an
    /// error (E0141 for a word that is not an order or scope, E0142 for an
    /// order `callee` cannot have, E0200 for `cluster` before sm_90).
    fn mem_sem(
        &mut self,
        callee: &str,
        named: &[&ast::NamedArg],
        default: MemSem,
        allows: fn(MemOrder) -> bool,
    ) -> Option<MemSem> {
        let get = |name: &str| named.iter().copied().find(|a| &*a.name.name == name);
        let order = match get("order") {
            None => Some(default.order),
            Some(a) => {
                let names = MemOrder::ALL.map(MemOrder::name);
                let o = self
                    .word(&a.value, "memory order", &names)
                    .and_then(|w| MemOrder::ALL.into_iter().find(|o| o.name() == w));
                match o {
                    Some(o) if !allows(o) => {
                        self.error(CheckError::OrderNotAllowed {
                            callee: callee.to_string(),
                            order: o.name(),
                            span: a.value.span,
                            allowed: MemOrder::ALL
                                .into_iter()
                                .filter(|o| allows(*o))
                                .map(MemOrder::name)
                                .collect(),
                        });
                        None
                    }
                    other => other,
                }
            }
        };
        let scope = match get("scope") {
            None => Some(default.scope),
            Some(a) => {
                let names = MemScope::ALL.map(MemScope::name);
                let s = self
                    .word(&a.value, "scope", &names)
                    .and_then(|w| MemScope::ALL.into_iter().find(|s| s.name() == w));
                match s {
                    Some(MemScope::Cluster)
                        if !self.require_sm90("`scope = cluster`", a.value.span) =>
                    {
                        None
                    }
                    other => other,
                }
            }
        };
        Some(MemSem {
            order: order?,
            scope: scope?,
        })
    }

    /// The word a named argument's value spells, when it is one of
    /// `words`; E0141 otherwise (with the closest word).
    fn word(
        &mut self,
        e: &ast::Expr,
        what: &'static str,
        words: &[&'static str],
    ) -> Option<String> {
        if let ast::ExprKind::Name(n) = &e.kind {
            if words.contains(&&*n.name) {
                return Some(n.name.to_string());
            }
        }
        let similar = match &e.kind {
            ast::ExprKind::Name(n) => super::body::similar(&n.name, words.iter().copied()),
            _ => None,
        };
        let text = self.text(e.span).to_string();
        self.quiet_uses(e);
        self.error(CheckError::UnknownWord {
            what,
            word: text,
            span: e.span,
            words: words.to_vec(),
            similar,
        });
        None
    }
}
