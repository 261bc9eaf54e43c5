//! Bulk, tensor and `cp.async` copies: each an asynchronous agent whose
//! accesses land after its issue and are ordered by its mbarrier,
//! `cp.async.bulk.wait_group`, `cp.async.wait_group` or
//! `cp.async.mbarrier.arrive`; a copy landing in a later phase than the
//! one it was sent for is S0033.

use super::clock::Snap;
use super::finding::{tx_key, uninit_key, Finding, Kind, Mem};
use super::shadow::{Acc, View};
use super::{AgentKey, CopyCtx, Sanitizer};
use crate::sim::decode::sem::Scope;
use crate::sim::machine::events::{BarrierRef, Events};

impl Sanitizer {
    /// Thread `t` issues a copy at `pc`: into shared memory (completing on
    /// the mbarriers `phases`: (rank, offset, phase now)), or, with
    /// `group`, in its bulk group. Returns the copy's number.
    pub fn copy_issue(
        &mut self,
        t: u32,
        pc: u32,
        group: Option<u64>,
        dests: &[(u32, u32)],
        mbar_off: u32,
        phases: Vec<(u32, u32, u64)>,
    ) -> u32 {
        self.new_copy(t, pc, group, false, dests, mbar_off, phases)
    }

    /// Thread `t` issues an Ampere `cp.async` at `pc` in its (not yet
    /// committed) `cp.async` group `group`: an asynchronous agent of the
    /// thread (one per thread, its copies landing in issue order) reads
    /// the global source and writes the shared destination, ordered after
    /// the issue and before the thread's `cp.async.wait_group` or
    /// `wait_all` that covers the group (`cp_wait`), or the phase of a
    /// `cp.async.mbarrier.arrive` after it (`cp_arrive`). Returns the
    /// copy's number, for `copy_begin`/`copy_end` at its landing.
    pub fn cp_issue(&mut self, t: u32, pc: u32, group: u64) -> u32 {
        self.new_copy(t, pc, Some(group), true, &[], 0, Vec::new())
    }

    #[allow(clippy::too_many_arguments)]
    fn new_copy(
        &mut self,
        t: u32,
        pc: u32,
        group: Option<u64>,
        cp: bool,
        dests: &[(u32, u32)],
        mbar_off: u32,
        phases: Vec<(u32, u32, u64)>,
    ) -> u32 {
        if !self.on.races && !self.on.tx && !self.on.uninit {
            return u32::MAX;
        }
        let snap = match self.threads.get_mut(t as usize) {
            Some(th) if self.on.races => {
                let s = th.snap(t);
                th.own += 1;
                s
            }
            _ => Snap::default(),
        };
        let agent = match group {
            Some(_) if cp => self.agent(AgentKey::CpAsync { thread: t }),
            Some(_) => self.agent(AgentKey::Bulk { thread: t }),
            None => {
                let mr = dests.first().map_or(0, |d| d.1);
                self.agent(AgentKey::Mbar {
                    rank: mr,
                    off: mbar_off,
                })
            }
        };
        let dests = dests
            .iter()
            .map(|&(r, mr)| {
                let a = self.agent(AgentKey::Mbar {
                    rank: mr,
                    off: mbar_off,
                });
                (r, mr, a, 0)
            })
            .collect();
        let ctx = CopyCtx {
            snap,
            issuer: t,
            pc,
            agent,
            dests,
            phases,
            group,
            cp,
            epoch: 0,
        };
        match self.free_copies.pop() {
            Some(i) => {
                if let Some(s) = self.copies.get_mut(i as usize) {
                    *s = Some(ctx);
                }
                i
            }
            None => {
                self.copies.push(Some(ctx));
                self.copies.len() as u32 - 1
            }
        }
    }

