//! The launch manifest (`kdslc build --emit manifest`): for each kernel of
//! a module, what host code (or a build system generating launch stubs)
//! needs to launch it correctly — the parameters with their PTX types and
//! byte offsets, the required block and cluster shapes, the static and
//! dynamic shared memory, and the target and PTX version the module needs.
//!
//! Every number comes from the computation the compiler itself uses:
//! [`ParamLayout`] and [`SharedLayout`] (`src/ir/layout.rs`), the `.param`
//! types of the PTX writer, and the `.version`/`.target` lines of the PTX
//! written. The schema is documented in `docs/manifest.md`; its fields are
//! only ever added to (`manifest_version` changes if one is renamed or
//! removed).

use crate::ir::layout::{param_size, ParamLayout, SharedDecl, SharedLayout};
use crate::ir::{self, ParamType};
use crate::target::Target;
use serde::Serialize;

/// The version of the manifest schema.
pub const MANIFEST_VERSION: u32 = 1;

/// The manifest of one module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Manifest {
    pub manifest_version: u32,
    /// The PTX `.target`: the device must have this compute capability or
    /// a later one (exactly this one for `sm_90a`/`sm_100a`).
    pub target: String,
    /// The compute capability `target` means, `major.minor`.
    pub compute_capability: String,
    /// Whether the code runs only on devices of exactly that capability.
    pub arch_specific: bool,
    /// The PTX `.version` of the module: the driver that JIT-compiles it
    /// (or the ptxas that assembles it) must support this ISA version.
    pub ptx_version: String,
    /// The kernels, in declaration order.
    pub kernels: Vec<KernelManifest>,
}

/// One kernel (`.entry`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelManifest {
    /// The `.entry` name (`cuModuleGetFunction`): the kdsl kernel name, or
    /// an instantiation's name.
    pub name: String,
    /// For an instantiation of a kernel with constants, the kdsl kernel's
    /// name (absent for a kernel without constants: `name` is it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// For an instantiation, every constant of the kernel with its value,
    /// in declaration order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub consts: Option<Vec<ConstManifest>>,
    pub params: Vec<ParamManifest>,
    /// The bytes of the parameter buffer, padding included.
    pub param_bytes: u64,
    /// `block(x, y, z)` (`.reqntid`): every launch must use exactly this
    /// block shape; `null` when the kernel does not fix it.
    pub block: Option<[u32; 3]>,
    /// `cluster(x, y, z)` (`.reqnctapercluster`): the cluster shape, fixed
    /// in the code (launches need not ask for it); `null` without one.
    pub cluster: Option<[u32; 3]>,
    pub shared: SharedManifest,
}

/// A kernel constant's value in one instantiation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConstManifest {
    pub name: String,
    /// `u32`, `bool`, ... or `type`.
    #[serde(rename = "type")]
    pub ty: &'static str,
    /// A number, `true`/`false`, or for a type constant the type's name.
    pub value: ConstValueManifest,
    /// Whether the value is the constant's default.
    pub default: bool,
}

/// The JSON value of a kernel constant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ConstValueManifest {
    Int(i128),
    Bool(bool),
    Type(String),
}

