//! Tensor copies in tile mode (PTX ISA §9.7.9.25.5): `cp.async.bulk.tensor`
//! loads into shared memory (completing on an mbarrier, multicast across
//! the cluster with a CTA mask), stores and `cp.reduce.async.bulk.tensor`
//! reductions from shared memory (in bulk groups). They are bulk copies
//! (`bulk.rs`): checked at the issue, landing later.
//!
//! - The map operand is a generic address; the 128 bytes there must be one
//!   of the launch's maps (`sim::tmap`), else the instruction is reported
//!   ("not a tensor map") and does nothing.
//! - A box is read in its linear order, `L = es·(i0 + b0·(i1 + b1·(i2 + …)))`
//!   for box index `(i0, i1, …)` (innermost first), element `i` at tensor
//!   coordinate `coords + i`; an element outside the tensor reads as the
//!   map's fill (zero, or the type's NaN) and a store leaves it out.
//! - Shared memory holds the box at `swizzle(dst + L)`: 16-byte chunks
//!   permuted within each 128-byte row by the absolute address (§5.5.7).
//! - A load's transaction count is the whole box, also when part of it is
//!   outside the tensor.

use super::events::{AccessKind, Issue, TensorWhy};
use super::memory::{self, Fault, Target};
use super::state::{Copy, CopyKind};
use super::Machine;
use crate::launch::{Swizzle, TensorElem};
use crate::sim::decode::ops::{Space, SyncOp, TensorRed};
use crate::sim::tmap::{self, MapRecord};

/// The largest box a copy may move: one phase's transaction count (and
/// more than any shared memory holds).
const MAX_BOX: u64 = (1 << 20) - 1;

