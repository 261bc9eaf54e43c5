//! Barrier groups (mbarriers): initialisation at kernel entry and every
//! barrier operation, lowered as the reference table in language.md §7 says.
//!
//! A barrier's address is its group's symbol plus 8 × index. A tracked
//! parity (`wait()`, `test()`, `wait_cluster()`, `test_cluster()`) is one bit
//! per barrier in per-thread mask registers of the group, flipped after each
//! completed wait (and after each successful test), whichever form it was.
//! The masks are 32-bit words, one per 32 barriers: with one 64-bit mask,
//! ptxas 13.5 for sm_80, sm_86 and sm_89 crashes (SIGSEGV) on a kernel that
//! initialises some 48 barriers and tests one by a tracked parity (found by
//! `tests/it/pipeline/generated.rs`; `tests/it/check/limits.rs` keeps the shape).
//! On sm_80–89 only the sm_80 forms are used (`.shared` spelling,
//! `test_wait` spin loops); an sm_90 operation there (which the checker
//! rejects, E0200) is an error.

use super::error::Result;
use super::imm;
use super::writer::{emit, Addr, Class, Operand, Reg, Writer};
use crate::analysis::Usage;
use crate::ir::consteval;
use crate::ir::layout::SharedDecl;
use crate::ir::{
    BarrierGroup, BarrierId, BarrierOp, BarrierOpKind, BarrierRef, Dim, Parity, Scope, Special,
};

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

