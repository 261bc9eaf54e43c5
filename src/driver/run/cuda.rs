//! The CUDA driver API, with `libcuda` loaded at run time (so kdslc builds
//! and runs without CUDA installed): cudarc finds and loads the library
//! (`libcuda.so` and its versioned names, through the dynamic loader's
//! search path, so `LD_LIBRARY_PATH` decides which), and [`Api`] looks up
//! each entry point kdslc calls, declared with the driver's parameter types
//! (cudarc's `sys` types) and a raw [`CuResult`]: a code outside cudarc's
//! bundled enum is a number like any other, never an invalid enum value.
//!
//! [`Session`] owns everything it creates on the device (the retained
//! primary context, the module, buffers, events) and releases it on drop,
//! except after a launch that timed out: a hung kernel keeps its memory
//! busy, and freeing it would block, so a hung session leaks on purpose
//! and the process exits.
//!
//! This is the only file with `unsafe` code in the driver: each block is a
//! single driver call whose pointers point at live, correctly sized local
//! storage, or the lookup of an entry point by its `cuda.h` name.

use super::config::DriverLaunch;
use super::result::CuResult;
use cudarc::driver::sys;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
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
    /// A driver call returned an error: while opening the device (the
    /// driver cannot be used at all: `unusable`), or after.
    Cuda {
        call: &'static str,
        code: CuResult,
        /// The driver's description of the code (`cuGetErrorString`), when
        /// it has one.
        said: Option<String>,
        unusable: bool,
        /// For a PTX the JIT refused, its log.
        log: Option<String>,
    },
    /// The kernel did not finish in time.
    Timeout { seconds: f64 },
}

impl GpuError {
    /// A failed call outside a session, with no description.
    pub(crate) fn call(call: &'static str, code: CuResult) -> GpuError {
        GpuError::Cuda {
            call,
            code,
            said: None,
            unusable: false,
            log: None,
        }
    }

    /// The same error with the driver's JIT log.
    fn with_log(mut self, text: String) -> GpuError {
        if let GpuError::Cuda { log, .. } = &mut self {
            *log = Some(text);
        }
        self
    }

    /// The same error, from a driver that cannot be used at all.
    fn unusable(mut self) -> GpuError {
        if let GpuError::Cuda { unusable, .. } = &mut self {
            *unusable = true;
        }
        self
    }

    /// No GPU to run on at all: a usage problem (exit 2), not a fault.
    pub(crate) fn is_unavailable(&self) -> bool {
        matches!(
            self,
            GpuError::NoDriver
                | GpuError::OldDriver { .. }
                | GpuError::NoDevice { .. }
                | GpuError::Cuda { unusable: true, .. }
        )
    }

