//! A small builder for hand-written IR, so the PTX writer's tests read like
//! the kdsl they stand for.
#![allow(dead_code)]

pub mod kernels;

use kdsl::ir::*;
use kdsl::span::Span;
use kdsl::types::Scalar;

pub use kdsl::ir::{BinOp, Dim, MathFn, Scope, Special, UnaryOp, WarpOp};
pub use kdsl::types::Scalar::*;

/// A span for hand-built nodes: present (non-empty), as the verifier
/// wants every span.
fn sp() -> Span {
    Span::new(kdsl::span::FileId(0), 0, 1)
}

/// An expression; its id is given when the body is built ([`Body::new`]).
pub fn ex(kind: ExprKind, ty: Scalar) -> Expr {
    Expr::new(kind, ty, sp())
}

pub fn int(v: i128, ty: Scalar) -> Expr {
    ex(ExprKind::Const(Value::Int(v)), ty)
}

pub fn u32c(v: u32) -> Expr {
    int(v.into(), U32)
}

/// A float constant of type `ty`, rounded to it as the checker rounds
/// literals (a `Value::Float` holds a value of its type).
pub fn float(v: f64, ty: Scalar) -> Expr {
    let v = kdsl::fp::Format::of(ty).map_or(v, |f| kdsl::fp::round(v, f));
    ex(ExprKind::Const(Value::Float(v)), ty)
}

pub fn f32c(v: f64) -> Expr {
    float(v, F32)
}

pub fn boolc(v: bool) -> Expr {
    ex(ExprKind::Const(Value::Bool(v)), Bool)
}

pub fn special(s: Special) -> Expr {
    ex(ExprKind::Special(s), U32)
}

pub fn tid(d: Dim) -> Expr {
    special(Special::ThreadIdx(d))
}

pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    let ty = if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
        Bool
    } else {
        a.ty
    };
    ex(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty)
}

pub fn add(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Add, a, b)
}

pub fn mul(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Mul, a, b)
}

pub fn lt(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Lt, a, b)
}

pub fn eq(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Eq, a, b)
}

pub fn un(op: UnaryOp, a: Expr) -> Expr {
    let ty = a.ty;
    ex(ExprKind::Unary(op, Box::new(a)), ty)
}

pub fn cast(a: Expr, ty: Scalar) -> Expr {
    ex(ExprKind::Cast(Box::new(a)), ty)
}

pub fn select(c: Expr, a: Expr, b: Expr) -> Expr {
    let ty = a.ty;
    ex(ExprKind::Select(Box::new(c), Box::new(a), Box::new(b)), ty)
}

pub fn if_expr(cond: Expr, then_stmts: Vec<Stmt>, a: Expr, else_stmts: Vec<Stmt>, b: Expr) -> Expr {
    let ty = a.ty;
    ex(
        ExprKind::If {
            cond: Box::new(cond),
            then_block: Box::new(block(then_stmts)),
            then_value: Box::new(a),
            else_block: Box::new(block(else_stmts)),
            else_value: Box::new(b),
        },
        ty,
    )
}

pub fn math(f: MathFn, args: Vec<Expr>) -> Expr {
    let ty = args.first().map_or(F32, |a| a.ty);
    ex(ExprKind::Math(f, args), ty)
}

pub fn warp(op: WarpOp, args: Vec<Expr>) -> Expr {
    let ty = match op {
        WarpOp::Ballot => U32,
        WarpOp::Any | WarpOp::All => Bool,
        _ => args.first().map_or(U32, |a| a.ty),
    };
    ex(ExprKind::Warp(op, args), ty)
}

pub fn load(p: Place) -> Expr {
    let ty = p.elem;
    ex(ExprKind::Load(Box::new(p)), ty)
}

pub fn atomic(op: AtomicOp, p: Place, args: Vec<Expr>) -> Expr {
    atomic_sem(op, MemSem::ATOMIC, p, args)
}

/// An atomic with an order and scope.
pub fn atomic_sem(op: AtomicOp, sem: MemSem, p: Place, args: Vec<Expr>) -> Expr {
    let ty = p.elem;
    ex(
        ExprKind::Atomic {
            op,
            sem,
            place: Box::new(p),
            args,
        },
        ty,
    )
}

pub fn call(func: FuncId, args: Vec<Expr>, ret: Scalar) -> Expr {
    ex(ExprKind::Call { func, args }, ret)
}

