//! IR → PTX text.
//!
//! [`write`] turns a checked [`ir::Module`] and the facts
//! [`crate::analysis::analyze`] found in it into one PTX module: the device
//! functions the kernels use (`.func`, callees first) and one
//! `.visible .entry` per kernel. The header's `.version` is the lowest that
//! both the target and the instructions emitted need: each function's
//! [`writer::Writer`] records the features it uses, and the header is
//! written last. What the writer cannot express is an [`Error`], never a
//! comment or a clamped value.
//!
//! The files, by concern:
//! - `writer`: per-function state (registers, labels, version floor);
//! - `kernel`: entries and functions (signature, directives, prologue);
//! - `stmt`: statements and control flow;
//! - `expr`, `ops`, `cast`, `call`: expressions, operators, conversions,
//!   device-function calls;
//! - `memory`: global/shared/remote places, loads, stores, atomics;
//! - `vector`: vector loads and stores (`load4`, `store2`, ...);
//! - `barrier`: mbarrier groups and their operations;
//! - `bulk`: bulk copies, the proxy fence, cluster barriers;
//! - `math`: built-in functions, warp operations, special registers;
//! - `suffix`, `imm`: type suffixes, immediates;
//! - `narrow`: `u8`/`i8`/`u16`/`i16` in 32-bit registers, kept in range;
//! - `error`: why a module could not be written;
//! - `lines`: the PTX line → `.kdsl` span map and `--lineinfo`'s
//!   `.file`/`.loc` directives.
//!
//! - `names`: the PTX symbol of every kdsl name (kernels keep theirs).
//!
//! Names the compiler invents all contain `$` (`$p_x`, `$s_tile`, `$L_3`),
//! which kdsl identifiers cannot, so they never collide with user names.

pub mod advice;
mod barrier;
mod bulk;
mod call;
mod cast;
mod error;
mod expr;
mod imm;
mod kernel;
mod lines;
mod math;
mod memory;
mod named;
pub mod names;
mod narrow;
mod ops;
mod packed;
mod stmt;
mod suffix;
mod tensor;
mod vector;
mod writer;

use crate::analysis::ModuleInfo;
use crate::ir;
use crate::source::SourceMap;
use crate::target::Target;
pub use error::{Error, ErrorKind, Result};
pub use lines::Lines;
use writer::Names;

/// Writes the PTX module for a checked IR module, given the facts
/// [`crate::analysis::analyze`] found in it.
pub fn write(module: &ir::Module, info: &ModuleInfo, target: Target) -> Result<String> {
    Ok(write_mapped(module, info, target, None)?.text)
}

