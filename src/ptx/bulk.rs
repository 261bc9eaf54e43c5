//! Bulk asynchronous copies (`cp.async.bulk`), the async-proxy fence and
//! cluster barriers (`cluster_sync()`, and the one before a kernel that
//! touched other CTAs' shared memory exits). All need sm_90; on older targets
//! (which the checker rejects, E0200) they are errors.

use super::error::Result;
use super::writer::{emit, Class, Operand, Writer};
use crate::ir::{
    consteval, BarrierRef, Expr, ParamType, Place, StmtId, TensorCopy, TensorCopyKind,
};

impl Writer<'_> {
    /// `copy_async(dst, src, bytes, barrier)`: global → shared bulk copy that
    /// completes `bytes` transactions on the barrier.
    pub(super) fn copy_async(
        &mut self,
        dst: &Place,
        src: &Place,
        bytes: &Expr,
        barrier: &BarrierRef,
    ) -> Result<()> {
        self.require_sm90("copy_async")?;
        self.need(8, 0);
        let d = self.place_ref(dst)?;
        let s = self.place_ref(src)?;
        let n = self.expr_u32(bytes)?;
        let t = self.barrier_target(barrier)?;
        emit!(
            self,
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes {}, {}, {}, {};",
            d.addr,
            s.addr,
            n,
            t.addr
        );
        Ok(())
    }

    /// `copy_async_store(dst, src, bytes)`: shared → global, bulk group.
    pub(super) fn copy_async_store(
        &mut self,
        dst: &Place,
        src: &Place,
        bytes: &Expr,
    ) -> Result<()> {
        self.require_sm90("copy_async_store")?;
        self.need(8, 0);
        let d = self.place_ref(dst)?;
        let s = self.place_ref(src)?;
        let n = self.expr_u32(bytes)?;
        emit!(
            self,
            "cp.async.bulk.global.shared::cta.bulk_group {}, {}, {};",
            d.addr,
            s.addr,
            n
        );
        Ok(())
    }

    /// A tensor copy (`tma_load`, `tma_store`, `tma_reduce_add`): the
    /// slice's start, the map's generic address (taken in the prologue),
    /// the coordinates innermost first as PTX wants them (kdsl writes them
    /// outermost first), the barrier of a load and its CTA mask.
    pub(super) fn tensor_copy(&mut self, c: &TensorCopy) -> Result<()> {
        self.require_sm90(c.kind.name())?;
        self.need(8, 0);
        let rank = match self.kernel.and_then(|k| k.params.get(c.map.index())) {
            Some(p) => match p.ty {
                ParamType::Tensor(m) => m.rank(),
                _ => return Err(self.invalid(format!("`{}` is not a tensor map", p.name))),
            },
            None => return Err(self.invalid(format!("parameter {} does not exist", c.map.0))),
        };
        if c.coords.len() != rank {
            return Err(self.invalid(format!(
                "{} coordinates for a map of rank {rank}",
                c.coords.len()
            )));
        }
        let Some(map) = self.params.get(c.map.index()).copied().flatten() else {
            return Err(self.invalid(format!("parameter {} has no register here", c.map.0)));
        };
        let outer = self.at(c.smem.span);
        let start = self.slice_addr(c.smem.array, &c.smem.indices)?;
        let smem = self.addr_operand(start);
        self.restore(outer);
        let outer = self.at(c.box_span);
        let mut coords = Vec::with_capacity(rank);
        for e in &c.coords {
            coords.push(self.expr_u32(e)?.to_string());
        }
        self.restore(outer);
        coords.reverse();
        let tensor = format!("[{map}, {{{}}}]", coords.join(", "));
        match &c.kind {
            TensorCopyKind::Load { barrier, mask } => {
                let bar = self.barrier_target(barrier)?;
                match mask {
                    None => emit!(
                        self,
                        "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{}], {tensor}, {};",
                        smem,
                        bar.addr
                    ),
                    Some(m) => {
                        let mask = self.cta_mask(m)?;
                        emit!(
                            self,
                            "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{}], {tensor}, {}, {};",
                            smem,
                            bar.addr,
                            mask
                        )
                    }
                }
            }
            TensorCopyKind::Store => emit!(
                self,
                "cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group {tensor}, [{}];",
                smem
            ),
            TensorCopyKind::ReduceAdd => emit!(
                self,
                "cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.add.tile.bulk_group {tensor}, [{}];",
                smem
            ),
        }
        Ok(())
    }

    /// A multicast's CTA mask: 16 bits, an immediate or a `.b16` register
    /// (ptxas refuses a `.b32` one, t25).
    fn cta_mask(&mut self, m: &Expr) -> Result<Operand> {
        if let Some(c) = consteval::eval_int(m) {
            return Ok(Operand::imm(c & 0xffff));
        }
        let v = self.expr_u32(m)?;
        let v = self.in_reg(v, m.ty);
        let h = self.reg(Class::B16);
        emit!(self, "cvt.u16.u32 {}, {};", h, v);
        Ok(Operand::Reg(h))
    }

    pub(super) fn copy_async_commit(&mut self) -> Result<()> {
        self.require_sm90("copy_async_commit")?;
        self.need(8, 0);
        emit!(self, "cp.async.bulk.commit_group;");
        Ok(())
    }

    pub(super) fn copy_async_wait(&mut self, n: u32) -> Result<()> {
        self.require_sm90("copy_async_wait")?;
        self.need(8, 0);
        emit!(self, "cp.async.bulk.wait_group.read {};", n);
        Ok(())
    }

    pub(super) fn fence_proxy_async(&mut self) -> Result<()> {
        self.require_sm90("fence_proxy_async")?;
        self.need(8, 0);
        emit!(self, "fence.proxy.async.shared::cta;");
        Ok(())
    }

    /// `cluster_sync()` (statement `id`): `.aligned` where every thread of
    /// the CTA runs it, as the uniformity facts of [`crate::analysis`] say
    /// (so every thread of each warp runs it together), in a kernel. A
    /// device function's body does not know its callers' control flow, so
    /// it never is.
    pub(super) fn cluster_sync(&mut self, id: StmtId) -> Result<()> {
        self.require_sm90("cluster_sync")?;
        self.need(8, 0);
        let aligned = if self.kernel.is_some() && self.info.divergence(id).is_none() {
            ".aligned"
        } else {
            ""
        };
        emit!(self, "barrier.cluster.arrive.release{};", aligned);
        emit!(self, "barrier.cluster.wait.acquire{};", aligned);
        Ok(())
    }

    /// Before a kernel that touched other CTAs' shared memory exits: no CTA
    /// leaves while a peer may still access its shared memory.
    pub(super) fn cluster_exit_sync(&mut self) {
        self.need(8, 0);
        emit!(self, "barrier.cluster.arrive.release;");
        emit!(self, "barrier.cluster.wait.acquire;");
    }
}
