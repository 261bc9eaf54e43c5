//! From the launch flags and a kernel's signature to a [`Launch`]: the one
//! function `kdslc sim` and `kdslc run` both call.

use super::error::LaunchError;
use super::shape::{self, Dims};
use super::value::{self, kind_name};
use super::{ArgValue, KernelSignature, Launch, Origin};
use std::str::FromStr;

/// How an `--arg` names its parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgKey {
    Name(String),
    /// `--arg 0=...`: counted from 0 in declaration order.
    Position(usize),
}

/// One `--arg KEY=VALUE`, not yet checked against a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgSpec {
    pub key: ArgKey,
    pub value: String,
}

impl FromStr for ArgSpec {
    type Err = String;

    /// `NAME=VALUE` or `POSITION=VALUE` (the value may contain `=`).
    fn from_str(s: &str) -> Result<ArgSpec, String> {
        let Some((key, value)) = s.split_once('=') else {
            return Err(format!(
                "`{s}` has no `=`; write NAME=VALUE or POSITION=VALUE, as in `n=1024` or `0=1024`"
            ));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!(
                "`{s}` names no parameter before `=`; write NAME=VALUE or POSITION=VALUE"
            ));
        }
        let key = if key.bytes().all(|b| b.is_ascii_digit()) {
            ArgKey::Position(
                key.parse()
                    .map_err(|_| format!("`{key}` is not a parameter position"))?,
            )
        } else {
            ArgKey::Name(key.to_string())
        };
        Ok(ArgSpec {
            key,
            value: value.to_string(),
        })
    }
}

/// The launch flags, parsed but not yet checked against a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub grid: Dims,
    pub block: Option<Dims>,
    pub cluster: Option<Dims>,
    pub args: Vec<ArgSpec>,
    /// `--shared-bytes N`: the dynamic shared memory of a PTX kernel's
    /// launch (kdsl kernels get theirs from the compiler).
    pub shared_bytes: Option<u32>,
    /// Where the signature came from, for naming its attributes.
    pub origin: Origin,
    /// `--cooperative`.
    pub cooperative: bool,
}

/// The kernel to launch: `--kernel NAME`, or the only one.
pub fn select_kernel<'a>(
    kernels: &'a [KernelSignature],
    wanted: Option<&str>,
) -> Result<&'a KernelSignature, LaunchError> {
    let names = || kernels.iter().map(|k| k.name.clone()).collect::<Vec<_>>();
    match wanted {
        Some(name) => {
            kernels
                .iter()
                .find(|k| k.name == name)
                .ok_or_else(|| LaunchError::UnknownKernel {
                    name: name.to_string(),
                    known: names(),
                })
        }
        None => match kernels {
            [] => Err(LaunchError::NoKernels),
            [only] => Ok(only),
            _ => Err(LaunchError::KernelRequired { known: names() }),
        },
    }
}

/// Builds the launch of `sig` that `req` asks for: shapes resolved and
/// checked, one value per parameter in declaration order. Every problem is
/// a usage error; the missing parameters are listed together.
pub fn build(sig: &KernelSignature, req: &Request) -> Result<Launch, LaunchError> {
    let shapes = shape::resolve(sig, req.origin, req.grid, req.block, req.cluster)?;
    let dynamic_shared = dynamic_shared(sig, req.shared_bytes)?;
    let mut given: Vec<Option<&str>> = vec![None; sig.params.len()];
    for spec in &req.args {
        let index = match &spec.key {
            ArgKey::Name(name) => {
                sig.params
                    .iter()
                    .position(|p| &p.name == name)
                    .ok_or_else(|| LaunchError::UnknownParam {
                        kernel: sig.name.clone(),
                        name: name.clone(),
                        params: sig.params.iter().map(|p| p.name.clone()).collect(),
                    })?
            }
            ArgKey::Position(i) => {
                if *i >= sig.params.len() {
                    return Err(LaunchError::PositionOutOfRange {
                        kernel: sig.name.clone(),
                        position: *i,
                        count: sig.params.len(),
                    });
                }
                *i
            }
        };
        let (Some(slot), Some(param)) = (given.get_mut(index), sig.params.get(index)) else {
            continue;
        };
        if slot.is_some() {
            return Err(LaunchError::Duplicate {
                param: param.name.clone(),
            });
        }
        *slot = Some(spec.value.as_str());
    }
    let missing: Vec<(String, String)> = sig
        .params
        .iter()
        .zip(&given)
        .filter(|(_, g)| g.is_none())
        .map(|(p, _)| (p.name.clone(), kind_name(p.kind)))
        .collect();
    if !missing.is_empty() {
        return Err(LaunchError::Missing {
            kernel: sig.name.clone(),
            missing,
        });
    }
    let args = sig
        .params
        .iter()
        .zip(given)
        .map(|(p, text)| value::parse(p, text.unwrap_or("")))
        .collect::<Result<Vec<ArgValue>, LaunchError>>()?;
    Ok(Launch {
        kernel: sig.name.clone(),
        grid: shapes.grid,
        block: shapes.block,
        cluster: shapes.cluster,
        dynamic_shared,
        args,
        cooperative: req.cooperative,
    })
}

