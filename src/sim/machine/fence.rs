//! The `wgmma.fence` rule (PTX ISA §9.7.15.7.1): the fence "must be
//! issued by all warps of the warpgroup … before the first
//! `wgmma.mma_async` operation in a warpgroup" and "between a register
//! access by a thread in the warpgroup and any `wgmma.mma_async`
//! instruction that accesses the same registers, either as accumulator or
//! input register containing fragments of matrix A, except when these are
//! accumulator register accesses across multiple `wgmma.mma_async`
//! instructions of the same shape"; "otherwise, the behavior is
//! undefined" (S0028).
//!
//! An access is a read or a write: a `mov` that zeroes an accumulator
//! before a wgmma with scale-d = 0 (which does not read D but writes it)
//! needs the fence as much as the conversion that writes an RS wgmma's A
//! fragment, and so does the epilogue's read of an accumulator before the
//! next tile's wgmma overwrites it.
//!
//! The registers some wgmma of the program uses (accumulators, A
//! fragments) are numbered ([`WgRegs`]); for each instruction, which of
//! them it reads or writes is computed once. Per thread ([`Touch`]), the
//! last access of each since the thread's last `wgmma.fence`: by an
//! ordinary instruction (its pc, read or written) or by a wgmma (its pc,
//! for the shape exception). A `wgmma.fence` clears the thread's row; a
//! wgmma checks the registers it uses in each of its lanes' rows
//! (`wgmma.rs`).

use super::exec::operands;
use crate::sim::decode::ops::{SyncOp, WgA};
use crate::sim::decode::Program;

/// An entry of a [`Touch`] row: 0 when untouched since the fence, else
/// [`WGMMA`] | the pc of the wgmma that used it last, else `pc + 1` of
/// the ordinary instruction that accessed it last, [`WRITE`] set when it
/// wrote it.
const WGMMA: u32 = 1 << 31;
const WRITE: u32 = 1 << 30;
const PC: u32 = WRITE - 1;

/// The registers a program's wgmma instructions use, and which of them
/// each instruction accesses.
#[derive(Clone, Debug, Default)]
pub struct WgRegs {
    /// Per slot: 1 + its number, 0 for a slot no wgmma uses.
    index: Vec<u32>,
    /// How many are numbered.
    pub count: usize,
    /// Per pc: the range of `list` it accesses.
    at: Vec<(u32, u32)>,
    /// (number, written).
    list: Vec<(u32, bool)>,
}

impl WgRegs {
    pub fn of(prog: &Program) -> WgRegs {
        let mut index = vec![0u32; prog.template.len()];
        let mut count = 0usize;
        let mut number = |slot: u32, index: &mut Vec<u32>| {
            if let Some(e) = index.get_mut(slot as usize) {
                if *e == 0 {
                    count += 1;
                    *e = count as u32;
                }
            }
        };
        for s in &prog.syncs {
            let SyncOp::Wgmma(w) = s else { continue };
            for i in 0..w.nd {
                if let Some(&slot) = prog.lists.get((w.d + i) as usize) {
                    number(slot, &mut index);
                }
            }
            if let WgA::Regs(l) = w.a {
                for j in 0..4 {
                    if let Some(&slot) = prog.lists.get((l + j) as usize) {
                        number(slot, &mut index);
                    }
                }
            }
        }
        let mut regs = WgRegs {
            index,
            count,
            at: Vec::new(),
            list: Vec::new(),
        };
        if count == 0 {
            return regs;
        }
        let (mut reads, mut writes) = (Vec::new(), Vec::new());
        for inst in &prog.code {
            reads.clear();
            writes.clear();
            operands(prog, inst, &mut reads, &mut writes);
            let from = regs.list.len() as u32;
            for (slots, write) in [(&writes, true), (&reads, false)] {
                for &s in slots.iter() {
                    if let Some(n) = regs.number(s) {
                        let seen = regs
                            .list
                            .get(from as usize..)
                            .is_some_and(|l| l.iter().any(|e| e.0 == n));
                        if !seen {
                            regs.list.push((n, write));
                        }
                    }
                }
            }
            regs.at.push((from, regs.list.len() as u32));
        }
        regs
    }

