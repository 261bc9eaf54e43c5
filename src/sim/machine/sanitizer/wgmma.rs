//! wgmma: an asynchronous agent per warpgroup reads its shared-memory
//! operands through the async proxy; `wgmma.wait_group` orders the reads
//! before the warp's next accesses.

use super::clock::VClock;
use super::finding::{uninit_key, Actor, Finding, Kind, Mem};
use super::shadow::{Acc, View};
use super::{AgentKey, Sanitizer};
use crate::sim::decode::sem::Scope;
use crate::sim::machine::events::Events;

impl Sanitizer {
    /// A wgmma instance of warpgroup `group` of the CTA of `rank`, made by
    /// the warp whose lanes are `lanes` at `pc`, reads the 16-byte chunks
    /// `chunks` of that CTA's shared memory.
    #[allow(clippy::too_many_arguments)]
    pub fn wgmma_read(
        &mut self,
        ev: &mut Events,
        instance: u64,
        lanes: &[u32],
        rank: u32,
        group: u32,
        warps: u32,
        pc: u32,
        chunks: &[u32],
    ) {
        let Some(&t0) = lanes.first() else { return };
        if self.on.uninit {
            let mut bad = None;
            for &ch in chunks {
                let mem = Mem::Shared {
                    rank,
                    offset: u64::from(ch) * 16,
                };
                if !self.initialised(t0, mem, 16) {
                    bad = Some(mem);
                    break;
                }
            }
            if let Some(mem) = bad {
                let who = self.tref(t0);
                ev.record_check(pc, who, uninit_key(mem, Kind::WgmmaRead), || {
                    Finding::Uninit {
                        mem,
                        size: 16,
                        kind: Kind::WgmmaRead,
                    }
                });
            }
        }
        if !self.on.races {
            return;
        }
        let agent = self.agent(AgentKey::Wgmma { rank, group });
        let epoch = self.tick(agent);
        self.wg_instances.insert(instance, (agent, epoch));
        self.wg_pending.insert((agent, epoch), warps);
        let Some(th) = self.threads.get(t0 as usize) else {
            return;
        };
        let snap = th.snap(t0);
        let ctx = self.ctx();
        let acc = Acc {
            agent,
            clock: epoch,
            pc,
            write: false,
            atomic: false,
            scope: Scope::Gpu,
            async_proxy: true,
            thread: false,
            rank,
            same_store: false,
            view: View::Snapshot(&snap),
        };
        let mut conflict = None;
        if let Some(Some(sh)) = self.shared.get_mut(rank as usize) {
            for &ch in chunks {
                let c = sh.access(u64::from(ch) * 16, 16, &acc, ctx);
                if conflict.is_none() {
                    conflict = c;
                }
            }
        }
        if let Some(cf) = conflict {
            let ctaid = self.ctaids.get(rank as usize).copied().unwrap_or([0; 3]);
            let mem = Mem::Shared {
                rank,
                offset: cf.granule,
            };
            let actor = || Actor::Wgmma {
                ctaid,
                warpgroup: group,
            };
            self.report_race(ev, t0, pc, mem, Kind::WgmmaRead, 16, false, actor, cf);
        }
    }

    /// `wgmma.wait_group` completed wgmma `instance` for the warp whose
    /// lanes are `lanes`: they acquire its reads.
    pub fn wgmma_done(&mut self, lanes: &[u32], instance: u64) {
        if !self.on.races {
            return;
        }
        let Some(&(agent, epoch)) = self.wg_instances.get(&instance) else {
            return;
        };
        if let Some(left) = self.wg_pending.get_mut(&(agent, epoch)) {
            *left = left.saturating_sub(1);
            if *left == 0 {
                self.wg_pending.remove(&(agent, epoch));
                self.wg_instances.remove(&instance);
            }
        }
        let mut shared: Option<(VClock, VClock)> = None;
        for &l in lanes {
            let Some(th) = self.threads.get_mut(l as usize) else {
                continue;
            };
            match &shared {
                Some((from, to)) if th.base.same(from) => th.base = to.clone(),
                _ => {
                    let from = th.base.clone();
                    th.base.raise(agent, epoch);
                    shared = Some((from, th.base.clone()));
                }
            }
        }
    }
}
