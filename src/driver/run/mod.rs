//! `kdslc run`: launch one kernel on a CUDA GPU.
//!
//! The input and the launch are checked first (the same code as `kdslc
//! sim`), then the driver is opened: no driver, no device or a driver that
//! fails to initialise is exit 2. The
//! PTX is JIT-compiled by the driver, the arguments copied to the device,
//! the kernel launched (with its cluster shape through
//! `cuLaunchKernelEx`), the writable arrays copied back. A driver error, a
//! fault or a timeout names the kernel and the CUDA error, exits 4 and
//! writes nothing. Then `--bench N` times N more launches and
//! `--check-sim` compares with the simulator.
//!
//! - `config`: the launch configuration the driver is given (tested
//!   without a GPU);
//! - `cuda`: the driver calls; `result`: their results as numbers, with
//!   the names `cuda.h` gives them;
//! - `bench`: timing statistics;
//! - `device`: launches on arrays already on the device (the Python
//!   package's), public as `kdsl::driver::device`.

mod bench;
mod config;
mod cuda;
pub mod device;
mod result;

use super::cli::{MessageFormat, RunArgs};
use super::engine::{self, Settings};
use super::launch_io;
use super::report::{self, Reporter};
use super::{output, Fail};
use crate::launch::compare;
use crate::launch::{ArgValue, Array, KernelSignature, Launch};
use config::DriverLaunch;
use cuda::{DevicePtr, GpuError, Session};
use result::CuResult;
use std::time::Duration;

pub fn run(args: &RunArgs, reporter: &mut Reporter) -> Result<(), Fail> {
    if launch_io::is_ptx(&args.launch.file) && !args.launch.common.consts.is_empty() {
        return Err(Fail::Usage(
            "`--const NAME=ARRAY` (a .ptx input's `__constant__` memory) is set by `kdslc sim` only; `kdslc run` does not write `.const` variables"
                .to_string(),
        ));
    }
    let input = launch_io::load(&args.launch, reporter)?;
    let launch = launch_io::prepare(&args.launch, &input)?;
    let json = args.launch.common.message_format == MessageFormat::Json;
    let timeout = Duration::from_secs_f64(args.timeout);

    let fail = |e: GpuError| gpu_failure(&launch.kernel, e);
    let mut gpu = Session::open(args.device).map_err(fail)?;
    let Some(sig) = input.signatures.iter().find(|s| s.name == launch.kernel) else {
        return Err(Fail::Internal(format!(
            "no signature of kernel `{}`",
            launch.kernel
        )));
    };
    let on_device = Prepared::new(&mut gpu, &input.ptx, &launch, sig).map_err(fail)?;
    let returned = on_device.run(&mut gpu, &launch, timeout).map_err(fail)?;
    let arrays = launch_io::results(&launch, returned)?;

    if let Some(n) = args.bench {
        let times = on_device
            .bench(&mut gpu, &launch, n, timeout)
            .map_err(fail)?;
        let summary = bench::Summary::of(&times, config::traffic_bytes(&launch));
        let text = if json {
            summary.json(&launch.kernel, &gpu.name)
        } else {
            summary.human(&launch.kernel, &gpu.name)
        };
        output::write_stdout(format!("{text}\n").as_bytes())?;
    }
    drop(gpu);

    if args.check_sim {
        let settings = Settings {
            schedule: super::cli::Schedule::InOrder,
            max_steps: None,
            jobs: 0,
            checks: crate::sim::Checks::all(),
            stats: false,
            json,
        };
        let sim = engine::simulate(&input, &launch, &settings, &[], reporter)?;
        reporter.report(&sim.sources, &sim.reports);
        if sim.faulted {
            return Err(Fail::Fault(format!(
                "--check-sim: kernel `{}` ran on the GPU, but faulted in the simulator (reported above)",
                launch.kernel
            )));
        }
        // Tensor-core products of integer-valued inputs agree bit for bit.
        let exact = input.ptx.contains("wgmma.mma_async") && compare::integer_valued(&launch);
        check_against_sim(&launch.kernel, &arrays, &sim.arrays, exact)?;
        if !json {
            report::stderr(&format!(
                "note: --check-sim: every writable array of `{}` matches the simulator\n",
                launch.kernel
            ));
        }
    }
    launch_io::write_outputs(&args.launch, &launch, &arrays)
}

/// `--check-sim`'s verdict: exit 4 with the differences listed.
fn check_against_sim(kernel: &str, gpu: &[Array], sim: &[Array], exact: bool) -> Result<(), Fail> {
    let diffs = compare::compare_with(gpu, sim, exact);
    if diffs.is_empty() {
        return Ok(());
    }
    let text: Vec<String> = diffs.iter().map(ToString::to_string).collect();
    Err(Fail::Fault(format!(
        "--check-sim: the GPU and the simulator disagree on kernel `{kernel}`:\n{}",
        text.join("\n")
    )))
}

/// A driver failure as the user sees it: no GPU is a usage problem (exit
/// 2); anything else is the kernel's fault (exit 4).
fn gpu_failure(kernel: &str, e: GpuError) -> Fail {
    if e.is_unavailable() {
        Fail::Usage(e.describe())
    } else {
        Fail::Fault(format!("kernel `{kernel}` on the GPU: {}", e.describe()))
    }
}

/// The module loaded, the arguments on the device, the launch configured.
struct Prepared {
    function: cuda::Function,
    config: DriverLaunch,
    /// The device address of each array argument (tensors' included), in
    /// order.
    buffers: Vec<DevicePtr>,
    /// By array: the tensor map over it (`cuTensorMapEncodeTiled`) and the
    /// device address of a copy of the map.
    maps: Vec<Option<(cuda::EncodedMap, DevicePtr)>>,
}

