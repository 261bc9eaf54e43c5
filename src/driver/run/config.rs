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

use crate::launch::shape::{limits, volume, Dims};
use crate::launch::{ArgValue, Launch};

/// One parameter of a launch as the driver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Param {
    /// A scalar's bits, zero-extended.
    Value(u64),
    /// The device address of the launch's `n`th array argument.
    Buffer(usize),
    /// A tensor map over the launch's `n`th array argument.
    TensorMap(usize),
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
}

impl DriverLaunch {
    /// `compiled_cluster`: the kernel declares its cluster shape.
    pub(crate) fn of(launch: &Launch, compiled_cluster: bool) -> DriverLaunch {
        let mut arrays = 0;
        let params = launch
            .args
            .iter()
            .map(|a| match a {
                ArgValue::Scalar { bits, .. } => Param::Value(*bits),
                ArgValue::Array(_) => {
                    arrays += 1;
                    Param::Buffer(arrays - 1)
                }
                ArgValue::TensorMap { .. } => {
                    arrays += 1;
                    Param::TensorMap(arrays - 1)
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
        }
    }

    /// The parameter words, given the device address of each array
    /// argument in order (`None` for an address that is missing).
    pub(crate) fn words(&self, addresses: &[u64]) -> Option<Vec<u64>> {
        self.params
            .iter()
            .map(|p| match p {
                Param::Value(bits) => Some(*bits),
                Param::Buffer(i) => addresses.get(*i).copied(),
                Param::TensorMap(_) => None,
            })
            .collect()
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
        }
    }

    #[test]
    fn shapes_and_parameter_words() {
        let l = saxpy_launch();
        let d = DriverLaunch::of(&l, false);
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
        let words = d.words(&[0x7f00_0000_1000, 0x7f00_0000_2000]).unwrap();
        assert_eq!(
            words,
            [0x4000_0000, 0x7f00_0000_1000, 0x7f00_0000_2000, 1024]
        );
        // The low bytes of each word are the value in the parameter's own
        // width: what the driver copies for a 4-byte `.f32`/`.u32`.
        assert_eq!(words[0].to_le_bytes()[..4], 2f32.to_le_bytes());
        assert_eq!(words[3].to_le_bytes()[..4], 1024u32.to_le_bytes());
        assert_eq!(d.words(&[1]), None);
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
        let w = DriverLaunch::of(&l, false).words(&[]).unwrap();
        assert_eq!(w[0].to_le_bytes()[..2], [0x00, 0x3c]);
        assert_eq!(w[1].to_le_bytes()[..4], (-1i32).to_le_bytes());
        // Nothing leaks above the parameter's width.
        assert_eq!(w[1] >> 32, 0);
        assert_eq!(w[2], 1);
    }

    #[test]
    fn clusters_and_the_non_portable_size() {
        let mut l = saxpy_launch();
        l.grid = [8, 2, 1];
        l.cluster = [2, 1, 1];
        let d = DriverLaunch::of(&l, false);
        assert_eq!((d.grid, d.cluster), ([8, 2, 1], Some([2, 1, 1])));
        assert!(!d.non_portable_cluster);
        l.grid = [16, 1, 1];
        l.cluster = [16, 1, 1];
        assert!(DriverLaunch::of(&l, false).non_portable_cluster);
        l.cluster = [4, 2, 1];
        assert!(!DriverLaunch::of(&l, false).non_portable_cluster);
        // A kernel compiled with its cluster shape gets no attribute (the
        // driver takes the shape from the kernel), but still the
        // non-portable size when it needs it.
        let d = DriverLaunch::of(&l, true);
        assert_eq!((d.grid, d.cluster), ([16, 1, 1], None));
        l.cluster = [16, 1, 1];
        assert!(DriverLaunch::of(&l, true).non_portable_cluster);
    }

    #[test]
    fn dynamic_shared_memory_is_given_and_opted_into() {
        let mut l = saxpy_launch();
        l.dynamic_shared = 131_200;
        let d = DriverLaunch::of(&l, false);
        assert_eq!(d.shared_bytes, 131_200);
        assert_eq!(d.max_dynamic_shared, Some(131_200));
        // A PTX kernel's small dynamic array: still opted into, since its
        // static part is unknown here and could take the total past 48 KiB.
        l.dynamic_shared = 16;
        let d = DriverLaunch::of(&l, false);
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
            };
            crate::launch::build(sig, &req).unwrap()
        };
        // 4 barriers (32 bytes, padded to 128) then 4 × 32 KiB.
        let d = DriverLaunch::of(&launch(&sigs[0]), false);
        assert_eq!(
            (d.shared_bytes, d.max_dynamic_shared),
            (131_200, Some(131_200))
        );
        let d = DriverLaunch::of(&launch(&sigs[1]), false);
        assert_eq!((d.shared_bytes, d.max_dynamic_shared), (0, None));
    }

    #[test]
    fn traffic_counts_writable_arrays_twice() {
        assert_eq!(traffic_bytes(&saxpy_launch()), 4096 + 2 * 4096);
    }
}
