//! A race found by the shadow, as a finding: both sides named (the thread
//! or agent now, the slot's actor before), how they relate, and the key
//! that reports one race per site.

use super::finding::{race_key, Actor, Finding, Kind, Mem, Race, Relation, Side};
use super::shadow::{self, Slot};
use super::Sanitizer;
use crate::sim::machine::events::Events;

impl Sanitizer {
    /// How the access of thread `t` (`thread`: by the thread itself, not
    /// an agent it issued) relates to the one in slot `s`.
    fn relation_of(&self, t: u32, thread: bool, s: &Slot) -> Relation {
        let a = shadow::slot_agent(s);
        if !thread || (s[0] == self.seq && a >= self.nthreads_cluster()) {
            return Relation::Async;
        }
        if s[0] != self.seq {
            return Relation::OtherCluster;
        }
        let n = self.nthreads;
        if a / n != t / n {
            Relation::SameCluster
        } else if (a % n) / 32 == (t % n) / 32 {
            Relation::SameWarp
        } else {
            Relation::SameCta
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn report_race(
        &self,
        ev: &mut Events,
        t: u32,
        pc: u32,
        mem: Mem,
        kind: Kind,
        size: u64,
        thread_now: bool,
        actor: impl FnOnce() -> Actor,
        c: shadow::Conflict,
    ) {
        let agent = shadow::slot_agent(&c.slot);
        if c.slot[0] == self.seq && self.wg_pending.contains_key(&(agent, c.slot[1])) {
            // A write into the operands of a wgmma still pending: S0024.
            return;
        }
        let who = self.tref(t);
        let relation = self.relation_of(t, thread_now, &c.slot);
        let key = race_key(c.proxy, relation, kind);
        ev.record_check(pc, who, key, || {
            let now = Side {
                kind,
                actor: actor(),
                pc,
                size,
            };
            let prior_actor = self.actor_of(&c.slot);
            let offset = c.granule.max(mem_offset(mem));
            let mem = match mem {
                Mem::Shared { rank, .. } => Mem::Shared { rank, offset },
                Mem::Global { alloc, .. } => Mem::Global { alloc, offset },
                m => m,
            };
            Finding::Race(Box::new(Race {
                mem,
                now,
                prior: Side {
                    kind: kind_of_slot(&c.slot),
                    actor: prior_actor,
                    pc: c.slot[2],
                    size: 0,
                },
                proxy: c.proxy,
                relation,
            }))
        });
    }
}

fn kind_of_slot(s: &Slot) -> Kind {
    let m = shadow::slot_meta(s);
    let (w, a, y) = (
        m & shadow::WRITE != 0,
        m & shadow::ATOMIC != 0,
        m & shadow::ASYNC != 0,
    );
    match (w, a, y) {
        (true, true, _) => Kind::Atomic,
        (false, true, _) => Kind::AtomicRead,
        (true, false, true) => Kind::CopyWrite,
        (false, false, true) => Kind::CopyRead,
        (true, false, false) => Kind::Write,
        (false, false, false) => Kind::Read,
    }
}

fn mem_offset(m: Mem) -> u64 {
    match m {
        Mem::Shared { offset, .. } | Mem::Global { offset, .. } | Mem::Local { offset } => offset,
    }
}
