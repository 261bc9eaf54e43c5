//! `kdslc sim`'s engine: a CPU simulator that executes PTX.
//!
//! ```text
//!  PTX text ──ptx::parse──▶ module AST ──decode──▶ Program (flat, resolved)
//!                                                     │  + Launch
//!                                              machine::Machine::run
//!                                                     ▼
//!                        Outcome: arrays after the run, S-code reports, stats
//! ```
//!
//! The simulator runs the very PTX `kdslc` writes (or any module inside the
//! supported subset, such as `nvcc -ptx` output): every thread of every CTA
//! of a cluster, warps of 32, per-CTA shared memory, mbarriers with phases,
//! pending arrivals and transaction counts, bulk copies that land later than
//! their issue, clusters with distributed shared memory. Hangs and undefined
//! behaviour become reports (`S0001`…) that point at source spans. The
//! supported subset and what is not modelled are in `docs/simulator.md`.

mod checks;
mod decode;
mod dynamic;
mod machine;
pub(crate) mod printf;
mod ptx;
mod report;
mod shared;
mod spans;
mod stats;
pub(crate) mod tmap;

pub use checks::{Check, Checks};

/// Bytes of race-check shadow per simulated byte of shared memory (per
/// CTA of the running cluster) and of global memory (per array the kernel
/// touches); the initialisation check adds a bit per byte of shared and
/// local memory. `docs/simulator.md` states them.
pub const SHADOW_PER_SHARED_BYTE: usize =
    machine::sanitizer::shadow::Shadow::<{ machine::sanitizer::SHARED_SLOTS }>::BYTES_PER_BYTE;
pub const SHADOW_PER_GLOBAL_BYTE: usize =
    machine::sanitizer::shadow::Shadow::<{ machine::sanitizer::GLOBAL_SLOTS }>::BYTES_PER_BYTE;
use stats::LongestThread;
pub use stats::{JobStats, Stats};

use crate::diagnostics::Diagnostic;
use crate::launch::{ArgValue, Array, DynamicLayout, KernelSignature, Launch, ParamKind, ParamSig};
use crate::source::SourceMap;
use crate::span::{FileId, Span};
use crate::types::Scalar;
use decode::ops::Ty;
use machine::memory::{alloc_base, Alloc};
use spans::SpanResolver;

/// A parsed and decoded PTX module, with the source span of every
/// instruction.
#[derive(Clone, Debug)]
pub struct Program {
    pub(crate) code: decode::Program,
    /// kdslc's dynamic shared layouts, by kernel ([`load_with`]).
    dynamic: Vec<(String, DynamicLayout)>,
    /// The S0013 report of each unsupported instruction kept, by function.
    unsupported: Vec<(u32, Diagnostic)>,
}

/// Where the PTX came from, which decides what reports point at.
pub enum PtxSource<'a> {
    /// kdslc's own PTX: `line_spans[i]` is the `.kdsl` span of PTX line
    /// `i + 1`, `None` for lines the writer did not attribute.
    Kdsl { line_spans: &'a [Option<Span>] },
    /// A PTX file already added to `sources` as `file`: reports point at
    /// `.loc` positions when the module has line info (files named by
    /// `.file` are read and added to `sources` when readable), else at the
    /// PTX line.
    File {
        file: FileId,
        sources: &'a mut SourceMap,
    },
}

/// How the simulator interleaves threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// A thread runs until it blocks or exits; reproducible.
    InOrder,
    /// Also switches at random memory operations and delays bulk copies
    /// randomly, from this seed.
    Random(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimOptions {
    pub schedule: Schedule,
    /// The most instructions all threads together may execute.
    pub max_steps: u64,
    /// The run-time checks (all by default).
    pub checks: Checks,
    /// The groups (clusters, or CTAs) simulated at once, on as many
    /// threads: 1 runs them one after another; 0 (the default) as many as
    /// the machine has cores. The outcome is the same for every value
    /// (`docs/simulator.md`, "Parallel runs").
    pub jobs: usize,
}

impl SimOptions {
    /// [`SimOptions::jobs`], 0 resolved to the cores available.
    pub fn jobs(&self) -> usize {
        match self.jobs {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        }
    }
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            schedule: Schedule::InOrder,
            max_steps: 1_000_000_000,
            checks: Checks::all(),
            jobs: 0,
        }
    }
}