    /// The number of a slot some wgmma uses.
    pub fn number(&self, slot: u32) -> Option<u32> {
        match self.index.get(slot as usize) {
            Some(&n) if n > 0 => Some(n - 1),
            _ => None,
        }
    }

    /// The numbered registers the instruction at `pc` accesses.
    pub fn accessed(&self, pc: usize) -> &[(u32, bool)] {
        self.at
            .get(pc)
            .and_then(|&(a, b)| self.list.get(a as usize..b as usize))
            .unwrap_or(&[])
    }
}

/// What came before a wgmma's use of a register, since the thread's last
/// `wgmma.fence`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Before {
    /// Nothing since the fence.
    Clean,
    /// The thread has executed no `wgmma.fence` at all.
    NoFence,
    /// An ordinary instruction at `pc` read or wrote it.
    Access { pc: u32, write: bool },
    /// The wgmma at `pc` used it.
    Wgmma { pc: u32 },
}

/// Per thread of the cluster: whether it executed a `wgmma.fence`, and its
/// row of the last accesses since.
#[derive(Clone, Debug, Default)]
pub struct Touch {
    fenced: Vec<bool>,
    rows: Vec<u32>,
    n: usize,
}

impl Touch {
    /// For `threads` threads and the `n` registers of [`WgRegs`].
    pub fn new(threads: usize, n: usize) -> Touch {
        Touch {
            fenced: if n == 0 {
                Vec::new()
            } else {
                vec![false; threads]
            },
            rows: vec![0; threads.saturating_mul(n)],
            n,
        }
    }

    fn entry(&mut self, t: u32, number: u32) -> Option<&mut u32> {
        if number as usize >= self.n {
            return None;
        }
        self.rows.get_mut(t as usize * self.n + number as usize)
    }

    /// An ordinary instruction at `pc` of thread `t` accessed `number`.
    pub fn access(&mut self, t: u32, number: u32, pc: usize, write: bool) {
        let v = (pc as u32).saturating_add(1).min(PC) | if write { WRITE } else { 0 };
        if let Some(e) = self.entry(t, number) {
            *e = v;
        }
    }

    /// `wgmma.fence` by thread `t`.
    pub fn fence(&mut self, t: u32) {
        if self.n == 0 {
            return;
        }
        if let Some(f) = self.fenced.get_mut(t as usize) {
            *f = true;
        }
        let at = t as usize * self.n;
        if let Some(row) = self.rows.get_mut(at..at + self.n) {
            row.fill(0);
        }
    }

    /// What came before thread `t`'s use of `number` by a wgmma.
    pub fn before(&mut self, t: u32, number: u32) -> Before {
        if !self.fenced.get(t as usize).copied().unwrap_or(true) {
            return Before::NoFence;
        }
        match self.entry(t, number).map_or(0, |e| *e) {
            0 => Before::Clean,
            v if v & WGMMA != 0 => Before::Wgmma { pc: v & !WGMMA },
            v => Before::Access {
                pc: (v & PC).saturating_sub(1),
                write: v & WRITE != 0,
            },
        }
    }

    /// The wgmma at `pc` used `number` (as an accumulator when `acc`, else
    /// as A): an accumulator remembers the wgmma, an A register is
    /// cleared (the issue read it; the check has been made).
    pub fn used(&mut self, t: u32, number: u32, pc: u32, acc: bool) {
        if let Some(e) = self.entry(t, number) {
            *e = if acc { WGMMA | (pc & PC) } else { 0 };
        }
    }

    /// Counts thread `t` as fenced from now on (after its missing fence
    /// was reported: one report per missing fence).
    pub fn assume_fenced(&mut self, t: u32) {
        self.fence(t);
    }
}
