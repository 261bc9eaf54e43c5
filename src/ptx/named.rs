//! Named barriers (`barrier b: named(threads = k)`): `bar.sync id, k` and
//! `bar.arrive id, k`, with the ids the checker gave the group. Where the
//! facts cannot show that every lane of a warp runs the operation together
//! (every thread of the CTA does, or every condition around it is uniform
//! in each warp in a kernel without jumps: `crate::analysis::warps`), the
//! non-`.aligned` `barrier.sync`/`barrier.arrive`.

use super::error::Result;
use super::writer::{emit, Class, Operand, Writer};
use crate::ir::{consteval, NamedBarrierOp, NamedOpKind, StmtId};

impl Writer<'_> {
    pub(super) fn named_barrier(&mut self, id: StmtId, op: &NamedBarrierOp) -> Result<()> {
        let Some(g) = self
            .kernel
            .and_then(|k| k.named_barriers.get(op.group.index()))
        else {
            return Err(self.invalid(format!(
                "named-barrier group {} does not exist here",
                op.group.0
            )));
        };
        let (first, count, threads) = (g.first_id, g.count, g.threads);
        let bar = match &op.index {
            None if count == 1 => Operand::imm(first),
            None => {
                return Err(self.invalid(format!(
                    "an unindexed reference to `{}` of {} barriers",
                    g.name, count
                )))
            }
            Some(e) => match consteval::eval_int(e) {
                Some(c) => match u32::try_from(c).ok().filter(|i| *i < count) {
                    Some(i) => Operand::imm(first + i),
                    None => {
                        return Err(
                            self.invalid(format!("index {c} of `{}` of {count} barriers", g.name))
                        )
                    }
                },
                None => {
                    let i = self.expr_u32(e)?;
                    let r = self.reg(Class::B32);
                    emit!(self, "add.u32 {}, {}, {};", r, i, first);
                    Operand::Reg(r)
                }
            },
        };
        let aligned = self.info.divergence(id).is_none() || self.info.warps.converged(id);
        let inst = match (op.kind, aligned) {
            (NamedOpKind::Sync, true) => "bar.sync",
            (NamedOpKind::Arrive, true) => "bar.arrive",
            (NamedOpKind::Sync, false) => "barrier.sync",
            (NamedOpKind::Arrive, false) => "barrier.arrive",
        };
        emit!(self, "{} {}, {};", inst, bar, threads);
        Ok(())
    }
}
