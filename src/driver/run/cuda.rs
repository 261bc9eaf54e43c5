//! The CUDA driver API through `cudarc`'s raw bindings, with `libcuda`
//! loaded at run time (so kdslc builds and runs without CUDA installed).
//!
//! [`Session`] owns everything it creates on the device (the retained
//! primary context, the module, buffers, events) and releases it on drop,
//! except after a launch that timed out: a hung kernel keeps its memory
//! busy, and freeing it would block, so a hung session leaks on purpose
//! and the process exits.
//!
//! This is the only file with `unsafe` code in the driver: each block is a
//! single driver call whose pointers point at live, correctly sized local
//! storage.

use super::config::DriverLaunch;
use cudarc::driver::sys;
use std::ffi::{c_void, CStr, CString};
use std::time::{Duration, Instant};

/// Why a driver call failed.
#[derive(Debug)]
pub(crate) enum GpuError {
    /// `libcuda` cannot be loaded.
    NoDriver,
    /// The driver lacks an entry point kdslc needs.
    OldDriver { missing: &'static str },
    /// No such device (or none at all).
    NoDevice { ordinal: usize, count: i32 },
    /// A driver call returned an error; for a PTX the JIT refused, its log.
    Cuda {
        call: &'static str,
        code: sys::CUresult,
        log: Option<String>,
    },
    /// The kernel did not finish in time.
    Timeout { seconds: f64 },
}

impl GpuError {
    /// No GPU to run on at all: a usage problem (exit 2), not a fault.
    pub(crate) fn is_unavailable(&self) -> bool {
        matches!(
            self,
            GpuError::NoDriver | GpuError::OldDriver { .. } | GpuError::NoDevice { .. }
        )
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            GpuError::NoDriver => "no CUDA driver found (libcuda could not be loaded); \
                 use `kdslc sim` to run on the CPU"
                .to_string(),
            GpuError::OldDriver { missing } => format!(
                "the CUDA driver is too old: it has no `{missing}` (CUDA 12.0 or newer is needed); \
                 use `kdslc sim` to run on the CPU"
            ),
            GpuError::NoDevice { ordinal, count: 0 } => format!(
                "no CUDA device found (asked for device {ordinal}); use `kdslc sim` to run on the CPU"
            ),
            GpuError::NoDevice { ordinal, count } => format!(
                "no CUDA device {ordinal}: this machine has {count} (numbered from 0)"
            ),
            GpuError::Cuda { call, code, log } => {
                let mut s = format!("{call}: {} ({})", name(*code), explain(*code));
                if let Some(log) = log.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
                    s.push_str("\nthe driver's JIT log:\n");
                    s.push_str(log);
                }
                s
            }
            GpuError::Timeout { seconds } => format!(
                "did not finish within {seconds} s: it may be deadlocked \
                 (`kdslc sim` with the same arguments reports where), or give `--timeout` more time"
            ),
        }
    }
}

/// `CUDA_ERROR_ILLEGAL_ADDRESS`: the enum's own name.
fn name(code: sys::CUresult) -> String {
    format!("{code:?}")
}

/// The driver's sentence for an error code.
fn explain(code: sys::CUresult) -> String {
    // cudarc panics when asked for a symbol of a library it cannot load.
    // SAFETY: only tries to load the library.
    if !unsafe { sys::is_culib_present() } {
        return "no description: no CUDA driver".to_string();
    }
    let mut text: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: the driver stores a pointer to a static string in `text`.
    let r = unsafe { sys::cuGetErrorString(code, &mut text) };
    if r != sys::CUresult::CUDA_SUCCESS || text.is_null() {
        return "no description".to_string();
    }
    // SAFETY: a non-null result is a NUL-terminated static string.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

fn check(call: &'static str, r: sys::CUresult) -> Result<(), GpuError> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(GpuError::Cuda {
            call,
            code: r,
            log: None,
        })
    }
}

/// The entry points kdslc calls; `cuLaunchKernelEx` is the newest (12.0).
const REQUIRED: &[&str] = &[
    "cuInit",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuModuleLoadDataEx",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuFuncSetAttribute",
    "cuLaunchKernelEx",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventElapsedTime",
    "cuEventDestroy_v2",
    "cuGetErrorString",
];

/// A device address.
pub(crate) type DevicePtr = sys::CUdeviceptr;

/// An event, for timing and for waiting with a timeout.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event(sys::CUevent);

/// A kernel of the loaded module.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Function(sys::CUfunction);

/// An open device with what has been created on it.
pub(crate) struct Session {
    device: sys::CUdevice,
    /// The device's name, for messages ("NVIDIA H200").
    pub name: String,
    module: Option<sys::CUmodule>,
    buffers: Vec<DevicePtr>,
    events: Vec<sys::CUevent>,
    hung: bool,
}

