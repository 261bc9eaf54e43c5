//! Barrier groups (mbarriers): initialisation at kernel entry and every
//! barrier operation, lowered as the reference table in language.md §7 says.
//!
//! A barrier's address is its group's symbol plus 8 × index. A tracked
//! parity (`wait()`, `test()`, `wait_cluster()`, `test_cluster()`) is one bit
//! per barrier in a per-thread mask register of the group, flipped after each
//! completed wait (and after each successful test), whichever form it was.
//! On sm_80–89 only the sm_80 forms are used (`.shared` spelling,
//! `test_wait` spin loops); an sm_90 operation there (which the checker
//! rejects, E0200) is an error.

use super::error::Result;
use super::imm;
use super::names::barrier_symbol;
use super::writer::{emit, Addr, Class, Operand, Reg, Writer};
use crate::analysis::Usage;
use crate::ir::consteval;
use crate::ir::{BarrierGroup, BarrierOp, BarrierOpKind, BarrierRef, Dim, Parity, Scope, Special};

/// A barrier's index in its group.
#[derive(Clone, Copy, Debug)]
enum Index {
    /// Known: below the group's count (at most 64).
    Const(u32),
    Reg(Reg),
}

impl std::fmt::Display for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Index::Const(i) => i.fmt(f),
            Index::Reg(r) => r.fmt(f),
        }
    }
}

/// One barrier of a group: its address and index.
pub(super) struct Mbar {
    pub(super) addr: Addr,
    /// The index, constant or in a register (for tracked parity bits).
    index: Index,
    group: usize,
    scope: Scope,
    count: u32,
}

