//! From a [`Launch`] to what `cuLaunchKernelEx` is given, computed without
//! a GPU so that it can be tested anywhere.
//!
//! Parameters go through `kernelParams`: one pointer per parameter, each to
//! its own 8-byte, 8-aligned little-endian word. The driver copies each
//! parameter's own size (1 to 8 bytes, taken from the kernel's signature)
//! from the start of its word, which on a little-endian host holds the low
//! bytes of the value: a `.u32` gets the 32-bit value, a `.b16` half gets
//! its 16 bits, a pointer the 64-bit device address. The driver lays the
//! words out in the kernel's parameter space itself, so the host never
//! needs the `.param` offsets.

use super::cuda::TiledMap;
use crate::launch::shape::{limits, volume, Dims};
use crate::launch::{ArgValue, KernelSignature, Launch, ParamKind, TensorMapSig};

/// One parameter of a launch as the driver sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    /// A scalar's bits, zero-extended.
    Value(u64),
    /// The device address of the launch's `n`th array argument.
    Buffer(usize),
    /// The tensor map of the launch's `n`th array argument, by value (a
    /// 128-byte `.param`, `__grid_constant__`).
    MapByValue(usize),
    /// The device address of a copy of that map (a `.u64` parameter:
    /// `const CUtensorMap*`).
    MapPointer(usize),
    /// The bytes of a struct passed by value.
    Bytes(Vec<u8>),
}

/// The launch configuration of `cuLaunchKernelEx`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DriverLaunch {
    /// Blocks (not clusters) in each dimension: `gridDimX/Y/Z`.
    pub grid: Dims,
    pub block: Dims,
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`, for a launch with clusters
    /// whose shape the kernel does not fix itself. A kernel compiled with
    /// its cluster shape (`cluster(...)`, `.reqnctapercluster`) is launched
    /// without the attribute: the shape cannot be changed at launch, and
    /// the launch interface has already checked that it is the one asked
    /// for.
    pub cluster: Option<Dims>,
    /// Set `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED` first:
    /// more than 8 CTAs per cluster.
    pub non_portable_cluster: bool,
    /// Dynamic shared memory per CTA (`sharedMemBytes`): the compiler's
    /// for a kdsl kernel placed in dynamic shared memory, `--shared-bytes`
    /// for a PTX one.
    pub shared_bytes: u32,
    /// Set `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` to this first:
    /// without it the driver refuses a launch whose static and dynamic
    /// shared memory together exceed 48 KiB. Set whenever the launch has
    /// dynamic shared memory (the static part of a PTX kernel is not known
    /// here, and the attribute costs nothing when it is not needed).
    pub max_dynamic_shared: Option<u32>,
    pub params: Vec<Param>,
    /// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`: `--cooperative`.
    pub cooperative: bool,
}

impl DriverLaunch {
    /// `compiled_cluster`: the kernel declares its cluster shape; `sig`
    /// says how each tensor map is passed (by value unless its parameter
    /// is a `.u64` pointer).
    pub(crate) fn of(
        launch: &Launch,
        sig: &KernelSignature,
        compiled_cluster: bool,
    ) -> DriverLaunch {
        let mut arrays = 0;
        let params = launch
            .args
            .iter()
            .zip(
                sig.params
                    .iter()
                    .map(|p| p.kind)
                    .chain(std::iter::repeat(ParamKind::PtxTensorMap)),
            )
            .map(|(a, kind)| match a {
                ArgValue::Scalar { bits, .. } => Param::Value(*bits),
                ArgValue::Bytes(data) => Param::Bytes(data.clone()),
                ArgValue::Array(_) => {
                    arrays += 1;
                    Param::Buffer(arrays - 1)
                }
                ArgValue::TensorMap { .. } => {
                    arrays += 1;
                    if kind == ParamKind::PtxU64 {
                        Param::MapPointer(arrays - 1)
                    } else {
                        Param::MapByValue(arrays - 1)
                    }
                }
            })
            .collect();
        let runtime_cluster = launch.cluster != [1, 1, 1] && !compiled_cluster;
        DriverLaunch {
            grid: launch.grid,
            block: launch.block,
            cluster: runtime_cluster.then_some(launch.cluster),
            non_portable_cluster: volume(launch.cluster) > limits::CLUSTER_PORTABLE,
            shared_bytes: launch.dynamic_shared,
            max_dynamic_shared: (launch.dynamic_shared > 0).then_some(launch.dynamic_shared),
            params,
            cooperative: launch.cooperative,
        }
    }

