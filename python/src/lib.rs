//! `kdsl._kdsl`: the compiled half of the Python package `kdsl`.
//!
//! It only moves data between Python and the `kdsl` crate: compiling a
//! source (the diagnostics rendered and as JSON), the signature of each
//! kernel, a simulator run of a launch built from the bytes of NumPy arrays
//! and the text of Python scalars, and a GPU launch on device addresses.
//! Which NumPy dtype an element type takes, the arrays' shapes and
//! contiguity, and every exception class are the Python half's
//! (`python/kdsl/__init__.py`); this half checks again whatever the crate's
//! own checks cover (a scalar's range, a tensor's encoding rules, the
//! launch shape) and raises `ValueError` naming the parameter.

use kdsl::diagnostics::{render, Diagnostic};
use kdsl::driver::device::{DeviceError, DeviceModule};
use kdsl::launch::{
    literal, shape, signature, tensor, value, ArgValue, Array, DynamicLayout, KernelSignature,
    Launch, Origin, ParamKind,
};
use kdsl::sim::{self, Program, PtxSource, SimOptions};
use kdsl::source::SourceMap;
use kdsl::span::Span;
use kdsl::target::Target;
use kdsl::Options;
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// A compiled module: what `kdsl.compile` wraps.
#[pyclass(frozen, module = "kdsl._kdsl")]
struct Module {
    /// No errors (and no warnings under `deny_warnings`): `ptx` is set.
    #[pyo3(get)]
    ok: bool,
    #[pyo3(get)]
    ptx: Option<String>,
    /// The launch manifest as JSON (`docs/manifest.md`).
    #[pyo3(get)]
    manifest: Option<String>,
    /// The diagnostics as a JSON array: each the object of
    /// `docs/json-diagnostics.md` plus `rendered`, its human text.
    #[pyo3(get)]
    diagnostics: String,
    /// Every diagnostic rendered for people, with the closing summary.
    #[pyo3(get)]
    rendered: String,
    /// The kernels' signatures as a JSON array (see `kernel_json`).
    #[pyo3(get)]
    kernels: String,
    /// What the simulator and the GPU need; `None` when `ok` is false.
    built: Option<Built>,
}

struct Built {
    sources: SourceMap,
    ptx: String,
    line_spans: Vec<Option<Span>>,
    signatures: Vec<KernelSignature>,
    dynamic: Vec<(String, DynamicLayout)>,
    /// Loaded on the first simulated launch.
    program: OnceLock<Result<Program, String>>,
}