impl Writer<'_> {
    /// Kernel entry: one thread initialises every barrier, then the whole CTA
    /// (or cluster) synchronises so no thread uses one before it is ready.
    pub(super) fn init_barriers(&mut self, usage: &Usage) -> Result<()> {
        let Some(k) = self.kernel else {
            return Ok(());
        };
        for g in &usage.tracked {
            let class = match k.barriers.get(g.index()) {
                Some(b) if b.count > 32 => Class::B64,
                Some(_) => Class::B32,
                None => return Err(self.invalid(format!("barrier group {} does not exist", g.0))),
            };
            let r = self.reg(class);
            emit!(
                self,
                "mov.{} {}, 0;",
                if class == Class::B64 { "b64" } else { "b32" },
                r
            );
            if let Some(slot) = self.parity.get_mut(g.index()) {
                *slot = Some(r);
            }
        }
        if k.barriers.is_empty() {
            return Ok(());
        }
        let sm90 = self.target.has_sm90_features();
        let first = self.first_thread()?;
        let skip = self.label();
        emit!(self, "@!{} bra {};", first, skip);
        let space = if sm90 { "shared::cta" } else { "shared" };
        for g in &k.barriers {
            let outer = self.at(g.spans.decl);
            // The checker bounds both (E0306, E0311); `mbarrier.init` takes
            // no other count, and the parity masks hold 64 bits.
            if !(1..=BarrierGroup::MAX_ARRIVALS).contains(&g.arrivals) {
                return Err(self.invalid(format!(
                    "barrier group `{}` expects {} arrivals (1..={})",
                    g.name,
                    g.arrivals,
                    BarrierGroup::MAX_ARRIVALS
                )));
            }
            if !(1..=BarrierGroup::MAX_COUNT).contains(&g.count) {
                return Err(self.invalid(format!(
                    "barrier group `{}` holds {} barriers (1..={})",
                    g.name,
                    g.count,
                    BarrierGroup::MAX_COUNT
                )));
            }
            let arrivals = g.arrivals;
            for i in 0..g.count {
                let a = Addr {
                    base: barrier_symbol(&g.name),
                    off: 8 * i64::from(i),
                };
                emit!(self, "mbarrier.init.{}.b64 {}, {};", space, a, arrivals);
            }
            self.restore(outer);
        }
        if sm90 && (k.cluster.is_some() || usage.bulk) {
            self.need(8, 0);
            emit!(self, "fence.mbarrier_init.release.cluster;");
        }
        self.place_label(skip);
        if sm90 && k.cluster.is_some() {
            self.need(8, 0);
            emit!(self, "barrier.cluster.arrive.relaxed.aligned;");
            emit!(self, "barrier.cluster.wait.aligned;");
        } else {
            emit!(self, "bar.sync 0;");
        }
        Ok(())
    }

    /// `thread_idx == (0, 0, 0)`.
    fn first_thread(&mut self) -> Result<Reg> {
        let mut acc = self.special(Special::ThreadIdx(Dim::X))?;
        for d in [Dim::Y, Dim::Z] {
            let t = self.special(Special::ThreadIdx(d))?;
            if t != Operand::imm(0) {
                let r = self.reg(Class::B32);
                emit!(self, "or.b32 {}, {}, {};", r, acc, t);
                acc = Operand::Reg(r);
            }
        }
        let p = self.reg(Class::Pred);
        emit!(self, "setp.eq.u32 {}, {}, 0;", p, acc);
        Ok(p)
    }

    pub(super) fn barrier_target(&mut self, r: &BarrierRef) -> Result<Mbar> {
        let Some(g) = self.kernel.and_then(|k| k.barriers.get(r.group.index())) else {
            return Err(self.invalid(format!("barrier group {} does not exist here", r.group.0)));
        };
        let g: &BarrierGroup = g;
        let symbol = barrier_symbol(&g.name);
        let (addr, index) = match r.index.as_deref() {
            None if g.count == 1 => (
                Addr {
                    base: symbol,
                    off: 0,
                },
                Index::Const(0),
            ),
            // The barrier pass reports both (E0303, E0305).
            None => {
                return Err(self.invalid(format!(
                    "an unindexed reference to `{}` of {} barriers",
                    g.name, g.count
                )))
            }
            Some(e) => match consteval::eval_int(e) {
                Some(c) => {
                    let Some(i) = u32::try_from(c).ok().filter(|i| *i < g.count) else {
                        return Err(self.invalid(format!(
                            "index {c} of `{}` of {} barriers",
                            g.name, g.count
                        )));
                    };
                    (
                        Addr {
                            base: symbol,
                            off: 8 * i64::from(i),
                        },
                        Index::Const(i),
                    )
                }
                None => {
                    let i = self.expr_u32(e)?;
                    let b = self.symbol_base(&symbol);
                    let a = self.reg(Class::B32);
                    emit!(self, "mad.lo.s32 {}, {}, 8, {};", a, i, b);
                    let index = match &i {
                        Operand::Reg(r) => Index::Reg(*r),
                        // Constant only here (a block dimension that
                        // `block(...)` fixes): in bounds, or the program
                        // indexes past its group.
                        Operand::Imm(_) => match imm::parse_int(&i)
                            .and_then(|c| u32::try_from(c).ok())
                            .filter(|c| *c < g.count)
                        {
                            Some(c) => Index::Const(c),
                            None => {
                                return Err(self.invalid(format!(
                                    "index {i} of `{}` of {} barriers",
                                    g.name, g.count
                                )))
                            }
                        },
                    };
                    (
                        Addr {
                            base: a.to_string(),
                            off: 0,
                        },
                        index,
                    )
                }
            },
        };
        Ok(Mbar {
            addr,
            index,
            group: r.group.index(),
            scope: g.scope,
            count: g.count,
        })
    }

    pub(super) fn barrier_op(&mut self, op: &BarrierOp) -> Result<()> {
        let t = self.barrier_target(&op.barrier)?;
        let sm90 = self.target.has_sm90_features();
        let cluster = t.scope == Scope::Cluster;
        match &op.kind {
            BarrierOpKind::Arrive { count } => {
                let count = match count {
                    Some(c) => Some(self.expr_u32(c)?),
                    None => None,
                };
                if count.is_some() {
                    self.require_sm90("arrive(count)")?;
                }
                let n = count.map(|c| format!(", {c}")).unwrap_or_default();
                if cluster {
                    self.require_sm90("a cluster-scope barrier")?;
                    self.need(8, 0);
                    emit!(
                        self,
                        "mbarrier.arrive.release.cluster.shared::cta.b64 _, {}{};",
                        t.addr,
                        n
                    );
                } else if sm90 {
                    emit!(self, "mbarrier.arrive.shared::cta.b64 _, {}{};", t.addr, n);
                } else {
                    // No `_` sink before PTX 7.8: a dead state register.
                    let state = self.reg(Class::B64);
                    emit!(self, "mbarrier.arrive.shared.b64 {}, {};", state, t.addr);
                }
            }
            BarrierOpKind::ArriveExpectTx { bytes } => {
                let n = self.expr_u32(bytes)?;
                self.require_sm90("arrive_expect_tx")?;
                self.need(8, 0);
                let sem = if cluster { ".release.cluster" } else { "" };
                emit!(
                    self,
                    "mbarrier.arrive.expect_tx{}.shared::cta.b64 _, {}, {};",
                    sem,
                    t.addr,
                    n
                );
            }
            BarrierOpKind::ExpectTx { bytes } => {
                let n = self.expr_u32(bytes)?;
                self.require_sm90("expect_tx")?;
                self.need(8, 0);
                emit!(
                    self,
                    "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 {}, {};",
                    t.addr,
                    n
                );
            }
            BarrierOpKind::ArriveRemote { rank } => {
                let rank = self.expr_u32(rank)?;
                self.require_sm90("arrive_remote")?;
                self.need(8, 0);
                let local = self.addr_operand(t.addr);
                let ra = self.reg(Class::B32);
                emit!(
                    self,
                    "mapa.shared::cluster.u32 {}, {}, {};",
                    ra,
                    local,
                    rank
                );
                emit!(
                    self,
                    "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [{}];",
                    ra
                );
            }
            BarrierOpKind::Wait { parity } => {
                let (par, mask) = self.parity_operand(&t, parity)?;
                self.wait_loop(&t.addr, &par, false);
                if let Some(mask) = mask {
                    self.flip_parity(mask, &t, None)?;
                }
            }
            BarrierOpKind::WaitCluster { parity } => {
                let (par, mask) = self.parity_operand(&t, parity)?;
                self.require_sm90("wait_cluster")?;
                self.need(8, 0);
                self.wait_loop(&t.addr, &par, true);
                if let Some(mask) = mask {
                    self.flip_parity(mask, &t, None)?;
                }
            }
        }
        Ok(())
    }

    /// `b.test(p)` / `b.test()` and `b.test_cluster(p)` /
    /// `b.test_cluster()`: a non-blocking check (acquiring at `acquire`
    /// scope when it succeeds); a tracked parity advances only when it
    /// succeeds.
    pub(super) fn barrier_test(
        &mut self,
        r: &BarrierRef,
        parity: &Parity,
        acquire: Scope,
    ) -> Result<Operand> {
        let t = self.barrier_target(r)?;
        let (par, mask) = self.parity_operand(&t, parity)?;
        let p = self.reg(Class::Pred);
        if acquire == Scope::Cluster {
            self.require_sm90("test_cluster")?;
            self.need(8, 0);
            emit!(
                self,
                "mbarrier.test_wait.parity.acquire.cluster.shared::cta.b64 {}, {}, {};",
                p,
                t.addr,
                par
            );
        } else if self.target.has_sm90_features() {
            emit!(
                self,
                "mbarrier.test_wait.parity.shared::cta.b64 {}, {}, {};",
                p,
                t.addr,
                par
            );
        } else {
            self.need(7, 1);
            emit!(
                self,
                "mbarrier.test_wait.parity.shared.b64 {}, {}, {};",
                p,
                t.addr,
                par
            );
        }
        if let Some(mask) = mask {
            self.flip_parity(mask, &t, Some(p))?;
        }
        Ok(Operand::Reg(p))
    }

    /// The parity to wait for, and the tracking mask when it is tracked.
    fn parity_operand(&mut self, t: &Mbar, parity: &Parity) -> Result<(Operand, Option<Reg>)> {
        match parity {
            Parity::Explicit(e) => Ok((self.expr_u32(e)?, None)),
            Parity::Tracked => {
                let Some(mask) = self.parity.get(t.group).copied().flatten() else {
                    return Err(self.invalid("a tracked parity without a mask register"));
                };
                if t.count == 1 {
                    // The whole mask is this barrier's bit.
                    return Ok((Operand::Reg(mask), Some(mask)));
                }
                // `(mask >> index) & 1`: a shift and a mask (two SASS
                // instructions; `bfe` costs ptxas six or seven).
                let par = self.reg(Class::B32);
                if mask.class == Class::B64 {
                    let wide = self.reg(Class::B64);
                    emit!(self, "shr.u64 {}, {}, {};", wide, mask, t.index);
                    emit!(self, "cvt.u32.u64 {}, {};", par, wide);
                    emit!(self, "and.b32 {}, {}, 1;", par, par);
                } else {
                    let shifted = self.reg(Class::B32);
                    emit!(self, "shr.u32 {}, {}, {};", shifted, mask, t.index);
                    emit!(self, "and.b32 {}, {}, 1;", par, shifted);
                }
                Ok((Operand::Reg(par), Some(mask)))
            }
        }
    }

    /// Flips the barrier's bit in its group's parity mask (under `guard`).
    fn flip_parity(&mut self, mask: Reg, t: &Mbar, guard: Option<Reg>) -> Result<()> {
        let wide = mask.class == Class::B64;
        let b = if wide { "b64" } else { "b32" };
        let bit = match t.index {
            // Below the group's count, at most 64 (`barrier_target` and
            // `init_barriers` check both).
            Index::Const(i) => match 1u64.checked_shl(i) {
                Some(bit) => Operand::imm(format!("0x{bit:X}")),
                None => return Err(self.invalid(format!("a parity bit for barrier {i}"))),
            },
            Index::Reg(i) => {
                let r = self.reg(if wide { Class::B64 } else { Class::B32 });
                emit!(self, "shl.{} {}, 1, {};", b, r, i);
                Operand::Reg(r)
            }
        };
        let g = guard.map(|p| format!("@{p} ")).unwrap_or_default();
        emit!(self, "{}xor.{} {}, {}, {};", g, b, mask, mask, bit);
        Ok(())
    }

    /// Spins until the phase with parity `par` of the barrier at `addr` has
    /// completed (`try_wait` may suspend; sm_80 has only `test_wait`).
    fn wait_loop(&mut self, addr: &Addr, par: &Operand, cluster_acquire: bool) {
        let (l, p) = (self.label(), self.reg(Class::Pred));
        self.place_label(l);
        if cluster_acquire {
            emit!(
                self,
                "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 {}, {}, {};",
                p,
                addr,
                par
            );
        } else if self.target.has_sm90_features() {
            emit!(
                self,
                "mbarrier.try_wait.parity.shared::cta.b64 {}, {}, {};",
                p,
                addr,
                par
            );
        } else {
            self.need(7, 1);
            emit!(
                self,
                "mbarrier.test_wait.parity.shared.b64 {}, {}, {};",
                p,
                addr,
                par
            );
        }
        emit!(self, "@!{} bra {};", p, l);
    }
}
