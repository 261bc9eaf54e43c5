//! The launch signature of a kdsl kernel, read from the checked IR: its
//! parameters with their element types and mutability, and its
//! `block(...)`/`cluster(...)` shapes.

use super::{KernelSignature, ParamKind, ParamSig};
use crate::ir::{self, ParamType};

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
                },
            })
            .collect(),
        reqntid: k.block,
        maxntid: None,
        cluster: k.cluster,
    }
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
}
