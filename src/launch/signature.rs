//! The launch signature of a kdsl kernel, read from the checked IR: its
//! parameters with their element types and mutability, its
//! `block(...)`/`cluster(...)` shapes and the dynamic shared memory its
//! layout needs (`ir::layout`).

use super::tensor::{OobFill, Swizzle, TensorElem};
use super::{DynamicLayout, DynamicVar, KernelSignature, ParamKind, ParamSig, TensorMapSig};
use crate::ir::layout::{Placement, SharedDecl, SharedLayout};
use crate::ir::{self, ParamType};
use crate::ptx::names::{barrier_symbol, shared_symbol};

/// The signature of `k` (what `--arg`, `--block` and `--cluster` are
/// checked against).
pub fn of_kernel(k: &ir::Kernel) -> KernelSignature {
    KernelSignature {
        name: k.name.clone(),
        params: k
            .params
            .iter()
            .map(|p| ParamSig {
                name: p.name.clone(),
                kind: match p.ty {
                    ParamType::Scalar(ty) => ParamKind::Scalar(ty),
                    ParamType::Global { elem, mutable, .. } => ParamKind::Array {
                        elem,
                        writable: mutable,
                    },
                    ParamType::Tensor(map) => match tensor_map_sig(&map) {
                        Some(sig) => ParamKind::TensorMap(sig),
                        // A map of no element type a map can have (E0400)
                        // never reaches a launch.
                        None => ParamKind::PtxTensorMap,
                    },
                },
            })
            .collect(),
        reqntid: k.block,
        maxntid: None,
        cluster: k.cluster,
        // The checker bounds the layout by the target's maximum (E0122),
        // so it fits 32 bits in any module that compiled.
        dynamic_shared: Some(
            u32::try_from(SharedLayout::of(k).dynamic_bytes()).unwrap_or(u32::MAX),
        ),
    }
}

/// The launch's view of a kdsl tensor parameter: its map's compile-time
/// fields (`ir::TensorMap`, whose swizzle the checker found from the
/// arrays the map is copied into and out of). `None` for an element type
/// no map holds (`bool`, E0400).
pub fn tensor_map_sig(map: &ir::TensorMap) -> Option<TensorMapSig> {
    let mut box_dims = [0u32; 5];
    for (d, s) in box_dims.iter_mut().zip(map.box_dims()) {
        *d = *s;
    }
    Some(TensorMapSig {
        elem: TensorElem::from_name(map.elem.name())?,
        rank: u8::try_from(map.rank()).ok()?,
        box_dims,
        swizzle: match map.swizzle {
            ir::Swizzle::None => Swizzle::None,
            ir::Swizzle::B32 => Swizzle::B32,
            ir::Swizzle::B64 => Swizzle::B64,
            ir::Swizzle::B128 => Swizzle::B128,
        },
        fill: match map.fill {
            ir::OobFill::Zero => OobFill::Zero,
            ir::OobFill::Nan => OobFill::Nan,
        },
        l2_promotion: u16::try_from(map.l2.bytes()).ok()?,
        writable: map.mutable,
    })
}

/// How `k` carves up its dynamic shared memory: the bytes a launch gives
/// and each declaration at its offset (`None` for a kernel whose shared
/// memory is static). The same [`SharedLayout`] the writer addresses them
/// by.
pub fn dynamic_layout(k: &ir::Kernel) -> Option<DynamicLayout> {
    let layout = SharedLayout::of(k);
    if layout.placement() != Placement::Dynamic {
        return None;
    }
    let mut vars = Vec::new();
    for slot in &layout.slots {
        let (name, elem, span) = match slot.decl {
            SharedDecl::Array(id) => {
                let a = k.shared.get(id.index())?;
                (shared_symbol(&a.name), a.elem.size(), a.span)
            }
            SharedDecl::Barriers(id) => {
                let b = k.barriers.get(id.index())?;
                (barrier_symbol(&b.name), 8, b.spans.decl)
            }
        };
        vars.push(DynamicVar {
            name,
            offset: u32::try_from(slot.offset?).ok()?,
            size: u32::try_from(slot.size?).ok()?,
            elem,
            span: Some(span),
        });
    }
    Some(DynamicLayout {
        bytes: u32::try_from(layout.dynamic_bytes()).ok()?,
        vars,
    })
}

