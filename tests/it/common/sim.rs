//! Helpers for the simulator tests: compile a kernel (kdsl source or PTX
//! text), build launches and arrays, run, and render the reports.

use super::rng::Lcg;
use kdsl::diagnostics::{render, Diagnostic};
use kdsl::launch::{ArgValue, Array, Launch};
use kdsl::sim::{self, Outcome, Program, PtxSource, Schedule, SimOptions};
use kdsl::source::{SourceFile, SourceMap};
use kdsl::types::Scalar;
use std::path::{Path, PathBuf};

pub use super::repo_root;

/// The default options with these passes (`Passes::none()`, `all()`).
pub fn with_passes(passes: kdsl::opt::Passes) -> kdsl::Options {
    kdsl::Options {
        passes,
        ..kdsl::Options::default()
    }
}

/// The architecture a CUDA twin is compiled for: `sm_90`, or what its
/// first line names (`// arch: sm_90a`).
pub fn nvcc_arch(cu: &Path) -> String {
    let text = std::fs::read_to_string(super::repo_root().join(cu)).unwrap_or_default();
    text.lines()
        .next()
        .and_then(|l| l.strip_prefix("// arch: "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("sm_90")
        .to_string()
}

/// A loaded kernel module and the sources its reports point into.
pub struct Loaded {
    pub program: Program,
    pub sources: SourceMap,
}

/// Compiles a `.kdsl` file for sm_90 and loads its PTX with the writer's
/// line map, so reports point at the `.kdsl` source. A path inside the
/// repository is named relative to it (tests run in the repository root),
/// as a user at the root would name it.
pub fn kdsl_file(path: &Path) -> Loaded {
    kdsl_file_with(path, &kdsl::Options::default())
}

/// [`kdsl_file`] with other compiler options (`--passes none`, ...).
pub fn kdsl_file_with(path: &Path, opts: &kdsl::Options) -> Loaded {
    let root = repo_root();
    let path = path.strip_prefix(&root).unwrap_or(path);
    let c = kdsl::compile(path, opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    finish_kdsl(c, &path.display().to_string())
}

/// Kernel source text compiled like [`kdsl_file_with`].
pub fn kdsl_str_with(name: &str, text: &str, opts: &kdsl::Options) -> Loaded {
    finish_kdsl(kdsl::compile_str(name, text, opts), name)
}

fn finish_kdsl(c: kdsl::Compilation, name: &str) -> Loaded {
    let errors: Vec<_> = c
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .cloned()
        .collect();
    assert!(
        errors.is_empty(),
        "{name}:\n{}",
        render::short(&c.sources, &errors)
    );
    match load_compilation(c) {
        Ok(loaded) => loaded,
        Err(NotLoaded::NoPtx) => panic!("{name}: no PTX"),
        Err(NotLoaded::Load(d, sources)) => {
            panic!("{name}: load failed:\n{}", render::short(&sources, &d))
        }
    }
}

/// Why a compilation's PTX did not load.
pub enum NotLoaded {
    /// The compilation wrote no PTX.
    NoPtx,
    /// The simulator refused it: its diagnostics, and the sources they
    /// point into.
    Load(Vec<Diagnostic>, SourceMap),
}

/// A compilation's PTX loaded as `kdslc sim` loads it: with the writer's
/// line map (reports point at the `.kdsl` source) and the dynamic
/// shared-memory layout of each kernel placed there.
pub fn load_compilation(c: kdsl::Compilation) -> Result<Loaded, NotLoaded> {
    let ptx = c.ptx.ok_or(NotLoaded::NoPtx)?;
    let layouts = c
        .module
        .as_ref()
        .map(kdsl::launch::signature::dynamic_layouts)
        .unwrap_or_default();
    match sim::load_with(
        &ptx,
        PtxSource::Kdsl {
            line_spans: &c.ptx_line_spans,
        },
        layouts,
    ) {
        Ok(program) => Ok(Loaded {
            program,
            sources: c.sources,
        }),
        Err(d) => Err(NotLoaded::Load(d, c.sources)),
    }
}

/// Loads PTX text as a file named `name` (reports point into it, or into
/// the files its `.file` directives name).
pub fn ptx_str(name: &str, ptx: &str) -> Result<Loaded, String> {
    let mut sources = SourceMap::new();
    let file = sources.add(SourceFile::new(name, Some(PathBuf::from(name)), ptx));
    match sim::load(
        ptx,
        PtxSource::File {
            file,
            sources: &mut sources,
        },
    ) {
        Ok(program) => Ok(Loaded { program, sources }),
        Err(d) => Err(render::human(&sources, &d, false)),
    }
}

pub fn array(name: &str, elem: Scalar, data: Vec<u8>) -> ArgValue {
    ArgValue::Array(Array {
        name: name.to_string(),
        elem,
        data,
        writable: true,
    })
}

pub fn f32s(name: &str, v: &[f32]) -> ArgValue {
    array(
        name,
        Scalar::F32,
        v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    )
}

pub fn u32s(name: &str, v: &[u32]) -> ArgValue {
    array(
        name,
        Scalar::U32,
        v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    )
}

pub fn u32v(v: u32) -> ArgValue {
    ArgValue::Scalar {
        ty: Scalar::U32,
        bits: u64::from(v),
    }
}

pub fn f32v(v: f32) -> ArgValue {
    ArgValue::Scalar {
        ty: Scalar::F32,
        bits: u64::from(v.to_bits()),
    }
}

/// A `.ptx` input's tensor-map argument (`tmap:`): `data` of a row-major
/// tensor of `elem` with `dims` (outermost first), the box outermost first.
pub fn tensor(
    name: &str,
    elem: kdsl::launch::TensorElem,
    data: Vec<u8>,
    dims: &[u64],
    boxes: &[u32],
    swizzle: kdsl::launch::Swizzle,
) -> ArgValue {
    let mut box_dims = [0u32; 5];
    for (d, b) in box_dims.iter_mut().zip(boxes) {
        *d = *b;
    }
    let map = kdsl::launch::TensorMapSig {
        elem,
        rank: boxes.len() as u8,
        box_dims,
        swizzle,
        fill: kdsl::launch::OobFill::Zero,
        l2_promotion: 0,
        writable: true,
    };
    ArgValue::TensorMap {
        array: Array {
            name: name.to_string(),
            elem: elem.storage(),
            data,
            writable: true,
        },
        dims: dims.to_vec(),
        strides: kdsl::launch::tensor::dense_strides(dims, elem),
        map,
    }
}

/// bf16 bits of small integers: `n` values in -3..=3, reproducible from
/// `seed` (products and sums of them are exact in every order).
pub fn small_int_bf16(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .flat_map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x % 7) as f32 - 3.0;
            ((v.to_bits() >> 16) as u16).to_le_bytes()
        })
        .collect()
}

