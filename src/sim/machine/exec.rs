//! The interpreter's inner loop: runs one thread until it reaches a
//! synchronising instruction (which [`super::sync`] executes with the whole
//! machine in view), exits, traps or uses up its step budget.
//!
//! Everything here touches only the thread's registers and memory, so the
//! loop borrows the machine's parts once and stays tight.

use super::events::{AccessKind, Events, Issue, ThreadRef};
use super::memory::{self, Alloc, Extents, Fault, Place, Target};
use super::state::{Cta, Thread};
use super::{arith, farith};
use super::{Cluster, Counters, Machine, Memory, Rng, Sched};
use crate::sim::decode::ops::*;
use crate::sim::decode::Program;
use crate::sim::decode::STRONG_LOAD;

/// Why a slice of a thread's execution ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceEnd {
    /// At a synchronising instruction (not yet executed).
    Sync,
    Exit,
    Trap,
    Budget,
    /// A random switch at a memory operation (`Schedule::Random`).
    Yield,
}

/// The byte store a place lives in (`None`: a peer that is out of range).
#[inline(always)]
fn bytes<'a>(
    target: Target,
    allocs: &'a mut [Alloc],
    ctas: &'a mut [Cta],
    th: &'a mut Thread,
    params: &'a mut [u8],
) -> Option<&'a mut [u8]> {
    match target {
        Target::Global(i) => allocs.get_mut(i).map(|a| a.data.as_mut_slice()),
        Target::Shared(rank) => ctas.get_mut(rank as usize).map(|c| c.shared.as_mut_slice()),
        Target::Local => Some(th.local.as_mut_slice()),
        Target::FuncParam => Some(th.fparam.as_mut_slice()),
        Target::Param => Some(params),
    }
}

/// What a memory instruction needs besides its operands.
struct MemCtx<'a> {
    allocs: &'a mut Vec<Alloc>,
    ctas: &'a mut Vec<Cta>,
    ext: &'a Extents,
    events: &'a mut Events,
    generic: &'a mut [u64; 4],
    track: &'a mut Option<Box<super::jobs::Track>>,
    own_rank: u32,
    me: ThreadRef,
}

impl MemCtx<'_> {
    /// Resolves an access, recording a fault (and returning `None`) when it
    /// is out of bounds or misaligned. A peer CTA that has exited is
    /// reported but the access still happens (its memory is kept).
    #[inline(always)]
    fn place(
        &mut self,
        pc: usize,
        space: Space,
        addr: u64,
        size: u64,
        kind: AccessKind,
    ) -> Option<Place> {
        match memory::resolve(
            space,
            addr,
            size,
            size,
            self.own_rank,
            self.ext,
            self.allocs,
        ) {
            Ok(p) => {
                if space == Space::Generic {
                    let k = match p.target {
                        Target::Global(_) => 0,
                        Target::Shared(_) => 1,
                        Target::Local => 2,
                        Target::Param | Target::FuncParam => 3,
                    };
                    if let Some(g) = self.generic.get_mut(k) {
                        *g += 1;
                    }
                }
                if let Target::Shared(rank) = p.target {
                    if rank != self.own_rank
                        && self.ctas.get(rank as usize).is_some_and(|c| c.exited())
                    {
                        self.fault(
                            pc,
                            Fault::ExitedPeer {
                                rank,
                                offset: p.offset,
                            },
                            kind,
                            size,
                        );
                    }
                }
                let read_only = || match p.target {
                    Target::Global(i) => self.allocs.get(i).is_some_and(|a| a.read_only),
                    Target::Param => true,
                    _ => false,
                };
                if kind != AccessKind::Load && read_only() {
                    self.fault(
                        pc,
                        Fault::ReadOnly {
                            space,
                            addr,
                            target: p.target,
                        },
                        kind,
                        size,
                    );
                    return None;
                }
                if let Some(tr) = self.track.as_deref_mut() {
                    tr.note(p, size, kind != AccessKind::Load);
                }
                Some(p)
            }
            Err(f) => {
                self.fault(pc, f, kind, size);
                None
            }
        }
    }

    fn fault(&mut self, pc: usize, fault: Fault, kind: AccessKind, size: u64) {
        self.events
            .record(pc as u32, self.me, Issue::Access { fault, kind, size });
    }
}