/// Compiles `source` (or, when it is `None`, the file at `name`) for
/// `target` with `--const` values `consts` (`[KERNEL.]NAME=VALUE`).
#[pyfunction]
#[pyo3(signature = (name, source, target, consts, deny_warnings=false))]
fn compile(
    py: Python<'_>,
    name: &str,
    source: Option<&str>,
    target: &str,
    consts: Vec<String>,
    deny_warnings: bool,
) -> PyResult<Module> {
    let Some(target) = Target::from_name(target) else {
        let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
        return Err(PyValueError::new_err(format!(
            "unknown target `{target}`: the targets are {}",
            names.join(", ")
        )));
    };
    let consts = consts
        .iter()
        .map(|c| {
            c.parse::<kdsl::check::instances::ConstArg>()
                .map_err(|why| PyValueError::new_err(format!("the constant `{c}`: {why}")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let opts = Options {
        target,
        deny_warnings,
        consts,
        ..Options::default()
    };
    // Other Python threads run while this one compiles.
    let c = py
        .detach(|| match source {
            Some(text) => Ok(kdsl::compile_str(name, text, &opts)),
            None => kdsl::compile(Path::new(name), &opts),
        })
        .map_err(|e| PyOSError::new_err(format!("cannot read `{name}`: {e}")))?;
    if let Some(usage) = &c.usage_error {
        return Err(PyValueError::new_err(usage.clone()));
    }
    if let Some(internal) = &c.internal_error {
        return Err(PyRuntimeError::new_err(format!(
            "internal compiler error (a bug in kdslc): {internal}"
        )));
    }
    let diagnostics: Vec<Value> = c
        .diagnostics
        .iter()
        .map(|d| diagnostic_json(&c.sources, d))
        .collect();
    let mut rendered = render::human(&c.sources, &c.diagnostics, false);
    let summary = render::human_summary(c.error_count(), c.warning_count());
    if !summary.is_empty() {
        rendered.push_str(&summary);
        rendered.push('\n');
    }
    let ok = !c.failed(&opts);
    let (Some(module), Some(ptx), true) = (c.module.as_ref(), c.ptx.clone(), ok) else {
        return Ok(Module {
            ok: false,
            ptx: None,
            manifest: None,
            diagnostics: Value::Array(diagnostics).to_string(),
            rendered,
            kernels: "[]".to_string(),
            built: None,
        });
    };
    let manifest = kdsl::manifest::of_module(module, &ptx, target)
        .and_then(|m| kdsl::manifest::to_json(&m))
        .map_err(|e| PyRuntimeError::new_err(format!("internal compiler error: {e}")))?;
    let signatures = signature::of_module(module);
    let kernels: Vec<Value> = signatures
        .iter()
        .map(|s| {
            let of = module
                .kernels
                .iter()
                .find(|k| k.name == s.name)
                .and_then(|k| k.instance.as_ref())
                .map_or(s.name.as_str(), |i| i.kernel.as_str());
            kernel_json(s, of)
        })
        .collect();
    Ok(Module {
        ok: true,
        ptx: Some(ptx.clone()),
        manifest: Some(manifest),
        diagnostics: Value::Array(diagnostics).to_string(),
        rendered,
        kernels: Value::Array(kernels).to_string(),
        built: Some(Built {
            dynamic: signature::dynamic_layouts(module),
            signatures,
            line_spans: c.ptx_line_spans,
            sources: c.sources,
            ptx,
            program: OnceLock::new(),
        }),
    })
}

/// One diagnostic: its JSON object and its rendering.
fn diagnostic_json(sources: &SourceMap, d: &Diagnostic) -> Value {
    let one = std::slice::from_ref(d);
    let mut v: Value = serde_json::from_str(render::json_diagnostics(sources, one).trim())
        .unwrap_or_else(|_| json!({ "code": d.code, "message": d.message }));
    if let Value::Object(map) = &mut v {
        map.insert(
            "rendered".to_string(),
            Value::String(render::human(sources, one, false)),
        );
    }
    v
}

/// A kernel's launch signature for the Python half: `kernel` is the kdsl
/// kernel an instantiation (`name`) was compiled from.
fn kernel_json(s: &KernelSignature, kernel: &str) -> Value {
    let params: Vec<Value> = s
        .params
        .iter()
        .map(|p| {
            let shown = value::kind_name(p.kind);
            match p.kind {
                ParamKind::Scalar(ty) => json!({
                    "name": p.name, "kind": "scalar", "elem": ty.name(), "type": shown,
                }),
                ParamKind::Array { elem, writable } => json!({
                    "name": p.name, "kind": "array", "elem": elem.name(),
                    "writable": writable, "type": shown,
                }),
                ParamKind::TensorMap(m) => json!({
                    "name": p.name, "kind": "tensor", "elem": m.elem.name(),
                    "storage": m.elem.storage().name(), "writable": m.writable,
                    "rank": m.rank, "box": m.boxes(), "type": shown,
                }),
                ParamKind::PtxU64 | ParamKind::PtxTensorMap => json!({
                    "name": p.name, "kind": "unsupported", "type": shown,
                }),
            }
        })
        .collect();
    json!({
        "name": s.name,
        "kernel": kernel,
        "block": s.reqntid,
        "cluster": s.cluster,
        "dynamic_shared": s.dynamic_shared.unwrap_or(0),
        "params": params,
    })
}

/// One argument from the Python half: `("scalar", text, [])`,
/// `("array", bytes, [])` or `("tensor", bytes, dims)`.
type PyArg<'py> = (String, Bound<'py, PyAny>, Vec<u64>);

/// A simulated run for the Python half: whether it faulted, the reports
/// rendered and as JSON, the writable arrays after it as `(name, bytes)`.
type SimResult<'py> = (bool, String, String, Vec<(String, Bound<'py, PyBytes>)>);

#[pymethods]
impl Module {
    /// Runs `kernel` in the simulator. Returns whether it faulted, the
    /// reports rendered for people and as a JSON array, and every writable
    /// array after the run as `(name, bytes)`.
    #[pyo3(signature = (kernel, grid, block, args, max_steps=None, seed=None))]
    // The Python call's parameters, one by one.
    #[allow(clippy::too_many_arguments)]
    fn sim<'py>(
        &self,
        py: Python<'py>,
        kernel: &str,
        grid: [u32; 3],
        block: Option<[u32; 3]>,
        args: Vec<PyArg<'py>>,
        max_steps: Option<u64>,
        seed: Option<u64>,
    ) -> PyResult<SimResult<'py>> {
        let built = self.built()?;
        let launch = built.launch(kernel, grid, block, &args, None)?;
        let program = built
            .program
            .get_or_init(|| {
                sim::load_with(
                    &built.ptx,
                    PtxSource::Kdsl {
                        line_spans: &built.line_spans,
                    },
                    built.dynamic.clone(),
                )
                .map_err(|diags| render::human(&built.sources, &diags, false))
            })
            .as_ref()
            .map_err(|why| {
                PyRuntimeError::new_err(format!(
                    "internal error: the simulator cannot load the PTX kdslc wrote:\n{why}"
                ))
            })?;
        let defaults = SimOptions::default();
        let opts = SimOptions {
            schedule: seed.map_or(sim::Schedule::InOrder, sim::Schedule::Random),
            max_steps: max_steps.unwrap_or(defaults.max_steps),
        };
        // Other Python threads run while this one simulates.
        let outcome = py.detach(|| sim::run(program, &launch, &opts));
        let text = render::human(&built.sources, &outcome.reports, false);
        let reports: Vec<Value> = outcome
            .reports
            .iter()
            .map(|d| diagnostic_json(&built.sources, d))
            .collect();
        let arrays = outcome
            .arrays
            .iter()
            .filter(|a| a.writable)
            .map(|a| (a.name.clone(), PyBytes::new(py, &a.data)))
            .collect();
        Ok((
            outcome.faulted,
            text,
            Value::Array(reports).to_string(),
            arrays,
        ))
    }
}