/// What one `printf` (`vprintf`) printed, and who printed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Printed {
    /// The CTA (`%ctaid`) and the linear thread id in it.
    pub cta: [u32; 3],
    pub thread: u32,
    /// The formatted text, as a GPU prints it (`printf`'s conversions are
    /// C's; bytes that are not UTF-8 are replaced).
    pub text: String,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Every array argument after the run, in launch order.
    pub arrays: Vec<Array>,
    /// The text of every `printf`, by CTA (`x` fastest, as `%ctaid` counts
    /// a grid's blocks), then thread, then the order of the thread's calls
    /// — whatever the schedule, so that the output of a run does not
    /// depend on it.
    pub printed: Vec<Printed>,
    /// `S` reports, in the order they were found.
    pub reports: Vec<Diagnostic>,
    /// True when any report is an error (the kernel faulted: exit 4).
    pub faulted: bool,
    pub stats: Stats,
    /// How `--jobs` ran the groups.
    pub jobs: JobStats,
}

/// Parses and decodes a PTX module. An instruction outside the supported
/// subset is an error naming it and its PTX line.
pub fn load(ptx: &str, source: PtxSource) -> Result<Program, Vec<Diagnostic>> {
    load_with(ptx, source, Vec::new())
}

/// [`load`] for kdslc's PTX of kernels placed in dynamic shared memory:
/// `dynamic` gives each one's layout (`launch::signature::dynamic_layouts`),
/// so that launches get the bytes they need, bounds are checked per
/// declaration and reports name them.
pub fn load_with(
    ptx: &str,
    source: PtxSource,
    dynamic: Vec<(String, DynamicLayout)>,
) -> Result<Program, Vec<Diagnostic>> {
    let resolver = SpanResolver::new(source);
    let module = match ptx::parser::parse(ptx) {
        Ok(m) => m,
        Err(e) => {
            let mut r = resolver;
            let diag = report::load_error(
                &mut r,
                ptx,
                e.pos,
                decode::LoadErrorKind::Syntax,
                &e.message,
            );
            return Err(vec![diag]);
        }
    };
    let mut code = match decode::decode(ptx, &module, &dynamic) {
        Ok(p) => p,
        Err(e) => {
            let mut r = resolver;
            return Err(vec![report::load_error(
                &mut r, ptx, e.pos, e.kind, &e.message,
            )]);
        }
    };
    let mut resolver = resolver;
    resolver.add_files(&module.files);
    let unsupported: Vec<(u32, Diagnostic)> = code
        .unsupported
        .iter()
        .map(|(f, e)| {
            let d = report::load_error(&mut resolver, ptx, e.pos, e.kind, &e.message);
            (*f, d)
        })
        .collect();
    for site in code
        .sites
        .iter_mut()
        .chain(code.shared.iter_mut().map(|v| &mut v.decl))
        .chain(code.local.iter_mut().map(|v| &mut v.decl))
        .chain(code.module_vars.iter_mut().map(|v| &mut v.decl))
    {
        site.span = resolver.span(ptx, site);
    }
    let program = Program {
        code,
        dynamic,
        unsupported,
    };
    // A module none of whose kernels can run is refused at load, with
    // every instruction outside the subset listed.
    let total: u64 = program.code.unsupported_count.iter().sum();
    let runnable = program
        .code
        .kernels
        .iter()
        .any(|k| program.refusals(&k.name).is_empty());
    if total > 0 && !runnable {
        let all: Vec<u32> = (0..program.code.funcs.len() as u32).collect();
        return Err(program.unsupported_in(&all));
    }
    Ok(program)
}

impl Program {
    /// The names of the module's kernels (`.entry`), in order.
    pub fn kernels(&self) -> Vec<&str> {
        self.code.kernels.iter().map(|k| k.name.as_str()).collect()
    }

    /// A kernel's launch signature: PTX parameter names, `.u64`/`.s64`/`.b64`
    /// parameters as [`ParamKind::PtxU64`], the launch directives, and the
    /// dynamic shared memory when a [`DynamicLayout`] gives it.
    pub fn signature(&self, kernel: &str) -> Option<KernelSignature> {
        let k = self.code.kernel(kernel)?;
        let params = k.params.iter().map(|p| (p.name.as_str(), p.ty, p.size));
        let mut sig = signature_of(&k.name, params, &k.attrs);
        sig.dynamic_shared = self.dynamic_layout(kernel).map(|l| l.bytes);
        Some(sig)
    }

