//! The launch interface shared by `kdslc sim` (CPU) and `kdslc run` (GPU):
//! one set of launch flags runs a kernel on either, so that the two can be
//! compared (`--check-sim`); a launch that contradicts the kernel's
//! attributes or a value that does not fit its parameter is a usage error
//! (exit 2) naming the flag, the attribute or the parameter.
//!
//! This module owns the data that crosses from the command line to an
//! executor and back:
//!
//! ```text
//!  --grid/--block/--cluster/--arg ──▶ Launch (shapes + ArgValue per parameter)
//!                                        │
//!                       sim::run / gpu::run (the executors)
//!                                        ▼
//!                 the writable Arrays after the run ──▶ --out DIR/NAME.npy, --dump
//! ```
//!
//! Users' documentation: `docs/cli.md` (the launch interface) and
//! `docs/run.md`.
//!
//! A kernel's [`KernelSignature`] comes either from the kdsl IR (typed
//! pointers) or from a PTX `.entry` (untyped `.u64` parameters, where the
//! `--arg` value's type prefix decides). Executors never parse the command
//! line and the command line never looks inside an executor.
//!
//! The files, by concern:
//! - `shape`: `--grid/--block/--cluster`, attributes and hardware limits;
//! - `literal`: scalar literals; `value`: every `--arg` form;
//!   `random`: `rand:N:SEED`; `npy`: NumPy files in and out;
//! - `tensor`: tensor-map arguments (element types, swizzles, the `tmap:`
//!   form, the rules of `cuTensorMapEncodeTiled`);
//! - `resolve`: request + signature → [`Launch`] (the one entry point);
//! - `signature`: a kdsl kernel's [`KernelSignature`] and [`DynamicLayout`];
//! - `dump`: `--dump`; `compare`: `--check-sim`;
//! - `error`: every usage error's wording.

mod bytes;
pub mod compare;
pub mod consts;
pub mod dump;
mod error;
pub mod literal;
pub mod memory;
pub mod npy;
pub mod random;
mod resolve;
pub mod shape;
pub mod signature;
pub mod tensor;
pub mod value;

pub use error::LaunchError;
pub use resolve::{build, select_kernel, ArgKey, ArgSpec, Request};
pub use tensor::{OobFill, Swizzle, TensorElem, TensorMapSig};

use crate::types::Scalar;

/// Where a kernel signature came from, which decides how its attributes
/// are named in messages (`block(256)` or `.reqntid 256, 1, 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    Kdsl,
    Ptx,
}

/// What a kernel expects at launch, from the kdsl IR or from a PTX `.entry`.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSignature {
    pub name: String,
    pub params: Vec<ParamSig>,
    /// `block(...)` / `.reqntid`: the launch's block shape must equal it.
    pub reqntid: Option<[u32; 3]>,
    /// `.maxntid` (nvcc's `__launch_bounds__`): the block may not exceed it.
    pub maxntid: Option<[u32; 3]>,
    /// `cluster(...)` / `.reqnctapercluster`.
    pub cluster: Option<[u32; 3]>,
    /// The dynamic shared memory every launch must give, when the compiler
    /// knows it (a kdsl kernel: 0 unless its shared declarations exceed
    /// 48 KiB); `None` for a PTX `.entry`, whose launch takes
    /// `--shared-bytes` (0 without it).
    pub dynamic_shared: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParamSig {
    /// The kdsl parameter name, or the PTX `.param` name.
    pub name: String,
    pub kind: ParamKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A scalar parameter of this type.
    Scalar(Scalar),
    /// A `global [T]` / `global mut [T]` parameter (kdsl input).
    Array { elem: Scalar, writable: bool },
    /// A PTX `.param .u64`/`.b64`/`.s64`: a pointer when its `--arg` value is
    /// an array form with a type prefix (`f32:iota:1000`, then writable), a
    /// 64-bit scalar when it is a plain literal, a pointer to a tensor map
    /// in global memory (fast.cu's `const CUtensorMap*`) for a `tmap:`
    /// form.
    PtxU64,
    /// A kdsl tensor parameter: its map's compile-time fields. Its `--arg`
    /// value is an array form whose shape gives the tensor's dimensions.
    TensorMap(TensorMapSig),
    /// A PTX `.param .align 64 .b8 NAME[128]` (`__grid_constant__
    /// CUtensorMap`): a tensor map passed by value, given as
    /// `tmap:TYPE:ARRAY:box=...` (or, as a struct of 128 bytes, the forms
    /// of [`ParamKind::PtxBytes`]).
    PtxTensorMap,
    /// A PTX `.param {.align A} .b8 NAME[N]` of another size: a struct
    /// passed by value, given as its bytes (`bytes:@FILE`, `bytes:[...]`)
    /// or its fields (`struct:f32=1.5,u32=7`).
    PtxBytes { size: u32 },
}

