//! `ldmatrix` and `stmatrix` (PTX ISA §9.7.14.5.15–16), `.m8n8` with
//! 16-bit elements: a warp loads or stores up to four 8x8 matrices, the
//! eight rows of matrix i at the addresses lanes `8i..8i+7` give (16 bytes
//! each). Register i of lane l holds the two elements of matrix i at row
//! `l/4`, columns `2·(l%4)` and `+1` (low half first); with `.trans`, at
//! rows `2·(l%4)` and `+1` of column `l/4`.

use super::events::AccessKind;
use super::memory::{self, Target};
use super::state::Rendezvous;
use super::Machine;
use crate::sim::decode::ops::SyncOp;

impl Machine<'_> {
    pub(super) fn matrix(&mut self, warp: u32, pc: u32, r: &Rendezvous) {
        let prog = self.setup.prog;
        let Some(SyncOp::Matrix {
            store,
            addr,
            num,
            trans,
            regs,
        }) = prog
            .code
            .get(pc as usize)
            .and_then(|i| prog.syncs.get(i.aux as usize))
        else {
            return;
        };
        let first = self
            .cluster
            .warps
            .get(warp as usize)
            .map_or(0, |w| w.first_thread);
        let own = self
            .cluster
            .threads
            .get(first as usize)
            .map_or(0, |th| th.rank);
        let kind = if *store {
            AccessKind::Store
        } else {
            AccessKind::Load
        };
        // The shared offset of each row: matrix i, row j from lane 8i + j.
        let mut rows: Vec<Option<(u32, u64)>> = Vec::new();
        for lane in 0..8 * u32::from(*num) {
            let t = first + lane;
            let a = self.reg(t, addr.base).wrapping_add(addr.off as u64);
            let place =
                memory::resolve(addr.space, a, 16, 16, own, &self.mem.ext, &self.mem.allocs);
            rows.push(match place {
                Ok(p) => match p.target {
                    Target::Shared(rank) => Some((rank, p.offset)),
                    _ => {
                        let fault = memory::Fault::OutOfBounds {
                            space: addr.space,
                            addr: a,
                            target: None,
                        };
                        self.fault(t, pc, fault, kind, 16);
                        None
                    }
                },
                Err(f) => {
                    self.fault(t, pc, f, kind, 16);
                    None
                }
            });
        }
        // The run-time checks: each row read by the lane that gave its
        // address (a store's pieces are checked as they are written).
        if let (Some(san), false) = (&mut self.checks, *store) {
            for (lane, row) in rows.iter().enumerate() {
                if let Some((rank, off)) = row {
                    let place = memory::Place {
                        target: Target::Shared(*rank),
                        offset: *off,
                    };
                    let sem = Default::default();
                    san.access(
                        &mut self.events,
                        first + lane as u32,
                        pc,
                        place,
                        16,
                        kind,
                        sem,
                    );
                }
            }
        }
        // Element (matrix i, row, column) ↔ (lane, register, half).
        let place = |lane: u32, h: u32| -> (u32, u32) {
            if *trans {
                (2 * (lane % 4) + h, lane / 4)
            } else {
                (lane / 4, 2 * (lane % 4) + h)
            }
        };
        for i in 0..u32::from(*num) {
            let Some(&slot) = prog.lists.get((*regs + i) as usize) else {
                continue;
            };
            for lane in 0..32u32 {
                let t = first + lane;
                if !r.members.iter().any(|&(m, _)| m == t) {
                    continue;
                }
                let mut word = 0u64;
                let value = if *store { self.reg(t, slot) } else { 0 };
                for h in 0..2 {
                    let (row, col) = place(lane, h);
                    let Some(Some((rank, off))) = rows.get((8 * i + row) as usize).copied() else {
                        continue;
                    };
                    let at = off + 2 * u64::from(col);
                    if *store {
                        self.check_watch(t, pc, rank, at, 2, false);
                        if let Some(san) = &mut self.checks {
                            let place = memory::Place {
                                target: Target::Shared(rank),
                                offset: at,
                            };
                            san.access(&mut self.events, t, pc, place, 2, kind, Default::default());
                        }
                        if let Some(mem) = self.cluster.ctas.get_mut(rank as usize) {
                            memory::write(&mut mem.shared, at, 2, value >> (16 * h));
                        }
                    } else if let Some(mem) = self.cluster.ctas.get(rank as usize) {
                        word |= memory::read(&mem.shared, at, 2).unwrap_or(0) << (16 * h);
                    }
                }
                if !*store {
                    self.set_reg(t, slot, word);
                }
            }
        }
    }
}
