//! mbarriers: an arrival releases into the current phase, a wait that
//! observes a completed phase acquires every release before it, and the
//! transaction bytes of a phase are counted (S0033).

use super::finding::{tx_key, Finding};
use super::Sanitizer;
use crate::sim::decode::sem::Sem;
use crate::sim::machine::events::{BarrierRef, Events};

impl Sanitizer {
    pub fn mbar_init(&mut self, rank: u32, off: u32) {
        self.mbars.remove(&(rank, off));
    }

    /// An arrival (or `complete_tx`) by thread `t`: a release unless
    /// `.relaxed`.
    pub fn mbar_release(&mut self, t: u32, rank: u32, off: u32, sem: Sem) {
        if !self.on.races || !sem.order.releases() {
            return;
        }
        let st = self.mbars.entry((rank, off)).or_default();
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.release_into(t, &mut st.cur);
        }
    }

    /// The current phase completes.
    pub fn mbar_phase_done(&mut self, rank: u32, off: u32) {
        let st = self.mbars.entry((rank, off)).or_default();
        let cur = std::mem::take(&mut st.cur);
        if !cur.is_empty() {
            st.done.absorb(&cur);
        }
        st.expected = 0;
        st.completed = 0;
    }

    /// A wait of thread `t` observed a completed phase: it acquires every
    /// release of the phases completed so far (unless `.relaxed`).
    pub fn mbar_acquire(&mut self, t: u32, rank: u32, off: u32, sem: Sem) {
        if !self.on.races || !sem.order.acquires() {
            return;
        }
        let Some(st) = self.mbars.get_mut(&(rank, off)) else {
            return;
        };
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.acquire(&mut st.done);
        }
    }

    /// `tx` transaction bytes were added (expected) or, negative,
    /// completed on the mbarrier at `off` of the CTA of `rank`, by thread
    /// `t` at `pc`, leaving `pending` arrivals and `left` bytes in phase
    /// `phase`: S0033 when the phase's arrivals are all in and it has
    /// received more bytes than it expects.
    #[allow(clippy::too_many_arguments)]
    pub fn mbar_tx(
        &mut self,
        ev: &mut Events,
        t: u32,
        pc: u32,
        barrier: BarrierRef,
        rank: u32,
        tx: i64,
        pending: i64,
        left: i64,
        phase: u64,
    ) {
        if !self.on.tx {
            return;
        }
        let copy = self.landing;
        let st = self.mbars.entry((rank, barrier.offset)).or_default();
        if tx > 0 {
            st.expected += tx;
            return;
        }
        st.completed -= tx;
        if pending == 0 && left < 0 {
            let (expected, completed) = (st.expected, st.completed);
            let who = self.tref(t);
            ev.record_check(pc, who, tx_key(false), || Finding::TxOverflow {
                barrier,
                phase,
                expected,
                completed,
                bytes: (-tx) as u64,
                late: false,
                copy,
            });
        }
    }
}