/// How a kdsl kernel placed in dynamic shared memory carves it up: a fact
/// of the compiled kernel (`ir::layout`, read by
/// [`signature::dynamic_layout`]) that an executor may use. The GPU needs
/// only [`DynamicLayout::bytes`] (also in [`KernelSignature::dynamic_shared`]);
/// the simulator names each declaration and checks its bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicLayout {
    /// The bytes every launch must give.
    pub bytes: u32,
    /// The declarations, in increasing offset.
    pub vars: Vec<DynamicVar>,
}

/// One kdsl declaration inside the dynamic shared memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicVar {
    /// Its PTX symbol (`$s_stage`, `$b_full`: `ptx::names`), which reports
    /// show as the kdsl name.
    pub name: String,
    /// The byte offset from the start of the dynamic shared memory.
    pub offset: u32,
    pub size: u32,
    /// Element size: barriers are named by index (`full[1]`), array bytes
    /// by element.
    pub elem: u32,
    /// The declaration in the `.kdsl` source.
    pub span: Option<crate::span::Span>,
}

/// A fully resolved launch: shapes and one value per parameter, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// `[1, 1, 1]` for a kernel without a cluster.
    pub cluster: [u32; 3],
    /// Bytes of dynamic shared memory per CTA (`sharedMemBytes`).
    pub dynamic_shared: u32,
    pub args: Vec<ArgValue>,
    /// A cooperative launch (`cudaLaunchCooperativeKernel`): every CTA
    /// of the grid is resident at once, and cooperative groups' grid
    /// workspace exists, so `grid.sync()` works.
    pub cooperative: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// A scalar: its bits, zero-extended to 64 (floats as their IEEE bits,
    /// `bool` as 0/1).
    Scalar { ty: Scalar, bits: u64 },
    /// An array in global memory.
    Array(Array),
    /// A tensor map: the tensor's data (`array.name` is the parameter's
    /// name; written back like a writable array when the map is
    /// writable), its dimensions and byte strides (outermost first;
    /// `strides` has one fewer), and the map's compile-time fields.
    TensorMap {
        array: Array,
        dims: Vec<u64>,
        strides: Vec<u64>,
        map: TensorMapSig,
    },
    /// The bytes of a parameter passed by value (a struct: `bytes:`,
    /// `struct:`), exactly as many as the parameter has.
    Bytes(Vec<u8>),
}

/// One global-memory array argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The parameter name: `--out DIR` writes `DIR/NAME.npy`.
    pub name: String,
    pub elem: Scalar,
    /// The elements, little-endian, `len * elem.size()` bytes.
    pub data: Vec<u8>,
    /// Written back after the run (`global mut`, or any array of a PTX input).
    pub writable: bool,
}

impl Array {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len() / self.elem.size().max(1) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

impl ArgValue {
    /// The array, for an array argument or a tensor map's.
    pub fn as_array(&self) -> Option<&Array> {
        match self {
            ArgValue::Array(a) | ArgValue::TensorMap { array: a, .. } => Some(a),
            ArgValue::Scalar { .. } | ArgValue::Bytes(_) => None,
        }
    }
}

impl Launch {
    /// The array arguments (tensor maps' arrays included), in parameter
    /// order.
    pub fn arrays(&self) -> impl Iterator<Item = &Array> {
        self.args.iter().filter_map(ArgValue::as_array)
    }

    /// The shape `--out` gives the array named `name`: a tensor's
    /// dimensions, else one dimension.
    pub fn shape_of(&self, name: &str) -> Option<&[u64]> {
        self.args.iter().find_map(|a| match a {
            ArgValue::TensorMap { array, dims, .. } if array.name == name => Some(dims.as_slice()),
            _ => None,
        })
    }
}

/// Checks `--dump` names against a launch of `sig`: each must name one of
/// its array arguments.
pub fn check_dumps(
    sig: &KernelSignature,
    launch: &Launch,
    names: &[String],
) -> Result<(), LaunchError> {
    for name in names {
        if launch.arrays().any(|a| &a.name == name) {
            continue;
        }
        let arrays: Vec<String> = launch.arrays().map(|a| format!("`{}`", a.name)).collect();
        let scalar = sig.params.iter().any(|p| &p.name == name);
        let why = if scalar {
            format!(
                "`{name}` is a scalar argument, and --dump prints arrays{}",
                if arrays.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", arrays.join(", "))
                }
            )
        } else if arrays.is_empty() {
            format!("kernel `{}` has no array arguments", launch.kernel)
        } else {
            format!(
                "no array argument of kernel `{}` has that name (they are {})",
                launch.kernel,
                arrays.join(", ")
            )
        };
        return Err(LaunchError::BadDump {
            name: name.clone(),
            why,
        });
    }
    Ok(())
}