/// `r.test(parity)`.
pub fn test(r: BarrierRef, parity: Parity) -> Expr {
    test_at(r, parity, Scope::Cta)
}

/// `r.test_cluster(parity)`.
pub fn test_cluster(r: BarrierRef, parity: Parity) -> Expr {
    test_at(r, parity, Scope::Cluster)
}

fn test_at(r: BarrierRef, parity: Parity, acquire: Scope) -> Expr {
    ex(
        ExprKind::BarrierTest {
            barrier: Box::new(r),
            parity: Box::new(parity),
            acquire,
            method_span: sp(),
        },
        Bool,
    )
}

pub fn gplace(param: ParamId, index: Expr, elem: Scalar) -> Place {
    Place {
        kind: PlaceKind::Global { param, index },
        elem,
        span: sp(),
    }
}

pub fn splace(array: SharedId, indices: Vec<Expr>, elem: Scalar) -> Place {
    Place {
        kind: PlaceKind::Shared { array, indices },
        elem,
        span: sp(),
    }
}

pub fn rplace(array: SharedId, rank: Expr, indices: Vec<Expr>, elem: Scalar) -> Place {
    Place {
        kind: PlaceKind::Remote {
            array,
            rank,
            indices,
        },
        elem,
        span: sp(),
    }
}

pub fn st(kind: StmtKind) -> Stmt {
    Stmt::new(kind, sp())
}

pub fn block(stmts: Vec<Stmt>) -> Block {
    Block { stmts, span: sp() }
}

pub fn let_(local: (LocalId, Expr), value: Expr) -> Stmt {
    st(StmtKind::Let {
        local: local.0,
        value,
    })
}

pub fn assign(local: &(LocalId, Expr), value: Expr) -> Stmt {
    st(StmtKind::Assign {
        local: local.0,
        value,
    })
}

pub fn store(place: Place, value: Expr) -> Stmt {
    st(StmtKind::Store {
        place: Box::new(place),
        op: None,
        value,
    })
}

pub fn store_op(place: Place, op: BinOp, value: Expr) -> Stmt {
    st(StmtKind::Store {
        place: Box::new(place),
        op: Some(op),
        value,
    })
}

pub fn if_(cond: Expr, then_stmts: Vec<Stmt>) -> Stmt {
    st(StmtKind::If {
        cond: Box::new(cond),
        then_block: block(then_stmts),
        else_block: None,
    })
}

pub fn if_else(cond: Expr, then_stmts: Vec<Stmt>, else_stmts: Vec<Stmt>) -> Stmt {
    st(StmtKind::If {
        cond: Box::new(cond),
        then_block: block(then_stmts),
        else_block: Some(block(else_stmts)),
    })
}

pub fn while_(cond: Expr, body: Vec<Stmt>) -> Stmt {
    st(StmtKind::While {
        cond: Box::new(cond),
        body: block(body),
    })
}

pub fn for_(var: &(LocalId, Expr), start: Expr, end: Expr, step: Expr, body: Vec<Stmt>) -> Stmt {
    st(StmtKind::For {
        var: var.0,
        start: Box::new(start),
        end: Box::new(end),
        step: Box::new(step),
        body: block(body),
        unroll: None,
    })
}

pub fn expr_stmt(e: Expr) -> Stmt {
    st(StmtKind::Expr(e))
}

pub fn bref(group: BarrierId, index: Option<Expr>) -> BarrierRef {
    BarrierRef {
        group,
        index: index.map(Box::new),
        span: sp(),
    }
}

pub fn bop(kind: BarrierOpKind, barrier: BarrierRef) -> Stmt {
    st(StmtKind::Barrier(Box::new(BarrierOp {
        kind,
        barrier,
        method_span: sp(),
    })))
}

/// A new mutable local of a kernel or function: its id and an expression
/// reading it.
fn push_local(locals: &mut Vec<Local>, name: &str, ty: Scalar) -> (LocalId, Expr) {
    locals.push(Local::scalar(name, ty, true, sp()));
    let id = LocalId(locals.len() as u32 - 1);
    (id, ex(ExprKind::Local(id), ty))
}

/// Builds one kernel: parameters, locals, shared arrays, barrier groups.
pub struct KernelBuilder {
    name: String,
    params: Vec<Param>,
    locals: Vec<Local>,
    shared: Vec<SharedArray>,
    barriers: Vec<BarrierGroup>,
    pub block: Option<[u32; 3]>,
    pub cluster: Option<[u32; 3]>,
}