/// The value of `size` bytes at `offset` of `store` (0 where the access
/// faulted), widened to a register.
#[inline(always)]
fn load_value(store: Option<&[u8]>, offset: u64, size: u64, ty: Ty) -> u64 {
    store
        .and_then(|b| memory::read(b, offset, size))
        .map_or(0, |v| extend(v, ty))
}

/// The bits of a value that a store of `size` bytes writes.
fn mask_of(size: u64) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (size * 8)) - 1
    }
}

/// A loaded value widened to a register: sign-extended for signed types.
#[inline(always)]
fn extend(v: u64, ty: Ty) -> u64 {
    if ty.is_signed() {
        arith::sext(v, ty.bits()) as u64
    } else {
        v
    }
}

fn atomic_value(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits();
    match op {
        AtomOp::Add if ty.is_float() => {
            let ftz = FMode {
                ftz: ty == Ty::F32,
                sat: false,
            };
            farith::float_bin(FOp::Add, ty, Rnd::Rn, ftz, old, b)
        }
        AtomOp::Add => arith::trunc(old.wrapping_add(b), bits),
        AtomOp::Min => arith::int_bin(IntOp::Min, ty, old, b),
        AtomOp::Max => arith::int_bin(IntOp::Max, ty, old, b),
        AtomOp::Inc => {
            let (o, b) = (arith::trunc(old, bits), arith::trunc(b, bits));
            if o >= b {
                0
            } else {
                o + 1
            }
        }
        AtomOp::Dec => {
            let (o, b) = (arith::trunc(old, bits), arith::trunc(b, bits));
            if o == 0 || o > b {
                b
            } else {
                o - 1
            }
        }
        AtomOp::And => old & b,
        AtomOp::Or => old | b,
        AtomOp::Xor => old ^ b,
        AtomOp::Exch => b,
        AtomOp::Cas => {
            if arith::trunc(old, bits) == arith::trunc(b, bits) {
                c
            } else {
                old
            }
        }
    }
}

/// A store of `size` bytes at `off` of the shared memory of the CTA of
/// `rank` into bytes a pending wgmma reads: S0024.
#[inline]
fn watched(
    ctas: &[Cta],
    events: &mut Events,
    me: ThreadRef,
    pc: usize,
    rank: u32,
    off: u64,
    size: u64,
) {
    let Some(c) = ctas.get(rank as usize) else {
        return;
    };
    if c.watch.is_empty() || size == 0 {
        return;
    }
    let hit = (off / 16..=(off + size - 1) / 16)
        .find_map(|ch| c.watch.get(&(ch as u32)).map(|&(_, wpc)| wpc));
    if let Some(wgmma_pc) = hit {
        events.record(
            pc as u32,
            me,
            Issue::WgmmaOverwrite {
                offset: off,
                wgmma_pc,
                copy: false,
            },
        );
    }
}

/// The first register of a pending wgmma (`locked`, sorted by slot) that
/// `inst` reads or writes: (slot, written, the wgmma's pc).
fn locked_access(prog: &Program, inst: &Inst, locked: &[(u32, u32)]) -> Option<(u32, bool, u32)> {
    let hit = |s: u32| -> Option<u32> {
        locked
            .binary_search_by_key(&s, |e| e.0)
            .ok()
            .and_then(|i| locked.get(i))
            .map(|e| e.1)
    };
    let mut reads: Vec<u32> = Vec::new();
    let mut writes: Vec<u32> = Vec::new();
    operands(prog, inst, &mut reads, &mut writes);
    writes
        .iter()
        .find_map(|&s| hit(s).map(|pc| (s, true, pc)))
        .or_else(|| reads.iter().find_map(|&s| hit(s).map(|pc| (s, false, pc))))
}