    /// Copy `id` lands now: its accesses follow (`copy_access`), until
    /// `copy_end` (or `copy_finished`). Only then are accesses a copy's:
    /// the copy landing is always the one named here, never an earlier
    /// one's leftover.
    pub fn copy_begin(&mut self, id: u32) {
        self.landing = true;
        self.current_copy = None;
        let Some(Some(c)) = self.copies.get(id as usize) else {
            return;
        };
        let agent = c.agent;
        let dests: Vec<u32> = c.dests.iter().map(|d| d.2).collect();
        let epoch = self.tick(agent);
        let mut epochs = Vec::new();
        for a in dests {
            epochs.push(if a == agent { epoch } else { self.tick(a) });
        }
        if let Some(Some(c)) = self.copies.get_mut(id as usize) {
            c.epoch = epoch;
            for (d, e) in c.dests.iter_mut().zip(epochs) {
                d.3 = e;
            }
        }
        self.current_copy = Some(id);
        self.landing = true;
    }

    /// The landed copy's transaction bytes have been counted.
    pub fn copy_finished(&mut self) {
        self.landing = false;
        self.current_copy = None;
    }

    /// The landing copy reads (or writes) `size` bytes of `mem`.
    pub fn copy_access(&mut self, ev: &mut Events, mem: Mem, size: u64, write: bool, atomic: bool) {
        let Some(id) = self.current_copy else {
            return;
        };
        let Some(Some(c)) = self.copies.get(id as usize) else {
            return;
        };
        let (issuer, pc) = (c.issuer, c.pc);
        let kind = if write {
            Kind::CopyWrite
        } else {
            Kind::CopyRead
        };
        if self.on.uninit {
            if !write && !self.initialised(issuer, mem, size) {
                let who = self.tref(issuer);
                ev.record_check(pc, who, uninit_key(mem, kind), || Finding::Uninit {
                    mem,
                    size,
                    kind,
                });
            }
            if write {
                self.initialise(issuer, mem, size);
            }
        }
        if !self.on.races {
            return;
        }
        let ctx = self.ctx();
        let Some(Some(c)) = self.copies.get(id as usize) else {
            return;
        };
        let (agent, epoch) = match mem {
            Mem::Shared { rank, .. } if write => c
                .dests
                .iter()
                .find(|d| d.0 == rank)
                .map_or((c.agent, c.epoch), |d| (d.2, d.3)),
            _ => (c.agent, c.epoch),
        };
        let shared = matches!(mem, Mem::Shared { .. });
        let acc = Acc {
            agent,
            clock: epoch,
            pc,
            write,
            atomic,
            scope: Scope::Gpu,
            async_proxy: shared,
            thread: false,
            rank: issuer / self.nthreads,
            same_store: false,
            view: View::Snapshot(&c.snap),
        };
        let conflict = match mem {
            Mem::Shared { rank, offset } => self
                .shared
                .get_mut(rank as usize)
                .and_then(Option::as_mut)
                .and_then(|s| s.access(offset, size, &acc, ctx)),
            Mem::Global { alloc, offset } => {
                let sh = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc);
                if let (Some(log), Some(sh)) = (self.log.as_deref_mut(), sh.as_deref()) {
                    if write {
                        log.write(alloc, offset, size);
                    } else {
                        log.read(alloc, offset, size, &acc, sh.tick());
                    }
                }
                sh.and_then(|s| s.access(offset, size, &acc, ctx))
            }
            Mem::Local { .. } => None,
        };
        if let Some(cf) = conflict {
            let actor = self.actor_of(&[self.seq, epoch, pc, agent << 16]);
            self.report_race(ev, issuer, pc, mem, kind, size, false, || actor, cf);
        }
    }

    /// The landing copy's accesses are done: a copy into shared memory
    /// releases into its mbarriers (before they count its bytes), a
    /// bulk-group copy is remembered for its issuer's `wait_group`. A copy
    /// whose barrier completed a phase since its issue (`phase_now`) is
    /// S0033: that phase received fewer bytes than were sent for it.
    pub fn copy_end(
        &mut self,
        ev: &mut Events,
        id: u32,
        size: u32,
        phase_now: impl Fn(u32, u32) -> Option<u64>,
        name: impl Fn(u32, u32) -> BarrierRef,
    ) {
        self.current_copy = None;
        let Some(c) = self.copies.get_mut(id as usize).and_then(Option::take) else {
            return;
        };
        self.free_copies.push(id);
        if self.on.tx {
            for &(rank, off, p) in &c.phases {
                if let Some(now) = phase_now(rank, off) {
                    if now > p {
                        let who = self.tref(c.issuer);
                        ev.record_check(c.pc, who, tx_key(true), || Finding::TxOverflow {
                            barrier: name(rank, off),
                            phase: p,
                            expected: 0,
                            completed: 0,
                            bytes: u64::from(size),
                            late: true,
                            copy: true,
                        });
                    }
                }
            }
        }
        if !self.on.races {
            return;
        }
        if let Some(g) = c.group {
            let landed = if c.cp {
                &mut self.cp_landed
            } else {
                &mut self.bulk_landed
            };
            let list = landed.entry(c.issuer).or_default();
            match list.last_mut() {
                Some(last) if last.0 == g => last.1 = last.1.max(c.epoch),
                _ => list.push((g, c.epoch)),
            }
            // Bounded: past 64 groups not waited for, the oldest two
            // merge (a wait for the older then also acquires the newer,
            // which can only hide a race).
            if list.len() > 64 {
                let (g1, e1) = list.remove(0);
                if let Some(next) = list.first_mut() {
                    *next = (g1, next.1.max(e1));
                }
            }
            return;
        }
        for &(rank, off, _) in &c.phases {
            let (agent, epoch) = c
                .dests
                .iter()
                .find(|d| d.1 == rank)
                .map_or((c.agent, c.epoch), |d| (d.2, d.3));
            let st = self.mbars.entry((rank, off)).or_default();
            c.snap.release_into(&mut st.cur, agent, epoch);
        }
    }

    /// `cp.async.bulk.wait_group` of thread `t`: the copies of its groups
    /// before `before` have landed; it acquires them.
    pub fn bulk_wait(&mut self, t: u32, before: u64) {
        self.wait_landed(t, before, AgentKey::Bulk { thread: t });
    }

    /// `cp.async.wait_group`/`wait_all` of thread `t`: its `cp.async`
    /// copies of the groups before `before` have landed; it acquires them
    /// (their reads and writes happen before what the thread does next,
    /// and, through a barrier after the wait, before the other threads').
    pub fn cp_wait(&mut self, t: u32, before: u64) {
        self.wait_landed(t, before, AgentKey::CpAsync { thread: t });
    }

    /// Thread `t` acquires its copies of `agent` (bulk or `cp.async`) in
    /// the groups before `before`, which have landed: the latest of their
    /// completion epochs joins its clock.
    fn wait_landed(&mut self, t: u32, before: u64, agent: AgentKey) {
        if !self.on.races {
            return;
        }
        let landed = match agent {
            AgentKey::CpAsync { .. } => &mut self.cp_landed,
            _ => &mut self.bulk_landed,
        };
        let Some(list) = landed.get_mut(&t) else {
            return;
        };
        let mut max = 0;
        list.retain(|&(g, e)| {
            if g < before {
                max = max.max(e);
                false
            } else {
                true
            }
        });
        if max == 0 {
            return;
        }
        let agent = self.agent(agent);
        if let Some(th) = self.threads.get_mut(t as usize) {
            th.base.raise(agent, max);
        }
    }

    /// `cp.async.mbarrier.arrive` of thread `t` on the mbarrier at `off`
    /// of the CTA of `rank`, after all its `cp.async` copies landed: the
    /// arrival-on is triggered by their completion, so the phase it
    /// counts in releases their accesses to the waits that observe it.
    /// The thread itself is not ordered after them (it did not wait).
    pub fn cp_arrive(&mut self, t: u32, rank: u32, off: u32) {
        if !self.on.races {
            return;
        }
        // Every copy of the thread has landed: the agent's clock now is
        // the latest landing's epoch.
        let Some(&agent) = self.agent_index.get(&AgentKey::CpAsync { thread: t }) else {
            return;
        };
        let base = self.nthreads_cluster();
        let Some(&(_, epoch)) = self.agents.get(agent.saturating_sub(base) as usize) else {
            return;
        };
        if epoch == 0 {
            return;
        }
        let st = self.mbars.entry((rank, off)).or_default();
        st.cur.raise(agent, epoch);
    }
}