/// Where a tracked parity bit lives: a constant bit of one word, or a bit
/// chosen at run time (`bit`, 0–31) of the low word or, when `high` is
/// set and its predicate false, of the high word.
#[derive(Clone, Copy)]
enum Tracked {
    Const {
        word: Reg,
        bit: u32,
    },
    Reg {
        low: Reg,
        high: Option<(Reg, Reg)>,
        bit: Reg,
    },
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
    /// A kernel that touches a peer CTA's shared memory synchronises its
    /// cluster at entry in any case, so that no access reaches a CTA that
    /// has not started (and at exit: `Exit::Cluster`).
    pub(super) fn init_barriers(&mut self, usage: &Usage) -> Result<()> {
        let Some(k) = self.kernel else {
            return Ok(());
        };
        for g in &usage.tracked {
            let Some(b) = k.barriers.get(g.index()) else {
                return Err(self.invalid(format!("barrier group {} does not exist", g.0)));
            };
            let words: Vec<Reg> = (0..b.count.div_ceil(32).max(1))
                .map(|_| {
                    let r = self.reg(Class::B32);
                    emit!(self, "mov.b32 {}, 0;", r);
                    r
                })
                .collect();
            if let Some(slot) = self.parity.get_mut(g.index()) {
                *slot = words;
            }
        }
        let sm90 = self.target.has_sm90_features();
        if k.barriers.is_empty() {
            if sm90 && usage.remote {
                self.entry_cluster_sync();
            }
            return Ok(());
        }
        let first = self.first_thread()?;
        let skip = self.label();
        emit!(self, "@!{} bra {};", first, skip);
        let space = if sm90 { "shared::cta" } else { "shared" };
        for (id, g) in k.barriers.iter().enumerate() {
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
            let start = self.shared_start(SharedDecl::Barriers(BarrierId(id as u32)))?;
            for i in 0..g.count {
                let a = Addr {
                    base: start.base.clone(),
                    off: start.off + 8 * i64::from(i),
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
            self.entry_cluster_sync();
        } else {
            emit!(self, "bar.sync 0;");
        }
        Ok(())
    }

    /// Every thread of the cluster, at kernel entry (converged: `.aligned`;
    /// nothing before it to release).
    fn entry_cluster_sync(&mut self) {
        self.need(8, 0);
        emit!(self, "barrier.cluster.arrive.relaxed.aligned;");
        emit!(self, "barrier.cluster.wait.aligned;");
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
        // The group's own symbol, or the dynamic array plus its offset.
        let start = self.shared_start(SharedDecl::Barriers(r.group))?;
        let symbol = start.symbol_text();
        let (addr, index) = match r.index.as_deref() {
            None if g.count == 1 => (start, Index::Const(0)),
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
                            base: start.base,
                            off: start.off + 8 * i64::from(i),
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
                let (par, tracked) = self.parity_operand(&t, parity)?;
                self.wait_loop(&t.addr, &par, false);
                if let Some(tracked) = tracked {
                    self.flip_parity(tracked, None);
                }
            }
            BarrierOpKind::WaitCluster { parity } => {
                let (par, tracked) = self.parity_operand(&t, parity)?;
                self.require_sm90("wait_cluster")?;
                self.need(8, 0);
                self.wait_loop(&t.addr, &par, true);
                if let Some(tracked) = tracked {
                    self.flip_parity(tracked, None);
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
        let (par, tracked) = self.parity_operand(&t, parity)?;
        let p = self.reg(Class::Pred);
        let cluster = acquire == Scope::Cluster;
        if cluster {
            self.require_sm90("test_cluster")?;
            self.need(8, 0);
        }
        self.phase_probe("test_wait", &p, &t.addr, &par, cluster);
        if let Some(tracked) = tracked {
            self.flip_parity(tracked, Some(p));
        }
        Ok(Operand::Reg(p))
    }

    /// The parity to wait for, and where its tracked bit is when it is
    /// tracked.
    fn parity_operand(&mut self, t: &Mbar, parity: &Parity) -> Result<(Operand, Option<Tracked>)> {
        if let Parity::Explicit(e) = parity {
            return Ok((self.expr_u32(e)?, None));
        }
        let words = self.parity.get(t.group).cloned().unwrap_or_default();
        let (Some(&first), second) = (words.first(), words.get(1).copied()) else {
            return Err(self.invalid("a tracked parity without a mask register"));
        };
        if t.count == 1 {
            // The whole word is this barrier's bit.
            let tracked = Tracked::Const {
                word: first,
                bit: 0,
            };
            return Ok((Operand::Reg(first), Some(tracked)));
        }
        let par = self.reg(Class::B32);
        let tracked = match (t.index, second) {
            // Below the group's count, at most 64 (`barrier_target` and
            // `init_barriers` check both).
            (Index::Const(i), _) => {
                let word = match (i / 32, second) {
                    (0, _) => first,
                    (1, Some(high)) => high,
                    _ => return Err(self.invalid(format!("a parity bit for barrier {i}"))),
                };
                let bit = i % 32;
                self.bit_of(par, word, bit);
                Tracked::Const { word, bit }
            }
            (Index::Reg(i), None) => {
                self.bit_of(par, first, i);
                Tracked::Reg {
                    low: first,
                    high: None,
                    bit: i,
                }
            }
            (Index::Reg(i), Some(high)) => {
                // Barriers 0–31 in the first word, 32–63 in the second.
                let (is_low, word, bit) = (
                    self.reg(Class::Pred),
                    self.reg(Class::B32),
                    self.reg(Class::B32),
                );
                emit!(self, "setp.lt.u32 {}, {}, 32;", is_low, i);
                emit!(self, "selp.b32 {}, {}, {}, {};", word, first, high, is_low);
                emit!(self, "and.b32 {}, {}, 31;", bit, i);
                self.bit_of(par, word, bit);
                Tracked::Reg {
                    low: first,
                    high: Some((high, is_low)),
                    bit,
                }
            }
        };
        Ok((Operand::Reg(par), Some(tracked)))
    }

    /// `par = (word >> bit) & 1`: a shift and a mask, two SASS instructions
    /// (`bfe` costs ptxas six or seven).
    fn bit_of(&mut self, par: Reg, word: Reg, bit: impl std::fmt::Display) {
        let shifted = self.reg(Class::B32);
        emit!(self, "shr.u32 {}, {}, {};", shifted, word, bit);
        emit!(self, "and.b32 {}, {}, 1;", par, shifted);
    }

    /// Flips the barrier's tracked bit (under `guard`).
    fn flip_parity(&mut self, tracked: Tracked, guard: Option<Reg>) {
        let g = |p: Option<Reg>| p.map(|p| format!("@{p} ")).unwrap_or_default();
        match tracked {
            Tracked::Const { word, bit } => {
                let mask = Operand::imm(format!("0x{:X}", 1u32 << (bit % 32)));
                emit!(self, "{}xor.b32 {}, {}, {};", g(guard), word, word, mask);
            }
            Tracked::Reg { low, high, bit } => {
                let mask = self.reg(Class::B32);
                emit!(self, "shl.b32 {}, 1, {};", mask, bit);
                let Some((high, is_low)) = high else {
                    emit!(self, "{}xor.b32 {}, {}, {};", g(guard), low, low, mask);
                    return;
                };
                let (in_low, in_high) = match guard {
                    Some(p) => {
                        let (l, h) = (self.reg(Class::Pred), self.reg(Class::Pred));
                        emit!(self, "and.pred {}, {}, {};", l, p, is_low);
                        emit!(self, "and.pred {}, {}, !{};", h, p, is_low);
                        (format!("{l}"), format!("{h}"))
                    }
                    None => (format!("{is_low}"), format!("!{is_low}")),
                };
                emit!(self, "@{} xor.b32 {}, {}, {};", in_low, low, low, mask);
                emit!(self, "@{} xor.b32 {}, {}, {};", in_high, high, high, mask);
            }
        }
    }

    /// Spins until the phase with parity `par` of the barrier at `addr` has
    /// completed (`try_wait` may suspend; sm_80 has only `test_wait`).
    fn wait_loop(&mut self, addr: &Addr, par: &Operand, cluster_acquire: bool) {
        let (l, p) = (self.label(), self.reg(Class::Pred));
        self.place_label(l);
        self.phase_probe("try_wait", &p, addr, par, cluster_acquire);
        emit!(self, "@!{} bra {};", p, l);
    }

    /// Whether the phase with parity `par` of the barrier at `addr` has
    /// completed, into `p`: `op` (`try_wait`, which may suspend, or
    /// `test_wait`) on sm_90, acquiring at cluster scope when
    /// `cluster_acquire`; sm_80 has only `test_wait`, on `.shared`.
    fn phase_probe(
        &mut self,
        op: &str,
        p: &impl std::fmt::Display,
        addr: &impl std::fmt::Display,
        par: &impl std::fmt::Display,
        cluster_acquire: bool,
    ) {
        let form = if cluster_acquire {
            format!("{op}.parity.acquire.cluster.shared::cta")
        } else if self.target.has_sm90_features() {
            format!("{op}.parity.shared::cta")
        } else {
            self.need(7, 1);
            "test_wait.parity.shared".to_string()
        };
        emit!(self, "mbarrier.{}.b64 {}, {}, {};", form, p, addr, par);
    }
}