    /// Why `kernel` cannot run: an S0013 report for each instruction
    /// outside the simulator's subset in the kernel or a function it
    /// calls (the first [`crate::diagnostics::cap::PER_CODE`] of them, then
    /// one for the rest); empty when it can. The module's other kernels
    /// are not concerned.
    pub fn refusals(&self, kernel: &str) -> Vec<Diagnostic> {
        match self.code.kernel(kernel) {
            Some(k) => self.unsupported_in(&self.code.reach(k)),
            None => Vec::new(),
        }
    }

    /// The S0013 reports of the functions `funcs` (ascending), capped.
    fn unsupported_in(&self, funcs: &[u32]) -> Vec<Diagnostic> {
        let total: u64 = funcs
            .iter()
            .filter_map(|&f| self.code.unsupported_count.get(f as usize))
            .sum();
        if total == 0 {
            return Vec::new();
        }
        let cap = crate::diagnostics::cap::PER_CODE;
        let mut out: Vec<Diagnostic> = self
            .unsupported
            .iter()
            .filter(|(f, _)| funcs.binary_search(f).is_ok())
            .map(|(_, d)| d.clone())
            .take(cap)
            .collect();
        let rest = total - out.len() as u64;
        if rest > 0 {
            let mut d = Diagnostic::error(
                "S0013",
                format!(
                    "and {rest} more PTX {} outside the simulator's subset",
                    crate::diagnostics::noun_for(rest as usize, "instruction")
                ),
            )
            .note(format!(
                "kdslc shows the first {cap} instructions the simulator does not support"
            ));
            d.omitted = usize::try_from(rest).unwrap_or(usize::MAX);
            out.push(d);
        }
        out
    }

    /// The module's `.const` variables (CUDA's `__constant__` memory),
    /// which [`Program::set_constant`] sets before a launch.
    pub fn constants(&self) -> Vec<crate::launch::consts::ConstSymbol> {
        self.code
            .module_vars
            .iter()
            .filter(|v| v.read_only)
            .map(|v| crate::launch::consts::ConstSymbol {
                name: v.name.clone(),
                size: v.size,
                elem: v.ty.map(|t| scalar_of(t, t.bytes())),
            })
            .collect()
    }

    /// Sets the first bytes of the `.const` variable `name` (as a host
    /// sets `__constant__` memory with `cudaMemcpyToSymbol`): every later
    /// launch of the program reads them. Err: no such variable, or more
    /// bytes than it has.
    pub fn set_constant(&mut self, name: &str, bytes: &[u8]) -> Result<(), String> {
        let Some(v) = self
            .code
            .module_vars
            .iter_mut()
            .find(|v| v.read_only && v.name == name)
        else {
            return Err(format!("the module has no `.const` variable `{name}`"));
        };
        if bytes.len() as u64 > v.size {
            return Err(format!(
                "{} bytes for `{name}`, which has {}",
                bytes.len(),
                v.size
            ));
        }
        if v.init.len() < bytes.len() {
            v.init.resize(bytes.len(), 0);
        }
        if let Some(dst) = v.init.get_mut(..bytes.len()) {
            dst.copy_from_slice(bytes);
        }
        Ok(())
    }

    fn dynamic_layout(&self, kernel: &str) -> Option<&DynamicLayout> {
        self.dynamic
            .iter()
            .find(|(k, _)| k == kernel)
            .map(|(_, l)| l)
    }
}

