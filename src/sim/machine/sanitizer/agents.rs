//! Who an access is: threads by their number in the cluster, asynchronous
//! agents (copies, bulk groups, `cp.async`, wgmma) numbered after them
//! with a clock each, and the names a finding gives them (threads of
//! earlier clusters included).

use super::finding::Actor;
use super::shadow::{self, Ctx, Slot};
use super::{AgentKey, Sanitizer, MAX_AGENTS};
use crate::sim::machine::events::{BarrierRef, ThreadRef};

impl Sanitizer {
    pub(super) fn ctx(&self) -> Ctx {
        Ctx {
            seq: self.seq,
            nthreads: self.nthreads,
        }
    }

    pub(super) fn tref(&self, t: u32) -> ThreadRef {
        ThreadRef {
            ctaid: self
                .ctaids
                .get((t / self.nthreads) as usize)
                .copied()
                .unwrap_or([0; 3]),
            tid: t % self.nthreads,
        }
    }

    /// The thread of agent `a` of cluster `seq` (an earlier one when it
    /// is not the current).
    fn old_tref(&self, seq: u32, a: u32) -> ThreadRef {
        let s = self.shape;
        let n = [
            (s.grid[0] / s.cluster[0].max(1)).max(1),
            (s.grid[1] / s.cluster[1].max(1)).max(1),
            (s.grid[2] / s.cluster[2].max(1)).max(1),
        ];
        let cl = [seq % n[0], (seq / n[0]) % n[1], seq / (n[0] * n[1])];
        let rank = a / self.nthreads;
        let cc = [
            rank % s.cluster[0].max(1),
            (rank / s.cluster[0].max(1)) % s.cluster[1].max(1),
            rank / (s.cluster[0] * s.cluster[1]).max(1),
        ];
        ThreadRef {
            ctaid: [
                cl[0] * s.cluster[0] + cc[0],
                cl[1] * s.cluster[1] + cc[1],
                cl[2] * s.cluster[2] + cc[2],
            ],
            tid: a % self.nthreads,
        }
    }

    pub(super) fn nthreads_cluster(&self) -> u32 {
        self.threads.len() as u32
    }

    /// The agent number of an asynchronous agent (made on first use).
    pub(super) fn agent(&mut self, key: AgentKey) -> u32 {
        if let Some(&a) = self.agent_index.get(&key) {
            return a;
        }
        let base = self.nthreads_cluster();
        let a = base + self.agents.len() as u32;
        if a >= MAX_AGENTS {
            // Past 2^16 agents they share the last number (which can only
            // hide races, never invent one: a shared number orders more).
            return MAX_AGENTS - 1;
        }
        self.agents.push((key, 0));
        self.agent_index.insert(key, a);
        a
    }

    /// Advances an asynchronous agent's clock: the epoch of its next access.
    pub(super) fn tick(&mut self, agent: u32) -> u32 {
        let base = self.nthreads_cluster();
        match self.agents.get_mut(agent.saturating_sub(base) as usize) {
            Some((_, c)) => {
                *c += 1;
                *c
            }
            None => 1,
        }
    }

    pub(super) fn actor_of(&self, s: &Slot) -> Actor {
        let a = shadow::slot_agent(s);
        if s[0] != self.seq {
            return Actor::Thread {
                who: self.old_tref(s[0], a),
                old: true,
            };
        }
        if a < self.nthreads_cluster() {
            return Actor::Thread {
                who: self.tref(a),
                old: false,
            };
        }
        match self
            .agents
            .get((a - self.nthreads_cluster()) as usize)
            .map(|x| x.0)
        {
            Some(AgentKey::Mbar { rank, off }) => Actor::Copy {
                barrier: BarrierRef {
                    ctaid: self.ctaids.get(rank as usize).copied().unwrap_or([0; 3]),
                    offset: off,
                },
            },
            Some(AgentKey::Bulk { thread }) => Actor::BulkGroup {
                issuer: self.tref(thread),
            },
            Some(AgentKey::CpAsync { thread }) => Actor::CpAsync {
                issuer: self.tref(thread),
            },
            Some(AgentKey::Wgmma { rank, group }) => Actor::Wgmma {
                ctaid: self.ctaids.get(rank as usize).copied().unwrap_or([0; 3]),
                warpgroup: group,
            },
            None => Actor::Thread {
                who: self.tref(0),
                old: false,
            },
        }
    }
}