/// The dynamic layout of every kernel of a module that has one.
pub fn dynamic_layouts(m: &ir::Module) -> Vec<(String, DynamicLayout)> {
    m.kernels
        .iter()
        .filter_map(|k| Some((k.name.clone(), dynamic_layout(k)?)))
        .collect()
}

/// The signatures of every kernel of a module, in declaration order.
pub fn of_module(m: &ir::Module) -> Vec<KernelSignature> {
    m.kernels.iter().map(of_kernel).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Scalar;

    fn signatures(src: &str) -> Vec<KernelSignature> {
        let c = crate::compile_str("t.kdsl", src, &crate::Options::default());
        let m = c.module.unwrap_or_else(|| panic!("{:#?}", c.diagnostics));
        of_module(&m)
    }

    #[test]
    fn parameters_shapes_and_mutability() {
        let sigs = signatures(
            "kernel saxpy(a: f32, x: global [f32], y: global mut [f32], n: u32) block(256) {
                let i = block_idx.x * 256 + thread_idx.x;
                if i < n { y[i] = a * x[i] + y[i]; }
            }
            kernel pair(flag: bool, h: global mut [f16], count: i64) block(16, 8) cluster(2, 1) {
                if flag && count > 0 { h[0] = h[1]; }
            }
            kernel free(out: global mut [u64]) {
                out[0] = 1u64;
            }",
        );
        assert_eq!(sigs.len(), 3);
        let s = &sigs[0];
        assert_eq!(s.name, "saxpy");
        assert_eq!(s.reqntid, Some([256, 1, 1]));
        assert_eq!((s.maxntid, s.cluster), (None, None));
        let kinds: Vec<(&str, ParamKind)> =
            s.params.iter().map(|p| (p.name.as_str(), p.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("a", ParamKind::Scalar(Scalar::F32)),
                (
                    "x",
                    ParamKind::Array {
                        elem: Scalar::F32,
                        writable: false
                    }
                ),
                (
                    "y",
                    ParamKind::Array {
                        elem: Scalar::F32,
                        writable: true
                    }
                ),
                ("n", ParamKind::Scalar(Scalar::U32)),
            ]
        );
        let p = &sigs[1];
        assert_eq!((p.reqntid, p.cluster), (Some([16, 8, 1]), Some([2, 1, 1])));
        assert_eq!(p.params[0].kind, ParamKind::Scalar(Scalar::Bool));
        assert_eq!(
            p.params[1].kind,
            ParamKind::Array {
                elem: Scalar::F16,
                writable: true
            }
        );
        assert_eq!(p.params[2].kind, ParamKind::Scalar(Scalar::I64));
        assert_eq!((sigs[2].reqntid, sigs[2].cluster), (None, None));
    }

    #[test]
    fn tensor_parameters_carry_their_maps_compile_time_fields() {
        let sigs = signatures(
            "kernel k(a: tensor [bf16; 128, 64], c: tensor mut [e4m3; 2, 16, 128] fill(zero) l2(64),
                      out: global mut [f32]) block(32) {
                out[0] = 1.0;
            }",
        );
        let kinds: Vec<ParamKind> = sigs[0].params.iter().map(|p| p.kind).collect();
        let ParamKind::TensorMap(a) = kinds[0] else {
            panic!("{kinds:?}")
        };
        assert_eq!(
            (
                a.elem,
                a.rank,
                a.boxes(),
                a.swizzle,
                a.fill,
                a.l2_promotion,
                a.writable
            ),
            (
                TensorElem::BF16,
                2,
                &[128, 64][..],
                Swizzle::None,
                OobFill::Zero,
                256,
                false
            )
        );
        assert_eq!(a.box_bytes(), 16384);
        let ParamKind::TensorMap(c) = kinds[1] else {
            panic!("{kinds:?}")
        };
        assert_eq!(
            (c.elem, c.boxes(), c.l2_promotion, c.writable),
            (TensorElem::E4M3, &[2, 16, 128][..], 64, true)
        );
    }
}
