//! The threads' own memory accesses: loads, stores and atomics against the
//! shadow (races) and the initialised bits (uninitialised reads), the
//! release and acquire sides of atomics at their scopes, and fences.

use super::clock::SyncClock;
use super::finding::{uninit_key, Actor, Finding, Kind, Mem};
use super::shadow::{Acc, Shadow, View};
use super::{LocSync, Sanitizer, GLOBAL_SLOTS};
use crate::sim::decode::sem::{Fence, Scope, Sem};
use crate::sim::machine::events::{AccessKind, Events};
use crate::sim::machine::memory::{Place, Target};

/// The kind of a finding's access, from the machine's.
fn kind_of(kind: AccessKind, sem: Sem) -> Kind {
    let atomic = sem.order.atomic();
    match kind {
        AccessKind::Load if atomic => Kind::AtomicRead,
        AccessKind::Load => Kind::Read,
        AccessKind::Store if atomic => Kind::AtomicWrite,
        AccessKind::Store => Kind::Write,
        AccessKind::Atomic => Kind::Atomic,
        AccessKind::CopyRead => Kind::CopyRead,
        AccessKind::CopyWrite => Kind::CopyWrite,
        AccessKind::Barrier => Kind::Read,
    }
}

impl Sanitizer {
    /// A plain or atomic store of `size` bytes by thread `t` at `pc`;
    /// `unchanged`: the bytes already hold the value it writes (for
    /// `shadow::warp_wide_store`).
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        ev: &mut Events,
        t: u32,
        pc: u32,
        place: Place,
        size: u64,
        sem: Sem,
        unchanged: bool,
    ) {
        self.same_store = unchanged;
        self.access(ev, t, pc, place, size, AccessKind::Store, sem);
    }

    /// A load, store or atomic of `size` bytes by thread `t` at `pc`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn access(
        &mut self,
        ev: &mut Events,
        t: u32,
        pc: u32,
        place: Place,
        size: u64,
        kind: AccessKind,
        sem: Sem,
    ) {
        let same_store = std::mem::take(&mut self.same_store);
        let mem = match place.target {
            Target::Shared(rank) => Mem::Shared {
                rank,
                offset: place.offset,
            },
            Target::Global(alloc) => Mem::Global {
                alloc,
                offset: place.offset,
            },
            Target::Local => Mem::Local {
                offset: place.offset,
            },
            Target::Param | Target::FuncParam => return,
        };
        let reads = kind != AccessKind::Store;
        let writes = kind != AccessKind::Load;
        if self.on.uninit {
            if reads && !self.initialised(t, mem, size) {
                let who = self.tref(t);
                let kind = kind_of(kind, sem);
                ev.record_check(pc, who, uninit_key(mem, kind), || Finding::Uninit {
                    mem,
                    size,
                    kind,
                });
            }
            if writes {
                self.initialise(t, mem, size);
            }
        }
        if !self.on.races || matches!(mem, Mem::Local { .. }) {
            return;
        }
        let atomic = kind == AccessKind::Atomic || sem.order.atomic();
        let rank = t / self.nthreads;
        let ctx = self.ctx();
        let conflict = {
            let Some(th) = self.threads.get(t as usize) else {
                return;
            };
            let acc = Acc {
                agent: t,
                clock: th.own,
                pc,
                write: writes,
                atomic,
                scope: sem.scope,
                async_proxy: false,
                thread: true,
                rank,
                same_store: same_store && kind == AccessKind::Store,
                view: View::Thread(th, t),
            };
            match mem {
                Mem::Shared { rank, offset } => self
                    .shared
                    .get_mut(rank as usize)
                    .and_then(Option::as_mut)
                    .and_then(|s| s.access(offset, size, &acc, ctx)),
                Mem::Global { alloc, offset } => {
                    let sh = Sanitizer::global_shadow(&mut self.global, &self.global_len, alloc);
                    if let (Some(log), Some(sh)) = (self.log.as_deref_mut(), sh.as_deref()) {
                        if writes {
                            log.write(alloc, offset, size);
                        } else {
                            log.read(alloc, offset, size, &acc, sh.tick());
                        }
                    }
                    sh.and_then(|s| s.access(offset, size, &acc, ctx))
                }
                Mem::Local { .. } => None,
            }
        };
        if let Some(c) = conflict {
            let who = self.tref(t);
            self.report_race(
                ev,
                t,
                pc,
                mem,
                kind_of(kind, sem),
                size,
                true,
                || Actor::Thread { who, old: false },
                c,
            );
        }
        if atomic {
            self.atomic_sync(t, mem, reads, writes, sem);
        }
    }

    pub(super) fn global_shadow<'a>(
        global: &'a mut [Option<Shadow<GLOBAL_SLOTS>>],
        lens: &[u64],
        alloc: usize,
    ) -> Option<&'a mut Shadow<GLOBAL_SLOTS>> {
        let slot = global.get_mut(alloc)?;
        if slot.is_none() {
            // An array whose shadow cannot be allocated goes unchecked
            // (an empty shadow, so that the allocation is not retried at
            // every access): the checks never abort a run.
            *slot = Shadow::new(lens.get(alloc).copied().unwrap_or(0)).or_else(|| Shadow::new(0));
        }
        slot.as_mut()
    }

    fn init_bits(&mut self, t: u32, mem: Mem) -> Option<(&mut Vec<u64>, u64)> {
        match mem {
            Mem::Shared { rank, offset } => {
                self.shared_init.get_mut(rank as usize).map(|b| (b, offset))
            }
            Mem::Local { offset } => self.local_init.get_mut(t as usize).map(|b| (b, offset)),
            Mem::Global { .. } => None,
        }
    }

    pub(super) fn initialised(&mut self, t: u32, mem: Mem, size: u64) -> bool {
        let Some((bits, off)) = self.init_bits(t, mem) else {
            return true;
        };
        if bits.is_empty() {
            return true;
        }
        (off..off + size).all(|b| {
            bits.get((b / 64) as usize)
                .is_some_and(|w| w >> (b % 64) & 1 == 1)
        })
    }

    pub(super) fn initialise(&mut self, t: u32, mem: Mem, size: u64) {
        let Some((bits, off)) = self.init_bits(t, mem) else {
            return;
        };
        for b in off..off + size {
            if let Some(w) = bits.get_mut((b / 64) as usize) {
                *w |= 1 << (b % 64);
            }
        }
    }

    /// The release and acquire sides of an atomic access.
    fn atomic_sync(&mut self, t: u32, mem: Mem, reads: bool, writes: bool, sem: Sem) {
        let rank = t / self.nthreads;
        let Some(loc) = (match mem {
            Mem::Shared { rank, offset } => {
                Some(self.shared_locs.entry((rank, offset)).or_default())
            }
            Mem::Global { alloc, offset } => {
                Some(self.global_locs.entry((alloc, offset)).or_default())
            }
            Mem::Local { .. } => None,
        }) else {
            return;
        };
        let Some(th) = self.threads.get_mut(t as usize) else {
            return;
        };
        if reads {
            let mut vis = visible(loc, rank, sem.scope);
            if sem.order.acquires() {
                th.acquire(&mut vis);
            } else if !vis.is_empty() {
                th.fence_acq.absorb(&vis);
            }
        }
        if writes {
            if sem.order.releases() {
                if let Some(e) = entry(loc, sem.scope, rank) {
                    th.release_into(t, e);
                }
            } else if let Some((rel, fscope)) = &th.fence_rel {
                if let Some(e) = entry(loc, sem.scope.min(*fscope), rank) {
                    e.absorb(rel);
                }
            }
        }
    }

    /// A fence by thread `t`.
    pub fn fence(&mut self, t: u32, sem: Sem) {
        if !self.on.races {
            return;
        }
        let Some(th) = self.threads.get_mut(t as usize) else {
            return;
        };
        match sem.fence {
            Some(Fence::ProxyAsync) => {
                th.avc = th.base.clone();
                th.avc_own = th.own;
            }
            Some(Fence::Sync) => {
                if sem.order.acquires() {
                    let mut acq = std::mem::take(&mut th.fence_acq);
                    th.acquire(&mut acq);
                }
                if sem.order.releases() {
                    th.fence_rel = Some((th.snapshot(t), sem.scope));
                    th.own += 1;
                }
            }
            Some(Fence::MbarInit) | None => {}
        }
    }
}

/// The releases of an atomic location that an acquire by a thread of CTA
/// `rank` at `scope` synchronises with: both scopes must include both
/// threads.
fn visible(loc: &LocSync, rank: u32, scope: Scope) -> SyncClock {
    let mut s = SyncClock::default();
    for (es, er, c) in &loc.entries {
        let same = *er == rank;
        let theirs = *es >= Scope::Cluster || same;
        let mine = scope >= Scope::Cluster || same;
        if theirs && mine {
            s.absorb(c);
        }
    }
    if scope >= Scope::Gpu {
        s.old.union(&loc.old);
    }
    s
}

fn entry(loc: &mut LocSync, scope: Scope, rank: u32) -> Option<&mut SyncClock> {
    let here = |e: &(Scope, u32, SyncClock)| e.0 == scope && e.1 == rank;
    if !loc.entries.iter().any(here) {
        loc.entries.push((scope, rank, SyncClock::default()));
    }
    loc.entries.iter_mut().find(|e| here(e)).map(|e| &mut e.2)
}