impl Machine<'_> {
    pub(super) fn tensor_op(&mut self, t: u32, pc: u32, op: &SyncOp) {
        match op {
            SyncOp::TensorLoad {
                dst,
                map,
                coords,
                rank,
                mbar,
                mask,
            } => {
                let Some((index, coords, bytes)) = self.tensor_target(t, pc, *map, *coords, *rank)
                else {
                    return;
                };
                let d = self.reg(t, dst.base).wrapping_add(dst.off as u64);
                if !(d & 0xff_ffff).is_multiple_of(128) {
                    self.record(t, pc, Issue::TensorAlign { addr: d });
                }
                let Some((dsts, dst_off, mbar_off)) = self.destinations(t, pc, *dst, mbar, *mask)
                else {
                    return;
                };
                self.expect_inflight(&dsts, mbar_off, bytes);
                self.issue(
                    t,
                    pc,
                    bytes,
                    CopyKind::TensorToShared {
                        map: index,
                        coords,
                        dsts,
                        dst_off,
                        mbar_off,
                    },
                );
            }
            SyncOp::TensorStore {
                map,
                coords,
                rank,
                src,
                red,
            } => {
                let Some((index, coords, bytes)) = self.tensor_target(t, pc, *map, *coords, *rank)
                else {
                    return;
                };
                if let Some(op) = red {
                    let elem = self.mem.maps.get(index).map(|m| m.elem);
                    if let Some(elem) = elem.filter(|&e| !reducible(*op, e)) {
                        self.record(
                            t,
                            pc,
                            Issue::TensorCopy {
                                why: TensorWhy::Reduction { op: *op, elem },
                            },
                        );
                        return;
                    }
                }
                let s = self.reg(t, src.base).wrapping_add(src.off as u64);
                if !(s & 0xff_ffff).is_multiple_of(128) {
                    self.record(t, pc, Issue::TensorAlign { addr: s });
                }
                self.issue(
                    t,
                    pc,
                    bytes,
                    CopyKind::TensorToGlobal {
                        map: index,
                        coords,
                        src_off: s & 0xffff_ffff,
                        red: *red,
                    },
                );
            }
            _ => {}
        }
    }

    /// The map a tensor instruction names, its coordinates (innermost
    /// first, sign-extended) and the bytes of its box; `None` (recorded)
    /// when the operand is not a map or does not fit it.
    fn tensor_target(
        &mut self,
        t: u32,
        pc: u32,
        map: u32,
        coords: u32,
        rank: u8,
    ) -> Option<(usize, [i64; 5], u32)> {
        let index = self.tensor_map(t, pc, map)?;
        let rec = self.mem.maps.get(index)?;
        if rec.rank() != usize::from(rank) {
            let why = TensorWhy::Rank {
                given: rank,
                rank: rec.rank() as u8,
                map: index as u32,
            };
            self.record(t, pc, Issue::TensorCopy { why });
            return None;
        }
        let bytes = rec.box_bytes();
        if bytes > MAX_BOX || bytes > self.mem.ext.shared {
            self.record(
                t,
                pc,
                Issue::TensorCopy {
                    why: TensorWhy::BoxTooLarge { bytes },
                },
            );
            return None;
        }
        let mut c = [0i64; 5];
        let lists = &self.setup.prog.lists;
        for (k, slot) in c.iter_mut().enumerate().take(usize::from(rank)) {
            let s = lists.get(coords as usize + k).copied().unwrap_or(0);
            *slot = i64::from(self.reg(t, s) as u32 as i32);
        }
        Some((index, c, bytes as u32))
    }

    /// The index of the map whose 128 bytes are at the generic address in
    /// `slot`; records "not a tensor map" otherwise.
    fn tensor_map(&mut self, t: u32, pc: u32, slot: u32) -> Option<usize> {
        let addr = self.reg(t, slot);
        let own = self.cluster.threads.get(t as usize).map_or(0, |th| th.rank);
        let bytes: Option<Vec<u8>> = match memory::resolve(
            Space::Generic,
            addr,
            128,
            1,
            own,
            &self.mem.ext,
            &self.mem.allocs,
        ) {
            Ok(p) => {
                let start = p.offset as usize;
                let store: Option<&[u8]> = match p.target {
                    Target::Global(i) => self.mem.allocs.get(i).map(|a| a.data.as_slice()),
                    Target::Param => Some(self.mem.params.as_slice()),
                    Target::Shared(r) => self
                        .cluster
                        .ctas
                        .get(r as usize)
                        .map(|c| c.shared.as_slice()),
                    Target::Local => self
                        .cluster
                        .threads
                        .get(t as usize)
                        .map(|th| th.local.as_slice()),
                    Target::FuncParam => self
                        .cluster
                        .threads
                        .get(t as usize)
                        .map(|th| th.fparam.as_slice()),
                };
                store
                    .and_then(|b| b.get(start..start + 128))
                    .map(<[u8]>::to_vec)
            }
            Err(_) => None,
        };
        if let (Some(tr), Some(b)) = (self.mem.track.as_deref_mut(), &bytes) {
            let p = memory::resolve(
                Space::Generic,
                addr,
                128,
                1,
                own,
                &self.mem.ext,
                &self.mem.allocs,
            );
            if let Ok(p) = p {
                tr.note(p, b.len() as u64, false);
            }
        }
        let index = bytes
            .as_deref()
            .and_then(tmap::decode)
            .map(|i| i as usize)
            .filter(|&i| i < self.mem.maps.len());
        if index.is_none() {
            self.record(t, pc, Issue::NotTensorMap { addr });
        }
        index
    }

    /// Lands a tensor load: the box read from global memory now, written
    /// swizzled into each destination CTA.
    pub(super) fn land_tensor_load(
        &mut self,
        c: &Copy,
        map: usize,
        coords: &[i64; 5],
        dsts: &[(u32, u32)],
        dst_off: u64,
    ) {
        let Some(rec) = self.mem.maps.get(map).cloned() else {
            return;
        };
        let data = self.read_box(&rec, coords);
        self.track_box(&rec, coords, false);
        self.check_box(&rec, coords, false, false);
        for &(rank, _) in dsts {
            self.write_swizzled(c, rank, dst_off, &data, rec.swizzle);
        }
    }

    /// Lands a tensor store or reduction: the box read from the issuer's
    /// shared memory now (unswizzled), its elements inside the tensor
    /// written or combined into global memory.
    pub(super) fn land_tensor_store(
        &mut self,
        c: &Copy,
        own: u32,
        map: usize,
        coords: &[i64; 5],
        src_off: u64,
        red: Option<TensorRed>,
    ) {
        let Some(rec) = self.mem.maps.get(map).cloned() else {
            return;
        };
        let Some(data) = self.read_swizzled(c, own, src_off, rec.box_bytes(), rec.swizzle) else {
            return;
        };
        if self.mem.allocs.get(rec.alloc).is_some_and(|a| a.read_only) {
            let addr = memory::alloc_base(rec.alloc);
            self.fault(
                c.issuer,
                c.pc,
                Fault::ReadOnly {
                    space: Space::Global,
                    addr,
                    target: Target::Global(rec.alloc),
                },
                AccessKind::CopyWrite,
                rec.box_bytes(),
            );
            return;
        }
        let es = rec.elem.size() as usize;
        self.track_box(&rec, coords, true);
        self.check_box(&rec, coords, true, red.is_some());
        let Some(alloc) = self.mem.allocs.get_mut(rec.alloc) else {
            return;
        };
        for_each_row(&rec, coords, |row, base, lo, hi| {
            let (Some(base), true) = (base, lo < hi) else {
                return;
            };
            let from = row + lo * es;
            let to = base as usize;
            let n = (hi - lo) * es;
            let (Some(src), Some(dst)) = (data.get(from..from + n), alloc.data.get_mut(to..to + n))
            else {
                return;
            };
            match red {
                None => dst.copy_from_slice(src),
                Some(op) => {
                    for (d, s) in dst.chunks_exact_mut(es).zip(src.chunks_exact(es)) {
                        reduce(op, rec.elem, d, s);
                    }
                }
            }
        });
    }

    /// Notes the rows of the box a landing tensor copy reads or writes
    /// (`--jobs`).
    fn track_box(&mut self, rec: &MapRecord, coords: &[i64; 5], write: bool) {
        let Some(tr) = self.mem.track.as_deref_mut() else {
            return;
        };
        let es = rec.elem.size() as u64;
        for_each_row(rec, coords, |_, base, lo, hi| {
            if let (Some(base), true) = (base, lo < hi) {
                tr.note_global(rec.alloc, base, (hi - lo) as u64 * es, write);
            }
        });
    }

    /// The run-time checks of a landing tensor copy's global accesses:
    /// each row of the box inside the tensor, read (a load) or written.
    fn check_box(&mut self, rec: &MapRecord, coords: &[i64; 5], write: bool, atomic: bool) {
        let Some(san) = &mut self.checks else {
            return;
        };
        let es = rec.elem.size() as u64;
        let mut rows = Vec::new();
        for_each_row(rec, coords, |_, base, lo, hi| {
            if let (Some(base), true) = (base, lo < hi) {
                rows.push((base, (hi - lo) as u64 * es));
            }
        });
        for (offset, len) in rows {
            let mem = super::sanitizer::finding::Mem::Global {
                alloc: rec.alloc,
                offset,
            };
            san.copy_access(&mut self.events, mem, len, write, atomic);
        }
    }

    /// The box at `coords` of a map, in its linear order, read from global
    /// memory, elements outside the tensor filled.
    fn read_box(&self, rec: &MapRecord, coords: &[i64; 5]) -> Vec<u8> {
        let es = rec.elem.size() as usize;
        let total = rec.box_bytes() as usize;
        let mut out = vec![0u8; total];
        let fill = rec.fill_bits().to_le_bytes();
        let fill = fill.get(..es).unwrap_or(&[]);
        let zero_fill = fill.iter().all(|&b| b == 0);
        let alloc = self.mem.allocs.get(rec.alloc).map(|a| a.data.as_slice());
        let b0 = rec.boxes.first().copied().unwrap_or(0) as usize;
        for_each_row(rec, coords, |row, base, lo, hi| {
            let Some(dst) = out.get_mut(row..row + b0 * es) else {
                return;
            };
            let (lo, hi) = if base.is_some() { (lo, hi) } else { (0, 0) };
            if !zero_fill {
                for (i, e) in dst.chunks_exact_mut(es).enumerate() {
                    if i < lo || i >= hi {
                        e.copy_from_slice(fill);
                    }
                }
            }
            if let (Some(base), true) = (base, lo < hi) {
                let n = (hi - lo) * es;
                let src = alloc.and_then(|a| a.get(base as usize..base as usize + n));
                if let (Some(src), Some(d)) = (src, dst.get_mut(lo * es..lo * es + n)) {
                    d.copy_from_slice(src);
                }
            }
        });
        out
    }

    /// Writes `data` (a box in linear order) into the shared memory of the
    /// CTA of `rank` at `dst`, 16-byte chunk `L` at `swizzle(dst + L)`.
    fn write_swizzled(&mut self, c: &Copy, rank: u32, dst: u64, data: &[u8], sw: Swizzle) {
        if sw == Swizzle::None || !whole_rows(dst, data.len()) {
            if sw == Swizzle::None {
                self.write_bytes(c.issuer, c.pc, memory::cluster_addr(rank, dst), data);
                return;
            }
            // Chunks that the swizzle moves outside the box's own bytes:
            // each checked on its own.
            for (k, chunk) in data.chunks(16).enumerate() {
                let a = sw.apply(dst + 16 * k as u64);
                self.write_bytes(c.issuer, c.pc, memory::cluster_addr(rank, a), chunk);
            }
            return;
        }
        // Swizzling stays inside each 128-byte row, so the whole region is
        // checked once.
        let Some(off) = self.shared_region(c, rank, dst, data.len() as u64, AccessKind::CopyWrite)
        else {
            return;
        };
        self.check_watch(c.issuer, c.pc, rank, off, data.len() as u64, true);
        if let Some(san) = &mut self.checks {
            let mem = super::sanitizer::finding::Mem::Shared { rank, offset: off };
            san.copy_access(&mut self.events, mem, data.len() as u64, true, false);
        }
        let Some(mem) = self
            .cluster
            .ctas
            .get_mut(rank as usize)
            .map(|c| &mut c.shared)
        else {
            return;
        };
        for (k, chunk) in data.chunks(16).enumerate() {
            let a = (sw.apply(dst + 16 * k as u64) - dst + off) as usize;
            if let Some(d) = mem.get_mut(a..a + chunk.len()) {
                d.copy_from_slice(chunk);
            }
        }
    }

    /// The `len` bytes of a box in linear order from shared memory of the
    /// CTA of `rank` at `src`, chunk `L` from `swizzle(src + L)`.
    fn read_swizzled(
        &mut self,
        c: &Copy,
        rank: u32,
        src: u64,
        len: u64,
        sw: Swizzle,
    ) -> Option<Vec<u8>> {
        if sw == Swizzle::None || !whole_rows(src, len as usize) {
            let mut out = Vec::new();
            if sw == Swizzle::None {
                return self.read_bytes(
                    c.issuer,
                    c.pc,
                    Space::SharedCluster,
                    memory::cluster_addr(rank, src),
                    len,
                );
            }
            for k in 0..len.div_ceil(16) {
                let n = (len - 16 * k).min(16);
                let a = sw.apply(src + 16 * k);
                let chunk = self.read_bytes(
                    c.issuer,
                    c.pc,
                    Space::SharedCluster,
                    memory::cluster_addr(rank, a),
                    n,
                )?;
                out.extend_from_slice(&chunk);
            }
            return Some(out);
        }
        let off = self.shared_region(c, rank, src, len, AccessKind::CopyRead)?;
        if let Some(san) = &mut self.checks {
            let mem = super::sanitizer::finding::Mem::Shared { rank, offset: off };
            san.copy_access(&mut self.events, mem, len, false, false);
        }
        let mem = &self.cluster.ctas.get(rank as usize)?.shared;
        let mut out = vec![0u8; len as usize];
        for (k, chunk) in out.chunks_mut(16).enumerate() {
            let a = (sw.apply(src + 16 * k as u64) - src + off) as usize;
            chunk.copy_from_slice(mem.get(a..a + chunk.len())?);
        }
        Some(out)
    }

    /// Checks that `len` bytes at `off` of the shared memory of the CTA of
    /// `rank` are inside one variable (recording the fault otherwise) and
    /// returns `off`.
    fn shared_region(
        &mut self,
        c: &Copy,
        rank: u32,
        off: u64,
        len: u64,
        kind: AccessKind,
    ) -> Option<u64> {
        let own = self
            .cluster
            .threads
            .get(c.issuer as usize)
            .map_or(0, |th| th.rank);
        match memory::resolve(
            Space::SharedCluster,
            memory::cluster_addr(rank, off),
            len,
            1,
            own,
            &self.mem.ext,
            &self.mem.allocs,
        ) {
            Ok(p) => {
                if self.cluster.exited_peer(rank, own) {
                    self.fault(
                        c.issuer,
                        c.pc,
                        Fault::ExitedPeer {
                            rank,
                            offset: p.offset,
                        },
                        kind,
                        len,
                    );
                }
                Some(p.offset)
            }
            Err(f) => {
                self.fault(c.issuer, c.pc, f, kind, len);
                None
            }
        }
    }
}