/// The launch's dynamic shared memory: what the compiler computed for a
/// kdsl kernel (`--shared-bytes` cannot change it), `--shared-bytes` or 0
/// for a PTX one.
fn dynamic_shared(sig: &KernelSignature, given: Option<u32>) -> Result<u32, LaunchError> {
    match (sig.dynamic_shared, given) {
        (Some(needed), Some(given)) => Err(LaunchError::SharedBytesKnown {
            kernel: sig.name.clone(),
            given,
            needed,
        }),
        (Some(needed), None) => Ok(needed),
        (None, given) => Ok(given.unwrap_or(0)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{Array, ParamKind, ParamSig};
    use crate::types::Scalar;

    fn saxpy() -> KernelSignature {
        let p = |name: &str, kind| ParamSig {
            name: name.into(),
            kind,
        };
        KernelSignature {
            name: "saxpy".into(),
            params: vec![
                p("a", ParamKind::Scalar(Scalar::F32)),
                p(
                    "x",
                    ParamKind::Array {
                        elem: Scalar::F32,
                        writable: false,
                    },
                ),
                p(
                    "y",
                    ParamKind::Array {
                        elem: Scalar::F32,
                        writable: true,
                    },
                ),
                p("n", ParamKind::Scalar(Scalar::U32)),
            ],
            reqntid: Some([256, 1, 1]),
            maxntid: None,
            cluster: None,
            dynamic_shared: Some(0),
        }
    }

    fn req(args: &[&str]) -> Request {
        Request {
            grid: [4, 1, 1],
            block: None,
            cluster: None,
            args: args.iter().map(|a| a.parse().unwrap()).collect(),
            shared_bytes: None,
            origin: Origin::Kdsl,
            cooperative: false,
        }
    }

    #[test]
    fn arg_specs() {
        assert_eq!(
            "n=1024".parse(),
            Ok(ArgSpec {
                key: ArgKey::Name("n".into()),
                value: "1024".into()
            })
        );
        assert_eq!(
            "3=a=b".parse(),
            Ok(ArgSpec {
                key: ArgKey::Position(3),
                value: "a=b".into()
            })
        );
        assert_eq!(
            "n".parse::<ArgSpec>().unwrap_err(),
            "`n` has no `=`; write NAME=VALUE or POSITION=VALUE, as in `n=1024` or `0=1024`"
        );
        assert_eq!(
            "=4".parse::<ArgSpec>().unwrap_err(),
            "`=4` names no parameter before `=`; write NAME=VALUE or POSITION=VALUE"
        );
        assert!("99999999999999999999999=1".parse::<ArgSpec>().is_err());
    }

    #[test]
    fn by_name_and_by_position() {
        let l = build(&saxpy(), &req(&["a=2", "1=iota:4", "y=zeros:4", "3=4"])).unwrap();
        assert_eq!(l.kernel, "saxpy");
        assert_eq!(
            (l.grid, l.block, l.cluster),
            ([4, 1, 1], [256, 1, 1], [1, 1, 1])
        );
        assert_eq!(
            l.args[0],
            ArgValue::Scalar {
                ty: Scalar::F32,
                bits: u64::from(2f32.to_bits())
            }
        );
        let ArgValue::Array(Array { name, writable, .. }) = &l.args[2] else {
            panic!()
        };
        assert_eq!((name.as_str(), *writable), ("y", true));
        assert_eq!(
            l.args[3],
            ArgValue::Scalar {
                ty: Scalar::U32,
                bits: 4
            }
        );
    }

    #[test]
    fn argument_errors() {
        let e = |args: &[&str]| build(&saxpy(), &req(args)).unwrap_err().to_string();
        assert_eq!(
            e(&["a=1"]),
            "kernel `saxpy` needs a value for `x` (global [f32]), `y` (global mut [f32]), `n` (u32); give each with `--arg NAME=VALUE`"
        );
        assert_eq!(
            e(&["a=1", "x=zeros:1", "y=zeros:1"]),
            "kernel `saxpy` needs a value for `n` (u32); give it with `--arg NAME=VALUE`"
        );
        assert_eq!(
            e(&["m=1"]),
            "kernel `saxpy` has no parameter `m` (its parameters: `a`, `x`, `y`, `n`; or give a position, `--arg 0=...`)"
        );
        assert_eq!(
            e(&["yy=1"]),
            "kernel `saxpy` has no parameter `yy`; did you mean `y`? (its parameters: `a`, `x`, `y`, `n`; or give a position, `--arg 0=...`)"
        );
        assert_eq!(
            e(&["4=1"]),
            "`--arg 4=...`: kernel `saxpy` has 4 parameters, numbered from 0"
        );
        assert_eq!(
            e(&["a=1", "0=2"]),
            "parameter `a` is given twice (by name or position)"
        );
        assert_eq!(
            e(&["a=1", "x=zeros:1", "y=zeros:1", "n=-4"]),
            "invalid value for `n` (u32): `-4` is out of range for u32 (0 to 4294967295)"
        );
        // Shapes are checked first.
        let mut r = req(&[]);
        r.block = Some([128, 1, 1]);
        assert_eq!(
            build(&saxpy(), &r).unwrap_err().to_string(),
            "`--block 128` contradicts the kernel's `block(256)`; leave `--block` out to use it"
        );
    }

    #[test]
    fn dynamic_shared_memory_is_the_compilers_or_the_flags() {
        let args = ["a=1", "x=zeros:4", "y=zeros:4", "n=4"];
        // A kdsl kernel: the compiler's bytes; `--shared-bytes` is refused,
        // even when it agrees.
        let mut k = saxpy();
        k.dynamic_shared = Some(65_664);
        assert_eq!(build(&k, &req(&args)).unwrap().dynamic_shared, 65_664);
        let mut r = req(&args);
        r.shared_bytes = Some(65_664);
        assert_eq!(
            build(&k, &r).unwrap_err().to_string(),
            "`--shared-bytes 65664` is for a .ptx input: kdslc lays out the shared memory of kernel `saxpy` itself (65664 bytes of dynamic shared memory); leave `--shared-bytes` out"
        );
        k.dynamic_shared = Some(0);
        assert!(build(&k, &r)
            .unwrap_err()
            .to_string()
            .contains("(static, no dynamic shared memory)"));
        // A PTX kernel: the flag, or nothing.
        k.dynamic_shared = None;
        assert_eq!(build(&k, &r).unwrap().dynamic_shared, 65_664);
        assert_eq!(build(&k, &req(&args)).unwrap().dynamic_shared, 0);
    }

    #[test]
    fn a_kernel_without_parameters() {
        let k = KernelSignature {
            name: "k".into(),
            params: vec![],
            reqntid: None,
            maxntid: None,
            cluster: None,
            dynamic_shared: Some(0),
        };
        let mut r = req(&["0=1"]);
        r.block = Some([32, 1, 1]);
        assert_eq!(
            build(&k, &r).unwrap_err().to_string(),
            "`--arg 0=...`: kernel `k` has 0 parameters, numbered from 0"
        );
        let mut r = req(&["x=1"]);
        r.block = Some([32, 1, 1]);
        assert_eq!(
            build(&k, &r).unwrap_err().to_string(),
            "kernel `k` has no parameter `x` (it takes no parameters)"
        );
        r.args.clear();
        assert!(build(&k, &r).unwrap().args.is_empty());
    }

    #[test]
    fn choosing_the_kernel() {
        let a = saxpy();
        let mut b = saxpy();
        b.name = "scale".into();
        let one = [a.clone()];
        let two = [a, b];
        assert_eq!(select_kernel(&one, None).unwrap().name, "saxpy");
        assert_eq!(select_kernel(&two, Some("scale")).unwrap().name, "scale");
        assert_eq!(
            select_kernel(&two, None).unwrap_err().to_string(),
            "the module has 2 kernels, so `--kernel NAME` must say which to launch: `saxpy`, `scale`"
        );
        assert_eq!(
            select_kernel(&two, Some("saxpi")).unwrap_err().to_string(),
            "no kernel `saxpi` in the module; did you mean `saxpy`? (its kernels: `saxpy`, `scale`)"
        );
        assert_eq!(
            select_kernel(&[], None).unwrap_err().to_string(),
            "the module has no kernel to launch"
        );
    }
}