impl ConstManifest {
    fn of(c: &ir::InstanceConst) -> ConstManifest {
        let value = match c.value {
            ir::ConstValue::Value(ir::Value::Int(i), _) => ConstValueManifest::Int(i),
            ir::ConstValue::Value(ir::Value::Bool(b), _) => ConstValueManifest::Bool(b),
            // Kernel constants are integers, `bool` or types.
            ir::ConstValue::Value(ir::Value::Float(_) | ir::Value::Pair(..), _) => {
                ConstValueManifest::Type(c.value.text())
            }
            ir::ConstValue::Type(t) => ConstValueManifest::Type(t.name().to_string()),
        };
        ConstManifest {
            name: c.name.clone(),
            ty: c.value.type_name(),
            value,
            default: c.default,
        }
    }
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParamManifest {
    /// The kdsl name.
    pub name: String,
    /// `"scalar"`, `"array"` (a global array, passed as a device pointer)
    /// or `"tensor_map"` (a `CUtensorMap`, passed by value).
    pub kind: &'static str,
    /// The kdsl type: `f32`, `global [f32]`, `global mut [u32]`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The element type of an array, the type of a scalar.
    pub elem: String,
    /// The PTX `.param` type: what the bytes at `offset` hold (`u64` for a
    /// pointer, `u32` for a `bool`, `b16` for `f16`/`bf16`).
    pub ptx_type: &'static str,
    /// The byte offset in the parameter buffer (each parameter at its
    /// natural alignment, in order).
    pub offset: u64,
    pub size: u64,
    /// For a tensor map: what host code passes to
    /// `cuTensorMapEncodeTiled` (absent for other parameters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensor_map: Option<TensorMapManifest>,
}

/// The compile-time arguments of `cuTensorMapEncodeTiled` for a tensor-map
/// parameter (`ir::TensorMap`), by their `cuda.h` names; the host supplies
/// the rest ([`TensorMapManifest::host_supplies`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TensorMapManifest {
    /// `tensorDataType`.
    pub data_type: &'static str,
    /// The bytes of one element (for the host's `globalStrides`).
    pub element_bytes: u32,
    /// `tensorRank`.
    pub rank: usize,
    /// `boxDim`, innermost first (the kdsl type writes it outermost first).
    pub box_dim: Vec<u32>,
    /// `elementStrides`: all 1.
    pub element_strides: Vec<u32>,
    /// `interleave`: always `CU_TENSOR_MAP_INTERLEAVE_NONE`.
    pub interleave: &'static str,
    /// `swizzle`: that of the shared arrays the kernel copies the map's
    /// boxes into or out of.
    pub swizzle: &'static str,
    /// `l2Promotion`.
    pub l2_promotion: &'static str,
    /// `oobFill`.
    pub oob_fill: &'static str,
    /// Whether the kernel may write through the map (`tensor mut`: tensor
    /// stores and reductions).
    pub writable: bool,
    /// What the host must pass besides these.
    pub host_supplies: &'static str,
}

/// What host code supplies to `cuTensorMapEncodeTiled` for every map.
pub const TENSOR_MAP_HOST_SUPPLIES: &str = "globalAddress (16-byte aligned), globalDim[rank] (each 1 to 2^31) and globalStrides[rank - 1] (bytes between consecutive elements of dimensions 1.., each a multiple of 16 below 2^40), innermost dimension first; the map's 128 bytes are the parameter's value";

impl TensorMapManifest {
    pub fn of(map: &ir::TensorMap) -> Option<TensorMapManifest> {
        let box_dim: Vec<u32> = map.box_dims().iter().rev().copied().collect();
        Some(TensorMapManifest {
            data_type: ir::TensorMap::data_type(map.elem)?,
            element_bytes: map.elem.size(),
            rank: map.rank(),
            element_strides: vec![1; box_dim.len()],
            box_dim,
            interleave: "CU_TENSOR_MAP_INTERLEAVE_NONE",
            swizzle: map.swizzle.cuda_name(),
            l2_promotion: map.l2.cuda_name(),
            oob_fill: map.fill.cuda_name(),
            writable: map.mutable,
            host_supplies: TENSOR_MAP_HOST_SUPPLIES,
        })
    }
}