/// Whether a swizzled box at `addr` of `len` bytes covers whole 128-byte
/// rows (then the swizzle keeps every chunk inside it).
fn whole_rows(addr: u64, len: usize) -> bool {
    addr.is_multiple_of(128) && len.is_multiple_of(128)
}

/// Calls `f(row_start, base, lo, hi)` for each row of the box (all of its
/// dimensions but the innermost, in linear order): `row_start` is the
/// row's byte offset in the box, `base` the global byte offset of the
/// row's element `lo` (`None` when the row is outside the tensor), and the
/// row's elements `lo..hi` are inside the tensor.
fn for_each_row(
    rec: &MapRecord,
    coords: &[i64; 5],
    mut f: impl FnMut(usize, Option<u64>, usize, usize),
) {
    let es = rec.elem.size() as usize;
    let rank = rec.rank();
    let b0 = rec.boxes.first().copied().unwrap_or(0) as usize;
    let rows: u64 = rec.boxes.iter().skip(1).map(|&b| u64::from(b)).product();
    let c0 = coords.first().copied().unwrap_or(0);
    let d0 = rec.dims.first().copied().unwrap_or(0) as i64;
    let lo = (-c0).clamp(0, b0 as i64) as usize;
    let hi = (d0 - c0).clamp(0, b0 as i64) as usize;
    for row in 0..rows {
        let mut rem = row;
        let mut base = Some(0u64);
        for k in 1..rank {
            let b = u64::from(rec.boxes.get(k).copied().unwrap_or(1)).max(1);
            let i = (rem % b) as i64;
            rem /= b;
            let g = coords.get(k).copied().unwrap_or(0) + i;
            let d = rec.dims.get(k).copied().unwrap_or(0) as i64;
            if g < 0 || g >= d {
                base = None;
            } else if let Some(x) = base.as_mut() {
                *x += g as u64 * rec.strides.get(k).copied().unwrap_or(0);
            }
        }
        let base = base.map(|b| b + (c0 + lo as i64) as u64 * es as u64);
        f(row as usize * b0 * es, base, lo, hi);
    }
}

