//! CTA barriers (with S0034, barrier divergence), the cluster barrier and
//! warp-synchronous instructions: releases at the arrival, acquires at
//! the phase's completion.

use super::clock::SyncClock;
use super::finding::{divergence_key, Divergence, Finding};
use super::{BarState, Sanitizer};
use crate::sim::decode::sem::{Order, Sem};
use crate::sim::machine::events::Events;

impl Sanitizer {
    /// Thread `t` arrives at barrier `id` of its CTA (`counted`: with a
    /// thread count; `aligned`: `bar.sync`/`.aligned`).
    pub fn bar_arrive(
        &mut self,
        t: u32,
        rank: u32,
        id: u32,
        pc: u32,
        counted: bool,
        aligned: bool,
    ) {
        let Some(st) = self.bars.get_mut((rank * 16 + id % 16) as usize) else {
            return;
        };
        if self.on.races {
            if let Some(th) = self.threads.get_mut(t as usize) {
                th.release_into(t, &mut st.clock);
            }
        }
        if self.on.barriers {
            st.arrivals.push((pc, t, aligned));
            st.counted |= counted;
        }
    }

    /// Barrier `id` of the CTA of `rank` completes a phase; `waiters` go on.
    pub fn bar_complete(&mut self, ev: &mut Events, rank: u32, id: u32, waiters: &[u32]) {
        let Some(st) = self.bars.get_mut((rank * 16 + id % 16) as usize) else {
            return;
        };
        let mut st = std::mem::take(st);
        if self.on.barriers && !st.counted {
            self.divergence(ev, rank, id, &st);
        }
        if self.on.races {
            for &w in waiters {
                if let Some(th) = self.threads.get_mut(w as usize) {
                    th.acquire_superset(&mut st.clock);
                }
            }
        }
        if let Some(s) = self.bars.get_mut((rank * 16 + id % 16) as usize) {
            s.gen = st.gen + 1;
        }
    }

    /// S0034: an all-thread barrier phase whose threads arrived at
    /// different `.aligned` instructions, or that threads skipped by
    /// exiting.
    fn divergence(&mut self, ev: &mut Events, rank: u32, id: u32, st: &BarState) {
        let Some(&(pc0, t0, _)) = st.arrivals.first() else {
            return;
        };
        let mut sites: Vec<(u32, Vec<u32>)> = Vec::new();
        for &(pc, t, _) in &st.arrivals {
            let tid = t % self.nthreads;
            match sites.iter_mut().find(|(p, _)| *p == pc) {
                Some((_, v)) => v.push(tid),
                None => sites.push((pc, vec![tid])),
            }
        }
        let aligned = st.arrivals.iter().all(|a| a.2);
        let split = aligned && sites.len() > 1;
        let first = rank * self.nthreads;
        let mut arrived = vec![false; self.nthreads as usize];
        for &(_, t, _) in &st.arrivals {
            if let Some(a) = arrived.get_mut((t - first.min(t)) as usize) {
                *a = true;
            }
        }
        let mut exited: Vec<(u32, Vec<u32>)> = Vec::new();
        for tid in 0..self.nthreads {
            let t = first + tid;
            if arrived.get(tid as usize).copied().unwrap_or(true) {
                continue;
            }
            let Some(Some((gens, pc))) = self.exits.get(t as usize) else {
                continue;
            };
            if gens.get((id % 16) as usize) != Some(&st.gen) {
                continue;
            }
            match exited.iter_mut().find(|(p, _)| p == pc) {
                Some((_, v)) => v.push(tid),
                None => exited.push((*pc, vec![tid])),
            }
        }
        if !split && exited.is_empty() {
            return;
        }
        let d = Divergence {
            ctaid: self.ctaids.get(rank as usize).copied().unwrap_or([0; 3]),
            id,
            sites,
            exited,
            threads: self.nthreads,
        };
        let who = self.tref(t0);
        ev.record_check(pc0, who, divergence_key(id), || {
            Finding::Divergence(Box::new(d))
        });
    }

    /// Thread `t` exits at `pc`.
    pub fn thread_exit(&mut self, t: u32, pc: u32) {
        let rank = t / self.nthreads;
        let mut gens = [0u32; 16];
        for (id, g) in gens.iter_mut().enumerate() {
            *g = self.bars.get(rank as usize * 16 + id).map_or(0, |b| b.gen);
        }
        if let Some(e) = self.exits.get_mut(t as usize) {
            *e = Some((gens, pc));
        }
    }

    /// `barrier.cluster.arrive` (a release unless `.relaxed`).
    pub fn cluster_arrive(&mut self, t: u32, sem: Sem) {
        if !self.on.races || sem.order == Order::Relaxed {
            return;
        }
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.release_into(t, &mut self.cbar);
        }
    }

    /// The cluster barrier completes a phase.
    pub fn cluster_complete(&mut self) {
        if !self.on.races {
            return;
        }
        let cur = std::mem::take(&mut self.cbar);
        self.cbar_done.absorb(&cur);
    }

    /// `barrier.cluster.wait` of thread `t` returns.
    pub fn cluster_acquire(&mut self, t: u32) {
        if !self.on.races {
            return;
        }
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.acquire(&mut self.cbar_done);
        }
    }

    /// The lanes `members` meet at a warp-synchronous instruction.
    pub fn warp_sync(&mut self, members: &[u32]) {
        if !self.on.races || members.len() < 2 {
            return;
        }
        let mut s = SyncClock::default();
        for &m in members {
            if let Some(th) = self.threads.get_mut(m as usize) {
                th.release_into(m, &mut s);
            }
        }
        for &m in members {
            if let Some(th) = self.threads.get_mut(m as usize) {
                th.acquire_superset(&mut s);
            }
        }
    }
}
