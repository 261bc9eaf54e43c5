//! The memory semantics of each instruction (PTX ISA §8, the memory
//! consistency model): the order and scope of loads, stores and atomics,
//! what a fence orders, whether a CTA barrier is `.aligned`. Execution
//! ignores them (the simulator is sequentially consistent); the run-time
//! checks (`machine::checks`) read them to know which accesses synchronise
//! and which may not race. One entry per instruction, decided from the
//! modifiers alone, so the opcode decoders stay as they are.

use crate::sim::ptx::ast::Instruction;

/// The memory order of an access or fence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// A plain (`.weak`, or no order) access: it may race.
    #[default]
    Weak,
    /// `.volatile`: a plain access here (it orders nothing between threads;
    /// warp-synchronous code written with it needs `__syncwarp`).
    Volatile,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    /// `.sc` (fences, `membar`).
    Sc,
}

impl Order {
    /// An atomic (morally strong) access: it does not race with another
    /// atomic access of an enclosing scope.
    pub fn atomic(self) -> bool {
        !matches!(self, Order::Weak | Order::Volatile)
    }

    pub fn acquires(self) -> bool {
        matches!(self, Order::Acquire | Order::AcqRel | Order::Sc)
    }

    pub fn releases(self) -> bool {
        matches!(self, Order::Release | Order::AcqRel | Order::Sc)
    }
}

/// A scope, narrowest first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Cta,
    Cluster,
    #[default]
    Gpu,
    Sys,
}

/// What a fence instruction orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fence {
    /// `fence{.sc,.acq_rel,.acquire,.release}.scope`, `membar.*`.
    Sync,
    /// `fence.proxy.async{.space}`: generic-proxy accesses before it are
    /// ordered with async-proxy accesses (TMA, wgmma) after it.
    ProxyAsync,
    /// `fence.mbarrier_init.release.cluster`.
    MbarInit,
}

/// The semantics of one instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sem {
    pub order: Order,
    pub scope: Scope,
    /// Set for a fence (the instruction executes as nothing).
    pub fence: Option<Fence>,
    /// A CTA barrier whose threads must all execute the same instruction
    /// (`bar.sync`, `barrier.sync.aligned`).
    pub aligned: bool,
}

fn scope_of(mods: &[String]) -> Option<Scope> {
    mods.iter().find_map(|m| match m.as_str() {
        "cta" => Some(Scope::Cta),
        "cluster" => Some(Scope::Cluster),
        "gpu" | "gl" => Some(Scope::Gpu),
        "sys" => Some(Scope::Sys),
        _ => None,
    })
}

fn order_of(mods: &[String]) -> Option<Order> {
    mods.iter().find_map(|m| match m.as_str() {
        "weak" => Some(Order::Weak),
        "volatile" => Some(Order::Volatile),
        "relaxed" => Some(Order::Relaxed),
        "acquire" => Some(Order::Acquire),
        "release" => Some(Order::Release),
        "acq_rel" => Some(Order::AcqRel),
        "sc" => Some(Order::Sc),
        _ => None,
    })
}

/// The semantics of an instruction as written.
pub fn of(i: &Instruction) -> Sem {
    let mods = &i.mods;
    let has = |w: &str| mods.iter().any(|m| m == w);
    match i.opcode.as_str() {
        "ld" | "ldu" | "st" => Sem {
            order: order_of(mods).unwrap_or(Order::Weak),
            scope: scope_of(mods).unwrap_or(Scope::Sys),
            ..Sem::default()
        },
        // An atomic without an order is `.relaxed`, without a scope `.gpu`.
        "atom" | "red" => Sem {
            order: order_of(mods).unwrap_or(Order::Relaxed),
            scope: scope_of(mods).unwrap_or(Scope::Gpu),
            ..Sem::default()
        },
        "membar" => Sem {
            order: Order::Sc,
            scope: scope_of(mods).unwrap_or(Scope::Gpu),
            fence: Some(Fence::Sync),
            aligned: false,
        },
        "fence" if has("proxy") => Sem {
            fence: Some(Fence::ProxyAsync),
            ..Sem::default()
        },
        "fence" if has("mbarrier_init") => Sem {
            order: Order::Release,
            scope: Scope::Cluster,
            fence: Some(Fence::MbarInit),
            aligned: false,
        },
        // `fence.scope` is `fence.acq_rel.scope`.
        "fence" => Sem {
            order: order_of(mods).unwrap_or(Order::AcqRel),
            scope: scope_of(mods).unwrap_or(Scope::Gpu),
            fence: Some(Fence::Sync),
            aligned: false,
        },
        "bar" => Sem {
            aligned: !has("warp"),
            ..Sem::default()
        },
        "barrier" => Sem {
            order: order_of(mods).unwrap_or(Order::AcqRel),
            aligned: has("aligned"),
            ..Sem::default()
        },
        "mbarrier" => Sem {
            order: order_of(mods).unwrap_or(Order::AcqRel),
            scope: scope_of(mods).unwrap_or(Scope::Cta),
            ..Sem::default()
        },
        _ => Sem::default(),
    }
}