    pub(crate) fn describe(&self) -> String {
        const SIM: &str = "use `kdslc sim` to run on the CPU";
        match self {
            GpuError::NoDriver => {
                format!("no CUDA driver found (libcuda could not be loaded); {SIM}")
            }
            GpuError::OldDriver { missing } => format!(
                "the CUDA driver is too old: it has no `{missing}` (CUDA 12.0 or newer is needed); {SIM}"
            ),
            GpuError::NoDevice { ordinal, count: 0 } => {
                format!("no CUDA device found (asked for device {ordinal}); {SIM}")
            }
            GpuError::NoDevice { ordinal, count } => format!(
                "no CUDA device {ordinal}: this machine has {count} (numbered from 0)"
            ),
            GpuError::Cuda {
                call,
                code,
                said,
                unusable,
                log,
            } => {
                let said = said.as_deref().unwrap_or("the driver has no description of it");
                let mut s = format!("{call}: {code}: {said}");
                if *unusable {
                    s = format!("the CUDA driver cannot be used: {s}; {SIM}");
                }
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

/// The driver's entry points kdslc calls (`cuLaunchKernelEx` is the newest:
/// CUDA 12.0), each with its `cuda.h` parameters and a raw result.
#[derive(Clone, Copy)]
struct Api {
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut sys::CUdevice, c_int) -> CuResult,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, sys::CUdevice) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut sys::CUcontext, sys::CUdevice) -> CuResult,
    primary_ctx_release: unsafe extern "C" fn(sys::CUdevice) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(sys::CUcontext) -> CuResult,
    module_load_data_ex: unsafe extern "C" fn(
        *mut sys::CUmodule,
        *const c_void,
        c_uint,
        *mut sys::CUjit_option,
        *mut *mut c_void,
    ) -> CuResult,
    module_get_function:
        unsafe extern "C" fn(*mut sys::CUfunction, sys::CUmodule, *const c_char) -> CuResult,
    module_unload: unsafe extern "C" fn(sys::CUmodule) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut sys::CUdeviceptr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(sys::CUdeviceptr) -> CuResult,
    memcpy_htod: unsafe extern "C" fn(sys::CUdeviceptr, *const c_void, usize) -> CuResult,
    memcpy_dtoh: unsafe extern "C" fn(*mut c_void, sys::CUdeviceptr, usize) -> CuResult,
    func_set_attribute:
        unsafe extern "C" fn(sys::CUfunction, sys::CUfunction_attribute, c_int) -> CuResult,
    launch_kernel_ex: unsafe extern "C" fn(
        *const sys::CUlaunchConfig,
        sys::CUfunction,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    event_create: unsafe extern "C" fn(*mut sys::CUevent, c_uint) -> CuResult,
    event_record: unsafe extern "C" fn(sys::CUevent, sys::CUstream) -> CuResult,
    event_query: unsafe extern "C" fn(sys::CUevent) -> CuResult,
    event_elapsed_time: unsafe extern "C" fn(*mut f32, sys::CUevent, sys::CUevent) -> CuResult,
    event_destroy: unsafe extern "C" fn(sys::CUevent) -> CuResult,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    /// `cuTensorMapEncodeTiled`: its enums (data type, interleave,
    /// swizzle, L2 promotion, fill) as the C ints they are.
    tensor_map_encode_tiled: unsafe extern "C" fn(
        *mut c_void,
        c_uint,
        c_uint,
        *mut c_void,
        *const u64,
        *const u64,
        *const u32,
        *const u32,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
    ) -> CuResult,
}

impl Api {
    /// Loads `libcuda` and looks up every entry point: a missing one is a
    /// driver too old for kdslc, found before anything is called.
    fn load() -> Result<Api, GpuError> {
        // SAFETY: only tries to load the library (cudarc's own lookup would
        // panic where there is none).
        if !unsafe { sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        // SAFETY: the library is present (above).
        let lib = unsafe { sys::culib() };
        macro_rules! entry {
            ($name:literal) => {
                // SAFETY: the symbol is the driver's function of that name,
                // and the field's type is its `cuda.h` signature (its
                // result, a C enum, as the raw number it is); the library
                // stays loaded for the whole process (cudarc keeps it in a
                // static).
                *unsafe { lib.get($name.as_bytes()) }
                    .map_err(|_| GpuError::OldDriver { missing: $name })?
            };
        }
        Ok(Api {
            init: entry!("cuInit"),
            device_get_count: entry!("cuDeviceGetCount"),
            device_get: entry!("cuDeviceGet"),
            device_get_name: entry!("cuDeviceGetName"),
            primary_ctx_retain: entry!("cuDevicePrimaryCtxRetain"),
            primary_ctx_release: entry!("cuDevicePrimaryCtxRelease_v2"),
            ctx_set_current: entry!("cuCtxSetCurrent"),
            module_load_data_ex: entry!("cuModuleLoadDataEx"),
            module_get_function: entry!("cuModuleGetFunction"),
            module_unload: entry!("cuModuleUnload"),
            mem_alloc: entry!("cuMemAlloc_v2"),
            mem_free: entry!("cuMemFree_v2"),
            memcpy_htod: entry!("cuMemcpyHtoD_v2"),
            memcpy_dtoh: entry!("cuMemcpyDtoH_v2"),
            func_set_attribute: entry!("cuFuncSetAttribute"),
            launch_kernel_ex: entry!("cuLaunchKernelEx"),
            event_create: entry!("cuEventCreate"),
            event_record: entry!("cuEventRecord"),
            event_query: entry!("cuEventQuery"),
            event_elapsed_time: entry!("cuEventElapsedTime"),
            event_destroy: entry!("cuEventDestroy_v2"),
            get_error_string: entry!("cuGetErrorString"),
            tensor_map_encode_tiled: entry!("cuTensorMapEncodeTiled"),
        })
    }

    /// The driver's sentence for a code, if it has one.
    fn error_string(&self, code: CuResult) -> Option<String> {
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: the driver stores a pointer to a static string in `text`
        // (or fails, for a code it does not know).
        let r = unsafe { (self.get_error_string)(code, &mut text) };
        if r != CuResult::SUCCESS || text.is_null() {
            return None;
        }
        // SAFETY: a non-null result is a NUL-terminated static string.
        let s = unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned();
        Some(s)
    }

    /// `Ok` for success, else the error with the driver's description.
    fn check(&self, call: &'static str, r: CuResult) -> Result<(), GpuError> {
        if r == CuResult::SUCCESS {
            return Ok(());
        }
        Err(GpuError::Cuda {
            call,
            code: r,
            said: self.error_string(r),
            unusable: false,
            log: None,
        })
    }
}

/// A device address.
pub(crate) type DevicePtr = sys::CUdeviceptr;

/// A `CUtensorMap`: 128 opaque bytes, 64-byte aligned as the driver
/// requires (CUDA 13 declares it 128-byte aligned; so is this).
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EncodedMap(pub [u8; 128]);

/// The arguments of `cuTensorMapEncodeTiled` but the map and the address:
/// every array innermost first, as cuda.h takes them; enums as numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TiledMap {
    pub data_type: u32,
    pub dims: Vec<u64>,
    pub strides: Vec<u64>,
    pub boxes: Vec<u32>,
    pub element_strides: Vec<u32>,
    pub interleave: u32,
    pub swizzle: u32,
    pub l2_promotion: u32,
    pub fill: u32,
}

/// One kernel parameter, as the driver reads it through `kernelParams`:
/// an 8-byte word (the parameter's own size read from its start), or a
/// tensor map passed by value.
#[derive(Debug, PartialEq)]
pub(crate) enum ParamBytes {
    Word(u64),
    Map(Box<EncodedMap>),
    /// A struct passed by value: its bytes.
    Bytes(Vec<u8>),
}

/// An event, for timing and for waiting with a timeout.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event(sys::CUevent);

/// A kernel of the loaded module.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Function(sys::CUfunction);

/// An open device with what has been created on it.
pub(crate) struct Session {
    api: Api,
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
    /// primary context current. A call that fails here means the driver
    /// cannot be used at all ([`GpuError::is_unavailable`]).
    pub(crate) fn open(ordinal: usize) -> Result<Session, GpuError> {
        let api = Api::load()?;
        // SAFETY: a plain driver call.
        let r = unsafe { (api.init)(0) };
        if r == CuResult::NO_DEVICE {
            return Err(GpuError::NoDevice { ordinal, count: 0 });
        }
        api.check("cuInit", r).map_err(GpuError::unusable)?;
        let mut count = 0;
        // SAFETY: an out-pointer to a local.
        let r = unsafe { (api.device_get_count)(&mut count) };
        api.check("cuDeviceGetCount", r)
            .map_err(GpuError::unusable)?;
        let wanted = i32::try_from(ordinal).ok().filter(|&o| o < count);
        let Some(wanted) = wanted else {
            return Err(GpuError::NoDevice { ordinal, count });
        };
        let mut device = 0;
        // SAFETY: an out-pointer to a local, an ordinal below the count.
        let r = unsafe { (api.device_get)(&mut device, wanted) };
        api.check("cuDeviceGet", r).map_err(GpuError::unusable)?;
        let mut ctx = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local, a device the driver gave.
        let r = unsafe { (api.primary_ctx_retain)(&mut ctx, device) };
        api.check("cuDevicePrimaryCtxRetain", r)
            .map_err(GpuError::unusable)?;
        // From here the session releases the context when dropped.
        let mut session = Session {
            api,
            device,
            name: String::new(),
            module: None,
            buffers: Vec::new(),
            events: Vec::new(),
            hung: false,
        };
        // SAFETY: the context just retained.
        let r = unsafe { (api.ctx_set_current)(ctx) };
        api.check("cuCtxSetCurrent", r)
            .map_err(GpuError::unusable)?;
        let mut buf = [0 as c_char; 256];
        // The driver is told one byte less than `buf` has, so that the last
        // stays the NUL whatever it writes.
        let len = buf.len() as c_int - 1;
        // SAFETY: `buf` has more than `len` bytes.
        let r = unsafe { (api.device_get_name)(buf.as_mut_ptr(), len, device) };
        if r == CuResult::SUCCESS {
            // SAFETY: NUL-terminated within `buf` (its last byte is 0).
            session.name = unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned();
        }
        Ok(session)
    }

    fn check(&self, call: &'static str, r: CuResult) -> Result<(), GpuError> {
        self.api.check(call, r)
    }

    /// JIT-compiles the PTX module; a refusal carries the driver's log.
    pub(crate) fn load_module(&mut self, ptx: &str) -> Result<(), GpuError> {
        let image = CString::new(ptx).map_err(|_| {
            GpuError::call("cuModuleLoadDataEx", CuResult::INVALID_PTX)
                .with_log("the PTX text contains a NUL byte".to_string())
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
            (self.api.module_load_data_ex)(
                &mut module,
                image.as_ptr().cast(),
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        if let Err(e) = self.check("cuModuleLoadDataEx", r) {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(log.get(..end).unwrap_or(&[])).into_owned();
            return Err(e.with_log(text));
        }
        self.module = Some(module);
        Ok(())
    }

    pub(crate) fn function(&self, kernel: &str) -> Result<Function, GpuError> {
        let name = CString::new(kernel)
            .map_err(|_| GpuError::call("cuModuleGetFunction", CuResult::NOT_FOUND))?;
        let Some(module) = self.module else {
            return Err(GpuError::call(
                "cuModuleGetFunction",
                CuResult::INVALID_HANDLE,
            ));
        };
        let mut f = std::ptr::null_mut();
        // SAFETY: a loaded module and a NUL-terminated name.
        let r = unsafe { (self.api.module_get_function)(&mut f, module, name.as_ptr()) };
        self.check("cuModuleGetFunction", r)?;
        Ok(Function(f))
    }

    /// A device buffer holding `data` (at least one byte: the driver
    /// refuses empty allocations).
    pub(crate) fn upload(&mut self, data: &[u8]) -> Result<DevicePtr, GpuError> {
        let mut ptr = 0;
        // SAFETY: an out-pointer to a local.
        let r = unsafe { (self.api.mem_alloc)(&mut ptr, data.len().max(1)) };
        self.check("cuMemAlloc", r)?;
        self.buffers.push(ptr);
        self.write(ptr, data)?;
        Ok(ptr)
    }

    pub(crate) fn write(&self, ptr: DevicePtr, data: &[u8]) -> Result<(), GpuError> {
        if data.is_empty() {
            return Ok(());
        }
        // SAFETY: `ptr` was allocated with at least `data.len()` bytes.
        let r = unsafe { (self.api.memcpy_htod)(ptr, data.as_ptr().cast(), data.len()) };
        self.check("cuMemcpyHtoD", r)
    }

    pub(crate) fn read(&self, ptr: DevicePtr, len: usize) -> Result<Vec<u8>, GpuError> {
        let mut out = vec![0u8; len];
        if len == 0 {
            return Ok(out);
        }
        // SAFETY: `out` has `len` bytes; `ptr` was allocated with as many.
        let r = unsafe { (self.api.memcpy_dtoh)(out.as_mut_ptr().cast(), ptr, len) };
        self.check("cuMemcpyDtoH", r)?;
        Ok(out)
    }

    /// A tensor map of the tensor at `address` (`cuTensorMapEncodeTiled`).
    pub(crate) fn encode_tiled(
        &self,
        m: &TiledMap,
        address: DevicePtr,
    ) -> Result<EncodedMap, GpuError> {
        let rank = m.dims.len();
        if m.strides.len() + 1 != rank || m.boxes.len() != rank || m.element_strides.len() != rank {
            return Err(GpuError::call(
                "cuTensorMapEncodeTiled",
                CuResult::INVALID_VALUE,
            ));
        }
        let mut map = EncodedMap([0; 128]);
        // SAFETY: `map` is 128 writable bytes, 128-byte aligned; every array
        // has `rank` elements (`strides` rank - 1, possibly none: a null
        // pointer is never passed, an empty vector's dangling pointer is
        // not read for rank 1); the address is the driver's allocation.
        let r = unsafe {
            (self.api.tensor_map_encode_tiled)(
                (&mut map as *mut EncodedMap).cast(),
                m.data_type,
                rank as c_uint,
                address as *mut c_void,
                m.dims.as_ptr(),
                m.strides.as_ptr(),
                m.boxes.as_ptr(),
                m.element_strides.as_ptr(),
                m.interleave,
                m.swizzle,
                m.l2_promotion,
                m.fill,
            )
        };
        self.check("cuTensorMapEncodeTiled", r)?;
        Ok(map)
    }

    /// Queues one launch on the default stream.
    pub(crate) fn launch(
        &self,
        f: Function,
        cfg: &DriverLaunch,
        params: &mut [ParamBytes],
    ) -> Result<(), GpuError> {
        if cfg.non_portable_cluster {
            // SAFETY: a valid function handle and attribute.
            let r = unsafe {
                (self.api.func_set_attribute)(
                    f.0,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                    1,
                )
            };
            self.check("cuFuncSetAttribute", r)?;
        }
        if let Some(bytes) = cfg.max_dynamic_shared {
            // SAFETY: a valid function handle and attribute.
            let r = unsafe {
                (self.api.func_set_attribute)(
                    f.0,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    i32::try_from(bytes).unwrap_or(i32::MAX),
                )
            };
            self.check("cuFuncSetAttribute", r)?;
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
        if cfg.cooperative {
            let mut value = sys::CUlaunchAttributeValue { pad: [0; 64] };
            value.cooperative = 1;
            attrs.push(sys::CUlaunchAttribute {
                id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
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
        let mut params: Vec<*mut c_void> = params
            .iter_mut()
            .map(|p| match p {
                ParamBytes::Word(w) => (w as *mut u64).cast::<c_void>(),
                ParamBytes::Map(m) => (&mut **m as *mut EncodedMap).cast::<c_void>(),
                ParamBytes::Bytes(b) => b.as_mut_ptr().cast::<c_void>(),
            })
            .collect();
        let params_ptr = if params.is_empty() {
            std::ptr::null_mut()
        } else {
            params.as_mut_ptr()
        };
        // SAFETY: `config`, `attrs` and every parameter (word or map) live
        // until the call returns (the driver copies the parameters at
        // launch).
        let r =
            unsafe { (self.api.launch_kernel_ex)(&config, f.0, params_ptr, std::ptr::null_mut()) };
        self.check("cuLaunchKernelEx", r)
    }

    pub(crate) fn event(&mut self) -> Result<Event, GpuError> {
        let mut e = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; flags 0 (timing enabled).
        let r = unsafe { (self.api.event_create)(&mut e, 0) };
        self.check("cuEventCreate", r)?;
        self.events.push(e);
        Ok(Event(e))
    }

    pub(crate) fn record(&self, e: Event) -> Result<(), GpuError> {
        // SAFETY: a live event, the default stream.
        let r = unsafe { (self.api.event_record)(e.0, std::ptr::null_mut()) };
        self.check("cuEventRecord", r)
    }

    /// Waits for `e` to complete, polling so that a hung kernel becomes a
    /// [`GpuError::Timeout`] instead of a frozen process. The first error
    /// of the work before it (an illegal address) is returned here.
    pub(crate) fn wait(&mut self, e: Event, timeout: Duration) -> Result<(), GpuError> {
        let start = Instant::now();
        let mut nap = Duration::from_micros(20);
        loop {
            // SAFETY: a live, recorded event.
            let r = unsafe { (self.api.event_query)(e.0) };
            if r != CuResult::NOT_READY {
                return self.check("cuEventQuery (waiting for the kernel)", r);
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
        let r = unsafe { (self.api.event_elapsed_time)(&mut ms, start.0, end.0) };
        self.check("cuEventElapsedTime", r)?;
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
                (self.api.event_destroy)(e);
            }
            for b in self.buffers.drain(..) {
                (self.api.mem_free)(b);
            }
            if let Some(m) = self.module.take() {
                (self.api.module_unload)(m);
            }
            (self.api.primary_ctx_release)(self.device);
        }
    }
}