impl Session {
    /// Loads the driver, initialises it and makes device `ordinal`'s
    /// primary context current.
    pub(crate) fn open(ordinal: usize) -> Result<Session, GpuError> {
        // SAFETY: only tries to load the library.
        if !unsafe { sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        // cudarc panics on a missing entry point; look for each first.
        // SAFETY: the library is present (above); `get` only looks up names.
        let lib = unsafe { sys::culib() };
        for &name in REQUIRED {
            // SAFETY: the symbol is only looked up, never called here.
            if unsafe { lib.get::<*const c_void>(name.as_bytes()) }.is_err() {
                return Err(GpuError::OldDriver { missing: name });
            }
        }
        // SAFETY: plain driver calls with out-pointers to locals.
        unsafe {
            let r = sys::cuInit(0);
            if r == sys::CUresult::CUDA_ERROR_NO_DEVICE {
                return Err(GpuError::NoDevice { ordinal, count: 0 });
            }
            check("cuInit", r)?;
            let mut count = 0;
            check("cuDeviceGetCount", sys::cuDeviceGetCount(&mut count))?;
            let wanted = i32::try_from(ordinal).ok().filter(|&o| o < count);
            let Some(wanted) = wanted else {
                return Err(GpuError::NoDevice { ordinal, count });
            };
            let mut device = 0;
            check("cuDeviceGet", sys::cuDeviceGet(&mut device, wanted))?;
            let mut ctx = std::ptr::null_mut();
            check(
                "cuDevicePrimaryCtxRetain",
                sys::cuDevicePrimaryCtxRetain(&mut ctx, device),
            )?;
            let mut session = Session {
                device,
                name: String::new(),
                module: None,
                buffers: Vec::new(),
                events: Vec::new(),
                hung: false,
            };
            check("cuCtxSetCurrent", sys::cuCtxSetCurrent(ctx))?;
            let mut buf = [0 as std::ffi::c_char; 256];
            if sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as i32, device)
                == sys::CUresult::CUDA_SUCCESS
            {
                session.name = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
            }
            Ok(session)
        }
    }

    /// JIT-compiles the PTX module; a refusal carries the driver's log.
    pub(crate) fn load_module(&mut self, ptx: &str) -> Result<(), GpuError> {
        let image = CString::new(ptx).map_err(|_| GpuError::Cuda {
            call: "cuModuleLoadDataEx",
            code: sys::CUresult::CUDA_ERROR_INVALID_PTX,
            log: Some("the PTX text contains a NUL byte".to_string()),
        })?;
        let mut log = vec![0u8; 16 * 1024];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        // The size option is passed by value in the pointer slot.
        let mut values = [log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
        let mut module = std::ptr::null_mut();
        // SAFETY: `image` is NUL-terminated; `options`/`values` have two
        // entries each; `log` outlives the call and is as large as stated.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                image.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(log.get(..end).unwrap_or(&[])).into_owned();
            return Err(GpuError::Cuda {
                call: "cuModuleLoadDataEx",
                code: r,
                log: Some(text),
            });
        }
        self.module = Some(module);
        Ok(())
    }

    pub(crate) fn function(&self, kernel: &str) -> Result<Function, GpuError> {
        let name = CString::new(kernel).map_err(|_| GpuError::Cuda {
            call: "cuModuleGetFunction",
            code: sys::CUresult::CUDA_ERROR_NOT_FOUND,
            log: None,
        })?;
        let Some(module) = self.module else {
            return Err(GpuError::Cuda {
                call: "cuModuleGetFunction",
                code: sys::CUresult::CUDA_ERROR_INVALID_HANDLE,
                log: None,
            });
        };
        let mut f = std::ptr::null_mut();
        // SAFETY: a loaded module and a NUL-terminated name.
        check("cuModuleGetFunction", unsafe {
            sys::cuModuleGetFunction(&mut f, module, name.as_ptr())
        })?;
        Ok(Function(f))
    }

    /// A device buffer holding `data` (at least one byte: the driver
    /// refuses empty allocations).
    pub(crate) fn upload(&mut self, data: &[u8]) -> Result<DevicePtr, GpuError> {
        let mut ptr = 0;
        // SAFETY: an out-pointer to a local.
        check("cuMemAlloc", unsafe {
            sys::cuMemAlloc_v2(&mut ptr, data.len().max(1))
        })?;
        self.buffers.push(ptr);
        self.write(ptr, data)?;
        Ok(ptr)
    }

