//! Bulk asynchronous copies (`cp.async.bulk`), the async-proxy fence and
//! cluster barriers (`cluster_sync()`, and the one before a kernel that
//! touched other CTAs' shared memory exits). All need sm_90; on older targets
//! (which the checker rejects, E0200) they become comments.

use super::writer::{emit, Writer};
use crate::ir::{BarrierRef, Expr, Place};

impl Writer<'_> {
    /// `copy_async(dst, src, bytes, barrier)`: global → shared bulk copy that
    /// completes `bytes` transactions on the barrier.
    pub(super) fn copy_async(
        &mut self,
        dst: &Place,
        src: &Place,
        bytes: &Expr,
        barrier: &BarrierRef,
    ) {
        if !self.require_sm90("copy_async") {
            return;
        }
        self.need(8, 0);
        let (Some(d), Some(s)) = (self.place_ref(dst), self.place_ref(src)) else {
            return;
        };
        let n = self.expr_u32(bytes);
        let Some(t) = self.barrier_target(barrier) else {
            return;
        };
        emit!(
            self,
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes {}, {}, {}, {};",
            d.addr,
            s.addr,
            n,
            t.addr
        );
    }

    /// `copy_async_store(dst, src, bytes)`: shared → global, bulk group.
    pub(super) fn copy_async_store(&mut self, dst: &Place, src: &Place, bytes: &Expr) {
        if !self.require_sm90("copy_async_store") {
            return;
        }
        self.need(8, 0);
        let (Some(d), Some(s)) = (self.place_ref(dst), self.place_ref(src)) else {
            return;
        };
        let n = self.expr_u32(bytes);
        emit!(
            self,
            "cp.async.bulk.global.shared::cta.bulk_group {}, {}, {};",
            d.addr,
            s.addr,
            n
        );
    }

    pub(super) fn copy_async_commit(&mut self) {
        if self.require_sm90("copy_async_commit") {
            self.need(8, 0);
            emit!(self, "cp.async.bulk.commit_group;");
        }
    }

    pub(super) fn copy_async_wait(&mut self, n: u32) {
        if self.require_sm90("copy_async_wait") {
            self.need(8, 0);
            emit!(self, "cp.async.bulk.wait_group.read {};", n);
        }
    }

    pub(super) fn fence_proxy_async(&mut self) {
        if self.require_sm90("fence_proxy_async") {
            self.need(8, 0);
            emit!(self, "fence.proxy.async.shared::cta;");
        }
    }

    /// `cluster_sync()`: `.aligned` only at the top level of a kernel before
    /// any `return`, where every thread of a warp runs it together.
    pub(super) fn cluster_sync(&mut self) {
        if !self.require_sm90("cluster_sync") {
            return;
        }
        self.need(8, 0);
        let aligned = if self.kernel.is_some() && self.depth == 0 && !self.returned {
            ".aligned"
        } else {
            ""
        };
        emit!(self, "barrier.cluster.arrive.release{};", aligned);
        emit!(self, "barrier.cluster.wait.acquire{};", aligned);
    }

    /// Before a kernel that touched other CTAs' shared memory exits: no CTA
    /// leaves while a peer may still access its shared memory.
    pub(super) fn cluster_exit_sync(&mut self) {
        self.need(8, 0);
        emit!(self, "barrier.cluster.arrive.release;");
        emit!(self, "barrier.cluster.wait.acquire;");
    }
}
