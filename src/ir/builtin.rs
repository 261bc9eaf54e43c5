//! Built-in values (`threadIdx.x`, lane masks) and the math and warp
//! operations.

/// Built-in values (all `u32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    ThreadIdx(Dim),
    BlockDim(Dim),
    BlockIdx(Dim),
    GridDim(Dim),
    LaneId,
    /// The linear thread index in the CTA divided by 32 (not `%warpid`).
    WarpId,
    ClusterRank,
    ClusterSize,
    ClusterIdx(Dim),
    ClusterDim(Dim),
    /// This cluster's position in the grid, in clusters (`%clusterid`):
    /// the same in every CTA of a cluster.
    ClusterGridIdx(Dim),
    /// The grid's shape, in clusters (`%nclusterid`).
    ClusterGridDim(Dim),
    /// `lane_mask_lt()` and friends: `%lanemask_lt`, ...
    LaneMask(LaneMask),
}

/// Which lanes a [`Special::LaneMask`] sets, relative to the thread's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneMask {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

impl LaneMask {
    pub const ALL: [LaneMask; 5] = [
        LaneMask::Eq,
        LaneMask::Lt,
        LaneMask::Le,
        LaneMask::Gt,
        LaneMask::Ge,
    ];

    /// `eq`, `lt`, ...: the suffix of the built-in and of the register.
    pub fn name(self) -> &'static str {
        match self {
            LaneMask::Eq => "eq",
            LaneMask::Lt => "lt",
            LaneMask::Le => "le",
            LaneMask::Gt => "gt",
            LaneMask::Ge => "ge",
        }
    }

    /// The mask of lane `lane` (0–31).
    pub fn of_lane(self, lane: u32) -> u32 {
        let below = (1u32 << lane) - 1;
        let me = 1u32 << lane;
        match self {
            LaneMask::Eq => me,
            LaneMask::Lt => below,
            LaneMask::Le => below | me,
            LaneMask::Gt => !(below | me),
            LaneMask::Ge => !below,
        }
    }
}

impl Special {
    /// Needs sm_90 or newer (cluster registers).
    pub fn needs_cluster_hw(self) -> bool {
        matches!(
            self,
            Special::ClusterRank
                | Special::ClusterSize
                | Special::ClusterIdx(_)
                | Special::ClusterDim(_)
                | Special::ClusterGridIdx(_)
                | Special::ClusterGridDim(_)
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dim {
    X,
    Y,
    Z,
}

impl Dim {
    pub fn name(self) -> &'static str {
        match self {
            Dim::X => "x",
            Dim::Y => "y",
            Dim::Z => "z",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    Min,
    Max,
    Abs,
    Sqrt,
    Rsqrt,
    Exp2,
    Log2,
    Exp,
    Log,
    Sin,
    Cos,
    /// `fma(a, b, c)` = a * b + c, rounded once.
    Fma,
    /// `f16x2(lo, hi)`, `bf16x2(lo, hi)`: a packed pair (the expression's
    /// type) from two halves of its half type, moved, or from two `f32`s,
    /// each rounded once to nearest even (`cvt.rn.f16x2.f32`).
    Pack,
    /// `x.lo`, `x.hi`: the low or high half of a packed pair.
    Lo,
    Hi,
}

impl MathFn {
    /// The built-in's name (`fma`).
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Min => "min",
            MathFn::Max => "max",
            MathFn::Abs => "abs",
            MathFn::Sqrt => "sqrt",
            MathFn::Rsqrt => "rsqrt",
            MathFn::Exp2 => "exp2",
            MathFn::Log2 => "log2",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Fma => "fma",
            MathFn::Pack => "pack",
            MathFn::Lo => "lo",
            MathFn::Hi => "hi",
        }
    }
}

/// A warp-synchronous operation. The shuffles take `[value, lane]` and the
/// votes `[pred]`, each with an optional last argument: the `u32` mask of
/// the lanes taking part (every lane when absent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpOp {
    ShflDown,
    ShflUp,
    ShflXor,
    ShflIdx,
    /// `ballot(pred) -> u32`
    Ballot,
    /// `any(pred) -> bool`
    Any,
    /// `all(pred) -> bool`
    All,
    /// `elect_one(mask?) -> bool`: true in exactly one lane of the mask
    /// (`[]` or `[mask]`).
    Elect,
    /// `active_mask() -> u32`: the lanes executing it (`[]`).
    ActiveMask,
    /// `redux_add(value, mask?)` ...: `value` combined over the lanes of
    /// the mask, the same result in each (`u32`/`i32`, `[value]` or
    /// `[value, mask]`).
    Redux(ReduxOp),
}

/// The operation of a warp reduction (`redux.sync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl ReduxOp {
    /// PTX's name of the operation (`redux.sync.add`).
    pub fn ptx(self) -> &'static str {
        match self {
            ReduxOp::Add => "add",
            ReduxOp::Min => "min",
            ReduxOp::Max => "max",
            ReduxOp::And => "and",
            ReduxOp::Or => "or",
            ReduxOp::Xor => "xor",
        }
    }
}

impl WarpOp {
    /// The built-in's name (`shfl_xor`).
    pub fn name(self) -> &'static str {
        match self {
            WarpOp::ShflDown => "shfl_down",
            WarpOp::ShflUp => "shfl_up",
            WarpOp::ShflXor => "shfl_xor",
            WarpOp::ShflIdx => "shfl_idx",
            WarpOp::Ballot => "ballot",
            WarpOp::Any => "any",
            WarpOp::All => "all",
            WarpOp::Elect => "elect_one",
            WarpOp::ActiveMask => "active_mask",
            WarpOp::Redux(ReduxOp::Add) => "redux_add",
            WarpOp::Redux(ReduxOp::Min) => "redux_min",
            WarpOp::Redux(ReduxOp::Max) => "redux_max",
            WarpOp::Redux(ReduxOp::And) => "redux_and",
            WarpOp::Redux(ReduxOp::Or) => "redux_or",
            WarpOp::Redux(ReduxOp::Xor) => "redux_xor",
        }
    }

    /// The arguments before the optional mask.
    pub fn fixed_args(self) -> usize {
        match self {
            WarpOp::ShflDown | WarpOp::ShflUp | WarpOp::ShflXor | WarpOp::ShflIdx => 2,
            WarpOp::Ballot | WarpOp::Any | WarpOp::All | WarpOp::Redux(_) => 1,
            WarpOp::Elect | WarpOp::ActiveMask => 0,
        }
    }

    /// Whether a mask argument may follow the fixed ones.
    pub fn takes_mask(self) -> bool {
        self != WarpOp::ActiveMask
    }
}
