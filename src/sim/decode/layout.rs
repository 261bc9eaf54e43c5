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
/// access must start and end in the same variable. (A dynamic `.extern
/// .shared` array has size 0 in the module and so owns nothing here; each
/// launch sizes it, `crate::sim::shared`.)
pub(crate) fn owner_map(vars: &[MemVar], size: u32) -> Vec<u16> {
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

/// The simulator's static shared variables end below 8 MiB, so that the
/// dynamic shared memory after them (at most 227 KiB on any target) keeps
/// every CTA offset below 2^24, the bits a `shared::cluster` address gives
/// the offset (`machine::memory::RANK_SHIFT`).
const MAX_STATIC_SHARED: u64 = 1 << 23;

/// Places `v` (of `(size, align, elem)`) after the variables of a memory
/// laid out with red zones, which uses `used` bytes so far and must stay
/// below the limit of `too_large` (else its message); its offset.
fn place(
    (vars, used): (&mut Vec<MemVar>, &mut u32),
    (limit, too_large): (u64, &str),
    v: &ast::VarDecl,
    (size, align, elem): (u64, u64, u32),
    decl: super::Site,
) -> Result<u32, LoadError> {
    let offset = align_up(u64::from(*used), align);
    let end = offset + size + u64::from(RED_ZONE);
    if end >= limit {
        return err(v.pos, LoadErrorKind::Unsupported, too_large);
    }
    *used = end as u32;
    vars.push(MemVar {
        name: v.name.clone(),
        offset: offset as u32,
        size: size as u32,
        elem,
        decl,
    });
    Ok(offset as u32)
}

/// An unsized `.shared` array (`.extern .shared .b8 d[];`): dynamic shared
/// memory, sized by each launch. (A sized `.extern` array is an ordinary
/// static one: ptxas ignores the `.extern`.)
pub(super) fn is_dynamic_shared(v: &ast::VarDecl) -> bool {
    v.space == ast::Space::Shared && v.dims.contains(&None)
}

/// Where the dynamic shared memory of a module starts (`None`: it declares
/// none): after every static `.shared` variable, laid out as
/// [`Builder::add_shared`] will lay them out (module variables, then each
/// function's declarations in order), aligned to the most any dynamic
/// array asks for (at least 16 bytes, as CUDA guarantees).
pub(super) fn dynamic_base(module: &ast::Module) -> Result<Option<u32>, LoadError> {
    fn walk<'a>(block: &'a ast::Block, out: &mut Vec<&'a ast::VarDecl>) {
        for item in &block.items {
            match item {
                ast::Item::Var(v) => out.push(v),
                ast::Item::Block(inner) => walk(inner, out),
                _ => {}
            }
        }
    }
    let mut vars: Vec<&ast::VarDecl> = module.vars.iter().collect();
    for f in &module.functions {
        if let Some(body) = &f.body {
            walk(body, &mut vars);
        }
    }
    let mut end = u64::from(super::SHARED_BASE);
    let mut align = 0u64;
    for v in vars.into_iter().filter(|v| v.space == ast::Space::Shared) {
        let (size, a, _) =
            Builder::var_size(v).or_else(|m| err(v.pos, LoadErrorKind::Unsupported, m))?;
        if is_dynamic_shared(v) {
            align = align.max(a).max(16);
        } else {
            end = align_up(end, a) + size + u64::from(RED_ZONE);
        }
    }
    if align == 0 {
        return Ok(None);
    }
    // An oversized static layout is reported when that variable is added.
    Ok(u32::try_from(align_up(end, align)).ok())
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

    /// The initialiser of a variable as bytes (as many as it gives, at
    /// most `size`: bounded by the PTX text, not by the declared size).
    fn init_bytes(v: &ast::VarDecl, size: u64, elem: u32) -> Vec<u8> {
        let given = (v.init.len() as u64).saturating_mul(u64::from(elem));
        let mut bytes = vec![0u8; given.min(size) as usize];
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
        if is_dynamic_shared(v) {
            // Every dynamic array starts at the same place, after the static
            // variables (found before decoding, `dynamic_base`).
            let Some(base) = self.dynamic_base else {
                return err(
                    v.pos,
                    LoadErrorKind::Invalid,
                    "internal: no dynamic shared base",
                );
            };
            self.dynamic_vars.push(self.shared.len());
            self.shared.push(MemVar {
                name: v.name.clone(),
                offset: base,
                size: 0,
                elem,
                decl: self.site(v.pos),
            });
            return Ok(base);
        }
        self.gpu_static_shared = align_up(self.gpu_static_shared, align) + size;
        let site = self.site(v.pos);
        let memory = (&mut self.shared, &mut self.shared_size);
        let too_large = (MAX_STATIC_SHARED, "static shared memory larger than 8 MiB");
        place(memory, too_large, v, (size, align, elem), site)
    }

    pub(super) fn add_local(&mut self, v: &ast::VarDecl) -> Result<u32, LoadError> {
        let shape = Self::var_size(v).or_else(|m| err(v.pos, LoadErrorKind::Unsupported, m))?;
        let site = self.site(v.pos);
        let memory = (&mut self.local, &mut self.local_size);
        let too_large = (1 << 24, "local memory larger than 16 MiB per thread");
        place(memory, too_large, v, shape, site)
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
        super::validate::initializer(v)?;
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
            size,
            init: Self::init_bytes(v, size, elem),
            read_only: v.space == ast::Space::Const,
            ty: Ty::from_name(&v.ty).filter(|_| !v.ty.starts_with('b')),
            elem,
            decl: self.site(v.pos),
        });
        Ok(crate::sim::machine::memory::alloc_base(index))
    }
}
