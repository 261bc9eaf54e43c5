//! Bulk asynchronous copies (`cp.async.bulk`), the async-proxy fence and
//! cluster barriers (`cluster_sync()`, and the one before a kernel that
//! touched other CTAs' shared memory exits). All need sm_90; on older targets
//! (which the checker rejects, E0200) they are errors.

use super::error::Result;
use super::writer::{emit, Writer};
use crate::ir::{BarrierRef, Expr, Place, StmtId};

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