/// A kernel's shared memory (`src/ir/layout.rs`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SharedManifest {
    /// `"static"` (`.shared` variables, at most 48 KiB) or `"dynamic"`
    /// (offsets into the module's `.extern .shared` array).
    pub placement: &'static str,
    /// The static shared memory of the kernel (`ptxas -v`'s `smem`).
    pub static_bytes: u64,
    /// The dynamic shared memory every launch must give
    /// (`sharedMemBytes` of `cuLaunchKernel`), 0 for a static kernel.
    pub dynamic_bytes: u64,
    /// Whether the launch must first raise
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` (to
    /// `dynamic_bytes`): exactly when the kernel needs more than 48 KiB.
    pub opt_in: bool,
    /// The most one CTA may use on `target` once opted in.
    pub target_max_bytes: u64,
    /// The declarations, in the order of the layout, with their offsets
    /// (from the start of the dynamic array for a dynamic kernel).
    pub layout: Vec<SharedSlotManifest>,
}

/// One shared declaration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SharedSlotManifest {
    pub name: String,
    /// `"array"` or `"barriers"` (a barrier group, 8 bytes per barrier).
    pub kind: &'static str,
    pub offset: u64,
    pub size: u64,
}

/// Why a manifest could not be made (a compiler bug: the module compiled).
pub type Error = String;

/// The manifest of `module` compiled for `target` into `ptx`.
pub fn of_module(module: &ir::Module, ptx: &str, target: Target) -> Result<Manifest, Error> {
    let ptx_version =
        directive(ptx, ".version").ok_or_else(|| "the PTX has no `.version` line".to_string())?;
    let ptx_target =
        directive(ptx, ".target").ok_or_else(|| "the PTX has no `.target` line".to_string())?;
    if ptx_target != target.name() {
        return Err(format!(
            "the PTX is for `{ptx_target}`, the compilation for `{target}`"
        ));
    }
    let sm = target.sm();
    let kernels = module
        .kernels
        .iter()
        .map(|k| kernel(k, target))
        .collect::<Result<_, _>>()?;
    Ok(Manifest {
        manifest_version: MANIFEST_VERSION,
        target: target.name().to_string(),
        compute_capability: format!("{}.{}", sm / 10, sm % 10),
        arch_specific: target.is_arch_specific(),
        ptx_version: ptx_version.to_string(),
        kernels,
    })
}

/// The manifest as pretty JSON, one trailing newline: what
/// `--emit manifest` writes.
pub fn to_json(m: &Manifest) -> Result<String, Error> {
    let mut text = serde_json::to_string_pretty(m).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

/// The first word after `name` on the module-header line that starts with
/// it (`.version 7.8` gives `7.8`).
fn directive<'a>(ptx: &'a str, name: &str) -> Option<&'a str> {
    ptx.lines().find_map(|l| {
        let mut words = l.split_whitespace();
        (words.next() == Some(name)).then(|| words.next()).flatten()
    })
}

fn kernel(k: &ir::Kernel, target: Target) -> Result<KernelManifest, Error> {
    let layout = ParamLayout::of(k);
    let mut params = Vec::new();
    for (p, offset) in k.params.iter().zip(&layout.offsets) {
        let mut tensor_map = None;
        let (kind, ty, elem) = match p.ty {
            ParamType::Scalar(s) => ("scalar", s.to_string(), s.to_string()),
            ParamType::Global { elem, mutable, .. } => {
                let m = if mutable { "mut " } else { "" };
                ("array", format!("global {m}[{elem}]"), elem.to_string())
            }
            ParamType::Tensor(map) => {
                tensor_map = Some(TensorMapManifest::of(&map).ok_or_else(|| {
                    format!("tensor map `{}` of `{}` has no data type", p.name, map.elem)
                })?);
                ("tensor_map", map.type_text(), map.elem.to_string())
            }
        };
        params.push(ParamManifest {
            name: p.name.clone(),
            kind,
            ty,
            elem,
            ptx_type: crate::ptx::kernel_param_type(p.ty),
            offset: *offset,
            size: param_size(p.ty),
            tensor_map,
        });
    }
    Ok(KernelManifest {
        name: k.name.clone(),
        kernel: k.instance.as_ref().map(|i| i.kernel.clone()),
        consts: k
            .instance
            .as_ref()
            .map(|i| i.consts.iter().map(ConstManifest::of).collect()),
        params,
        param_bytes: layout.total,
        block: k.block,
        cluster: k.cluster,
        shared: shared(k, target)?,
    })
}

fn shared(k: &ir::Kernel, target: Target) -> Result<SharedManifest, Error> {
    let layout = SharedLayout::of(k);
    let mut slots = Vec::new();
    for slot in &layout.slots {
        let (name, kind) = match slot.decl {
            SharedDecl::Array(id) => (k.shared.get(id.index()).map(|a| &a.name), "array"),
            SharedDecl::Barriers(id) => (k.barriers.get(id.index()).map(|b| &b.name), "barriers"),
        };
        let (Some(name), Some(offset), Some(size)) = (name, slot.offset, slot.size) else {
            return Err(format!(
                "kernel `{}`: a shared declaration without a place in the layout",
                k.name
            ));
        };
        slots.push(SharedSlotManifest {
            name: name.clone(),
            kind,
            offset,
            size,
        });
    }
    let dynamic = layout.dynamic_bytes();
    Ok(SharedManifest {
        placement: match layout.placement() {
            crate::ir::layout::Placement::Static => "static",
            crate::ir::layout::Placement::Dynamic => "dynamic",
        },
        static_bytes: layout.static_bytes(),
        dynamic_bytes: dynamic,
        opt_in: layout.needs_opt_in(),
        target_max_bytes: target.max_shared_per_block(),
        layout: slots,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(src: &str, target: Target) -> Manifest {
        let opts = crate::Options {
            target,
            ..crate::Options::default()
        };
        let c = crate::compile_str("t.kdsl", src, &opts);
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        of_module(
            c.module.as_ref().unwrap(),
            c.ptx.as_deref().unwrap(),
            target,
        )
        .unwrap()
    }

    #[test]
    fn parameters_at_their_natural_offsets() {
        let m = manifest(
            "kernel k(h: f16, x: global [f32], b: bool, n: u32, y: global mut [f64]) block(64) {
                if b && thread_idx.x < n { y[0] = (x[0] as f64) + (h as f64); }
            }",
            Target::Sm80,
        );
        let k = &m.kernels[0];
        let got: Vec<_> = k
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.ptx_type, p.offset, p.size))
            .collect();
        assert_eq!(
            got,
            [
                ("h", "b16", 0, 2),
                ("x", "u64", 8, 8),
                ("b", "u32", 16, 4),
                ("n", "u32", 20, 4),
                ("y", "u64", 24, 8)
            ]
        );
        assert_eq!(k.param_bytes, 32);
        assert_eq!(k.params[4].ty, "global mut [f64]");
        assert_eq!((k.block, k.cluster), (Some([64, 1, 1]), None));
        assert_eq!(
            (m.target.as_str(), m.compute_capability.as_str()),
            ("sm_80", "8.0")
        );
        assert_eq!(k.shared.placement, "static");
        assert_eq!((k.shared.static_bytes, k.shared.dynamic_bytes), (0, 0));
    }

    #[test]
    fn dynamic_shared_memory_past_48_kib() {
        let m = manifest(
            "kernel k(out: global mut [f32]) block(128) {
                barrier full[4]: cta(arrivals = 128);
                shared stage: [f32; 4, 8192];
                stage[0, thread_idx.x] = 1.0;
                full[0].arrive();
                full[0].wait();
                out[thread_idx.x] = stage[0, 127 - thread_idx.x];
            }",
            Target::Sm90,
        );
        let s = &m.kernels[0].shared;
        assert_eq!(s.placement, "dynamic");
        assert_eq!(
            (s.static_bytes, s.dynamic_bytes, s.opt_in),
            (0, 131_200, true)
        );
        assert_eq!(s.target_max_bytes, 232_448);
        let slots: Vec<_> = s
            .layout
            .iter()
            .map(|l| (l.name.as_str(), l.kind, l.offset, l.size))
            .collect();
        assert_eq!(
            slots,
            [
                ("full", "barriers", 0, 32),
                ("stage", "array", 128, 131_072)
            ]
        );
    }

    #[test]
    fn header_directives() {
        assert_eq!(
            directive(".version 8.1\n.target sm_90\n", ".version"),
            Some("8.1")
        );
        assert_eq!(
            directive(".version 8.1\n.target sm_90\n", ".target"),
            Some("sm_90")
        );
        assert_eq!(directive("// .version 1.0\n", ".version"), None);
    }
}