/// The launch signatures of a module's kernels from its text alone: the
/// parser, not the decoder, so that `kdslc run` can launch a module whose
/// instructions the simulator does not support. Err: the parse error and
/// its 1-based PTX line.
pub fn signatures(ptx_text: &str) -> Result<Vec<KernelSignature>, (String, u32)> {
    let module = ptx::parser::parse(ptx_text).map_err(|e| (e.message, e.pos.line))?;
    // Two definitions of one kernel name no launch could tell apart (and
    // ptxas refuses): the loader's error says where.
    let mut seen = std::collections::HashSet::new();
    for f in module.functions.iter().filter(|f| f.body.is_some()) {
        if !seen.insert(f.name.as_str()) {
            return Err((
                format!("duplicate definition of function `{}`", f.name),
                f.pos.line,
            ));
        }
    }
    Ok(module
        .functions
        .iter()
        .filter(|f| f.kind == ptx::ast::FuncKind::Entry && f.body.is_some())
        .map(|f| {
            let params = f.params.iter().map(|p| {
                let ty = Ty::from_name(&p.ty).unwrap_or(Ty::U8);
                let elems: u64 = p.dims.iter().map(|d| d.unwrap_or(0)).product();
                let size = u64::from(ty.bytes()) * u64::from(p.vector.max(1)) * elems.max(1);
                (p.name.as_str(), ty, u32::try_from(size).unwrap_or(u32::MAX))
            });
            signature_of(&f.name, params, &f.attrs)
        })
        .collect())
}

/// A kernel's launch signature: `.u64`/`.s64`/`.b64` parameters as
/// [`ParamKind::PtxU64`], the launch directives.
fn signature_of<'p>(
    name: &str,
    params: impl Iterator<Item = (&'p str, Ty, u32)>,
    attrs: &ptx::ast::FuncAttrs,
) -> KernelSignature {
    let params = params
        .map(|(name, ty, size)| ParamSig {
            name: name.to_string(),
            kind: match ty {
                Ty::U64 | Ty::S64 if size == 8 => ParamKind::PtxU64,
                // `.param .align 64 .b8 m[128]`: a `__grid_constant__
                // CUtensorMap`, or a struct of 128 bytes.
                Ty::U8 if size == 128 => ParamKind::PtxTensorMap,
                // `.param .align A .b8 p[N]`: a struct passed by value.
                Ty::U8 if size > 1 => ParamKind::PtxBytes { size },
                ty => ParamKind::Scalar(scalar_of(ty, size)),
            },
        })
        .collect();
    KernelSignature {
        name: name.to_string(),
        params,
        reqntid: attrs.reqntid,
        maxntid: attrs.maxntid,
        cluster: attrs.reqnctapercluster,
        dynamic_shared: None,
    }
}

/// The scalar type a PTX parameter of `ty` takes.
fn scalar_of(ty: Ty, size: u32) -> Scalar {
    match ty {
        Ty::S8 if size == 1 => Scalar::I8,
        Ty::U8 if size == 1 => Scalar::U8,
        Ty::S16 if size == 2 => Scalar::I16,
        Ty::U16 if size == 2 => Scalar::U16,
        Ty::S32 | Ty::S16 | Ty::S8 => Scalar::I32,
        Ty::S64 => Scalar::I64,
        Ty::F16 => Scalar::F16,
        Ty::BF16 => Scalar::BF16,
        Ty::F32 => Scalar::F32,
        Ty::F64 => Scalar::F64,
        Ty::Pred => Scalar::Bool,
        _ if size == 8 => Scalar::U64,
        _ => Scalar::U32,
    }
}

/// The most memory the registers and memories of one cluster may take.
const MAX_CLUSTER_BYTES: u64 = 4 << 30;

/// The most CTAs a cooperative launch may have: every one is resident at
/// once, and a shared::cluster address holds a CTA's rank in 8 bits
/// (`machine::memory::cluster_addr`). (An H100 holds 132 SMs times the
/// CTAs each fits.)
const MAX_COOPERATIVE_CTAS: u64 = 254;

/// The bytes of a cooperative launch's grid workspace: cooperative
/// groups' grid barrier is the 32-bit word at offset 4.
const GRID_WORKSPACE_BYTES: usize = 16;