    /// The parameters, given the device address of each array argument in
    /// order, the tensor map of each (by array index) and the device
    /// address of its copy (`None` for one that is missing).
    pub(crate) fn params(
        &self,
        addresses: &[u64],
        maps: &[Option<(super::cuda::EncodedMap, u64)>],
    ) -> Option<Vec<super::cuda::ParamBytes>> {
        use super::cuda::ParamBytes;
        self.params
            .iter()
            .map(|p| match p {
                Param::Value(bits) => Some(ParamBytes::Word(*bits)),
                Param::Bytes(data) => Some(ParamBytes::Bytes(data.clone())),
                Param::Buffer(i) => addresses.get(*i).copied().map(ParamBytes::Word),
                Param::MapByValue(i) => maps
                    .get(*i)
                    .copied()
                    .flatten()
                    .map(|(m, _)| ParamBytes::Map(Box::new(m))),
                Param::MapPointer(i) => maps
                    .get(*i)
                    .copied()
                    .flatten()
                    .map(|(_, a)| ParamBytes::Word(a)),
            })
            .collect()
    }
}

/// The arguments `cuTensorMapEncodeTiled` is given for a map with `dims`
/// and byte `strides` (outermost first, as kdsl and the launch have them):
/// everything innermost first, element strides 1, no interleave.
pub(crate) fn tiled_map(dims: &[u64], strides: &[u64], map: &TensorMapSig) -> TiledMap {
    TiledMap {
        data_type: map.elem.cuda_type().0,
        dims: dims.iter().rev().copied().collect(),
        strides: strides.iter().rev().copied().collect(),
        boxes: map.boxes().iter().rev().copied().collect(),
        element_strides: vec![1; dims.len()],
        interleave: 0,
        swizzle: map.swizzle.cuda_name().0,
        l2_promotion: crate::launch::tensor::l2_cuda_name(map.l2_promotion).0,
        fill: map.fill.cuda_name().0,
    }
}