/// Whether `cp.reduce.async.bulk.tensor` defines `op` on elements of
/// `elem` (PTX ISA §9.7.9.25.5.3: `.add` on `.u32 .s32 .u64 .f32 .f16
/// .bf16`; `.min`/`.max` on `.u32 .s32 .u64 .s64 .f16 .bf16`; `.inc`/`.dec`
/// on `.u32`; `.and`/`.or`/`.xor` on `.b32 .b64`).
pub fn reducible(op: TensorRed, elem: TensorElem) -> bool {
    use TensorElem as E;
    match op {
        TensorRed::Add => matches!(elem, E::U32 | E::I32 | E::U64 | E::F32 | E::F16 | E::BF16),
        TensorRed::Min | TensorRed::Max => {
            matches!(elem, E::U32 | E::I32 | E::U64 | E::I64 | E::F16 | E::BF16)
        }
        TensorRed::Inc | TensorRed::Dec => elem == E::U32,
        TensorRed::And | TensorRed::Or | TensorRed::Xor => {
            matches!(elem, E::U32 | E::I32 | E::U64 | E::I64)
        }
    }
}

/// `dst = dst op src` for one element (little-endian bytes).
fn reduce(op: TensorRed, elem: TensorElem, dst: &mut [u8], src: &[u8]) {
    use crate::sim::machine::float;
    use TensorElem as E;
    let get = |b: &[u8]| {
        let mut w = [0u8; 8];
        for (d, s) in w.iter_mut().zip(b) {
            *d = *s;
        }
        u64::from_le_bytes(w)
    };
    let (a, b) = (get(dst), get(src));
    let signed = matches!(elem, E::I32 | E::I64);
    let bits = elem.size() * 8;
    let sext = |v: u64| -> i64 { ((v << (64 - bits)) as i64) >> (64 - bits) };
    let v = match (op, elem) {
        (TensorRed::Add, E::F32) => {
            u64::from((f32::from_bits(a as u32) + f32::from_bits(b as u32)).to_bits())
        }
        (TensorRed::Add, E::F16) => u64::from(float::f32_to_f16(
            float::f16_to_f32(a as u16) + float::f16_to_f32(b as u16),
        )),
        (TensorRed::Add, E::BF16) => u64::from(float::f32_to_bf16(
            float::bf16_to_f32(a as u16) + float::bf16_to_f32(b as u16),
        )),
        (TensorRed::Min | TensorRed::Max, E::F16 | E::BF16) => {
            let f = |v: u64| {
                if elem == E::F16 {
                    float::f16_to_f32(v as u16)
                } else {
                    float::bf16_to_f32(v as u16)
                }
            };
            let (x, y) = (f(a), f(b));
            let pick_b = if op == TensorRed::Min { y < x } else { y > x };
            if x.is_nan() || (pick_b && !y.is_nan()) {
                b
            } else {
                a
            }
        }
        (TensorRed::Add, _) => a.wrapping_add(b),
        (TensorRed::Min, _) if signed => (sext(a).min(sext(b))) as u64,
        (TensorRed::Max, _) if signed => (sext(a).max(sext(b))) as u64,
        (TensorRed::Min, _) => a.min(b),
        (TensorRed::Max, _) => a.max(b),
        (TensorRed::Inc, _) => {
            if a >= b {
                0
            } else {
                a + 1
            }
        }
        (TensorRed::Dec, _) => {
            if a == 0 || a > b {
                b
            } else {
                a - 1
            }
        }
        (TensorRed::And, _) => a & b,
        (TensorRed::Or, _) => a | b,
        (TensorRed::Xor, _) => a ^ b,
    };
    let v = v.to_le_bytes();
    for (d, s) in dst.iter_mut().zip(v) {
        *d = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions() {
        let mut d = 5u32.to_le_bytes();
        reduce(TensorRed::Add, TensorElem::U32, &mut d, &7u32.to_le_bytes());
        assert_eq!(u32::from_le_bytes(d), 12);
        let mut d = (-3i32).to_le_bytes();
        reduce(
            TensorRed::Max,
            TensorElem::I32,
            &mut d,
            &(-5i32).to_le_bytes(),
        );
        assert_eq!(i32::from_le_bytes(d), -3);
        reduce(
            TensorRed::Min,
            TensorElem::I32,
            &mut d,
            &(-5i32).to_le_bytes(),
        );
        assert_eq!(i32::from_le_bytes(d), -5);
        let mut d = 1.5f32.to_le_bytes();
        reduce(
            TensorRed::Add,
            TensorElem::F32,
            &mut d,
            &2.25f32.to_le_bytes(),
        );
        assert_eq!(f32::from_le_bytes(d), 3.75);
        let mut d = 0x3f80u16.to_le_bytes(); // bf16 1.0
        reduce(
            TensorRed::Add,
            TensorElem::BF16,
            &mut d,
            &0x4000u16.to_le_bytes(),
        );
        assert_eq!(u16::from_le_bytes(d), 0x4040); // 3.0
        let mut d = 3u32.to_le_bytes();
        reduce(TensorRed::Inc, TensorElem::U32, &mut d, &3u32.to_le_bytes());
        assert_eq!(u32::from_le_bytes(d), 0);
        assert!(reducible(TensorRed::Add, TensorElem::BF16));
        assert!(!reducible(TensorRed::Add, TensorElem::F64));
        assert!(!reducible(TensorRed::Xor, TensorElem::F32));
    }
}
