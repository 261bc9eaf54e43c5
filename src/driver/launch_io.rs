//! What `kdslc sim` and `kdslc run` share around the executor: reading the
//! input (a `.kdsl` file compiled in process, or a `.ptx` module), turning
//! the launch flags into a [`Launch`], and the outputs (`--out DIR` as
//! `.npy` files, `--dump`), written only after a run that completed.

use super::build::{cannot_read, compile, options};
use super::cli::{LaunchArgs, MessageFormat};
use super::output::{self, Staged};
use super::report::Reporter;
use super::{engine, Fail};
use crate::input::io_reason;
use crate::launch::{
    self, dump, npy, signature, Array, KernelSignature, Launch, LaunchError, Origin, Request,
};
use crate::source::{SourceFile, SourceMap};
use crate::span::Span;
use std::path::{Path, PathBuf};

/// A program ready to launch: its PTX, where each line came from, and the
/// signature of each kernel.
#[derive(Debug)]
pub(crate) struct Input {
    pub path: PathBuf,
    /// What reports are shown against: the compilation's files, or the
    /// `.ptx` file itself.
    pub sources: SourceMap,
    pub ptx: String,
    /// For `.kdsl` input, the source span of each PTX line; empty for
    /// `.ptx` input (which carries `.loc` lines if it has line info).
    pub line_spans: Vec<Option<Span>>,
    pub origin: Origin,
    pub signatures: Vec<KernelSignature>,
    /// For `.kdsl` input, each kernel placed in dynamic shared memory with
    /// its declarations (for the simulator's bounds and reports).
    pub dynamic_layouts: Vec<(String, crate::launch::DynamicLayout)>,
    /// For `.kdsl` input, each instantiation of a kernel with constants:
    /// its `.entry` name and the kernel's (`--kernel gemm` selects it).
    pub instances: Vec<(String, String)>,
}

/// `FILE.ptx` (any case) is PTX; anything else is kdsl.
pub(crate) fn is_ptx(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ptx"))
}

/// Reads and, for `.kdsl`, compiles the input (reporting its diagnostics).
pub(crate) fn load(args: &LaunchArgs, reporter: &mut Reporter) -> Result<Input, Fail> {
    let path = args.file.clone();
    if is_ptx(&path) {
        // The same rules as for a `.kdsl` source: a regular file of bounded
        // size, so that a FIFO or `/dev/zero` cannot hang or exhaust us.
        let decoded = crate::input::read_source(&path).map_err(|e| cannot_read(&path, &e))?;
        if let Some(bad) = decoded.bad_utf8 {
            return Err(Fail::Usage(format!(
                "cannot read `{}`: not UTF-8 text (byte {:#x} at offset {})",
                path.display(),
                bad.bytes.first().copied().unwrap_or(0),
                bad.offset
            )));
        }
        let text = decoded.text;
        let mut sources = SourceMap::new();
        sources.add(SourceFile::new(
            path.display().to_string(),
            Some(path.clone()),
            text.clone(),
        ));
        let signatures = engine::ptx_signatures(&text, &mut sources, reporter)?;
        return Ok(Input {
            path,
            sources,
            ptx: text,
            line_spans: Vec::new(),
            origin: Origin::Ptx,
            signatures,
            dynamic_layouts: Vec::new(),
            instances: Vec::new(),
        });
    }
    let mut opts = options(&args.common, false)?;
    // `--kernel gemm__BM_64` compiles that instantiation.
    opts.entries.extend(args.kernel.clone());
    let c = compile(&path, &opts, reporter)?;
    let (Some(module), Some(ptx)) = (c.module.as_ref(), c.ptx.clone()) else {
        return Err(Fail::Internal(
            "the compiler reported no errors but produced no PTX".to_string(),
        ));
    };
    let instances = module
        .kernels
        .iter()
        .filter_map(|k| Some((k.name.clone(), k.instance.as_ref()?.kernel.clone())))
        .collect();
    Ok(Input {
        signatures: signature::of_module(module),
        dynamic_layouts: signature::dynamic_layouts(module),
        instances,
        path,
        ptx,
        line_spans: c.ptx_line_spans,
        sources: c.sources,
        origin: Origin::Kdsl,
    })
}

/// The launch the flags ask for, checked; every problem is a usage error
/// found before anything runs.
pub(crate) fn prepare(args: &LaunchArgs, input: &Input) -> Result<Launch, Fail> {
    let usage = |e: LaunchError| Fail::Usage(e.to_string());
    let wanted = wanted_entry(args.kernel.as_deref(), input)?;
    let sig = launch::select_kernel(&input.signatures, wanted).map_err(usage)?;
    let request = Request {
        grid: args.grid,
        block: args.block,
        cluster: args.cluster,
        args: args.args.clone(),
        shared_bytes: args.shared_bytes,
        origin: input.origin,
        cooperative: args.cooperative,
    };
    let l = launch::build(sig, &request).map_err(usage)?;
    launch::check_dumps(sig, &l, &args.dump).map_err(usage)?;
    if let Some(dir) = &args.out {
        if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
            return Err(Fail::Usage(format!(
                "`--out {}`: it exists and is not a folder",
                dir.display()
            )));
        }
        no_output_replaces_an_input(args, input, &l, dir)?;
    }
    Ok(l)
}

