//! Launches on arrays that are already in device memory, for programs that
//! hold them (the Python package's `kernel[grid](...)` on torch, CuPy and
//! JAX arrays): the driver calls and launch configuration of `kdslc run`,
//! with the caller's device addresses instead of buffers copied from the
//! host, and nothing copied back.
//!
//! The module is loaded into the device's primary context, the one the
//! CUDA runtime (and so PyTorch, CuPy and JAX) uses, made current on the
//! calling thread; the launch goes to the legacy default stream, which
//! orders it after the work those libraries queued on theirs by default,
//! and is waited for (with a timeout), so that a fault is reported by the
//! launch that caused it.

use super::config::{self, DriverLaunch};
use super::cuda::{Event, GpuError, Session};
use crate::launch::{ArgValue, KernelSignature, Launch};
use std::time::Duration;

/// Why a launch on device memory failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceError {
    /// No driver, no such device, or a driver that cannot be used at all:
    /// nothing ran.
    pub unavailable: bool,
    /// What went wrong, with the CUDA call and error name.
    pub message: String,
}

/// A PTX module loaded on one device, for launches from the thread that
/// loaded it.
pub struct DeviceModule {
    gpu: Session,
    done: Event,
}

impl DeviceModule {
    /// Opens device `ordinal` (its primary context, made current on this
    /// thread) and JIT-compiles `ptx` there.
    pub fn load(ordinal: usize, ptx: &str) -> Result<DeviceModule, DeviceError> {
        let mut gpu = Session::open(ordinal).map_err(|e| error(None, &e))?;
        gpu.load_module(ptx).map_err(|e| error(None, &e))?;
        let done = gpu.event().map_err(|e| error(None, &e))?;
        Ok(DeviceModule { gpu, done })
    }

    /// The device's name ("NVIDIA H200").
    pub fn device_name(&self) -> &str {
        &self.gpu.name
    }

    /// Launches `launch` of the kernel `sig` describes and waits for it.
    /// `addresses` holds the device address of each array argument of
    /// `launch` (a tensor map's included), in order; the arrays' `data` is
    /// not read (it may be empty). A tensor map is encoded over its address
    /// with the launch's dimensions and strides, which the caller has
    /// checked ([`crate::launch::tensor::check_encode`]).
    pub fn launch(
        &mut self,
        launch: &Launch,
        sig: &KernelSignature,
        addresses: &[u64],
        timeout: Duration,
    ) -> Result<(), DeviceError> {
        let kernel = Some(launch.kernel.as_str());
        let fail = |e: GpuError| error(kernel, &e);
        let function = self.gpu.function(&launch.kernel).map_err(fail)?;
        let cfg = DriverLaunch::of(launch, sig, sig.cluster.is_some());
        let mut maps = Vec::new();
        let arrays = launch.args.iter().filter(|a| a.as_array().is_some());
        for (i, (arg, &address)) in arrays.zip(addresses).enumerate() {
            maps.push(match arg {
                ArgValue::TensorMap {
                    dims, strides, map, ..
                } => {
                    let encoded = self
                        .gpu
                        .encode_tiled(&config::tiled_map(dims, strides, map), address)
                        .map_err(fail)?;
                    // A `.u64` parameter (`const CUtensorMap*`) points to a
                    // device copy; a kdsl tensor takes the map by value.
                    let copy = if cfg.params.contains(&config::Param::MapPointer(i)) {
                        self.gpu.upload(&encoded.0).map_err(fail)?
                    } else {
                        0
                    };
                    Some((encoded, copy))
                }
                _ => None,
            });
        }
        let mut params = cfg.params(addresses, &maps).ok_or_else(|| DeviceError {
            unavailable: false,
            message: format!(
                "kernel `{}`: {} device addresses for {} array arguments",
                launch.kernel,
                addresses.len(),
                launch.arrays().count()
            ),
        })?;
        self.gpu.launch(function, &cfg, &mut params).map_err(fail)?;
        self.gpu.record(self.done).map_err(fail)?;
        self.gpu.wait(self.done, timeout).map_err(fail)
    }
}

fn error(kernel: Option<&str>, e: &GpuError) -> DeviceError {
    let message = match kernel {
        Some(k) if !e.is_unavailable() => format!("kernel `{k}` on the GPU: {}", e.describe()),
        _ => e.describe(),
    };
    DeviceError {
        unavailable: e.is_unavailable(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gpu_is_unavailable_and_a_fault_names_the_kernel() {
        let none = error(Some("saxpy"), &GpuError::NoDriver);
        assert!(none.unavailable);
        assert!(
            none.message.starts_with("no CUDA driver found"),
            "{}",
            none.message
        );
        let hung = error(Some("saxpy"), &GpuError::Timeout { seconds: 2.0 });
        assert!(!hung.unavailable);
        assert!(
            hung.message
                .starts_with("kernel `saxpy` on the GPU: did not finish within 2 s"),
            "{}",
            hung.message
        );
        let missing = error(
            None,
            &GpuError::NoDevice {
                ordinal: 3,
                count: 1,
            },
        );
        assert_eq!(
            missing,
            DeviceError {
                unavailable: true,
                message: "no CUDA device 3: this machine has 1 (numbered from 0)".to_string(),
            }
        );
    }
}
