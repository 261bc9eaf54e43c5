//! Built-in functions (`min` … `fma`), warp shuffles and votes, and the
//! special registers (`thread_idx.x`, `warp_id`, cluster coordinates).
//!
//! `f32` transcendental functions use the hardware approximations, like
//! CUDA's `__expf`: `exp(x)` is `ex2.approx(x * log2 e)`, `log(x)` is
//! `lg2.approx(x) * ln 2`. `f16`/`bf16` (and `f64`, which has no such
//! instructions) are computed in `f32` and rounded back.

use super::error::Result;
use super::imm;
use super::suffix;
use super::writer::{emit, Class, Operand, Writer};
use crate::ir::{Dim, Expr, MathFn, ReduxOp, Special, WarpOp};
use crate::types::Scalar;

const FULL_MASK: &str = "0xffffffff";

impl Writer<'_> {
    pub(super) fn math(&mut self, f: MathFn, args: &[Expr], ty: Scalar) -> Result<Operand> {
        let vals = self.operand_list(args)?;
        let arg_ty = args.first().map_or(ty, |a| a.ty);
        let mut converted = Vec::with_capacity(vals.len());
        for (v, a) in vals.into_iter().zip(args) {
            converted.push(self.convert(v, a.ty, arg_ty)?);
        }
        let arity = match f {
            MathFn::Min | MathFn::Max | MathFn::Pack => 2,
            MathFn::Fma => 3,
            _ => 1,
        };
        let [x, y, z] = match converted.as_slice() {
            [x] if arity == 1 => [x.clone(), Operand::imm(0), Operand::imm(0)],
            [x, y] if arity == 2 => [x.clone(), y.clone(), Operand::imm(0)],
            [x, y, z] if arity == 3 => [x.clone(), y.clone(), z.clone()],
            other => return Err(self.invalid(format!("`{f:?}` with {} arguments", other.len()))),
        };
        match f {
            MathFn::Pack => Ok(self.pack(ty, arg_ty, x, y)),
            MathFn::Lo | MathFn::Hi => Ok(self.half(f, arg_ty, x)),
            _ if arg_ty.is_packed() => self.packed_math(f, arg_ty, [x, y, z]),
            MathFn::Min | MathFn::Max => self.min_max(f, arg_ty, x, y),
            MathFn::Abs => Ok(self.abs(arg_ty, x)),
            MathFn::Fma => self.fma(arg_ty, x, y, z),
            _ if arg_ty == Scalar::F32 => self.float_fn(f, x),
            MathFn::Sqrt | MathFn::Rsqrt if arg_ty == Scalar::F64 => {
                let (s, d) = (self.reg(Class::F64), self.reg(Class::F64));
                emit!(self, "sqrt.rn.f64 {}, {};", s, x);
                if f == MathFn::Sqrt {
                    return Ok(Operand::Reg(s));
                }
                emit!(self, "rcp.rn.f64 {}, {};", d, s);
                Ok(Operand::Reg(d))
            }
            _ if arg_ty.is_float() => {
                // Computed in f32 and rounded back.
                let xf = self.convert(x, arg_ty, Scalar::F32)?;
                let r = self.float_fn(f, xf)?;
                self.convert(r, Scalar::F32, arg_ty)
            }
            _ => Err(self.invalid(format!("`{f:?}` on {arg_ty}"))),
        }
    }

    /// `sqrt` … `cos` on an `f32` (`min`, `max`, `abs` and `fma` are
    /// handled by [`Writer::math`] before it gets here).
    fn float_fn(&mut self, f: MathFn, x: Operand) -> Result<Operand> {
        let d = self.reg(Class::F32);
        match f {
            MathFn::Sqrt => emit!(self, "sqrt.rn.f32 {}, {};", d, x),
            MathFn::Rsqrt => emit!(self, "rsqrt.approx.f32 {}, {};", d, x),
            MathFn::Exp2 => emit!(self, "ex2.approx.f32 {}, {};", d, x),
            MathFn::Log2 => emit!(self, "lg2.approx.f32 {}, {};", d, x),
            MathFn::Sin => emit!(self, "sin.approx.f32 {}, {};", d, x),
            MathFn::Cos => emit!(self, "cos.approx.f32 {}, {};", d, x),
            MathFn::Exp => {
                let t = self.reg(Class::F32);
                emit!(
                    self,
                    "mul.rn.f32 {}, {}, {};",
                    t,
                    x,
                    imm::f32_imm(std::f64::consts::LOG2_E)
                );
                emit!(self, "ex2.approx.f32 {}, {};", d, t);
            }
            MathFn::Log => {
                let t = self.reg(Class::F32);
                emit!(self, "lg2.approx.f32 {}, {};", t, x);
                emit!(
                    self,
                    "mul.rn.f32 {}, {}, {};",
                    d,
                    t,
                    imm::f32_imm(std::f64::consts::LN_2)
                );
            }
            MathFn::Min
            | MathFn::Max
            | MathFn::Abs
            | MathFn::Fma
            | MathFn::Pack
            | MathFn::Lo
            | MathFn::Hi => return Err(self.invalid(format!("`{f:?}` as an f32 function"))),
        }
        Ok(Operand::Reg(d))
    }

    /// `min`/`max` (also for float atomics done by compare-and-swap).
    pub(super) fn min_max(
        &mut self,
        f: MathFn,
        ty: Scalar,
        x: Operand,
        y: Operand,
    ) -> Result<Operand> {
        let name = if f == MathFn::Max { "max" } else { "min" };
        match ty {
            Scalar::Bool => {
                let d = self.reg(Class::Pred);
                let op = if f == MathFn::Max { "or" } else { "and" };
                emit!(self, "{}.pred {}, {}, {};", op, d, x, y);
                Ok(Operand::Reg(d))
            }
            Scalar::F16 | Scalar::BF16 => {
                // Exact: the result is one of the operands.
                let (xf, yf) = (
                    self.convert(x, ty, Scalar::F32)?,
                    self.convert(y, ty, Scalar::F32)?,
                );
                let r = self.min_max(f, Scalar::F32, xf, yf)?;
                self.convert(r, Scalar::F32, ty)
            }
            _ => {
                let d = self.reg_for(ty);
                emit!(self, "{}.{} {}, {}, {};", name, suffix::arith(ty), d, x, y);
                Ok(Operand::Reg(d))
            }
        }
    }

    fn abs(&mut self, ty: Scalar, x: Operand) -> Operand {
        let d = self.reg_for(ty);
        match ty {
            Scalar::I32 | Scalar::I64 | Scalar::F32 | Scalar::F64 => {
                emit!(self, "abs.{} {}, {};", suffix::arith(ty), d, x)
            }
            // `abs(-128i8)` is 128 in 32 bits: wrapped back to -128, as
            // `abs(i32::MIN)` is `i32::MIN`.
            Scalar::I8 | Scalar::I16 => {
                emit!(self, "abs.s32 {}, {};", d, x);
                return self.wrap_narrow(Operand::Reg(d), ty);
            }
            Scalar::F16 | Scalar::BF16 => emit!(self, "and.b16 {}, {}, 0x7FFF;", d, x),
            // Unsigned values and bools are their own absolute value.
            _ => return x,
        }
        Operand::Reg(d)
    }

    /// `fma.rn` (floats, one rounding) or `mad.lo` (integers).
    pub(super) fn fma(
        &mut self,
        ty: Scalar,
        x: Operand,
        y: Operand,
        z: Operand,
    ) -> Result<Operand> {
        let d = self.reg_for(ty);
        match ty {
            Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64 => {
                emit!(
                    self,
                    "fma.rn.{} {}, {}, {}, {};",
                    suffix::arith(ty),
                    d,
                    x,
                    y,
                    z
                )
            }
            Scalar::I8
            | Scalar::U8
            | Scalar::I16
            | Scalar::U16
            | Scalar::I32
            | Scalar::U32
            | Scalar::I64
            | Scalar::U64 => {
                emit!(
                    self,
                    "mad.lo.{} {}, {}, {}, {};",
                    suffix::arith(ty),
                    d,
                    x,
                    y,
                    z
                );
                return Ok(self.wrap_narrow(Operand::Reg(d), ty));
            }
            Scalar::F16x2 | Scalar::BF16x2 => {
                return self.packed_math(MathFn::Fma, ty, [x, y, z]);
            }
            Scalar::Bool | Scalar::E4M3 | Scalar::E5M2 | Scalar::TF32 => {
                return Err(self.invalid(format!("`fma` on {ty}")))
            }
        }
        Ok(Operand::Reg(d))
    }

    /// Shuffles (`[value, lane]`, full warp) and votes (`[pred]`).
    pub(super) fn warp(&mut self, op: WarpOp, args: &[Expr]) -> Result<Operand> {
        // The lane operand's `shfl` clamp (`c` in PTX): 0x1f for every
        // mode but `up`, as CUDA's `__shfl_*_sync` with a full warp.
        let n = op.fixed_args();
        let (fixed, mask_e) = match args.split_at_checked(n) {
            Some((f, [])) => (f, None),
            Some((f, [m])) if op.takes_mask() => (f, Some(m)),
            _ => {
                let l = args.len();
                return Err(self.invalid(format!("`{op:?}` with {l} arguments")));
            }
        };
        let (mode, clamp, first, lane_e) = match (op, fixed) {
            (WarpOp::ShflDown, [v, l]) => ("down", "0x1f", v, l),
            (WarpOp::ShflUp, [v, l]) => ("up", "0", v, l),
            (WarpOp::ShflXor, [v, l]) => ("bfly", "0x1f", v, l),
            (WarpOp::ShflIdx, [v, l]) => ("idx", "0x1f", v, l),
            (WarpOp::Ballot | WarpOp::Any | WarpOp::All, [p]) => {
                let v = self.expr(p)?;
                let v = self.convert(v, p.ty, Scalar::Bool)?;
                let mask = self.warp_mask(mask_e)?;
                return Ok(self.vote(op, v, &mask));
            }
            (WarpOp::Elect, []) => {
                let mask = self.warp_mask(mask_e)?;
                return Ok(self.elect(&mask));
            }
            (WarpOp::ActiveMask, []) => {
                let d = self.reg(Class::B32);
                emit!(self, "activemask.b32 {};", d);
                return Ok(Operand::Reg(d));
            }
            (WarpOp::Redux(r), [v]) => {
                // `.add`, `.min`, `.max` are typed; the bitwise ones `.b32`.
                let ty = match (r, v.ty) {
                    (ReduxOp::And | ReduxOp::Or | ReduxOp::Xor, _) => "b32",
                    (_, Scalar::I32) => "s32",
                    _ => "u32",
                };
                let x = self.expr(v)?;
                let x = self.in_reg(x, v.ty);
                let mask = self.warp_mask(mask_e)?;
                let d = self.reg_for(v.ty);
                emit!(
                    self,
                    "redux.sync.{}.{} {}, {}, {};",
                    r.ptx(),
                    ty,
                    d,
                    x,
                    mask
                );
                return Ok(Operand::Reg(d));
            }
            _ => return Err(self.invalid(format!("`{op:?}` with {} arguments", args.len()))),
        };
        let vty = first.ty;
        let [v, lane] = self.operands([first, lane_e])?;
        let mask = self.warp_mask(mask_e)?;
        let lane = match lane_e.ty {
            t @ (Scalar::U64 | Scalar::I64 | Scalar::Bool) => self.convert(lane, t, Scalar::U32)?,
            _ => lane,
        };
        let shfl = |w: &mut Self, v: &Operand, d: &Operand| {
            emit!(
                w,
                "shfl.sync.{}.b32 {}, {}, {}, {}, {};",
                mode,
                d,
                v,
                lane,
                clamp,
                mask
            );
        };
        // By register class: a narrow integer is a 32-bit register.
        Ok(match Class::of(vty) {
            Class::B32 | Class::F32 => {
                let d = Operand::Reg(self.reg_for(vty));
                shfl(self, &v, &d);
                d
            }
            Class::B64 | Class::F64 => {
                let v = self.in_reg(v, vty);
                let (lo, hi, lo2, hi2) = (
                    self.reg(Class::B32),
                    self.reg(Class::B32),
                    self.reg(Class::B32),
                    self.reg(Class::B32),
                );
                emit!(self, "mov.b64 {{{}, {}}}, {};", lo, hi, v);
                shfl(self, &Operand::Reg(lo), &Operand::Reg(lo2));
                shfl(self, &Operand::Reg(hi), &Operand::Reg(hi2));
                let d = self.reg_for(vty);
                emit!(self, "mov.b64 {}, {{{}, {}}};", d, lo2, hi2);
                Operand::Reg(d)
            }
            Class::B16 => {
                let (w, w2, d) = (
                    self.reg(Class::B32),
                    self.reg(Class::B32),
                    self.reg(Class::B16),
                );
                emit!(self, "cvt.u32.u16 {}, {};", w, v);
                shfl(self, &Operand::Reg(w), &Operand::Reg(w2));
                emit!(self, "cvt.u16.u32 {}, {};", d, w2);
                Operand::Reg(d)
            }
            Class::Pred => {
                let w = self.convert(v, vty, Scalar::U32)?;
                let w2 = Operand::Reg(self.reg(Class::B32));
                shfl(self, &w, &w2);
                self.convert(w2, Scalar::U32, vty)?
            }
        })
    }

    /// The `membermask` of a warp-synchronous instruction: the source's
    /// mask, or every lane.
    fn warp_mask(&mut self, mask: Option<&Expr>) -> Result<Operand> {
        match mask {
            Some(m) => self.expr_u32(m),
            None => Ok(Operand::imm(FULL_MASK)),
        }
    }

    fn vote(&mut self, op: WarpOp, p: Operand, mask: &Operand) -> Operand {
        if op == WarpOp::Ballot {
            let d = self.reg(Class::B32);
            emit!(self, "vote.sync.ballot.b32 {}, {}, {};", d, p, mask);
            return Operand::Reg(d);
        }
        let d = self.reg(Class::Pred);
        let mode = if op == WarpOp::Any { "any" } else { "all" };
        emit!(self, "vote.sync.{}.pred {}, {}, {};", mode, d, p, mask);
        Operand::Reg(d)
    }

    /// `elect_one(mask)`: `elect.sync` on sm_90; before it, the lowest lane
    /// of a ballot over the mask (the same lane, with the same rule that
    /// every lane of the mask executes it).
    fn elect(&mut self, mask: &Operand) -> Operand {
        let p = self.reg(Class::Pred);
        if self.target.has_sm90_features() {
            // `elect` is PTX ISA 8.0 (sm_90's own minimum is 7.8).
            self.need(8, 0);
            emit!(self, "elect.sync _|{}, {};", p, mask);
            return Operand::Reg(p);
        }
        let (all, below, lower) = (
            self.reg(Class::B32),
            self.reg(Class::B32),
            self.reg(Class::B32),
        );
        emit!(self, "vote.sync.ballot.b32 {}, 1, {};", all, mask);
        emit!(self, "mov.u32 {}, %lanemask_lt;", below);
        emit!(self, "and.b32 {}, {}, {};", lower, all, below);
        emit!(self, "setp.eq.u32 {}, {}, 0;", p, lower);
        Operand::Reg(p)
    }

    /// A special register: read once in the prologue, else read here.
    pub(super) fn special(&mut self, s: Special) -> Result<Operand> {
        match self.specials.get(&s) {
            Some(v) => Ok(v.clone()),
            None => self.read_special(s),
        }
    }

    /// Reads a special register, or its value where the launch attributes
    /// fix it (`block(256)`: `block_dim.x` is 256 and `thread_idx.y` is 0).
    pub(super) fn read_special(&mut self, s: Special) -> Result<Operand> {
        let block = self.kernel.and_then(|k| k.block);
        let cluster = self.kernel.and_then(|k| k.cluster);
        let known =
            |shape: Option<[u32; 3]>, d: Dim| shape.and_then(|b| b.get(dim_index(d)).copied());
        let fixed = match s {
            Special::BlockDim(d) => known(block, d),
            Special::ThreadIdx(d) if known(block, d) == Some(1) => Some(0),
            Special::ClusterDim(d) => known(cluster, d),
            Special::ClusterIdx(d) if known(cluster, d) == Some(1) => Some(0),
            Special::ClusterSize => cluster.map(|c| c.iter().fold(1u32, |a, d| a.wrapping_mul(*d))),
            _ => None,
        };
        if let Some(v) = fixed {
            return Ok(Operand::imm(v));
        }
        let name = match s {
            Special::WarpId => return self.warp_id(),
            Special::ThreadIdx(d) => format!("%tid.{}", d.name()),
            Special::BlockDim(d) => format!("%ntid.{}", d.name()),
            Special::BlockIdx(d) => format!("%ctaid.{}", d.name()),
            Special::GridDim(d) => format!("%nctaid.{}", d.name()),
            Special::LaneId => "%laneid".to_string(),
            Special::ClusterRank => "%cluster_ctarank".to_string(),
            Special::ClusterSize => "%cluster_nctarank".to_string(),
            Special::ClusterIdx(d) => format!("%cluster_ctaid.{}", d.name()),
            Special::ClusterDim(d) => format!("%cluster_nctaid.{}", d.name()),
            Special::ClusterGridIdx(d) => format!("%clusterid.{}", d.name()),
            Special::ClusterGridDim(d) => format!("%nclusterid.{}", d.name()),
            Special::LaneMask(m) => format!("%lanemask_{}", m.name()),
        };
        if s.needs_cluster_hw() {
            self.require_sm90(&name)?;
        }
        let r = self.reg(Class::B32);
        emit!(self, "mov.u32 {}, {};", r, name);
        Ok(Operand::Reg(r))
    }

    /// The linear thread index in the CTA divided by 32 (`%warpid` is not
    /// stable): `(tid.x + ntid.x * (tid.y + ntid.y * tid.z)) >> 5`.
    fn warp_id(&mut self) -> Result<Operand> {
        let tx = self.special(Special::ThreadIdx(Dim::X))?;
        let ty = self.special(Special::ThreadIdx(Dim::Y))?;
        let tz = self.special(Special::ThreadIdx(Dim::Z))?;
        let nx = self.special(Special::BlockDim(Dim::X))?;
        let ny = self.special(Special::BlockDim(Dim::Y))?;
        let zero = Operand::imm(0);
        let inner = if tz == zero {
            ty
        } else {
            let r = self.reg(Class::B32);
            emit!(self, "mad.lo.s32 {}, {}, {}, {};", r, ny, tz, ty);
            Operand::Reg(r)
        };
        let linear = if inner == zero {
            tx
        } else {
            let r = self.reg(Class::B32);
            emit!(self, "mad.lo.s32 {}, {}, {}, {};", r, nx, inner, tx);
            Operand::Reg(r)
        };
        let d = self.reg(Class::B32);
        emit!(self, "shr.u32 {}, {}, 5;", d, linear);
        Ok(Operand::Reg(d))
    }
}

fn dim_index(d: Dim) -> usize {
    match d {
        Dim::X => 0,
        Dim::Y => 1,
        Dim::Z => 2,
    }
}