/// The `.entry` `--kernel NAME` means: `NAME` itself, or where `NAME` is a
/// kernel with constants that is no `.entry`, its one instantiation
/// compiled (a usage error when there are several).
fn wanted_entry<'a>(wanted: Option<&'a str>, input: &'a Input) -> Result<Option<&'a str>, Fail> {
    let Some(name) = wanted else {
        return Ok(None);
    };
    if input.signatures.iter().any(|s| s.name == name) {
        return Ok(Some(name));
    }
    let entries: Vec<&str> = input
        .instances
        .iter()
        .filter(|(_, kernel)| kernel == name)
        .map(|(entry, _)| entry.as_str())
        .collect();
    match entries.as_slice() {
        [] => Ok(Some(name)),
        [one] => Ok(Some(one)),
        many => Err(Fail::Usage(format!(
            "kernel `{name}` has {} instantiations here ({}): name one with `--kernel`, or give its constants' values with `--const`",
            many.len(),
            many.iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Refuses, before anything runs, an `--out` file that is an input: the
/// kernel's file or a file an `--arg` reads (`--arg x=@x.npy --out .`
/// would replace `x.npy` with the kernel's result).
fn no_output_replaces_an_input(
    args: &LaunchArgs,
    input: &Input,
    launch: &Launch,
    dir: &Path,
) -> Result<(), Fail> {
    let inputs: Vec<&Path> = std::iter::once(input.path.as_path())
        .chain(
            args.args
                .iter()
                .filter_map(|a| crate::launch::value::input_file(&a.value)),
        )
        .collect();
    for a in launch.arrays().filter(|a| a.writable) {
        let out = dir.join(format!("{}.npy", a.name));
        if let Some(i) = inputs.iter().find(|i| super::build::same_file(i, &out)) {
            return Err(Fail::Usage(format!(
                "`--out {}` would replace the input `{}` with the array `{}`; write the outputs to another folder",
                dir.display(),
                i.display(),
                a.name
            )));
        }
    }
    Ok(())
}

/// The array arguments after a run: each writable one as the executor
/// returned it (moved, not copied), each read-only one as it was given.
pub(crate) fn results(launch: &Launch, returned: Vec<Array>) -> Result<Vec<Array>, Fail> {
    let mut returned: Vec<Option<Array>> = returned.into_iter().map(Some).collect();
    launch
        .arrays()
        .map(|a| {
            if !a.writable {
                return Ok(a.clone());
            }
            returned
                .iter_mut()
                .find(|r| r.as_ref().is_some_and(|r| r.name == a.name))
                .and_then(Option::take)
                .ok_or_else(|| {
                    Fail::Internal(format!(
                        "the run returned no array `{}` of kernel `{}`",
                        a.name, launch.kernel
                    ))
                })
        })
        .collect()
}

/// `--out` and `--dump` after a run that completed.
pub(crate) fn write_outputs(
    args: &LaunchArgs,
    launch: &Launch,
    arrays: &[Array],
) -> Result<(), Fail> {
    if let Some(dir) = &args.out {
        write_npy_files(dir, arrays, |name| launch.shape_of(name))?;
    }
    let names: Vec<&str> = if args.dump.is_empty() && args.dump_all {
        arrays
            .iter()
            .filter(|a| a.writable)
            .map(|a| a.name.as_str())
            .collect()
    } else {
        args.dump.iter().map(String::as_str).collect()
    };
    let json = args.common.message_format == MessageFormat::Json;
    let text = dump_text(&names, arrays, args.dump_all, json)?;
    if !text.is_empty() {
        output::write_stdout(text.as_bytes())?;
    }
    Ok(())
}

/// Every writable array as `DIR/NAME.npy` (the folder created if needed),
/// a tensor with its shape (`shape`), any other array one-dimensional.
/// The files are all staged, and every destination checked, before any is
/// put in place; a failure while they are put in place restores those
/// already replaced ([`output::commit_all`]): all outputs or none.
fn write_npy_files<'a>(
    dir: &Path,
    arrays: &[Array],
    shape: impl Fn(&str) -> Option<&'a [u64]>,
) -> Result<(), Fail> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Fail::Usage(format!(
            "cannot create `{}`: {}",
            dir.display(),
            io_reason(&e)
        ))
    })?;
    let mut staged = Vec::new();
    for a in arrays.iter().filter(|a| a.writable) {
        let bytes = match shape(&a.name) {
            Some(dims) => npy::write_shaped(a.elem, &a.data, dims),
            None => npy::write(a.elem, &a.data),
        }
        .map_err(|e| Fail::Internal(format!("cannot encode `{}` as .npy: {e}", a.name)))?;
        let mut file = Staged::new(&dir.join(format!("{}.npy", a.name)))?;
        file.write_all(&bytes)?;
        staged.push(file);
    }
    output::commit_all(staged)
}

/// The `--dump` text of the arrays named, in order.
fn dump_text(names: &[&str], arrays: &[Array], full: bool, json: bool) -> Result<String, Fail> {
    let mut text = String::new();
    for name in names {
        let Some(a) = arrays.iter().find(|a| a.name == *name) else {
            return Err(Fail::Internal(format!("no array `{name}` to dump")));
        };
        if json {
            text.push_str(&dump_json(a));
            text.push('\n');
        } else {
            text.push_str(&dump::format(a, full));
        }
    }
    Ok(text)
}

/// `--dump` under `--message-format json`: one object per array, always in
/// full; non-finite floats as the strings `"nan"`, `"inf"`, `"-inf"`.
fn dump_json(a: &Array) -> String {
    let size = a.elem.size() as usize;
    let data: Vec<serde_json::Value> = a
        .data
        .chunks_exact(size.max(1))
        .map(|b| {
            let text = dump::element(a.elem, b);
            if a.elem == crate::types::Scalar::Bool {
                return serde_json::Value::Bool(text == "true");
            }
            serde_json::from_str::<serde_json::Number>(&text)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::String(text))
        })
        .collect();
    serde_json::json!({
        "type": "array",
        "name": a.name,
        "dtype": a.elem.name(),
        "len": a.len(),
        "data": data,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Scalar;

    fn f32s(name: &str, xs: &[f32], writable: bool) -> Array {
        Array {
            name: name.into(),
            elem: Scalar::F32,
            data: xs.iter().flat_map(|x| x.to_le_bytes()).collect(),
            writable,
        }
    }

    #[test]
    fn out_writes_each_writable_array_as_npy() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("new/folder");
        let arrays = [f32s("x", &[1.0], false), f32s("y", &[2.0, 3.0], true)];
        write_npy_files(&out, &arrays, |_| None).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["y.npy"]);
        let back = npy::read(&std::fs::read(out.join("y.npy")).unwrap(), Scalar::F32).unwrap();
        assert_eq!(back, arrays[1].data);
        // Overwriting an earlier output replaces it whole.
        write_npy_files(&out, &[f32s("y", &[9.0], true)], |_| None).unwrap();
        let back = npy::read(&std::fs::read(out.join("y.npy")).unwrap(), Scalar::F32).unwrap();
        assert_eq!(back, 9f32.to_le_bytes());
    }

    #[test]
    fn out_into_a_file_fails_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let Err(Fail::Usage(m)) = write_npy_files(&file, &[f32s("y", &[1.0], true)], |_| None)
        else {
            panic!("expected a usage error");
        };
        assert!(m.starts_with("cannot create `"), "{m}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }

    #[test]
    fn dumps_in_order_summarised_or_full() {
        let long: Vec<f32> = (0..2000).map(|i| i as f32).collect();
        let arrays = [f32s("x", &[1.0], false), f32s("y", &long, true)];
        let t = dump_text(&["y", "x"], &arrays, false, false).unwrap();
        assert_eq!(
            t,
            "y: f32[2000] = [0.0, 1.0, 2.0, ..., 1997.0, 1998.0, 1999.0]\nx: f32[1] = [1.0]\n"
        );
        let full = dump_text(&["y"], &arrays, true, false).unwrap();
        assert!(full.contains("1000.0, 1001.0"));
        let json = dump_text(&["x"], &arrays, false, true).unwrap();
        assert_eq!(
            json,
            "{\"data\":[1.0],\"dtype\":\"f32\",\"len\":1,\"name\":\"x\",\"type\":\"array\"}\n"
        );
        assert!(matches!(
            dump_text(&["z"], &arrays, false, false),
            Err(Fail::Internal(_))
        ));
    }

    #[test]
    fn json_dumps_keep_every_value() {
        let a = Array {
            name: "y".into(),
            elem: Scalar::F32,
            data: [1.5f32, f32::NAN, -0.0, 1e30]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect(),
            writable: true,
        };
        assert_eq!(
            dump_json(&a),
            r#"{"data":[1.5,"nan",-0.0,1e+30],"dtype":"f32","len":4,"name":"y","type":"array"}"#
        );
        let b = Array {
            name: "b".into(),
            elem: Scalar::Bool,
            data: vec![1, 0],
            writable: false,
        };
        assert!(dump_json(&b).contains(r#""data":[true,false]"#));
        let u = Array {
            name: "u".into(),
            elem: Scalar::U64,
            data: u64::MAX.to_le_bytes().to_vec(),
            writable: true,
        };
        assert!(dump_json(&u).contains("18446744073709551615"));
    }
}