impl Prepared {
    fn new(
        gpu: &mut Session,
        ptx: &str,
        launch: &Launch,
        sig: &KernelSignature,
    ) -> Result<Prepared, GpuError> {
        gpu.load_module(ptx)?;
        let function = gpu.function(&launch.kernel)?;
        let mut buffers = Vec::new();
        let mut maps = Vec::new();
        for arg in &launch.args {
            let Some(a) = arg.as_array() else { continue };
            let ptr = gpu.upload(&a.data)?;
            buffers.push(ptr);
            maps.push(match arg {
                ArgValue::TensorMap {
                    dims, strides, map, ..
                } => {
                    // The arguments were checked against cuda.h's rules
                    // when the launch was built; a buffer of `cuMemAlloc` is
                    // 256-byte aligned.
                    let encoded = gpu.encode_tiled(&config::tiled_map(dims, strides, map), ptr)?;
                    // A `const CUtensorMap*` parameter points to a device copy.
                    let copy = gpu.upload(&encoded.0)?;
                    Some((encoded, copy))
                }
                _ => None,
            });
        }
        let compiled_cluster = sig.cluster.is_some();
        Ok(Prepared {
            function,
            config: DriverLaunch::of(launch, sig, compiled_cluster),
            buffers,
            maps,
        })
    }

    fn params(&self) -> Result<Vec<cuda::ParamBytes>, GpuError> {
        self.config
            .params(&self.buffers, &self.maps)
            .ok_or(GpuError::call(
                "the parameter list",
                CuResult::INVALID_VALUE,
            ))
    }

    /// One launch, waited for; the writable arrays copied back.
    fn run(
        &self,
        gpu: &mut Session,
        launch: &Launch,
        timeout: Duration,
    ) -> Result<Vec<Array>, GpuError> {
        let done = gpu.event()?;
        let mut params = self.params()?;
        gpu.launch(self.function, &self.config, &mut params)?;
        gpu.record(done)?;
        gpu.wait(done, timeout)?;
        let mut out = Vec::new();
        for (a, &ptr) in launch.arrays().zip(&self.buffers) {
            if a.writable {
                out.push(Array {
                    data: gpu.read(ptr, a.data.len())?,
                    ..a.clone()
                });
            }
        }
        Ok(out)
    }

    /// `n` timed launches after the run above (which warmed up the module
    /// and the caches). Each starts from the original inputs: the writable
    /// arrays are copied again before it, outside the timed interval.
    fn bench(
        &self,
        gpu: &mut Session,
        launch: &Launch,
        n: u32,
        timeout: Duration,
    ) -> Result<Vec<f64>, GpuError> {
        let (start, end) = (gpu.event()?, gpu.event()?);
        let mut times = Vec::with_capacity(n as usize);
        for _ in 0..n {
            for (a, &ptr) in launch.arrays().zip(&self.buffers) {
                if a.writable {
                    gpu.write(ptr, &a.data)?;
                }
            }
            let mut params = self.params()?;
            gpu.record(start)?;
            gpu.launch(self.function, &self.config, &mut params)?;
            gpu.record(end)?;
            gpu.wait(end, timeout)?;
            times.push(f64::from(gpu.elapsed_ms(start, end)?) * 1000.0);
        }
        Ok(times)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gpu_is_a_usage_error_and_a_fault_is_exit_4() {
        let Fail::Usage(m) = gpu_failure("k", GpuError::NoDriver) else {
            panic!()
        };
        assert!(m.starts_with("no CUDA driver found"), "{m}");
        assert!(m.contains("use `kdslc sim` to run on the CPU"), "{m}");
        assert!(matches!(
            gpu_failure("k", GpuError::NoDevice { ordinal: 2, count: 1 }),
            Fail::Usage(m) if m == "no CUDA device 2: this machine has 1 (numbered from 0)"
        ));
        let Fail::Fault(m) = gpu_failure("saxpy", GpuError::Timeout { seconds: 2.0 }) else {
            panic!()
        };
        assert!(
            m.starts_with("kernel `saxpy` on the GPU: did not finish within 2 s"),
            "{m}"
        );
        let Fail::Fault(m) = gpu_failure(
            "saxpy",
            GpuError::Cuda {
                call: "cuModuleLoadDataEx",
                code: CuResult::INVALID_PTX,
                said: Some("a PTX JIT compilation failed".into()),
                unusable: false,
                log: Some("ptxas fatal   : Unresolved extern function 'f'\n".into()),
            },
        ) else {
            panic!()
        };
        assert!(
            m.starts_with(
                "kernel `saxpy` on the GPU: cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (error 218): a PTX JIT compilation failed\n"
            ),
            "{m}"
        );
        assert!(
            m.ends_with("the driver's JIT log:\nptxas fatal   : Unresolved extern function 'f'"),
            "{m}"
        );
    }

    #[test]
    fn a_mismatch_fails_with_the_indices() {
        let a = |v: u32| Array {
            name: "y".into(),
            elem: crate::types::Scalar::U32,
            data: v.to_le_bytes().to_vec(),
            writable: true,
        };
        assert!(check_against_sim("k", &[a(1)], &[a(1)], false).is_ok());
        let Err(Fail::Fault(m)) = check_against_sim("k", &[a(1)], &[a(2)], false) else {
            panic!()
        };
        assert_eq!(
            m,
            "--check-sim: the GPU and the simulator disagree on kernel `k`:\n\
             `y` (u32[1]): 1 element differs between the GPU and the simulator\n  [0] gpu 1, sim 2"
        );
    }
}
