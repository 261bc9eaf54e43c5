//! Bulk asynchronous copies (`cp.async.bulk`, and the tensor copies of
//! `tensor.rs`): checked and queued at the issue, the bytes land and
//! `complete_tx` happens later — when the issuing thread next blocks (in
//! order), or at a random point (random schedule), and at the latest when
//! no thread can run otherwise. The source is read when the copy lands, as
//! the hardware may, so overwriting it before the copy's completion is
//! observable. A `.multicast::cluster` copy lands the same bytes at the
//! same offset in every CTA of its mask and completes its transaction
//! bytes on the mbarrier at the same offset in each.

use super::events::{AccessKind, Issue};
use super::memory::{self, Fault, Target};
use super::state::{Copy, CopyKind};
use super::Machine;
use crate::sim::decode::ops::{Addr, Space, SyncOp};

/// Where a copy into shared memory lands: the destination CTAs (each with
/// its mbarrier's CTA), the destination offset, the mbarrier's offset.
pub(super) type Landing = (Vec<(u32, u32)>, u64, u32);

/// The most bulk copies in flight in a cluster.
pub(super) const MAX_IN_FLIGHT: usize = 4096;

impl Machine<'_> {
    pub(super) fn bulk_op(&mut self, t: u32, pc: u32, op: &SyncOp) {
        match op {
            SyncOp::BulkToShared {
                dst,
                src,
                size,
                mbar,
                mask,
            } => {
                let size = self.reg(t, *size) as u32;
                let d = self.reg(t, dst.base).wrapping_add(dst.off as u64);
                let s = self.reg(t, src.base).wrapping_add(src.off as u64);
                self.check_shape(t, pc, u64::from(size), d, s);
                let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
                let Some((dsts, dst_off, mbar_off)) = self.destinations(t, pc, *dst, mbar, *mask)
                else {
                    return;
                };
                let (src_global, src_shared) = if src.space == Space::Global {
                    (Some(s), None)
                } else {
                    (None, Some((own, s & 0xffff_ffff)))
                };
                self.expect_inflight(&dsts, mbar_off, size);
                self.issue(
                    t,
                    pc,
                    size,
                    CopyKind::ToShared {
                        src_global,
                        src_shared,
                        dsts,
                        dst_off,
                        mbar_off,
                    },
                );
            }
            SyncOp::BulkToGlobal { dst, src, size } => {
                let size = self.reg(t, *size) as u32;
                let d = self.reg(t, dst.base).wrapping_add(dst.off as u64);
                let s = self.reg(t, src.base).wrapping_add(src.off as u64);
                self.check_shape(t, pc, u64::from(size), d, s);
                self.issue(
                    t,
                    pc,
                    size,
                    CopyKind::ToGlobal {
                        dst: d,
                        src_off: s & 0xffff_ffff,
                    },
                );
            }
            SyncOp::BulkCommit => {
                // The copies issued since the last commit form the group
                // this closes (their `group` is the count before it).
                if let Some(th) = self.cluster.threads.get_mut(t as usize) {
                    th.bulk_commits += 1;
                }
            }
            SyncOp::BulkWait { n } => {
                // Every committed group but the newest `n` completes, oldest
                // first (copies are kept in issue order).
                let commits = self
                    .cluster
                    .threads
                    .get(t as usize)
                    .map_or(0, |th| th.bulk_commits);
                let before = commits.saturating_sub(u64::from(*n));
                self.complete_where(|c| c.issuer == t && c.group.is_some_and(|g| g < before));
                if let Some(san) = &mut self.checks {
                    san.bulk_wait(t, before);
                }
            }
            _ => {}
        }
    }

    pub(super) fn check_shape(&mut self, t: u32, pc: u32, size: u64, dst: u64, src: u64) {
        if !size.is_multiple_of(16) || !dst.is_multiple_of(16) || !src.is_multiple_of(16) {
            self.record(t, pc, Issue::BulkShape { size, dst, src });
        }
    }

    /// Where a copy into shared memory lands: the destination CTAs (each
    /// with the CTA of its mbarrier), the destination offset and the
    /// mbarrier's offset. Without a mask, the CTAs the two addresses name;
    /// with one (`.multicast::cluster`), every CTA of the mask, the data and
    /// the mbarrier at the same offsets in each. `None` when the mbarrier
    /// is not one (recorded).
    pub(super) fn destinations(
        &mut self,
        t: u32,
        pc: u32,
        dst: Addr,
        mbar: &Addr,
        mask: Option<u32>,
    ) -> Option<Landing> {
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        let d = self.reg(t, dst.base).wrapping_add(dst.off as u64);
        let (dst_rank, dst_off) = if dst.space == Space::Shared {
            (own, d & 0xffff_ffff)
        } else {
            memory::split_cluster(d, own)
        };
        let (mbar_rank, mbar_off) = self.mbar_at(t, pc, mbar)?;
        let Some(mask) = mask else {
            return Some((vec![(dst_rank, mbar_rank)], dst_off, mbar_off));
        };
        let mask = self.reg(t, mask) as u16;
        let size = self.mem.ext.cluster_size;
        if size < 16 && u32::from(mask) >> size != 0 {
            self.record(
                t,
                pc,
                Issue::CopyMask {
                    mask,
                    cluster: size,
                },
            );
        }
        let dsts = (0..size.min(16))
            .filter(|r| mask & (1 << r) != 0)
            .map(|r| (r, r))
            .collect();
        Some((dsts, dst_off, mbar_off))
    }

    /// Counts `size` bytes in flight towards each destination's mbarrier.
    pub(super) fn expect_inflight(&mut self, dsts: &[(u32, u32)], mbar_off: u32, size: u32) {
        for &(_, mbar_rank) in dsts {
            if let Some(b) = self.mbar(mbar_rank, mbar_off) {
                b.inflight_tx += i64::from(size);
            }
        }
    }

    pub(super) fn issue(&mut self, t: u32, pc: u32, size: u32, kind: CopyKind) {
        if self.cluster.copies.len() >= MAX_IN_FLIGHT {
            self.complete_copy_at(0);
        }
        // A copy to global memory belongs to the group its thread commits
        // next.
        let group = match kind {
            CopyKind::ToGlobal { .. } | CopyKind::TensorToGlobal { .. } => self
                .cluster
                .threads
                .get(t as usize)
                .map(|th| th.bulk_commits),
            CopyKind::ToShared { .. } | CopyKind::TensorToShared { .. } => None,
        };
        let check = match &mut self.checks {
            Some(san) => {
                let (dsts, mbar_off): (&[(u32, u32)], u32) = match &kind {
                    CopyKind::ToShared { dsts, mbar_off, .. }
                    | CopyKind::TensorToShared { dsts, mbar_off, .. } => (dsts, *mbar_off),
                    _ => (&[], 0),
                };
                // The phase of each destination's mbarrier now: the bytes
                // are for it.
                let phases = dsts
                    .iter()
                    .filter_map(|&(_, mr)| {
                        let b = self.cluster.ctas.get(mr as usize)?.mbars.get(&mbar_off)?;
                        Some((mr, mbar_off, b.phase))
                    })
                    .collect();
                san.copy_issue(t, pc, group, dsts, mbar_off, phases)
            }
            None => u32::MAX,
        };
        self.cluster.copies.push_back(Copy {
            issuer: t,
            group,
            pc,
            size,
            kind,
            check,
        });
    }

    /// Lands every copy that `which` selects, in issue order.
    fn complete_where(&mut self, which: impl Fn(&Copy) -> bool) {
        let mut i = 0;
        while let Some(c) = self.cluster.copies.get(i) {
            if which(c) {
                self.complete_copy_at(i);
            } else {
                i += 1;
            }
        }
    }

    pub(super) fn complete_copies_of(&mut self, t: u32) {
        self.complete_where(|c| c.issuer == t);
    }

    pub(super) fn complete_all_copies(&mut self) {
        while !self.cluster.copies.is_empty() {
            self.complete_copy_at(0);
        }
    }

    /// Lands the bytes of copy `i` and completes its transaction bytes.
    pub(super) fn complete_copy_at(&mut self, i: usize) {
        if let Some(c) = self.cluster.copies.remove(i) {
            self.land(c);
        }
    }

    /// [`Self::complete_copy_at`] for a copy picked at random (the random
    /// schedule): in constant time, the newest copy taking its place in
    /// the queue (the order of copies in flight is the GPU's to choose).
    pub(super) fn complete_copy_anywhere(&mut self, i: usize) {
        if let Some(c) = self.cluster.copies.swap_remove_back(i) {
            self.land(c);
        }
    }

    fn land(&mut self, c: Copy) {
        self.sched.epoch += 1;
        if let Some(san) = &mut self.checks {
            san.copy_begin(c.check);
        }
        let size = u64::from(c.size);
        let own = self
            .cluster
            .threads
            .get(c.issuer as usize)
            .map_or(0, |th| th.rank);
        match c.kind.clone() {
            CopyKind::ToShared {
                src_global,
                src_shared,
                dsts,
                dst_off,
                mbar_off,
            } => {
                let data = match (src_global, src_shared) {
                    (Some(g), _) => self.read_bytes(c.issuer, c.pc, Space::Global, g, size),
                    (None, Some((rank, off))) => self.read_bytes(
                        c.issuer,
                        c.pc,
                        Space::SharedCluster,
                        memory::cluster_addr(rank, off),
                        size,
                    ),
                    _ => None,
                };
                for &(dst_rank, _) in &dsts {
                    if let Some(data) = &data {
                        self.write_bytes(
                            c.issuer,
                            c.pc,
                            memory::cluster_addr(dst_rank, dst_off),
                            data,
                        );
                    }
                }
                self.copy_landed(&c);
                self.complete_inflight(&c, &dsts, mbar_off);
            }
            CopyKind::TensorToShared {
                map,
                coords,
                dsts,
                dst_off,
                mbar_off,
            } => {
                self.land_tensor_load(&c, map, &coords, &dsts, dst_off);
                self.copy_landed(&c);
                self.complete_inflight(&c, &dsts, mbar_off);
            }
            CopyKind::TensorToGlobal {
                map,
                coords,
                src_off,
                red,
            } => {
                self.land_tensor_store(&c, own, map, &coords, src_off, red);
                self.copy_landed(&c);
            }
            CopyKind::ToGlobal { dst, src_off } => {
                let data = self.read_bytes(
                    c.issuer,
                    c.pc,
                    Space::SharedCluster,
                    memory::cluster_addr(own, src_off),
                    size,
                );
                if let Some(data) = data {
                    self.write_global(c.issuer, c.pc, dst, &data);
                }
                self.copy_landed(&c);
            }
        }
        if let Some(san) = &mut self.checks {
            san.copy_finished();
        }
    }

    /// The checks' end of a landing (`sanitizer::copy_end`): before the
    /// copy's transaction bytes count.
    fn copy_landed(&mut self, c: &Copy) {
        let Some(san) = &mut self.checks else {
            return;
        };
        let ctas = &self.cluster.ctas;
        let phase_now = |rank: u32, off: u32| {
            ctas.get(rank as usize)
                .and_then(|cta| cta.mbars.get(&off))
                .map(|b| b.phase)
        };
        let name = |rank: u32, off: u32| super::events::BarrierRef {
            ctaid: ctas.get(rank as usize).map_or([0; 3], |cta| cta.ctaid),
            offset: off,
        };
        san.copy_end(&mut self.events, c.check, c.size, phase_now, name);
    }

    /// The transaction bytes of copy `c` complete on each destination's
    /// mbarrier.
    fn complete_inflight(&mut self, c: &Copy, dsts: &[(u32, u32)], mbar_off: u32) {
        for &(_, mbar_rank) in dsts {
            if let Some(b) = self.mbar(mbar_rank, mbar_off) {
                b.inflight_tx -= i64::from(c.size);
            }
            self.mbar_tx(c.issuer, c.pc, mbar_rank, mbar_off, -i64::from(c.size));
            self.check_phase(mbar_rank, mbar_off);
        }
    }

    pub(super) fn fault(&mut self, t: u32, pc: u32, fault: Fault, kind: AccessKind, size: u64) {
        self.record(t, pc, Issue::Access { fault, kind, size });
    }

    pub(super) fn read_bytes(
        &mut self,
        t: u32,
        pc: u32,
        space: Space,
        addr: u64,
        size: u64,
    ) -> Option<Vec<u8>> {
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        match memory::resolve(space, addr, size, 1, own, &self.mem.ext, &self.mem.allocs) {
            Ok(p) => {
                let bytes: &[u8] = match p.target {
                    Target::Global(i) => self.mem.allocs.get(i).map(|a| a.data.as_slice())?,
                    Target::Shared(r) => self
                        .cluster
                        .ctas
                        .get(r as usize)
                        .map(|c| c.shared.as_slice())?,
                    _ => return None,
                };
                let start = p.offset as usize;
                let out = bytes.get(start..start + size as usize).map(<[u8]>::to_vec);
                if let Some(tr) = self.mem.track.as_deref_mut() {
                    tr.note(p, size, false);
                }
                if let Some(san) = &mut self.checks {
                    if let Some(mem) = copy_mem(p) {
                        san.copy_access(&mut self.events, mem, size, false, false);
                    }
                }
                out
            }
            Err(f) => {
                self.fault(t, pc, f, AccessKind::CopyRead, size);
                None
            }
        }
    }

    pub(super) fn write_bytes(&mut self, t: u32, pc: u32, cluster_addr: u64, data: &[u8]) {
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        let size = data.len() as u64;
        match memory::resolve(
            Space::SharedCluster,
            cluster_addr,
            size,
            1,
            own,
            &self.mem.ext,
            &self.mem.allocs,
        ) {
            Ok(p) => {
                let Target::Shared(r) = p.target else { return };
                self.check_watch(t, pc, r, p.offset, size, true);
                if let Some(san) = &mut self.checks {
                    if let Some(mem) = copy_mem(p) {
                        san.copy_access(&mut self.events, mem, size, true, false);
                    }
                }
                if self.cluster.exited_peer(r, own) {
                    self.fault(
                        t,
                        pc,
                        Fault::ExitedPeer {
                            rank: r,
                            offset: p.offset,
                        },
                        AccessKind::CopyWrite,
                        size,
                    );
                }
                if let Some(dst) = self.cluster.ctas.get_mut(r as usize).and_then(|c| {
                    c.shared
                        .get_mut(p.offset as usize..(p.offset + size) as usize)
                }) {
                    dst.copy_from_slice(data);
                }
            }
            Err(f) => self.fault(t, pc, f, AccessKind::CopyWrite, size),
        }
    }

    fn write_global(&mut self, t: u32, pc: u32, addr: u64, data: &[u8]) {
        let size = data.len() as u64;
        match memory::resolve(
            Space::Global,
            addr,
            size,
            1,
            0,
            &self.mem.ext,
            &self.mem.allocs,
        ) {
            Ok(p) => {
                let Target::Global(i) = p.target else { return };
                if let Some(tr) = self.mem.track.as_deref_mut() {
                    tr.note(p, size, true);
                }
                if let Some(san) = &mut self.checks {
                    if let Some(mem) = copy_mem(p) {
                        san.copy_access(&mut self.events, mem, size, true, false);
                    }
                }
                if self.mem.allocs.get(i).is_some_and(|a| a.read_only) {
                    self.fault(
                        t,
                        pc,
                        Fault::ReadOnly {
                            space: Space::Global,
                            addr,
                            target: p.target,
                        },
                        AccessKind::CopyWrite,
                        size,
                    );
                    return;
                }
                if let Some(dst) = self.mem.allocs.get_mut(i).and_then(|a| {
                    a.data
                        .get_mut(p.offset as usize..(p.offset + size) as usize)
                }) {
                    dst.copy_from_slice(data);
                }
            }
            Err(f) => self.fault(t, pc, f, AccessKind::CopyWrite, size),
        }
    }
}

/// The sanitizer's name of a place a copy accesses.
pub(super) fn copy_mem(p: memory::Place) -> Option<super::sanitizer::finding::Mem> {
    use super::sanitizer::finding::Mem;
    match p.target {
        Target::Shared(rank) => Some(Mem::Shared {
            rank,
            offset: p.offset,
        }),
        Target::Global(alloc) => Some(Mem::Global {
            alloc,
            offset: p.offset,
        }),
        _ => None,
    }
}