/// Writes the PTX module and maps each of its lines to the `.kdsl` span it
/// came from. With `lineinfo` (the source map of the compilation), the
/// module also carries `.file`/`.loc` directives (`kdslc --lineinfo`);
/// without it the text is exactly [`write`]'s.
pub fn write_mapped(
    module: &ir::Module,
    info: &ModuleInfo,
    target: Target,
    lineinfo: Option<&SourceMap>,
) -> Result<Lines> {
    check_info(module, info)?;
    let names = Names {
        funcs: function_symbols(module),
    };
    let mut version = target.min_ptx_version();
    let mut body = Lines::default();
    let with_locs = |text: Lines| match lineinfo {
        Some(sources) => lines::with_locs(text, sources),
        None => text,
    };

    // Each function after every function it calls: no prototypes needed.
    let mut written = vec![false; module.functions.len()];
    for id in &info.call_order {
        let (Some(f), Some(fi), Some(name)) = (
            module.functions.get(id.index()),
            info.functions.get(id.index()),
            names.funcs.get(id.index()),
        ) else {
            return Err(stale(format!("function {} in the call order", id.0)));
        };
        if let Some(callee) = fi.body.usage.calls.iter().find(|c| {
            module.functions.get(c.index()).is_some()
                && !written.get(c.index()).copied().unwrap_or(false)
        }) {
            let callee = module
                .functions
                .get(callee.index())
                .map_or("?", |g| &g.name);
            return Err(Error {
                item: format!("fn {}", f.name),
                span: Some(f.span),
                kind: ErrorKind::InvalidIr(format!(
                    "it calls `{callee}`, which is not written before it (the call graph has a cycle)"
                )),
            });
        }
        if let Some(w) = written.get_mut(id.index()) {
            *w = true;
        }
        let (text, v) = kernel::write_function(module, &names, f, &fi.body, name, target)?;
        version = version.max(v);
        body.append(with_locs(text));
        body.push("\n", None);
    }
    for (k, ki) in module.kernels.iter().zip(&info.kernels) {
        // (A call of a function that does not exist is the kernel writer's
        // error, at the call.)
        if let Some(f) = ki.body.usage.calls.iter().find(|c| {
            module.functions.get(c.index()).is_some()
                && !written.get(c.index()).copied().unwrap_or(false)
        }) {
            return Err(stale(format!(
                "kernel `{}` calls function {}, which is not in the call order",
                k.name, f.0
            )));
        }
        let (text, v) = kernel::write_kernel(module, &names, k, &ki.body, target)?;
        version = version.max(v);
        body.append(with_locs(text));
        body.push("\n", None);
    }
    body.trim_blank_end();
    if body.is_empty() {
        // As the text always was: the header, then one blank line.
        body.push("\n", None);
    }
    let mut head = Lines::default();
    head.push(
        &format!(
            "//\n// Generated by kdslc {}\n//\n\n.version {version}\n.target {}\n.address_size 64\n\n",
            env!("CARGO_PKG_VERSION"),
            target.name()
        ),
        None,
    );
    if let Some(sources) = lineinfo {
        head.push(&lines::file_directives(sources), None);
        head.push("\n", None);
    }
    // Kernels placed in dynamic shared memory share the one `.extern`
    // array (it must be declared at module scope; each launch sizes it).
    // Its alignment is the largest any of them needs (a swizzled array's
    // repeat).
    let dynamic_align = module
        .kernels
        .iter()
        .map(ir::layout::SharedLayout::of)
        .filter(|l| l.placement() == ir::layout::Placement::Dynamic)
        .map(|l| l.align())
        .max();
    if let Some(align) = dynamic_align {
        head.push(
            &format!(
                ".extern .shared .align {align} .b8 {}[];\n\n",
                names::DYNAMIC_SHARED
            ),
            None,
        );
    }
    body.prepend(head);
    Ok(body)
}

fn stale(what: String) -> Error {
    Error {
        item: "module".into(),
        span: None,
        kind: ErrorKind::StaleInfo(what),
    }
}

/// The facts must be this module's: one table per body, sized for its ids.
fn check_info(module: &ir::Module, info: &ModuleInfo) -> Result<()> {
    if info.functions.len() != module.functions.len() || info.kernels.len() != module.kernels.len()
    {
        return Err(stale(format!(
            "facts for {} functions and {} kernels, the module has {} and {}",
            info.functions.len(),
            info.kernels.len(),
            module.functions.len(),
            module.kernels.len()
        )));
    }
    let functions = module
        .functions
        .iter()
        .zip(&info.functions)
        .map(|(f, fi)| (&f.name, &f.body, &fi.body));
    let kernels = module
        .kernels
        .iter()
        .zip(&info.kernels)
        .map(|(k, ki)| (&k.name, &k.body, &ki.body));
    for (name, body, facts) in functions.chain(kernels) {
        if !facts.fits(body) {
            return Err(stale(format!("the facts of `{name}` do not fit its body")));
        }
    }
    Ok(())
}

/// The `.func` symbol of each function ([`names::Namer`]).
fn function_symbols(module: &ir::Module) -> Vec<String> {
    let mut namer = names::Namer::new(module);
    module
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| namer.function(i, &f.name))
        .collect()
}

/// The `.param` type a kernel parameter of type `ty` is declared with
/// (`u64` for a global array's pointer, `u32` for a `bool`, `b16` for the
/// 16-bit floats, `b8[128]` for a tensor map): what host code passes.
pub fn kernel_param_type(ty: ir::ParamType) -> &'static str {
    match ty {
        ir::ParamType::Scalar(s) => suffix::kernel_param(s),
        ir::ParamType::Global { .. } => "u64",
        ir::ParamType::Tensor(_) => "b8[128]",
    }
}