/// Runs `launch` on `program`.
pub fn run(program: &Program, launch: &Launch, opts: &SimOptions) -> Outcome {
    let prog = &program.code;
    let arrays_in = || launch.args.iter().filter_map(ArgValue::as_array);
    // A launch that cannot run leaves the arrays as they were given (or
    // none, when there is no memory for their copies either).
    let fail = |why: String| Outcome {
        arrays: arrays_in()
            .map(|a| {
                Some(Array {
                    name: a.name.clone(),
                    elem: a.elem,
                    data: filled(&a.data, a.data.len() as u64).ok()?,
                    writable: a.writable,
                })
            })
            .collect::<Option<Vec<Array>>>()
            .unwrap_or_default(),
        printed: Vec::new(),
        reports: vec![report::bad_launch(&launch.kernel, &why)],
        faulted: true,
        stats: Stats {
            kernel: launch.kernel.clone(),
            ..Stats::default()
        },
        jobs: JobStats::default(),
    };
    let (Some(kernel), Some(sig)) = (
        prog.kernel(&launch.kernel),
        program.signature(&launch.kernel),
    ) else {
        return fail(format!("the module has no kernel `{}`", launch.kernel));
    };
    let refusals = program.refusals(&launch.kernel);
    if !refusals.is_empty() {
        let mut out = fail(String::new());
        out.reports = refusals;
        return out;
    }
    // The launch's own check (`--grid`, `--block`, `--cluster` went through
    // it already; a library caller's launch has not).
    let shapes = crate::launch::shape::Shapes {
        grid: launch.grid,
        block: launch.block,
        cluster: launch.cluster,
    };
    if let Err(e) = crate::launch::shape::check(&sig, crate::launch::Origin::Ptx, shapes) {
        return fail(e.to_string());
    }
    let layout = program.dynamic_layout(&launch.kernel);
    if let Err(why) = check_dynamic_shared(prog, layout, launch.dynamic_shared) {
        return fail(why);
    }
    let shared = shared::SharedMap::new(prog, launch.dynamic_shared, layout);
    let nctas = u64::from(launch.grid[0]) * u64::from(launch.grid[1]) * u64::from(launch.grid[2]);
    if launch.cooperative {
        if launch.cluster != [1, 1, 1] {
            return fail(
                "a cooperative launch with clusters is not simulated (only one of CTAs)"
                    .to_string(),
            );
        }
        if nctas > MAX_COOPERATIVE_CTAS {
            return fail(format!(
                "a cooperative launch runs every CTA of the grid at once, and the simulator holds at most {MAX_COOPERATIVE_CTAS} so (the grid has {nctas}; a GPU, its SMs times the CTAs each holds)"
            ));
        }
    }
    // What one cluster's (a cooperative launch: the grid's) threads and
    // CTAs take in the simulator.
    let ctas = if launch.cooperative {
        nctas
    } else {
        u64::from(launch.cluster[0] * launch.cluster[1] * launch.cluster[2])
    };
    let threads = u64::from(launch.block[0] * launch.block[1] * launch.block[2]) * ctas;
    let per_thread =
        prog.template.len() as u64 * 8 + u64::from(prog.local_size) + u64::from(prog.fparam_size);
    let bytes = threads * per_thread + ctas * (u64::from(shared.size) * 3);
    if bytes > MAX_CLUSTER_BYTES {
        return fail(format!(
            "a cluster of {threads} threads needs {} MiB of simulator memory, more than {} MiB",
            bytes >> 20,
            MAX_CLUSTER_BYTES >> 20
        ));
    }
    // The simulator works on a copy of every array, after the module's
    // variables.
    let array_bytes: u64 = arrays_in().map(|a| a.data.len() as u64).sum();
    let var_bytes: u64 = prog.module_vars.iter().map(|v| v.size).sum();
    let needed = bytes.saturating_add(array_bytes).saturating_add(var_bytes);
    if let Err(why) = crate::launch::memory::check(needed) {
        return fail(format!(
            "the simulator needs a copy of the arrays, the module's variables and the cluster's state: {why}"
        ));
    }
    // Module variables first, then one allocation per array argument.
    let mut allocs: Vec<Alloc> = Vec::new();
    for v in &prog.module_vars {
        let data = match filled(&v.init, v.size) {
            Ok(data) => data,
            Err(why) => return fail(format!("the module's variable `{}`: {why}", v.name)),
        };
        allocs.push(Alloc {
            name: v.name.clone(),
            data,
            read_only: v.read_only,
            elem: v.elem,
            param: None,
        });
    }
    if launch.args.len() != kernel.params.len() {
        return fail(format!(
            "the kernel has {}, the launch gives {}",
            crate::diagnostics::plural(kernel.params.len(), "parameter"),
            crate::diagnostics::plural(launch.args.len(), "argument")
        ));
    }
    let mut params = vec![0u8; kernel.param_size as usize];
    let mut array_allocs = Vec::new();
    let mut maps = Vec::new();
    for (i, (p, a)) in kernel.params.iter().zip(&launch.args).enumerate() {
        let bits = match a {
            ArgValue::TensorMap {
                array,
                dims,
                strides,
                map,
            } => {
                if p.size != 128 && p.size != 8 {
                    return fail(format!(
                        "parameter `{}` ({} bytes) can take neither a tensor map (128 bytes) nor a pointer to one",
                        p.name, p.size
                    ));
                }
                // A launch built in a program has not been through the
                // flags' check: the copies' addressing relies on it.
                if let Err(why) =
                    crate::launch::tensor::check_encode(map, dims, strides, array.data.len() as u64)
                {
                    return fail(format!("the tensor map `{}`: {why}", array.name));
                }
                let data = match filled(&array.data, array.data.len() as u64) {
                    Ok(data) => data,
                    Err(why) => return fail(format!("the copy of array `{}`: {why}", array.name)),
                };
                let index = allocs.len();
                array_allocs.push(index);
                allocs.push(Alloc {
                    name: array.name.clone(),
                    data,
                    read_only: !map.writable,
                    elem: array.elem.size(),
                    param: Some(i),
                });
                let es = u64::from(map.elem.size());
                maps.push(tmap::MapRecord {
                    name: array.name.clone(),
                    alloc: index,
                    elem: map.elem,
                    dims: dims.iter().rev().copied().collect(),
                    strides: std::iter::once(es)
                        .chain(strides.iter().rev().copied())
                        .collect(),
                    boxes: map.boxes().iter().rev().copied().collect(),
                    swizzle: map.swizzle,
                    fill: map.fill,
                });
                let encoded = tmap::encode(maps.len() as u32 - 1);
                if p.size == 128 {
                    // By value (`__grid_constant__`): the 128 bytes are the
                    // parameter.
                    if let Some(dst) = params.get_mut(p.offset as usize..p.offset as usize + 128) {
                        dst.copy_from_slice(&encoded);
                    }
                    continue;
                }
                // By pointer (`const CUtensorMap*`): the map in global memory.
                let at = allocs.len();
                allocs.push(Alloc {
                    name: format!("{} (tensor map)", array.name),
                    data: encoded.to_vec(),
                    read_only: true,
                    elem: 1,
                    param: None,
                });
                alloc_base(at)
            }
            ArgValue::Bytes(data) => {
                if data.len() != p.size as usize {
                    return fail(format!(
                        "parameter `{}` has {} bytes, the argument {}",
                        p.name,
                        p.size,
                        data.len()
                    ));
                }
                if let Some(dst) = params.get_mut(p.offset as usize..(p.offset + p.size) as usize) {
                    dst.copy_from_slice(data);
                }
                continue;
            }
            ArgValue::Scalar { bits, .. } => {
                if p.size > 8 {
                    return fail(format!(
                        "parameter `{}` ({} bytes) cannot take a scalar",
                        p.name, p.size
                    ));
                }
                *bits
            }
            ArgValue::Array(arr) => {
                if p.size != 8 {
                    return fail(format!("parameter `{}` is not a 64-bit pointer", p.name));
                }
                let data = match filled(&arr.data, arr.data.len() as u64) {
                    Ok(data) => data,
                    Err(why) => return fail(format!("the copy of array `{}`: {why}", arr.name)),
                };
                let index = allocs.len();
                array_allocs.push(index);
                allocs.push(Alloc {
                    name: arr.name.clone(),
                    data,
                    read_only: false,
                    elem: arr.elem.size(),
                    param: Some(i),
                });
                alloc_base(index)
            }
        };
        machine::memory::write(
            &mut params,
            u64::from(p.offset),
            u64::from(p.size.min(8)),
            bits,
        );
    }
    // A cooperative launch's grid workspace (cooperative groups' grid
    // barrier is its second word), zeros as the driver leaves it.
    let workspace = launch.cooperative.then(|| {
        allocs.push(Alloc {
            name: "the grid workspace (cooperative launch)".to_string(),
            data: vec![0; GRID_WORKSPACE_BYTES],
            read_only: false,
            elem: 4,
            param: None,
        });
        alloc_base(allocs.len() - 1)
    });
    let mut m = machine::Machine::new(
        prog,
        kernel,
        opts,
        (launch.grid, launch.block, launch.cluster),
        allocs,
        params,
        &shared,
    );
    if let Some(w) = workspace {
        m.cooperative(w);
    }
    m.mem.maps = maps;
    m.run();
    let run = report::Run {
        program,
        shared: &shared,
        maps: &m.mem.maps,
    };
    let mut reports = report::from_events(&run, &m.events, &m.mem.allocs);
    if let Some(stop) = &m.stop {
        reports.extend(report::from_stop(&run, stop, opts.max_steps));
    }
    let fifo = std::mem::take(&mut m.mem.printf);
    if fifo.dropped > 0 {
        reports.push(report::printf_dropped(
            &run,
            fifo.dropped,
            fifo.first_dropped,
        ));
    }
    let printed = printed_in_order(fifo.records, launch.grid);
    let faulted = reports.iter().any(Diagnostic::is_error);
    // The simulator's copies become the results (moved, not copied again).
    let arrays = arrays_in()
        .zip(&array_allocs)
        .map(|(a, &i)| Array {
            data: match m.mem.allocs.get_mut(i) {
                Some(al) => std::mem::take(&mut al.data),
                None => a.data.clone(),
            },
            name: a.name.clone(),
            elem: a.elem,
            writable: a.writable,
        })
        .collect();
    let nthreads = u64::from(launch.block[0] * launch.block[1] * launch.block[2]);
    let csize = u64::from(launch.cluster[0] * launch.cluster[1] * launch.cluster[2]).max(1);
    let stats = Stats {
        kernel: launch.kernel.clone(),
        steps: m.stats.steps,
        instructions: stats::classify(prog, &m.stats.counts, m.stats.generic),
        longest_thread: m.stats.longest.map(|(n, r)| LongestThread {
            cta: r.ctaid,
            thread: r.tid,
            instructions: n,
        }),
        blocking_mbarrier_waits: m.stats.blocking_waits,
        clusters: nctas / csize,
        ctas: nctas,
        threads: nctas * nthreads,
    };
    Outcome {
        arrays,
        printed,
        reports,
        faulted,
        stats,
        jobs: JobStats {
            parallel: m.stats.groups_parallel,
            serial: m.stats.groups_serial,
        },
    }
}