impl KernelBuilder {
    pub fn new(name: &str) -> KernelBuilder {
        KernelBuilder {
            name: name.to_string(),
            params: Vec::new(),
            locals: Vec::new(),
            shared: Vec::new(),
            barriers: Vec::new(),
            block: None,
            cluster: None,
        }
    }

    /// A scalar parameter, as an expression.
    pub fn scalar(&mut self, name: &str, ty: Scalar) -> Expr {
        self.params.push(Param {
            name: name.to_string(),
            span: sp(),
            ty: ParamType::Scalar(ty),
        });
        ex(ExprKind::Param(ParamId(self.params.len() as u32 - 1)), ty)
    }

    /// `name: global [elem]` (`mutable`: `global mut`, written by the kernel).
    pub fn global(&mut self, name: &str, elem: Scalar, mutable: bool) -> ParamId {
        self.params.push(Param {
            name: name.to_string(),
            span: sp(),
            ty: ParamType::Global {
                elem,
                mutable,
                written: mutable,
            },
        });
        ParamId(self.params.len() as u32 - 1)
    }

    /// A local: its id and an expression reading it.
    pub fn local(&mut self, name: &str, ty: Scalar) -> (LocalId, Expr) {
        push_local(&mut self.locals, name, ty)
    }

    pub fn shared(&mut self, name: &str, elem: Scalar, dims: &[u32]) -> SharedId {
        self.shared.push(SharedArray {
            name: name.to_string(),
            elem,
            dims: dims.iter().map(|&d| u64::from(d)).collect(),
            swizzle: kdsl::ir::Swizzle::None,
            span: sp(),
        });
        SharedId(self.shared.len() as u32 - 1)
    }

    pub fn barrier(&mut self, name: &str, scope: Scope, count: u32, arrivals: u32) -> BarrierId {
        self.barriers.push(BarrierGroup {
            name: name.to_string(),
            scope,
            count,
            arrivals,
            spans: BarrierSpans {
                decl: sp(),
                name: sp(),
                count: None,
                scope: sp(),
                arrivals: sp(),
            },
            failed: Default::default(),
            guards: Vec::new(),
        });
        BarrierId(self.barriers.len() as u32 - 1)
    }

    pub fn finish(self, stmts: Vec<Stmt>) -> Kernel {
        Kernel {
            name: self.name,
            name_span: sp(),
            span: sp(),
            params: self.params,
            block: self.block,
            cluster: self.cluster,
            shared: self.shared,
            barriers: self.barriers,
            named_barriers: Vec::new(),
            accums: Vec::new(),
            instance: None,
            body: Body::new(self.locals, block(stmts)),
        }
    }
}

/// Builds a device function: its parameters are its first locals.
pub struct FunctionBuilder {
    name: String,
    params: u32,
    locals: Vec<Local>,
    ret: Option<Scalar>,
}

impl FunctionBuilder {
    pub fn new(name: &str, ret: Option<Scalar>) -> FunctionBuilder {
        FunctionBuilder {
            name: name.to_string(),
            params: 0,
            locals: Vec::new(),
            ret,
        }
    }

    pub fn param(&mut self, name: &str, ty: Scalar) -> (LocalId, Expr) {
        assert_eq!(
            self.params as usize,
            self.locals.len(),
            "parameters come first"
        );
        self.params += 1;
        self.local(name, ty)
    }

    pub fn local(&mut self, name: &str, ty: Scalar) -> (LocalId, Expr) {
        push_local(&mut self.locals, name, ty)
    }

    pub fn finish(self, stmts: Vec<Stmt>) -> Function {
        Function {
            name: self.name,
            span: sp(),
            params: self.params,
            ret: self.ret,
            body: Body::new(self.locals, block(stmts)),
        }
    }
}

/// The PTX of `m` for `t`, with the facts the analysis finds in it.
pub fn try_write(m: &Module, t: kdsl::target::Target) -> Result<String, kdsl::ptx::Error> {
    let info = kdsl::analysis::analyze(m);
    kdsl::ptx::write(m, &info, t)
}

/// [`try_write`], for modules the writer must accept.
#[track_caller]
pub fn write(m: &Module, t: kdsl::target::Target) -> String {
    try_write(m, t).unwrap_or_else(|e| panic!("the writer rejected the module: {e}"))
}

pub fn module(kernels: Vec<Kernel>) -> Module {
    Module {
        functions: Vec::new(),
        kernels,
    }
}