pub fn as_f32(a: &Array) -> Vec<f32> {
    a.data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn as_i32(a: &Array) -> Vec<i32> {
    a.data
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn as_u32(a: &Array) -> Vec<u32> {
    a.data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// A launch's shape along x, y and z: `[x, y, z]`, or `x` alone for
/// `[x, 1, 1]`.
pub trait Dims {
    fn dims(self) -> [u32; 3];
}

impl Dims for [u32; 3] {
    fn dims(self) -> [u32; 3] {
        self
    }
}

impl Dims for u32 {
    fn dims(self) -> [u32; 3] {
        [self, 1, 1]
    }
}

/// A launch of `kernel` with no dynamic shared memory: `launch("k", 2, 256,
/// 1, args)` is a grid of 2 CTAs of 256 threads, one CTA to a cluster.
pub fn launch(
    kernel: &str,
    grid: impl Dims,
    block: impl Dims,
    cluster: impl Dims,
    args: Vec<ArgValue>,
) -> Launch {
    Launch {
        kernel: kernel.to_string(),
        grid: grid.dims(),
        block: block.dims(),
        cluster: cluster.dims(),
        dynamic_shared: 0,
        cooperative: false,
        args,
    }
}

pub fn run(l: &Loaded, launch: &Launch) -> Outcome {
    sim::run(&l.program, launch, &SimOptions::default())
}

pub fn run_with(l: &Loaded, launch: &Launch, schedule: Schedule, max_steps: u64) -> Outcome {
    sim::run(
        &l.program,
        launch,
        &SimOptions {
            schedule,
            max_steps,
            ..SimOptions::default()
        },
    )
}

/// The codes of a run's reports, in order.
pub fn report_codes(o: &Outcome) -> Vec<&'static str> {
    o.reports.iter().map(|d| d.code).collect()
}

pub fn rendered(l: &Loaded, o: &Outcome) -> String {
    render::human(&l.sources, &o.reports, false)
}

/// Runs (with every run-time check on, the default) and fails the test
/// with the rendered reports if any. Inside [`sweep`] it also runs the
/// launch under the sweep's schedules, each clean as well; the in-order
/// outcome is returned.
pub fn run_clean(l: &Loaded, launch: &Launch) -> Outcome {
    let o = run_clean_with(
        l,
        launch,
        Schedule::InOrder,
        SimOptions::default().max_steps,
    );
    let extra = SWEEP.with(|s| s.borrow().as_ref().map(|s| s.schedules.clone()));
    for schedule in extra.unwrap_or_default() {
        run_clean_with(l, launch, schedule, SimOptions::default().max_steps);
    }
    o
}

/// Runs under `schedule` and fails the test with the rendered reports if
/// any; counted by [`sweep`].
pub fn run_clean_with(l: &Loaded, launch: &Launch, schedule: Schedule, max_steps: u64) -> Outcome {
    let o = run_with(l, launch, schedule, max_steps);
    assert!(
        o.reports.is_empty(),
        "{} ({schedule:?}): unexpected reports:\n{}",
        launch.kernel,
        rendered(l, &o)
    );
    SWEEP.with(|s| {
        if let Some(s) = s.borrow_mut().as_mut() {
            s.runs += 1;
            s.steps += o.stats.steps;
        }
    });
    o
}

struct Sweep {
    schedules: Vec<Schedule>,
    runs: u64,
    steps: u64,
}

thread_local! {
    static SWEEP: std::cell::RefCell<Option<Sweep>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with every [`run_clean`] also running its launch under
/// `schedules`: the clean runs it made and the instructions they
/// simulated.
pub fn sweep(schedules: &[Schedule], f: impl FnOnce()) -> (u64, u64) {
    SWEEP.with(|s| {
        *s.borrow_mut() = Some(Sweep {
            schedules: schedules.to_vec(),
            runs: 0,
            steps: 0,
        })
    });
    f();
    SWEEP.with(|s| s.borrow_mut().take().map_or((0, 0), |s| (s.runs, s.steps)))
}

/// A deterministic pseudo-random sequence in [0, 1).
pub fn rand_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = Lcg(seed);
    (0..n)
        .map(|_| ((rng.step() >> 40) as f32) / (1u64 << 24) as f32)
        .collect()
}

/// The `--schedule` of a test header (in order without one).
pub fn header_schedule(text: &str) -> Schedule {
    let header = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("// sim"))
        .unwrap_or("");
    let mut words = header.split_whitespace();
    while let Some(w) = words.next() {
        if w == "--schedule" {
            let v = words.next().unwrap_or("");
            return match v.strip_prefix("random:") {
                Some(seed) => Schedule::Random(seed.parse().expect("a seed")),
                None => Schedule::InOrder,
            };
        }
    }
    Schedule::InOrder
}

/// The launch a test kernel asks for in its first `// sim ...` comment:
/// `--grid X[,Y,Z]`, `--block ...`, `--cluster ...` (block and cluster
/// default to the kernel's `.reqntid`/`.reqnctapercluster`) and
/// `--arg NAME=TYPE:FORM` with FORM `zeros:N`, `iota:N`, `fill:N:V` or a
/// scalar literal; NAME is the parameter's name (kdsl's, or the PTX one) or
/// its position.
pub fn header_launch(text: &str, program: &Program) -> Launch {
    let header = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("// sim"))
        .unwrap_or("");
    let kernel = program.kernels().first().copied().unwrap_or("").to_string();
    let sig = program
        .signature(&kernel)
        .expect("the kernel has a signature");
    let mut grid = [1, 1, 1];
    let mut block = sig.reqntid.unwrap_or([1, 1, 1]);
    let mut cluster = sig.cluster.unwrap_or([1, 1, 1]);
    let mut args: Vec<Option<ArgValue>> = vec![None; sig.params.len()];
    // A kdsl kernel's dynamic shared memory is the compiler's.
    let mut shared_bytes = sig.dynamic_shared.unwrap_or(0);
    let mut words = header.split_whitespace();
    let dims = |s: &str| {
        let mut d = [1u32; 3];
        for (slot, v) in d.iter_mut().zip(s.split(',')) {
            *slot = v.parse().expect("a dimension");
        }
        d
    };
    while let Some(w) = words.next() {
        let value = words
            .next()
            .unwrap_or_else(|| panic!("`{w}` needs a value"));
        match w {
            "--grid" => grid = dims(value),
            "--block" => block = dims(value),
            "--cluster" => cluster = dims(value),
            "--shared-bytes" => shared_bytes = value.parse().expect("a byte count"),
            // The run's, not the launch's (`sim::broken`).
            "--schedule" => {}
            "--arg" => {
                let (name, v) = value.split_once('=').expect("NAME=VALUE");
                let index = name.parse::<usize>().ok().unwrap_or_else(|| {
                    sig.params
                        .iter()
                        .position(|p| p.name == name || p.name == format!("$p_{name}"))
                        .unwrap_or_else(|| panic!("no parameter `{name}`"))
                });
                let arg = parse_arg(name, v);
                *args.get_mut(index).expect("parameter index") = Some(arg);
            }
            other => panic!("unknown header flag `{other}`"),
        }
    }
    let args = args
        .into_iter()
        .enumerate()
        .map(|(i, a)| a.unwrap_or_else(|| panic!("no `--arg` for parameter {i}")))
        .collect();
    let mut l = launch(&kernel, grid, block, cluster, args);
    l.dynamic_shared = shared_bytes;
    l
}