impl Module {
    fn built(&self) -> PyResult<&Built> {
        self.built.as_ref().ok_or_else(|| {
            PyValueError::new_err("the module did not compile: it has no kernels to run")
        })
    }
}

impl Built {
    fn signature(&self, kernel: &str) -> PyResult<&KernelSignature> {
        self.signatures
            .iter()
            .find(|s| s.name == kernel)
            .ok_or_else(|| {
                let names: Vec<String> = self
                    .signatures
                    .iter()
                    .map(|s| format!("`{}`", s.name))
                    .collect();
                PyValueError::new_err(format!(
                    "the module has no kernel `{kernel}` (it has {})",
                    names.join(", ")
                ))
            })
    }

    /// The launch of `kernel` the arguments describe, checked as `kdslc
    /// sim` checks its flags: the block and cluster are the kernel's.
    fn launch(
        &self,
        kernel: &str,
        grid: [u32; 3],
        block: Option<[u32; 3]>,
        args: &[PyArg<'_>],
        addresses: Option<&mut Vec<u64>>,
    ) -> PyResult<Launch> {
        let sig = self.signature(kernel)?;
        let mut addresses = addresses;
        let Some(block) = sig.reqntid.or(block) else {
            return Err(PyValueError::new_err(format!(
                "kernel `{kernel}` declares no block(...): give the block shape with block="
            )));
        };
        let cluster = sig.cluster.unwrap_or([1, 1, 1]);
        let shapes = shape::Shapes {
            grid,
            block,
            cluster,
        };
        shape::check(sig, Origin::Kdsl, shapes)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        if args.len() != sig.params.len() {
            return Err(PyValueError::new_err(format!(
                "kernel `{kernel}` takes {} arguments, {} were given",
                sig.params.len(),
                args.len()
            )));
        }
        let mut values = Vec::with_capacity(args.len());
        for (p, (form, payload, dims)) in sig.params.iter().zip(args) {
            let value = {
                let bad = |why: String| {
                    PyValueError::new_err(format!(
                        "argument `{}` ({}): {why}",
                        p.name,
                        value::kind_name(p.kind)
                    ))
                };
                // The elements (a simulated launch), or for a launch on the
                // device its address (noted in `addresses`) and its size.
                let mut bytes = || -> PyResult<(Vec<u8>, u64)> {
                    if let Some(addresses) = addresses.as_deref_mut() {
                        let (address, len): (u64, u64) = payload.extract()?;
                        addresses.push(address);
                        return Ok((Vec::new(), len));
                    }
                    let b = payload
                        .cast::<PyBytes>()
                        .map_err(|_| bad("the array's data is not bytes".to_string()))?;
                    let data = b.as_bytes().to_vec();
                    let len = data.len() as u64;
                    Ok((data, len))
                };
                match (p.kind, form.as_str()) {
                    (ParamKind::Scalar(ty), "scalar") => {
                        let text: String = payload.extract()?;
                        let bits = literal::parse(&text, ty).map_err(bad)?;
                        Ok(ArgValue::Scalar { ty, bits })
                    }
                    (ParamKind::Array { elem, writable }, "array") => {
                        let (data, len) = bytes()?;
                        if len % u64::from(elem.size().max(1)) != 0 {
                            return Err(bad(format!(
                                "{len} bytes are no whole number of {elem} elements"
                            )));
                        }
                        Ok(ArgValue::Array(Array {
                            name: p.name.clone(),
                            elem,
                            data,
                            writable,
                        }))
                    }
                    (ParamKind::TensorMap(map), "tensor") => {
                        let (data, len) = bytes()?;
                        let strides = tensor::dense_strides(dims, map.elem);
                        tensor::check_encode(&map, dims, &strides, len).map_err(bad)?;
                        Ok(ArgValue::TensorMap {
                            array: Array {
                                name: p.name.clone(),
                                elem: map.elem.storage(),
                                data,
                                writable: map.writable,
                            },
                            dims: dims.clone(),
                            strides,
                            map,
                        })
                    }
                    (_, form) => Err(bad(format!("a {form} cannot be given here"))),
                }
            }?;
            values.push(value);
        }
        Ok(Launch {
            kernel: kernel.to_string(),
            grid,
            block,
            cluster,
            dynamic_shared: sig.dynamic_shared.unwrap_or(0),
            args: values,
        })
    }
}

create_exception!(_kdsl, GpuUnavailableError, PyRuntimeError);
create_exception!(_kdsl, GpuFailure, PyRuntimeError);

fn gpu_error(e: DeviceError) -> PyErr {
    if e.unavailable {
        GpuUnavailableError::new_err(e.message)
    } else {
        GpuFailure::new_err(e.message)
    }
}

/// A module for one GPU, loaded by the first launch (after its arguments
/// were checked), for launches from the thread that loaded it (the Python
/// half keeps one per thread and device).
#[pyclass(unsendable, module = "kdsl._kdsl")]
struct Gpu {
    device: usize,
    ptx: String,
    module: Option<DeviceModule>,
}

#[pymethods]
impl Gpu {
    #[new]
    fn new(device: usize, ptx: String) -> Gpu {
        Gpu {
            device,
            ptx,
            module: None,
        }
    }

