//! Everything that can be wrong with a launch request, and its wording: a
//! usage error (exit 2) that names the flag, the parameter or the kernel
//! attribute at fault.

use super::shape::Dims;
use std::fmt;

/// Why a launch request cannot become a [`super::Launch`].
#[derive(Clone, Debug, PartialEq)]
pub enum LaunchError {
    /// The module has no kernel at all.
    NoKernels,
    /// `--kernel NAME` names no kernel of the module.
    UnknownKernel { name: String, known: Vec<String> },
    /// The module has several kernels and `--kernel` was not given.
    KernelRequired { known: Vec<String> },
    /// No `--block` and no `block(...)`/`.reqntid` to take it from
    /// (`maxntid`: the kernel's `.maxntid`, a bound and not a shape).
    NoBlock {
        kernel: String,
        maxntid: Option<[u32; 3]>,
    },
    /// `--block`/`--cluster` contradicts the kernel's attribute.
    Contradicts {
        flag: &'static str,
        given: Dims,
        /// The attribute as written in the source: `block(256)`,
        /// `.reqntid 256, 1, 1`.
        attribute: String,
    },
    /// A shape with a dimension of 0 (only from a [`super::Launch`] built
    /// in a program: the flags refuse one as they are parsed).
    Empty { flag: &'static str, given: Dims },
    /// A launch attribute of the kernel with a dimension of 0
    /// (`.reqnctapercluster 0, 1, 1`, which ptxas accepts): no launch
    /// fits it.
    EmptyAttribute { attribute: String },
    /// A shape beyond what the hardware launches.
    Limit {
        flag: &'static str,
        given: Dims,
        why: String,
    },
    /// The grid is not a whole number of clusters.
    GridNotClusters {
        grid: Dims,
        cluster: Dims,
        axis: char,
    },
    /// `--arg NAME=...` with no parameter NAME.
    UnknownParam {
        kernel: String,
        name: String,
        params: Vec<String>,
    },
    /// `--arg N=...` past the last parameter.
    PositionOutOfRange {
        kernel: String,
        position: usize,
        count: usize,
    },
    /// Two `--arg`s for one parameter.
    Duplicate { param: String },
    /// Parameters with no `--arg`: name and type of each.
    Missing {
        kernel: String,
        missing: Vec<(String, String)>,
    },
    /// A value that does not suit its parameter.
    BadValue {
        param: String,
        /// The parameter's type, as the user wrote it (`u32`,
        /// `global mut [f32]`).
        ty: String,
        why: String,
    },
    /// `--dump NAME` names no array parameter.
    BadDump { name: String, why: String },
    /// `--shared-bytes` for a kdsl kernel, whose dynamic shared memory the
    /// compiler knows (`needed` bytes).
    SharedBytesKnown {
        kernel: String,
        given: u32,
        needed: u32,
    },
}

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LaunchError::NoKernels => f.write_str("the module has no kernel to launch"),
            LaunchError::UnknownKernel { name, known } => {
                write!(f, "no kernel `{name}` in the module")?;
                if let Some(s) = suggest(name, known) {
                    write!(f, "; did you mean `{s}`?")?;
                }
                write!(f, " (its kernels: {})", list(known))
            }
            LaunchError::KernelRequired { known } => write!(
                f,
                "the module has {} kernels, so `--kernel NAME` must say which to launch: {}",
                known.len(),
                list(known)
            ),
            LaunchError::NoBlock { kernel, maxntid } => {
                write!(
                    f,
                    "`--block X[,Y[,Z]]` is required: kernel `{kernel}` declares no block shape"
                )?;
                if let Some([x, y, z]) = maxntid {
                    write!(
                        f,
                        " (its `.maxntid {x}, {y}, {z}` is only an upper bound, as from `__launch_bounds__`)"
                    )?;
                }
                Ok(())
            }
            LaunchError::Contradicts {
                flag,
                given,
                attribute,
            } => write!(
                f,
                "`--{flag} {}` contradicts the kernel's `{attribute}`; leave `--{flag}` out to use it",
                dims_flag(*given)
            ),
            LaunchError::Empty { flag, given } => write!(
                f,
                "`--{flag} {}` has a dimension of 0: every dimension is at least 1",
                dims_flag(*given)
            ),
            LaunchError::EmptyAttribute { attribute } => write!(
                f,
                "the kernel's `{attribute}` has a dimension of 0: no launch fits it (every dimension is at least 1)"
            ),
            LaunchError::Limit { flag, given, why } => {
                write!(f, "`--{flag} {}` is too large: {why}", dims_flag(*given))
            }
            LaunchError::GridNotClusters {
                grid,
                cluster,
                axis,
            } => write!(
                f,
                "the grid {} is not a whole number of clusters {}: {axis} = {} is not a multiple of {}",
                dims_tuple(*grid),
                dims_tuple(*cluster),
                axis_of(*grid, *axis),
                axis_of(*cluster, *axis)
            ),
            LaunchError::UnknownParam {
                kernel,
                name,
                params,
            } => {
                write!(f, "kernel `{kernel}` has no parameter `{name}`")?;
                if let Some(s) = suggest(name, params) {
                    write!(f, "; did you mean `{s}`?")?;
                }
                if params.is_empty() {
                    f.write_str(" (it takes no parameters)")
                } else {
                    write!(
                        f,
                        " (its parameters: {}; or give a position, `--arg 0=...`)",
                        list(params)
                    )
                }
            }
            LaunchError::PositionOutOfRange {
                kernel,
                position,
                count,
            } => write!(
                f,
                "`--arg {position}=...`: kernel `{kernel}` has {}, numbered from 0",
                crate::diagnostics::plural(*count, "parameter")
            ),
            LaunchError::Duplicate { param } => {
                write!(f, "parameter `{param}` is given twice (by name or position)")
            }
            LaunchError::Missing { kernel, missing } => {
                let items: Vec<String> = missing
                    .iter()
                    .map(|(n, t)| format!("`{n}` ({t})"))
                    .collect();
                write!(
                    f,
                    "kernel `{kernel}` needs a value for {}; give {} with `--arg NAME=VALUE`",
                    items.join(", "),
                    if missing.len() == 1 { "it" } else { "each" }
                )
            }
            LaunchError::BadValue { param, ty, why } => {
                write!(f, "invalid value for `{param}` ({ty}): {why}")
            }
            LaunchError::BadDump { name, why } => write!(f, "`--dump {name}`: {why}"),
            LaunchError::SharedBytesKnown {
                kernel,
                given,
                needed,
            } => {
                write!(
                    f,
                    "`--shared-bytes {given}` is for a .ptx input: kdslc lays out the shared memory of kernel `{kernel}` itself ("
                )?;
                if *needed == 0 {
                    f.write_str("static, no dynamic shared memory)")?;
                } else {
                    write!(f, "{needed} bytes of dynamic shared memory)")?;
                }
                f.write_str("; leave `--shared-bytes` out")
            }
        }
    }
}

impl std::error::Error for LaunchError {}

/// `256,1,1` → `256` and `16,16,1` → `16,16` as a user would type them.
pub fn dims_flag(d: Dims) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x},{y}"),
        [x, y, z] => format!("{x},{y},{z}"),
    }
}

/// `(256, 1, 1)`.
pub fn dims_tuple(d: Dims) -> String {
    format!("({}, {}, {})", d[0], d[1], d[2])
}

fn axis_of(d: Dims, axis: char) -> u32 {
    match axis {
        'x' => d[0],
        'y' => d[1],
        _ => d[2],
    }
}

fn list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(", ")
}

/// The closest name, if it is close enough to be a likely typo.
fn suggest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k.as_str())
}