/// The register slots `inst` reads (its guard included) and writes, the
/// value operands of the warp-collective instructions too (`shfl`,
/// `ldmatrix`, ...); a `wgmma.mma_async`'s own are not listed (they are
/// the asynchronous proxy's, `wgmma.rs`).
pub(super) fn operands(prog: &Program, inst: &Inst, reads: &mut Vec<u32>, writes: &mut Vec<u32>) {
    let list = |at: u32, n: u32| {
        prog.lists
            .get(at as usize..at.saturating_add(n) as usize)
            .unwrap_or(&[])
    };
    reads.push(inst.guard & 0x7fff_ffff);
    match inst.op {
        Op::Nop | Op::Bra | Op::Call | Op::Ret | Op::Exit | Op::Trap | Op::WgmmaFence => {}
        Op::Sync => match prog.syncs.get(inst.aux as usize) {
            Some(SyncOp::Shfl { d, p, a, b, c, .. }) => {
                reads.extend([*a, *b, *c]);
                writes.extend([*d, *p]);
            }
            Some(SyncOp::Vote { d, a, .. }) | Some(SyncOp::Redux { d, a, .. }) => {
                reads.push(*a);
                writes.push(*d);
            }
            Some(SyncOp::Match { d, p, a, .. }) => {
                reads.push(*a);
                writes.extend([*d, *p]);
            }
            Some(SyncOp::Activemask { d }) => writes.push(*d),
            Some(SyncOp::Elect { d, p, .. }) => writes.extend([*d, *p]),
            Some(SyncOp::Matrix {
                store, num, regs, ..
            }) => {
                let r = list(*regs, u32::from(*num));
                if *store {
                    reads.extend_from_slice(r);
                } else {
                    writes.extend_from_slice(r);
                }
            }
            _ => {}
        },
        Op::Clock => writes.push(inst.d),
        Op::Pack { .. } => {
            reads.extend_from_slice(list(inst.aux, inst.c));
            writes.push(inst.d);
        }
        Op::Unpack { .. } => {
            reads.push(inst.a);
            writes.extend_from_slice(list(inst.aux, inst.c));
        }
        Op::Ld { vec, .. } => {
            reads.push(inst.a);
            if vec > 1 {
                writes.extend_from_slice(list(inst.aux, u32::from(vec)));
            } else {
                writes.push(inst.d);
            }
        }
        Op::St { vec, .. } => {
            reads.push(inst.a);
            if vec > 1 {
                reads.extend_from_slice(list(inst.aux, u32::from(vec)));
            } else {
                reads.push(inst.b);
            }
        }
        Op::Setp(..) | Op::Setp2(..) => {
            reads.extend([inst.a, inst.b]);
            writes.push(inst.d);
            if let Some(ext) = prog.setp_ext.get(inst.aux as usize) {
                writes.push(ext.d2);
                if let Some((_, c, _)) = ext.combine {
                    reads.push(c);
                }
            }
        }
        Op::Bfi(_) => {
            reads.extend([inst.a, inst.b, inst.c, inst.aux]);
            writes.push(inst.d);
        }
        _ => {
            reads.extend([inst.a, inst.b, inst.c]);
            writes.push(inst.d);
        }
    }
}

fn copy_params(fparam: &mut [u8], copies: &[(u32, u32, u32)]) {
    for &(from, to, size) in copies {
        let (from, to, size) = (from as usize, to as usize, size as usize);
        if from + size <= fparam.len() && to + size <= fparam.len() {
            fparam.copy_within(from..from + size, to);
        }
    }
}

/// Whether a random switch happens at this memory operation.
fn coin(random: bool, rng: &mut Rng) -> bool {
    random && rng.below(8) == 0
}