    /// The device's name, once loaded.
    #[getter]
    fn device_name(&self) -> Option<String> {
        self.module.as_ref().map(|m| m.device_name().to_string())
    }

    /// Launches `kernel` of `module` and waits for it (at most `timeout`
    /// seconds). Arrays are given as `(device address, bytes)`.
    #[pyo3(signature = (module, kernel, grid, block, args, timeout))]
    fn launch(
        &mut self,
        module: Bound<'_, Module>,
        kernel: &str,
        grid: [u32; 3],
        block: Option<[u32; 3]>,
        args: Vec<PyArg<'_>>,
        timeout: f64,
    ) -> PyResult<()> {
        let built = module.get().built()?;
        let mut addresses = Vec::new();
        let launch = built.launch(kernel, grid, block, &args, Some(&mut addresses))?;
        let sig = built.signature(kernel)?;
        let timeout = Duration::try_from_secs_f64(timeout).map_err(|_| {
            PyValueError::new_err(format!("timeout={timeout}: a number of seconds"))
        })?;
        let module = match &mut self.module {
            Some(m) => m,
            empty => empty.insert(DeviceModule::load(self.device, &self.ptx).map_err(gpu_error)?),
        };
        module
            .launch(&launch, sig, &addresses, timeout)
            .map_err(gpu_error)
    }
}

/// The version of the bindings (the package's).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _kdsl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_class::<Module>()?;
    m.add_class::<Gpu>()?;
    m.add(
        "GpuUnavailableError",
        m.py().get_type::<GpuUnavailableError>(),
    )?;
    m.add("GpuFailure", m.py().get_type::<GpuFailure>())?;
    Ok(())
}
