//! Where variables live: the shared, local and parameter layouts (each
//! variable aligned and followed by a red zone) and the module's global
//! variables.

use super::ops::Ty;
use super::{err, Builder, LoadError, LoadErrorKind, MemVar, ModuleVar, RED_ZONE};
use crate::sim::ptx::ast;

pub(super) fn align_up(v: u64, a: u64) -> u64 {
    let a = a.max(1);
    v.div_ceil(a) * a
}

/// Which variable owns each byte of a memory laid out with red zones: an
/// access must start and end in the same variable. (An `.extern` array has
/// size 0 and so owns nothing: dynamic shared memory is not modelled.)
pub(super) fn owner_map(vars: &[MemVar], size: u32) -> Vec<u16> {
    let mut map = vec![0u16; size as usize];
    for (i, v) in vars.iter().enumerate() {
        let id = u16::try_from(i + 1).unwrap_or(u16::MAX);
        let end = (v.offset + v.size) as usize;
        if let Some(bytes) = map.get_mut(v.offset as usize..end) {
            bytes.fill(id);
        }
    }
    map
}

impl Builder<'_> {
    /// Size and alignment of a declared variable.
    pub(super) fn var_size(v: &ast::VarDecl) -> Result<(u64, u64, u32), String> {
        let elem = match v.ty.as_str() {
            "b128" => 16,
            t => Ty::from_name(t)
                .map(|t| t.bytes().max(1) as u64)
                .ok_or_else(|| format!("unsupported type `.{t}` of `{}`", v.name))?,
        };
        let mut n: u64 = u64::from(v.vector.max(1));
        for d in &v.dims {
            n = n.saturating_mul(d.unwrap_or(0));
        }
        let size = elem.saturating_mul(n);
        if size > 1 << 32 {
            return Err(format!("variable `{}` is too large ({size} bytes)", v.name));
        }
        let align = u64::from(v.align.unwrap_or(0)).max(elem * u64::from(v.vector.max(1)));
        Ok((size, align, elem as u32))
    }

    /// The initialiser of a variable as bytes.
    fn init_bytes(v: &ast::VarDecl, size: u64, elem: u32) -> Vec<u8> {
        let mut bytes = vec![0u8; size as usize];
        let ty = Ty::from_name(&v.ty);
        for (i, imm) in v.init.iter().enumerate() {
            let bits = match (imm, ty) {
                (ast::Imm::Int(x), _) => *x,
                (ast::Imm::F32(x), Some(Ty::F64)) => f64::from(f32::from_bits(*x)).to_bits(),
                (ast::Imm::F32(x), _) => u64::from(*x),
                (ast::Imm::F64(x), Some(Ty::F32)) => {
                    u64::from((f64::from_bits(*x) as f32).to_bits())
                }
                (ast::Imm::F64(x), _) => *x,
            };
            let at = i * elem as usize;
            for k in 0..elem as usize {
                if let Some(b) = bytes.get_mut(at + k) {
                    *b = (bits >> (8 * k)) as u8;
                }
            }
        }
        bytes
    }

    pub(super) fn add_shared(&mut self, v: &ast::VarDecl) -> Result<u32, LoadError> {
        let (size, align, elem) =
            Self::var_size(v).or_else(|m| err(v.pos, LoadErrorKind::Unsupported, m))?;
        let offset = align_up(u64::from(self.shared_size), align);
        let end = offset + size + u64::from(RED_ZONE);
        if end >= 1 << 24 {
            return err(
                v.pos,
                LoadErrorKind::Unsupported,
                "shared memory larger than 16 MiB",
            );
        }
        self.shared_size = end as u32;
        self.shared.push(MemVar {
            name: v.name.clone(),
            offset: offset as u32,
            size: size as u32,
            elem,
            decl: self.site(v.pos),
        });
        Ok(offset as u32)
    }

    pub(super) fn add_local(&mut self, v: &ast::VarDecl) -> Result<u32, LoadError> {
        let (size, align, elem) =
            Self::var_size(v).or_else(|m| err(v.pos, LoadErrorKind::Unsupported, m))?;
        let offset = align_up(u64::from(self.local_size), align);
        let end = offset + size + u64::from(RED_ZONE);
        if end >= 1 << 24 {
            return err(
                v.pos,
                LoadErrorKind::Unsupported,
                "local memory larger than 16 MiB per thread",
            );
        }
        self.local_size = end as u32;
        self.local.push(MemVar {
            name: v.name.clone(),
            offset: offset as u32,
            size: size as u32,
            elem,
            decl: self.site(v.pos),
        });
        Ok(offset as u32)
    }

    pub(super) fn add_fparam(&mut self, v: &ast::VarDecl) -> Result<(u32, u32), LoadError> {
        let (size, align, _) =
            Self::var_size(v).or_else(|m| err(v.pos, LoadErrorKind::Unsupported, m))?;
        let offset = align_up(u64::from(self.fparam_size), align.max(1));
        let end = offset + size;
        if end >= 1 << 24 {
            return err(
                v.pos,
                LoadErrorKind::Unsupported,
                "too many parameter bytes",
            );
        }
        self.fparam_size = end as u32;
        Ok((offset as u32, size as u32))
    }

    pub(super) fn add_module_var(&mut self, v: &ast::VarDecl) -> Result<u64, LoadError> {
        let (size, _, elem) =
            Self::var_size(v).or_else(|m| err(v.pos, LoadErrorKind::Unsupported, m))?;
        if size > 1 << 30 {
            return err(
                v.pos,
                LoadErrorKind::Unsupported,
                "global variable larger than 1 GiB",
            );
        }
        let index = self.module_vars.len();
        self.module_vars.push(ModuleVar {
            name: v.name.clone(),
            bytes: Self::init_bytes(v, size, elem),
            read_only: v.space == ast::Space::Const,
            elem,
            decl: self.site(v.pos),
        });
        Ok(crate::sim::machine::memory::alloc_base(index))
    }
}