impl Machine<'_> {
    /// Runs thread `t` for at most `budget` instructions.
    pub fn run_slice(&mut self, t: u32, budget: u64) -> SliceEnd {
        // Most slices need none of the per-instruction hooks (the run-time
        // checks, `--jobs`' access tracking, the wgmma register rules):
        // they run a copy of the loop compiled without them, which is what
        // keeps the interpreter's rate with `--checks none`.
        let locked = self
            .threads_warp(t)
            .is_some_and(|w| !w.wg.locked.is_empty());
        let hooks =
            self.checks.is_some() || self.mem.track.is_some() || self.wgregs.count != 0 || locked;
        if hooks {
            self.slice::<true>(t, budget)
        } else {
            self.slice::<false>(t, budget)
        }
    }

    /// The warp of thread `t`.
    fn threads_warp(&self, t: u32) -> Option<&super::state::Warp> {
        let th = self.cluster.threads.get(t as usize)?;
        self.cluster.warps.get(th.warp as usize)
    }

    /// The interpreter loop; `HOOKS` false leaves out every per-instruction
    /// hook, for slices where none can fire (`run_slice` decides).
    #[inline(always)]
    fn slice<const HOOKS: bool>(&mut self, t: u32, budget: u64) -> SliceEnd {
        let prog = self.setup.prog;
        let random = self.setup.random;
        let Machine {
            mem:
                Memory {
                    allocs,
                    params,
                    ext,
                    track,
                    ..
                },
            cluster:
                Cluster {
                    threads,
                    ctas,
                    regs,
                    warps,
                    fence,
                    ..
                },
            stats:
                Counters {
                    counts,
                    generic,
                    steps,
                    ..
                },
            sched: Sched { rng, .. },
            events,
            checks,
            wgregs,
            ..
        } = self;
        let Some(th) = threads.get_mut(t as usize) else {
            return SliceEnd::Exit;
        };
        let Some(r) = regs.of_mut(t) else {
            return SliceEnd::Exit;
        };
        let own_rank = th.rank;
        let me = ThreadRef {
            ctaid: ctas.get(own_rank as usize).map_or([0; 3], |c| c.ctaid),
            tid: th.tid,
        };
        let code = &prog.code;
        let sems = &prog.sems;
        let lists = &prog.lists;
        let mut pc = th.pc as usize;
        let mut n = 0u64;
        // The registers of the warp's pending wgmma operations: while there
        // are any, every instruction is checked against them (S0023).
        let locked: &[(u32, u32)] = warps
            .get(th.warp as usize)
            .map_or(&[], |w| w.wg.locked.as_slice());
        macro_rules! rd {
            ($s:expr) => {
                r.get($s as usize).copied().unwrap_or(0)
            };
        }
        macro_rules! wr {
            ($s:expr, $v:expr) => {{
                let v = $v;
                if let Some(x) = r.get_mut($s as usize) {
                    *x = v;
                }
            }};
        }
        // The memory context of a load, store or atomic: the parts of the
        // machine borrowed again for each.
        macro_rules! mem_ctx {
            () => {
                MemCtx {
                    allocs,
                    ctas,
                    ext,
                    events,
                    generic,
                    track,
                    own_rank,
                    me,
                }
            };
        }
        let end = loop {
            if n >= budget {
                break SliceEnd::Budget;
            }
            let Some(inst) = code.get(pc) else {
                break SliceEnd::Exit;
            };
            n += 1;
            if let Some(c) = counts.get_mut(pc) {
                *c += 1;
            }
            let g = inst.guard;
            if HOOKS && !locked.is_empty() {
                if let Some((slot, write, wgmma_pc)) = locked_access(prog, inst, locked) {
                    events.record(
                        pc as u32,
                        me,
                        Issue::WgmmaRegister {
                            slot,
                            write,
                            wgmma_pc,
                        },
                    );
                }
            }
            if (rd!(g & 0x7fff_ffff) != 0) == (g >> 31 != 0) {
                pc += 1;
                continue;
            }
            // The wgmma registers it accesses, for the `wgmma.fence` rule.
            if HOOKS {
                for &(number, write) in wgregs.accessed(pc) {
                    fence.access(t, number, pc, write);
                }
            }
            match inst.op {
                Op::Nop => {
                    if let Some(san) = checks.as_deref_mut().filter(|_| HOOKS) {
                        if let Some(sem) = sems.get(pc).filter(|s| s.fence.is_some()) {
                            san.fence(t, *sem);
                        }
                    }
                }
                Op::Mov => wr!(inst.d, rd!(inst.a)),
                Op::IBin(op, ty) => wr!(inst.d, arith::int_bin(op, ty, rd!(inst.a), rd!(inst.b))),
                Op::IMad(mode, ty) => {
                    wr!(
                        inst.d,
                        arith::int_mad(mode, ty, rd!(inst.a), rd!(inst.b), rd!(inst.c))
                    )
                }
                Op::IUn(op, ty) => wr!(inst.d, arith::int_un(op, ty, rd!(inst.a))),
                Op::Bfe(ty) => wr!(
                    inst.d,
                    arith::bfe(ty, rd!(inst.a), rd!(inst.b), rd!(inst.c))
                ),
                Op::Bfi(ty) => wr!(
                    inst.d,
                    arith::bfi(ty, rd!(inst.a), rd!(inst.b), rd!(inst.c), rd!(inst.aux))
                ),
                Op::Prmt => wr!(inst.d, arith::prmt(rd!(inst.a), rd!(inst.b), rd!(inst.c))),
                Op::Shf { left, clamp } => wr!(
                    inst.d,
                    arith::shf(left, clamp, rd!(inst.a), rd!(inst.b), rd!(inst.c))
                ),
                Op::Setp(cmp, ty) => {
                    let v = arith::setp(cmp, ty, rd!(inst.a), rd!(inst.b));
                    match prog.setp_ext.get(inst.aux as usize) {
                        None => wr!(inst.d, u64::from(v)),
                        Some(ext) => {
                            let (p, q) = match ext.combine {
                                None => (v, !v),
                                Some((bop, c, neg)) => {
                                    let c = (rd!(c) != 0) != neg;
                                    let f = |x: bool| match bop {
                                        BoolOp::And => x && c,
                                        BoolOp::Or => x || c,
                                        BoolOp::Xor => x != c,
                                    };
                                    (f(v), f(!v))
                                }
                            };
                            wr!(inst.d, u64::from(p));
                            wr!(ext.d2, u64::from(q));
                        }
                    }
                }
                Op::Selp => {
                    let v = if rd!(inst.c) != 0 {
                        rd!(inst.a)
                    } else {
                        rd!(inst.b)
                    };
                    wr!(inst.d, v)
                }
                Op::FBin(op, ty, rnd, mode) => {
                    wr!(
                        inst.d,
                        farith::float_bin(op, ty, rnd, mode, rd!(inst.a), rd!(inst.b))
                    )
                }
                Op::Fma(ty, rnd, mode) => {
                    wr!(
                        inst.d,
                        farith::fma(ty, rnd, mode, rd!(inst.a), rd!(inst.b), rd!(inst.c))
                    )
                }
                Op::FUn(op, ty, rnd, mode) => {
                    wr!(inst.d, farith::float_un(op, ty, rnd, mode, rd!(inst.a)))
                }
                Op::FBin2(op, ty, rnd, mode) => {
                    let (a, b) = (rd!(inst.a), rd!(inst.b));
                    wr!(
                        inst.d,
                        farith::halves(|h| farith::float_bin(op, ty, rnd, mode, a >> h, b >> h))
                    )
                }
                Op::Fma2(ty, rnd, mode) => {
                    let (a, b, c) = (rd!(inst.a), rd!(inst.b), rd!(inst.c));
                    wr!(
                        inst.d,
                        farith::halves(|h| farith::fma(ty, rnd, mode, a >> h, b >> h, c >> h))
                    )
                }
                Op::FUn2(op, ty, rnd, mode) => {
                    let a = rd!(inst.a);
                    wr!(
                        inst.d,
                        farith::halves(|h| farith::float_un(op, ty, rnd, mode, a >> h))
                    )
                }
                Op::Setp2(cmp, ty) => {
                    let (a, b) = (rd!(inst.a), rd!(inst.b));
                    let lo = arith::setp(cmp, ty, a & 0xffff, b & 0xffff);
                    let hi = arith::setp(cmp, ty, (a >> 16) & 0xffff, (b >> 16) & 0xffff);
                    let ext = prog.setp_ext.get(inst.aux as usize).copied();
                    let f = |x: bool| match ext.and_then(|e| e.combine) {
                        None => x,
                        Some((bop, c, neg)) => {
                            let c = (rd!(c) != 0) != neg;
                            match bop {
                                BoolOp::And => x && c,
                                BoolOp::Or => x || c,
                                BoolOp::Xor => x != c,
                            }
                        }
                    };
                    let (p, q) = (f(lo), f(hi));
                    wr!(inst.d, u64::from(p));
                    if let Some(e) = ext {
                        wr!(e.d2, u64::from(q));
                    }
                }
                Op::Cvt(c) => wr!(inst.d, farith::cvt(c, rd!(inst.a))),
                Op::CvtTf32 => wr!(inst.d, farith::tf32(rd!(inst.a))),
                Op::CvtPacked(c) => {
                    wr!(inst.d, farith::cvt_packed(c, rd!(inst.a), rd!(inst.b)))
                }
                Op::Pack { bits } => {
                    let mut v = 0u64;
                    for k in 0..inst.c as usize {
                        let part = lists.get(inst.aux as usize + k).map_or(0, |s| rd!(*s));
                        let shift = k as u32 * u32::from(bits);
                        v |= arith::trunc(part, u32::from(bits))
                            .checked_shl(shift)
                            .unwrap_or(0);
                    }
                    wr!(inst.d, v)
                }
                Op::Unpack { bits } => {
                    let a = rd!(inst.a);
                    for k in 0..inst.c as usize {
                        if let Some(&d) = lists.get(inst.aux as usize + k) {
                            let shift = k as u32 * u32::from(bits);
                            wr!(
                                d,
                                arith::trunc(a.checked_shr(shift).unwrap_or(0), u32::from(bits))
                            );
                        }
                    }
                }
                Op::Cvta(space, dir) => {
                    let a = rd!(inst.a);
                    let v = match (dir, space) {
                        (CvtaDir::ToGeneric, Space::Shared | Space::SharedCluster) => {
                            memory::SHARED_WINDOW | (a & 0xffff_ffff)
                        }
                        (CvtaDir::ToGeneric, Space::Local) => {
                            memory::LOCAL_WINDOW | (a & 0xff_ffff_ffff)
                        }
                        (CvtaDir::ToGeneric, Space::Param) => {
                            memory::PARAM_WINDOW | (a & 0xff_ffff_ffff)
                        }
                        (CvtaDir::FromGeneric, Space::Shared | Space::SharedCluster) => {
                            a & 0xffff_ffff
                        }
                        (CvtaDir::FromGeneric, Space::Local | Space::Param) => a & 0xff_ffff_ffff,
                        _ => a,
                    };
                    wr!(inst.d, v)
                }
                Op::Mapa { generic } => {
                    let (_, offset) = memory::split_cluster(rd!(inst.a), own_rank);
                    let rank = rd!(inst.b) as u32;
                    if rank >= ext.cluster_size {
                        // Not wrapped into a CTA of the cluster: reported,
                        // and an address every access through is out of
                        // bounds.
                        let cluster = ext.cluster_size;
                        events.record(pc as u32, me, Issue::MapaRank { rank, cluster });
                    }
                    let addr = memory::cluster_addr(rank.min(memory::NO_RANK), offset);
                    wr!(
                        inst.d,
                        if generic {
                            memory::SHARED_WINDOW | addr
                        } else {
                            addr
                        }
                    )
                }
                Op::Getctarank { .. } => {
                    let (rank, _) = memory::split_cluster(rd!(inst.a), own_rank);
                    wr!(inst.d, u64::from(rank))
                }
                Op::Isspacep(space) => {
                    let s = memory::generic_space(rd!(inst.a));
                    let yes = match space {
                        Space::Shared | Space::SharedCluster => s == Space::SharedCluster,
                        Space::Const => s == Space::Global,
                        other => s == other,
                    };
                    wr!(inst.d, u64::from(yes))
                }
                Op::Ld { space, ty, vec } => {
                    let size = u64::from(ty.bytes());
                    let addr = rd!(inst.a).wrapping_add(inst.off as u64);
                    let mut mem = mem_ctx!();
                    let place = mem.place(pc, space, addr, size * u64::from(vec), AccessKind::Load);
                    if let (Some(san), Some(p)) = (checks.as_deref_mut().filter(|_| HOOKS), place) {
                        let sem = sems.get(pc).copied().unwrap_or_default();
                        san.access(
                            events,
                            t,
                            pc as u32,
                            p,
                            size * u64::from(vec),
                            AccessKind::Load,
                            sem,
                        );
                    }
                    // The place's fields are read one by one (a copy of
                    // the whole value just stored stalls on forwarding).
                    let (offset, store) = match place {
                        Some(p) => (p.offset, bytes(p.target, allocs, ctas, th, params)),
                        None => (0, None),
                    };
                    let store = store.as_deref();
                    if vec == 1 {
                        wr!(inst.d, load_value(store, offset, size, ty));
                    } else {
                        for k in 0..u64::from(vec) {
                            let d = lists
                                .get(inst.aux as usize + k as usize)
                                .copied()
                                .unwrap_or(NO_DEST);
                            wr!(d, load_value(store, offset + k * size, size, ty));
                        }
                    }
                    if inst.c == STRONG_LOAD || coin(random, rng) {
                        pc += 1;
                        break SliceEnd::Yield;
                    }
                }
                Op::St { space, ty, vec } => {
                    let size = u64::from(ty.bytes());
                    let addr = rd!(inst.a).wrapping_add(inst.off as u64);
                    let mut mem = mem_ctx!();
                    let place =
                        mem.place(pc, space, addr, size * u64::from(vec), AccessKind::Store);
                    if let Some(Target::Shared(rank)) = place.map(|p| p.target) {
                        let off = place.map_or(0, |p| p.offset);
                        watched(ctas, events, me, pc, rank, off, size * u64::from(vec));
                    }
                    let values: [u64; 4] = std::array::from_fn(|k| {
                        if vec == 1 {
                            rd!(inst.b)
                        } else {
                            lists.get(inst.aux as usize + k).map_or(0, |s| rd!(*s))
                        }
                    });
                    if let (Some(san), Some(p)) = (checks.as_deref_mut().filter(|_| HOOKS), place) {
                        let sem = sems.get(pc).copied().unwrap_or_default();
                        // Whether the store leaves the bytes as they are
                        // (a lane repeating its warp's store of one value).
                        let unchanged =
                            san.on.races
                                && bytes(p.target, allocs, ctas, th, params).is_some_and(|b| {
                                    values.iter().take(usize::from(vec)).enumerate().all(
                                        |(k, v)| {
                                            memory::read(b, p.offset + k as u64 * size, size)
                                                == Some(*v & mask_of(size))
                                        },
                                    )
                                });
                        san.store(
                            events,
                            t,
                            pc as u32,
                            p,
                            size * u64::from(vec),
                            sem,
                            unchanged,
                        );
                    }
                    if let Some(p) = place {
                        if let Some(b) = bytes(p.target, allocs, ctas, th, params) {
                            for (k, v) in values.iter().take(usize::from(vec)).enumerate() {
                                memory::write(b, p.offset + k as u64 * size, size, *v);
                            }
                        }
                    }
                    if coin(random, rng) {
                        pc += 1;
                        break SliceEnd::Yield;
                    }
                }
                Op::Atom { space, op, ty } => {
                    let size = u64::from(ty.bytes());
                    let addr = rd!(inst.a).wrapping_add(inst.off as u64);
                    let mut mem = mem_ctx!();
                    let place = mem.place(pc, space, addr, size, AccessKind::Atomic);
                    if let Some(Target::Shared(rank)) = place.map(|p| p.target) {
                        let off = place.map_or(0, |p| p.offset);
                        watched(ctas, events, me, pc, rank, off, size);
                    }
                    if let (Some(san), Some(p)) = (checks.as_deref_mut().filter(|_| HOOKS), place) {
                        let sem = sems.get(pc).copied().unwrap_or_default();
                        san.access(events, t, pc as u32, p, size, AccessKind::Atomic, sem);
                    }
                    let mut old = 0;
                    if let Some(p) = place {
                        if let Some(b) = bytes(p.target, allocs, ctas, th, params) {
                            old = memory::read(b, p.offset, size).unwrap_or(0);
                            let new = atomic_value(op, ty, old, rd!(inst.b), rd!(inst.c));
                            memory::write(b, p.offset, size, new);
                        }
                    }
                    if inst.d != NO_DEST {
                        wr!(inst.d, extend(old, ty));
                    }
                    if coin(random, rng) {
                        pc += 1;
                        break SliceEnd::Yield;
                    }
                }
                Op::Clock => {
                    let v = (th.executed + n) >> (inst.c >> 8);
                    wr!(inst.d, arith::trunc(v, inst.c & 0xff));
                }
                Op::Bra => {
                    // Where the thread last jumped from (a report says how
                    // a thread reached where it waits).
                    th.last_jump = pc as u32;
                    pc = inst.off as usize;
                    continue;
                }
                Op::Call => {
                    let Some(call) = prog.calls.get(inst.aux as usize) else {
                        break SliceEnd::Trap;
                    };
                    let Some(f) = prog.funcs.get(call.func as usize) else {
                        break SliceEnd::Trap;
                    };
                    copy_params(&mut th.fparam, &call.args);
                    th.calls.push((pc as u32 + 1, inst.aux));
                    pc = f.entry as usize;
                    continue;
                }
                Op::Ret => match th.calls.pop() {
                    Some((ret, aux)) => {
                        if let Some(call) = prog.calls.get(aux as usize) {
                            copy_params(&mut th.fparam, &call.rets);
                        }
                        pc = ret as usize;
                        continue;
                    }
                    None => break SliceEnd::Exit,
                },
                Op::Exit => break SliceEnd::Exit,
                Op::Trap => break SliceEnd::Trap,
                Op::WgmmaFence => fence.fence(t),
                Op::Sync => {
                    // Counted when it is executed by the machine.
                    n -= 1;
                    if let Some(c) = counts.get_mut(pc) {
                        *c -= 1;
                    }
                    break SliceEnd::Sync;
                }
            }
            pc += 1;
        };
        th.pc = pc as u32;
        th.executed += n;
        *steps += n;
        end
    }
}