/// The bytes a launch moves at least once, for the effective bandwidth:
/// every array argument read once, every writable one also written once.
pub(crate) fn traffic_bytes(launch: &Launch) -> u64 {
    launch
        .arrays()
        .map(|a| {
            let n = a.data.len() as u64;
            if a.writable {
                2 * n
            } else {
                n
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::Array;
    use crate::types::Scalar;

    /// A signature whose parameters say nothing of the launch's tensor
    /// maps (passed by value).
    fn no_sig() -> KernelSignature {
        KernelSignature {
            name: "k".into(),
            params: Vec::new(),
            reqntid: None,
            maxntid: None,
            cluster: None,
            dynamic_shared: None,
        }
    }

    fn words(p: Option<Vec<super::super::cuda::ParamBytes>>) -> Option<Vec<u64>> {
        use super::super::cuda::ParamBytes;
        p.map(|p| {
            p.into_iter()
                .map(|b| match b {
                    ParamBytes::Word(w) => w,
                    ParamBytes::Map(_) => panic!("a map"),
                    ParamBytes::Bytes(_) => panic!("bytes"),
                })
                .collect()
        })
    }

    fn array(name: &str, bytes: usize, writable: bool) -> ArgValue {
        ArgValue::Array(Array {
            name: name.into(),
            elem: Scalar::F32,
            data: vec![0; bytes],
            writable,
        })
    }

    fn saxpy_launch() -> Launch {
        Launch {
            kernel: "saxpy".into(),
            grid: [4, 1, 1],
            block: [256, 1, 1],
            cluster: [1, 1, 1],
            dynamic_shared: 0,
            args: vec![
                ArgValue::Scalar {
                    ty: Scalar::F32,
                    bits: u64::from(2f32.to_bits()),
                },
                array("x", 4096, false),
                array("y", 4096, true),
                ArgValue::Scalar {
                    ty: Scalar::U32,
                    bits: 1024,
                },
            ],
            cooperative: false,
        }
    }

    #[test]
    fn shapes_and_parameter_words() {
        let l = saxpy_launch();
        let d = DriverLaunch::of(&l, &no_sig(), false);
        assert_eq!((d.grid, d.block, d.cluster), ([4, 1, 1], [256, 1, 1], None));
        assert!(!d.non_portable_cluster);
        assert_eq!((d.shared_bytes, d.max_dynamic_shared), (0, None));
        assert_eq!(
            d.params,
            [
                Param::Value(0x4000_0000),
                Param::Buffer(0),
                Param::Buffer(1),
                Param::Value(1024)
            ]
        );
        let w = words(d.params(&[0x7f00_0000_1000, 0x7f00_0000_2000], &[])).unwrap();
        assert_eq!(w, [0x4000_0000, 0x7f00_0000_1000, 0x7f00_0000_2000, 1024]);
        // The low bytes of each word are the value in the parameter's own
        // width: what the driver copies for a 4-byte `.f32`/`.u32`.
        assert_eq!(w[0].to_le_bytes()[..4], 2f32.to_le_bytes());
        assert_eq!(w[3].to_le_bytes()[..4], 1024u32.to_le_bytes());
        assert_eq!(words(d.params(&[1], &[])), None);
    }

    #[test]
    fn narrow_scalars_sit_in_the_low_bytes() {
        let l = Launch {
            args: vec![
                ArgValue::Scalar {
                    ty: Scalar::F16,
                    bits: 0x3c00,
                },
                ArgValue::Scalar {
                    ty: Scalar::I32,
                    bits: 0xffff_ffff,
                },
                ArgValue::Scalar {
                    ty: Scalar::Bool,
                    bits: 1,
                },
            ],
            ..saxpy_launch()
        };
        let w = words(DriverLaunch::of(&l, &no_sig(), false).params(&[], &[])).unwrap();
        assert_eq!(w[0].to_le_bytes()[..2], [0x00, 0x3c]);
        assert_eq!(w[1].to_le_bytes()[..4], (-1i32).to_le_bytes());
        // Nothing leaks above the parameter's width.
        assert_eq!(w[1] >> 32, 0);
        assert_eq!(w[2], 1);
    }

    /// A tensor map: by value for a 128-byte parameter (the driver reads
    /// its 128 bytes), by the address of a device copy for a `.u64` one;
    /// the encoding's arguments innermost first.
    #[test]
    fn tensor_maps_by_value_and_by_pointer() {
        use super::super::cuda::{EncodedMap, ParamBytes};
        use crate::launch::{ParamSig, TensorElem};
        let param = |kind| ParamSig {
            name: "m".into(),
            kind,
        };
        let map = |text: &str| {
            crate::launch::value::parse(&param(ParamKind::PtxTensorMap), text).unwrap()
        };
        let mut l = saxpy_launch();
        l.args = vec![
            map("tmap:bf16:zeros:200,136:box=128,64:swizzle=128:fill=nan:l2=256"),
            map("tmap:u8:zeros:4,5,32:box=2,2,16"),
            array("c", 64, true),
        ];
        let mut sig = no_sig();
        sig.params = vec![
            param(ParamKind::PtxTensorMap),
            param(ParamKind::PtxU64),
            param(ParamKind::PtxU64),
        ];
        let d = DriverLaunch::of(&l, &sig, false);
        assert_eq!(
            d.params,
            [Param::MapByValue(0), Param::MapPointer(1), Param::Buffer(2)]
        );
        let m0 = EncodedMap([7; 128]);
        let m1 = EncodedMap([9; 128]);
        let p = d
            .params(
                &[0x1000, 0x2000, 0x3000],
                &[Some((m0, 0)), Some((m1, 0x4000)), None],
            )
            .unwrap();
        assert!(matches!(&p[0], ParamBytes::Map(m) if **m == m0));
        assert!(matches!(p[1], ParamBytes::Word(0x4000)));
        assert!(matches!(p[2], ParamBytes::Word(0x3000)));
        let ArgValue::TensorMap {
            dims, strides, map, ..
        } = &l.args[0]
        else {
            panic!()
        };
        let t = tiled_map(dims, strides, map);
        assert_eq!(t.data_type, TensorElem::BF16.cuda_type().0);
        assert_eq!(
            (t.dims, t.strides, t.boxes),
            (vec![136, 200], vec![272], vec![64, 128])
        );
        assert_eq!(t.element_strides, [1, 1]);
        assert_eq!(
            (t.interleave, t.swizzle, t.l2_promotion, t.fill),
            (0, 3, 3, 1)
        );
        let ArgValue::TensorMap {
            dims, strides, map, ..
        } = &l.args[1]
        else {
            panic!()
        };
        let t = tiled_map(dims, strides, map);
        assert_eq!(
            (t.dims, t.strides, t.boxes),
            (vec![32, 5, 4], vec![32, 160], vec![16, 2, 2])
        );
    }

    #[test]
    fn clusters_and_the_non_portable_size() {
        let mut l = saxpy_launch();
        l.grid = [8, 2, 1];
        l.cluster = [2, 1, 1];
        let d = DriverLaunch::of(&l, &no_sig(), false);
        assert_eq!((d.grid, d.cluster), ([8, 2, 1], Some([2, 1, 1])));
        assert!(!d.non_portable_cluster);
        l.grid = [16, 1, 1];
        l.cluster = [16, 1, 1];
        assert!(DriverLaunch::of(&l, &no_sig(), false).non_portable_cluster);
        l.cluster = [4, 2, 1];
        assert!(!DriverLaunch::of(&l, &no_sig(), false).non_portable_cluster);
        // A kernel compiled with its cluster shape gets no attribute (the
        // driver takes the shape from the kernel), but still the
        // non-portable size when it needs it.
        let d = DriverLaunch::of(&l, &no_sig(), true);
        assert_eq!((d.grid, d.cluster), ([16, 1, 1], None));
        l.cluster = [16, 1, 1];
        assert!(DriverLaunch::of(&l, &no_sig(), true).non_portable_cluster);
    }

    #[test]
    fn dynamic_shared_memory_is_given_and_opted_into() {
        let mut l = saxpy_launch();
        l.dynamic_shared = 131_200;
        let d = DriverLaunch::of(&l, &no_sig(), false);
        assert_eq!(d.shared_bytes, 131_200);
        assert_eq!(d.max_dynamic_shared, Some(131_200));
        // A PTX kernel's small dynamic array: still opted into, since its
        // static part is unknown here and could take the total past 48 KiB.
        l.dynamic_shared = 16;
        let d = DriverLaunch::of(&l, &no_sig(), false);
        assert_eq!((d.shared_bytes, d.max_dynamic_shared), (16, Some(16)));
    }

    #[test]
    fn a_kdsl_kernel_past_48_kib_launches_with_its_layout() {
        let src = "kernel big(out: global mut [f32]) block(128) {
            barrier full[4]: cta(arrivals = 128);
            shared stage: [f32; 4, 8192];
            stage[0, thread_idx.x] = 1.0;
            sync_threads();
            out[thread_idx.x] = stage[0, 127 - thread_idx.x];
        }
        kernel small(out: global mut [f32]) block(128) {
            shared t: [f32; 128];
            t[thread_idx.x] = 1.0;
            sync_threads();
            out[thread_idx.x] = t[127 - thread_idx.x];
        }";
        let c = crate::compile_str("t.kdsl", src, &crate::Options::default());
        let m = c.module.unwrap();
        let sigs = crate::launch::signature::of_module(&m);
        let launch = |sig: &crate::launch::KernelSignature| {
            let req = crate::launch::Request {
                grid: [2, 1, 1],
                block: None,
                cluster: None,
                args: vec!["out=zeros:128".parse().unwrap()],
                shared_bytes: None,
                origin: crate::launch::Origin::Kdsl,
                cooperative: false,
            };
            crate::launch::build(sig, &req).unwrap()
        };
        // 4 barriers (32 bytes, padded to 128) then 4 × 32 KiB.
        let d = DriverLaunch::of(&launch(&sigs[0]), &sigs[0], false);
        assert_eq!(
            (d.shared_bytes, d.max_dynamic_shared),
            (131_200, Some(131_200))
        );
        let d = DriverLaunch::of(&launch(&sigs[1]), &sigs[1], false);
        assert_eq!((d.shared_bytes, d.max_dynamic_shared), (0, None));
    }

    #[test]
    fn traffic_counts_writable_arrays_twice() {
        assert_eq!(traffic_bytes(&saxpy_launch()), 4096 + 2 * 4096);
    }
}