fn parse_arg(name: &str, v: &str) -> ArgValue {
    if v.starts_with("tmap:") {
        let param = kdsl::launch::ParamSig {
            name: name.to_string(),
            kind: kdsl::launch::ParamKind::PtxTensorMap,
        };
        return kdsl::launch::value::parse(&param, v).unwrap_or_else(|e| panic!("{e}"));
    }
    let (ty, rest) = v.split_once(':').expect("TYPE:VALUE");
    let elem = Scalar::from_name(ty).unwrap_or_else(|| panic!("type `{ty}`"));
    let parts: Vec<&str> = rest.split(':').collect();
    let enc = |x: f64| -> Vec<u8> {
        match elem {
            Scalar::F32 => (x as f32).to_le_bytes().to_vec(),
            Scalar::F64 => x.to_le_bytes().to_vec(),
            Scalar::I32 | Scalar::U32 => (x as i64 as u32).to_le_bytes().to_vec(),
            Scalar::I64 | Scalar::U64 => (x as i64 as u64).to_le_bytes().to_vec(),
            Scalar::I8 | Scalar::U8 => vec![x as i64 as u8],
            Scalar::I16 | Scalar::U16 => (x as i64 as u16).to_le_bytes().to_vec(),
            // The header's values (zeros, small integers) are exact in bf16.
            Scalar::BF16 => (((x as f32).to_bits() >> 16) as u16).to_le_bytes().to_vec(),
            other => panic!("element type {other} in a test header"),
        }
    };
    let count = |s: Option<&&str>| -> usize { s.and_then(|n| n.parse().ok()).expect("a count") };
    let data: Vec<u8> = match parts.first().copied() {
        Some("zeros") => (0..count(parts.get(1))).flat_map(|_| enc(0.0)).collect(),
        Some("iota") => (0..count(parts.get(1)))
            .flat_map(|i| enc(i as f64))
            .collect(),
        Some("fill") => {
            let v: f64 = parts
                .get(2)
                .and_then(|s| s.parse().ok())
                .expect("a fill value");
            (0..count(parts.get(1))).flat_map(|_| enc(v)).collect()
        }
        _ => {
            let x: f64 = rest.parse().unwrap_or_else(|_| panic!("literal `{rest}`"));
            let bits = match elem {
                Scalar::F32 => u64::from((x as f32).to_bits()),
                Scalar::F64 => x.to_bits(),
                _ => {
                    x as i64 as u64
                        & if elem.size() == 4 {
                            0xffff_ffff
                        } else {
                            u64::MAX
                        }
                }
            };
            return ArgValue::Scalar { ty: elem, bits };
        }
    };
    array(name, elem, data)
}