/// The printf records by CTA (`x` fastest), thread, then call order.
fn printed_in_order(mut records: Vec<machine::printf::Record>, grid: [u32; 3]) -> Vec<Printed> {
    let linear = |c: [u32; 3]| {
        u64::from(c[0])
            + u64::from(grid[0]) * (u64::from(c[1]) + u64::from(grid[1]) * u64::from(c[2]))
    };
    records.sort_by_key(|r| (linear(r.ctaid), r.tid, r.seq));
    records
        .into_iter()
        .map(|r| Printed {
            cta: r.ctaid,
            thread: r.tid,
            text: String::from_utf8_lossy(&r.text).into_owned(),
        })
        .collect()
}

/// `size` bytes starting with `init`, then zeros: allocated fallibly, so
/// that memory the machine does not have is an error and not an abort.
fn filled(init: &[u8], size: u64) -> Result<Vec<u8>, String> {
    let cannot = || format!("cannot allocate {size} bytes");
    let n = usize::try_from(size).map_err(|_| cannot())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| cannot())?;
    v.extend_from_slice(init.get(..n).unwrap_or(init));
    v.resize(n, 0);
    Ok(v)
}

/// The launch's dynamic shared memory against what the kernel needs (when
/// kdslc said so) and what the module's target allows.
fn check_dynamic_shared(
    prog: &decode::Program,
    layout: Option<&DynamicLayout>,
    bytes: u32,
) -> Result<(), String> {
    if let Some(l) = layout {
        if bytes < l.bytes {
            return Err(format!(
                "the kernel needs {} bytes of dynamic shared memory, the launch gives {bytes}",
                l.bytes
            ));
        }
    }
    // An unknown `.target` gets the largest maximum of any.
    let target = crate::target::Target::from_name(&prog.target);
    let max = target.map_or_else(
        || {
            crate::target::Target::ALL
                .into_iter()
                .map(crate::target::Target::max_shared_per_block)
                .max()
                .unwrap_or(0)
        },
        crate::target::Target::max_shared_per_block,
    );
    if u64::from(bytes) > max {
        let on = target.map_or_else(|| "any target".to_string(), |t| t.name().to_string());
        return Err(format!(
            "{bytes} bytes of dynamic shared memory are more than {on} gives one CTA ({max})"
        ));
    }
    Ok(())
}