    pub(crate) fn write(&self, ptr: DevicePtr, data: &[u8]) -> Result<(), GpuError> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: `ptr` was allocated with at least `data.len()` bytes.
        check("cuMemcpyHtoD", unsafe {
            sys::cuMemcpyHtoD_v2(ptr, data.as_ptr().cast(), data.len())
        })
    }

    pub(crate) fn read(&self, ptr: DevicePtr, len: usize) -> Result<Vec<u8>, GpuError> {
        let mut out = vec![0u8; len];
        if len == 0 {
            return Ok(out);
        }
        // SAFETY: `out` has `len` bytes; `ptr` was allocated with as many.
        check("cuMemcpyDtoH", unsafe {
            sys::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), ptr, len)
        })?;
        Ok(out)
    }

    /// Queues one launch on the default stream.
    pub(crate) fn launch(
        &self,
        f: Function,
        cfg: &DriverLaunch,
        words: &mut [u64],
    ) -> Result<(), GpuError> {
        if cfg.non_portable_cluster {
            // SAFETY: a valid function handle and attribute.
            check("cuFuncSetAttribute", unsafe {
                sys::cuFuncSetAttribute(
                    f.0,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                    1,
                )
            })?;
        }
        if let Some(bytes) = cfg.max_dynamic_shared {
            // SAFETY: a valid function handle and attribute.
            check("cuFuncSetAttribute", unsafe {
                sys::cuFuncSetAttribute(
                    f.0,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    i32::try_from(bytes).unwrap_or(i32::MAX),
                )
            })?;
        }
        let mut attrs = Vec::new();
        if let Some([x, y, z]) = cfg.cluster {
            let mut value = sys::CUlaunchAttributeValue { pad: [0; 64] };
            value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x, y, z };
            attrs.push(sys::CUlaunchAttribute {
                id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                pad: [0; 4],
                value,
            });
        }
        let config = sys::CUlaunchConfig {
            gridDimX: cfg.grid[0],
            gridDimY: cfg.grid[1],
            gridDimZ: cfg.grid[2],
            blockDimX: cfg.block[0],
            blockDimY: cfg.block[1],
            blockDimZ: cfg.block[2],
            sharedMemBytes: cfg.shared_bytes,
            hStream: std::ptr::null_mut(),
            attrs: if attrs.is_empty() {
                std::ptr::null_mut()
            } else {
                attrs.as_mut_ptr()
            },
            numAttrs: attrs.len() as u32,
        };
        let mut params: Vec<*mut c_void> = words
            .iter_mut()
            .map(|w| (w as *mut u64).cast::<c_void>())
            .collect();
        let params_ptr = if params.is_empty() {
            std::ptr::null_mut()
        } else {
            params.as_mut_ptr()
        };
        // SAFETY: `config`, `attrs` and every parameter word live until the
        // call returns (the driver copies the parameters at launch).
        check("cuLaunchKernelEx", unsafe {
            sys::cuLaunchKernelEx(&config, f.0, params_ptr, std::ptr::null_mut())
        })
    }

    pub(crate) fn event(&mut self) -> Result<Event, GpuError> {
        let mut e = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; flags 0 (timing enabled).
        check("cuEventCreate", unsafe { sys::cuEventCreate(&mut e, 0) })?;
        self.events.push(e);
        Ok(Event(e))
    }

    pub(crate) fn record(&self, e: Event) -> Result<(), GpuError> {
        // SAFETY: a live event, the default stream.
        check("cuEventRecord", unsafe {
            sys::cuEventRecord(e.0, std::ptr::null_mut())
        })
    }

    /// Waits for `e` to complete, polling so that a hung kernel becomes a
    /// [`GpuError::Timeout`] instead of a frozen process. The first error
    /// of the work before it (an illegal address) is returned here.
    pub(crate) fn wait(&mut self, e: Event, timeout: Duration) -> Result<(), GpuError> {
        let start = Instant::now();
        let mut nap = Duration::from_micros(20);
        loop {
            // SAFETY: a live, recorded event.
            let r = unsafe { sys::cuEventQuery(e.0) };
            if r != sys::CUresult::CUDA_ERROR_NOT_READY {
                return check("cuEventQuery (waiting for the kernel)", r);
            }
            if start.elapsed() >= timeout {
                self.hung = true;
                return Err(GpuError::Timeout {
                    seconds: timeout.as_secs_f64(),
                });
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(5));
        }
    }

    /// Milliseconds between two completed events.
    pub(crate) fn elapsed_ms(&self, start: Event, end: Event) -> Result<f32, GpuError> {
        let mut ms = 0f32;
        // SAFETY: two completed events; an out-pointer to a local.
        check("cuEventElapsedTime", unsafe {
            sys::cuEventElapsedTime(&mut ms, start.0, end.0)
        })?;
        Ok(ms)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.hung {
            return;
        }
        // SAFETY: each handle was created by this session and is released
        // once; errors (after a fault the context is unusable) are ignored.
        unsafe {
            for e in self.events.drain(..) {
                sys::cuEventDestroy_v2(e);
            }
            for b in self.buffers.drain(..) {
                sys::cuMemFree_v2(b);
            }
            if let Some(m) = self.module.take() {
                sys::cuModuleUnload(m);
            }
            sys::cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}
