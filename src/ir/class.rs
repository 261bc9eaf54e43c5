//! What a statement is ([`StmtClass`]), for the questions every later
//! stage asks of every statement: one exhaustive match.

use super::{FuncId, StmtKind};

/// What a statement is, for the questions every later stage asks of every
/// statement (what synchronises, what leaves a block, what holds blocks):
/// one exhaustive match ([`StmtKind::class`]), so that a new kind of
/// statement must be classified there, and no stage's catch-all arm
/// silently mis-handles, say, a new synchronising statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StmtClass {
    /// Computes and stores: `let`, assignments, stores, vector loads and
    /// stores, expression statements (what its expressions do aside).
    Compute,
    /// Holds blocks of its own: `if`, `while`, `for`, a loop over a list.
    Control,
    /// Leaves its block: `break`, `continue`, `return`.
    Jump,
    /// A call of a device function, which may run a CTA-wide barrier.
    Call(FuncId),
    /// Every thread of the CTA (or cluster) must reach it.
    CtaBarrier(CtaBarrier),
    /// Synchronises or orders memory otherwise.
    Sync(SyncOp),
    /// Failed to check (a module with errors only): may do anything.
    Failed,
}

/// A barrier every thread of the CTA, or of the cluster, must reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtaBarrier {
    /// `sync_threads()`
    Threads,
    /// `cluster_sync()`
    Cluster,
}

impl CtaBarrier {
    /// The built-in as written in kdsl.
    pub fn name(self) -> &'static str {
        match self {
            CtaBarrier::Threads => "sync_threads",
            CtaBarrier::Cluster => "cluster_sync",
        }
    }
}

/// The statements that synchronise or order memory, short of a CTA-wide
/// barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncOp {
    /// `sync_warp(mask)`.
    Warp,
    /// `fence(...)`, `fence_proxy_async()`.
    Fence,
    /// An operation on an mbarrier.
    Mbarrier,
    /// An operation on a named barrier.
    Named,
    /// `copy_async`, `copy_async_store`, the tensor copies.
    BulkCopy,
    /// `copy_async_commit()`, `copy_async_wait(n)`.
    BulkGroup,
    /// An operation every thread of a warpgroup runs together
    /// (`set_max_regs`, the `wgmma` operations): `.sync.aligned` over the
    /// warpgroup.
    Warpgroup,
}

impl StmtKind {
    /// See [`StmtClass`].
    pub fn class(&self) -> StmtClass {
        match self {
            StmtKind::Let { .. }
            | StmtKind::LetArray { .. }
            | StmtKind::Assign { .. }
            | StmtKind::Store { .. }
            | StmtKind::LoadVector { .. }
            | StmtKind::StoreVector { .. }
            | StmtKind::Expr(_) => StmtClass::Compute,
            StmtKind::If { .. }
            | StmtKind::While { .. }
            | StmtKind::For { .. }
            | StmtKind::ForList { .. } => StmtClass::Control,
            StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => StmtClass::Jump,
            StmtKind::Call { func, .. } => StmtClass::Call(*func),
            StmtKind::SyncThreads => StmtClass::CtaBarrier(CtaBarrier::Threads),
            StmtKind::ClusterSync => StmtClass::CtaBarrier(CtaBarrier::Cluster),
            StmtKind::SyncWarp(_) => StmtClass::Sync(SyncOp::Warp),
            StmtKind::FenceProxyAsync | StmtKind::Fence(_) => StmtClass::Sync(SyncOp::Fence),
            StmtKind::Barrier(_) => StmtClass::Sync(SyncOp::Mbarrier),
            StmtKind::NamedBarrier(_) => StmtClass::Sync(SyncOp::Named),
            StmtKind::CopyAsync { .. }
            | StmtKind::CopyAsyncStore { .. }
            | StmtKind::TensorCopy(_) => StmtClass::Sync(SyncOp::BulkCopy),
            StmtKind::CopyAsyncCommit | StmtKind::CopyAsyncWait(_) => {
                StmtClass::Sync(SyncOp::BulkGroup)
            }
            StmtKind::SetMaxRegs(_)
            | StmtKind::Wgmma(_)
            | StmtKind::Fragment(_)
            | StmtKind::WgmmaCommit
            | StmtKind::WgmmaWait(_) => StmtClass::Sync(SyncOp::Warpgroup),
            StmtKind::Poisoned { .. } => StmtClass::Failed,
        }
    }
}
