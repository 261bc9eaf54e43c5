//! How each of the checker's errors reads: the one place a [`CheckError`]
//! becomes a [`Diagnostic`] (its code, message, labels, notes and fixes).

use super::CheckError;
use crate::diagnostics::{agree, noun_for, plural, Diagnostic};
use crate::target::Target;

/// `a, b, c, d` for a pattern of `n` names.
fn pattern_names(n: usize) -> String {
    ["a", "b", "c", "d"]
        .iter()
        .take(n)
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

/// `1st`, `2nd`, `3rd`, `4th`, ...
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// `a`, `b` and `c` as a list of code spans.
/// `` `a`, `b` and `c` ``.
pub fn word_list(words: &[&str]) -> String {
    let w: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
    match w.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

impl CheckError {
    pub fn into_diagnostic(self) -> Diagnostic {
        match self {
            CheckError::LiteralOutOfRange { ty, span } => {
                Diagnostic::error("E0003", format!("literal out of range for {ty}"))
                    .primary(span, format!("this literal does not fit in `{ty}`"))
                    .note(crate::types::literal_range_note(&ty))
            }
            CheckError::ExpectedWord { expected, found, span } => {
                Diagnostic::error("E0010", format!("expected `{expected}`, found `{found}`"))
                    .primary(span, format!("expected `{expected}`"))
                    .fix(format!("replace with `{expected}`"), span, expected)
            }
            CheckError::NotFound { kind, name, span, similar, help } => {
                let mut d = Diagnostic::error("E0100", format!("cannot find {kind} `{name}` in this scope"))
                    .primary(span, "not found in this scope");
                if let Some(s) = similar {
                    d = d.fix(format!("a {kind} with a similar name exists: `{s}`"), span, s.clone());
                }
                if let Some(h) = help {
                    d = d.help(h);
                }
                d
            }
            CheckError::Duplicate { name, span, first } => {
                Diagnostic::error("E0101", format!("`{name}` is defined more than once"))
                    .primary(span, format!("`{name}` redefined here"))
                    .secondary(first, format!("previous definition of `{name}` here"))
                    .help("rename one of them")
            }
            CheckError::AssignImmutable { name, span, decl, what, fix } => {
                let mut d = Diagnostic::error("E0102", format!("cannot assign twice to immutable variable `{name}`"))
                    .primary(span, "cannot assign twice to immutable variable");
                if let Some(decl) = decl {
                    d = d.secondary(decl, format!("`{name}` is {what}"));
                }
                match fix {
                    Some(f) => d.fix(f.message, f.span, f.replacement),
                    None => d.note(format!("`{name}` is {what}, which cannot be assigned")),
                }
            }
            CheckError::StoreReadOnly { name, span, param, fix } => {
                let mut d = Diagnostic::error("E0103", format!("cannot store through read-only pointer `{name}`"))
                    .primary(span, "store through a read-only pointer")
                    .secondary(param, format!("`{name}` is declared read-only here"))
                    .note("`global [T]` parameters are read-only (the compiler may load them with `ld.global.nc`)");
                if let Some(f) = fix {
                    d = d.fix(f.message, f.span, f.replacement);
                }
                d
            }
            CheckError::Mismatch { expected, found, span, note, fix } => {
                let mut d = Diagnostic::error("E0110", format!("mismatched types: expected `{expected}`, found `{found}`"))
                    .primary(span, format!("expected `{expected}`, found `{found}`"));
                if let Some(n) = note {
                    d = d.note(n);
                }
                if let Some(f) = fix {
                    d = d.fix(f.message, f.span, f.replacement);
                }
                d
            }
            CheckError::ArgCount { callee, expected, found, span, signature } => {
                let word = if expected == "1" { "argument" } else { "arguments" };
                let were = if found == 1 { "was" } else { "were" };
                let mut d = Diagnostic::error(
                    "E0111",
                    format!("`{callee}` takes {expected} {word} but {found} {were} supplied"),
                )
                .primary(span, format!("expected {expected} {word}, found {found}"));
                if let Some(sig) = signature {
                    d = d.note(format!("`{callee}` is `{sig}`"));
                }
                d
            }
            CheckError::IndexCount { name, dims, found, span, decl } => {
                let mut d = Diagnostic::error(
                    "E0112",
                    format!(
                        "`{name}` has {} but {} {} supplied",
                        plural(dims, "dimension"),
                        plural(found, "index"),
                        agree(found, "was", "were")
                    ),
                )
                .primary(span, format!("expected {}", plural(dims, "index")));
                if let Some(decl) = decl {
                    d = d.secondary(decl, format!("`{name}` declared here"));
                }
                d
            }
            CheckError::NotA { name, what, span, decl } => {
                let mut d = Diagnostic::error("E0113", format!("`{name}` is not {what}"))
                    .primary(span, format!("not {what}"));
                if let Some(decl) = decl {
                    d = d.secondary(decl, format!("`{name}` is declared here"));
                }
                d
            }
            CheckError::Recursive { name, call, func } => Diagnostic::error(
                "E0114",
                format!("recursive call to `{name}`: device functions cannot be recursive"),
            )
            .primary(call, "this call closes a cycle")
            .secondary(func, format!("`{name}` defined here"))
            .note("device functions are inlined or emitted as `.func` without a call stack for recursion")
            .help("rewrite the recursion as a loop"),
            CheckError::OutsideLoop { keyword, span } => {
                Diagnostic::error("E0115", format!("`{keyword}` outside of a loop"))
                    .primary(span, format!("cannot `{keyword}` outside of a loop"))
                    .help("`break` and `continue` may only appear inside `while` and `for` loops")
            }
            CheckError::BadLoopAttr { why, span, fix } => {
                let d = Diagnostic::error("E0161", format!("invalid loop attribute: {why}"))
                    .primary(span, "here")
                    .help("`#[unroll]` unrolls every iteration, `#[unroll(N)]` runs N copies of the body per loop test, `#[unroll(1)]` keeps the loop as written");
                match fix {
                    Some((at, text)) => d.fix(format!("use `{text}`"), at, text),
                    None => d,
                }
            }
            CheckError::KernelConst { why, span, label, help } => {
                let d = Diagnostic::error("E0163", format!("invalid kernel constant: {why}"))
                    .primary(span, label)
                    .note("a kernel constant is an integer, a `bool` or a type (`const N: u32 = 4`, `const CAUSAL: bool = false`, `const ELEM: type = bf16`), with its default");
                match help {
                    Some(h) => d.help(h),
                    None => d,
                }
            }
            CheckError::InstanceName { name, values, span, other } => Diagnostic::error(
                "E0126",
                format!("kernel name `{name}` cannot be used in PTX"),
            )
            .primary(span, format!("the instantiation with {values} is named `{name}`"))
            .secondary(other, "so is this kernel's `.entry`")
            .note("an instantiation's name is the kernel's name followed by `__NAME_VALUE` for each constant off its default, and each `.entry` needs its own name")
            .help("rename one of the kernels"),
            CheckError::ListLoopJump { keyword, span } => Diagnostic::error(
                "E0160",
                format!("`{keyword}` in a loop over a constant list"),
            )
            .primary(span, format!("this `{keyword}` would act on a loop that is unrolled at compile time"))
            .note("`for x in [a, b, c] { ... }` becomes one copy of its body per element, with no loop left for `break` or `continue` to act on")
            .help("use a condition on `x` to skip a copy, or a range loop (`for i in 0..n`) over an array of the values"),
            CheckError::UnrolledTooLarge {
                span,
                elements,
                size,
                whole,
                limit,
            } => {
                let label = if whole {
                    format!("with this loop, unrolling the loops over constant lists of this body makes {size} statements and expressions")
                } else {
                    let each = if elements == 1 { "element" } else { "elements" };
                    format!("these {elements} {each} unroll to {size} statements and expressions")
                };
                Diagnostic::error("E0162", "loops over constant lists unroll to too much code")
                    .primary(span, label)
                    .note("a loop over a constant list is unrolled at compile time: each element gets its own copy of the body, and nested lists multiply the copies")
                    .note(format!("unrolling the loops over constant lists of one function or kernel may make at most {limit} statements and expressions"))
                    .help("loop over a range instead (`for i in 0u32..n`), which the optimiser unrolls only where that stays small, and compute each value from `i`")
            }
            CheckError::MissingReturn { name, span, ret } => Diagnostic::error(
                "E0116",
                format!("function `{name}` may finish without returning a value"),
            )
            .primary(span, "control can reach the end of this body")
            .secondary(ret, "the function returns a value of this type")
            .help("end the body with a `return` or with a final expression"),
            CheckError::NotConstant { span, why } => {
                let mut d = Diagnostic::error("E0117", "expected a constant expression")
                    .primary(span, why.clone().unwrap_or_else(|| "not a compile-time constant".into()));
                if why.is_none() {
                    d = d.note("launch bounds, array sizes, barrier counts and `const` items must be computable at compile time from literals and other constants");
                }
                d
            }
            CheckError::DivisionByZero { op, span } => Diagnostic::error("E0117", "division by zero")
                .primary(span, format!("this divisor of `{op}` is zero"))
                .note("integer division and remainder by zero have no defined result in PTX (`div` and `rem` return an unspecified value)"),
            CheckError::BadOperand { op, ty, span, note } => {
                let mut d = Diagnostic::error("E0118", format!("cannot apply `{op}` to type `{ty}`"))
                    .primary(span, format!("this is of type `{ty}`"));
                if let Some(n) = note {
                    d = d.note(n);
                }
                d
            }
            CheckError::GlobalOutsideParams { span } => {
                Diagnostic::error("E0119", "`global` arrays can only be kernel parameters")
                    .primary(span, "not allowed here")
                    .help("pass global memory to the kernel and index it there; device functions take scalars")
            }
            CheckError::LaunchBounds { why, span, help } => {
                let mut d = Diagnostic::error("E0120", format!("invalid launch bounds: {why}")).primary(span, why);
                if let Some(h) = help {
                    d = d.help(h);
                }
                d
            }
            CheckError::DeclNotTopLevel { what, span } => Diagnostic::error(
                "E0121",
                "declarations of shared memory and barriers must be at the top level of a kernel",
            )
            .primary(span, format!("{what} declared here"))
            .help("move the declaration to the top level of the kernel body"),
            CheckError::SharedTooLarge { limit, target, used, start, end, span } => {
                let label = match (start, end) {
                    (Some(s), Some(e)) => format!("this declaration takes bytes {s}..{e}, past the limit"),
                    _ => "this declaration goes past the limit".to_string(),
                };
                // The first target with the most shared memory (sm_90).
                let most = Target::ALL.into_iter().map(Target::max_shared_per_block).max().unwrap_or(0);
                let roomier = Target::ALL
                    .into_iter()
                    .find(|t| t.max_shared_per_block() == most)
                    .filter(|_| most > limit);
                let d = Diagnostic::error("E0122", format!("shared memory exceeds {limit} bytes ({used} used)"))
                    .primary(span, label)
                    .note(format!("{target} gives one CTA at most {limit} bytes ({} KiB) of shared memory; past 48 KiB a kernel's shared memory is dynamic and its launch opts in to the maximum", limit / 1024))
                    .note("the barrier groups come first, 8 bytes per barrier; then the shared arrays in declaration order, each taking a multiple of 128 bytes");
                let d = match roomier {
                    Some(t) => d.help(format!("use smaller tiles, fewer pipeline stages or a narrower element type, or compile for a target with more shared memory (`--target {t}`: {} KiB)", t.max_shared_per_block() / 1024)),
                    None => d.help("use smaller tiles, fewer pipeline stages or a narrower element type"),
                };
                d
            }
            CheckError::CyclicConstants { uses } => {
                // A long cycle is shown by its start and its end.
                const SHOWN: usize = 6;
                let n = uses.len();
                let long = n > SHOWN + 2;
                let shown = |i: usize| !long || i < SHOWN || i + 1 == n;
                let mut names: Vec<String> = Vec::new();
                for (i, (name, _)) in uses.iter().enumerate() {
                    if shown(i) {
                        names.push(format!("`{name}`"));
                    } else if i == SHOWN {
                        names.push("…".to_string());
                    }
                }
                if let Some((first, _)) = uses.first() {
                    names.push(format!("`{first}`"));
                }
                let mut d = Diagnostic::error(
                    "E0125",
                    format!("cyclic constant definition: {}", names.join(" -> ")),
                );
                let next = |i: usize| uses.get((i + 1) % n.max(1)).map_or("", |(m, _)| m.as_str());
                for (i, (name, span)) in uses.iter().enumerate().filter(|(i, _)| shown(*i)) {
                    let label = format!("`{name}` uses `{}`", next(i));
                    d = if i == 0 {
                        d.primary(*span, label)
                    } else if i + 1 == n {
                        d.secondary(*span, format!("{label}, which closes the cycle"))
                    } else {
                        d.secondary(*span, label)
                    };
                }
                if long {
                    d = d.note(format!("the cycle runs through {n} constants"));
                }
                d.note("a constant's value is computed before the program runs, from literals and other constants; one that needs its own value has none")
                    .help("give one of these constants a value that does not depend on the others")
            }
            CheckError::TensorDecl { why, span, note, help, fix, other } => {
                let mut d = Diagnostic::error("E0400", format!("invalid tensor declaration: {why}"))
                    .primary(span, why);
                if let Some((at, label)) = other {
                    d = d.secondary(at, label);
                }
                if let Some(n) = note {
                    d = d.note(n);
                }
                if let Some(h) = help {
                    d = d.help(h);
                }
                if let Some(f) = fix {
                    d = d.fix(f.message, f.span, f.replacement);
                }
                d
            }
            CheckError::SwizzleShape { what, swizzle, why, span, clause, help } => {
                let mut d = Diagnostic::error(
                    "E0403",
                    format!("`{what}` does not fit a {swizzle}-byte swizzle: {why}"),
                )
                .primary(span, why);
                if let Some(c) = clause {
                    d = d.secondary(c, "the swizzle is declared here");
                }
                d = d.note(format!("a {swizzle}-byte swizzle permutes the 16-byte chunks of rows of {swizzle} bytes, in a pattern that repeats every {} bytes (8 rows); the array's innermost dimension is one row, and it starts, like every stage of it, on the repeat", swizzle * 8));
                if let Some(h) = help {
                    d = d.help(h);
                }
                d
            }
            CheckError::BoxShape { map, boxed, slice, shape, span, param } => Diagnostic::error(
                "E0401",
                format!("the box of `{map}` is {boxed} but `{slice}` is {shape}"),
            )
            .primary(span, format!("a box of {boxed}"))
            .secondary(param, format!("`{map}`'s box is declared here"))
            .note("a tensor copy moves one box between the tensor and a shared slice of the same shape, outermost dimension first: the box is the slice's shape")
            .help("declare the map's box as the slice's shape, or copy into a slice of the box's shape"),
            CheckError::BoxElem { map, map_elem, slice, slice_elem, span, param } => Diagnostic::error(
                "E0402",
                format!("`{map}` holds `{map_elem}` but `{slice}` holds `{slice_elem}`"),
            )
            .primary(span, format!("a slice of `{slice_elem}`"))
            .secondary(param, format!("`{map}` holds `{map_elem}`"))
            .note("a tensor copy moves bytes as they are: the map and the shared array hold the same element type"),
            CheckError::MapSwizzle { map, array, swizzle, first_array, first_swizzle, span, first } => Diagnostic::error(
                "E0404",
                format!("`{map}` is copied to and from arrays of different swizzles: `{first_array}` ({first_swizzle}) and `{array}` ({swizzle})"),
            )
            .primary(span, format!("`{array}`: {swizzle}"))
            .secondary(first, format!("`{first_array}`: {first_swizzle}"))
            .note("a tensor map has one swizzle, which kdsl takes from the shared arrays it is copied into and out of")
            .help("declare the arrays with the same swizzle, or give the tensor a second map parameter"),
            CheckError::TensorCopy { callee, why, span, note, help } => {
                let mut d = Diagnostic::error("E0409", format!("invalid tensor copy: {why}"))
                    .primary(span, why);
                d = d.note(note.unwrap_or_else(|| format!("`{callee}` is the tensor memory accelerator's `cp.async.bulk.tensor` (PTX ISA §9.7.9.25.5)")));
                if let Some(h) = help {
                    d = d.help(h);
                }
                d
            }
            CheckError::TensorBox { why, span, note } => {
                Diagnostic::error("E0405", format!("invalid tensor box: {why}"))
                    .primary(span, why)
                    .note(note)
            }
            CheckError::Guards { group, array, why, span, decl } => {
                let mut d = Diagnostic::error(
                    "E0408",
                    format!("barrier group `{group}` cannot guard `{array}`: {why}"),
                )
                .primary(span, why);
                if let Some(s) = decl {
                    d = d.secondary(s, format!("`{array}` is declared here"));
                }
                d.note("`guards(a, b)` says that barrier `i` of the group guards slice `i` of each array (`a[i]`): the arrays are shared arrays whose first dimension is the group's count")
            }
            CheckError::ZeroLength { name, span, dim, dims, value } => {
                let label = if dims == 1 {
                    format!("the length is {value}")
                } else {
                    format!("dimension {} of {dims} is {value}", dim + 1)
                };
                Diagnostic::error("E0132", format!("shared array `{name}` has zero length"))
                    .primary(span, label)
                    .note("every dimension of a shared array must be at least 1")
            }
            CheckError::KernelName { name, why, span } => Diagnostic::error(
                "E0126",
                format!("kernel name `{name}` cannot be used in PTX"),
            )
            .primary(span, why)
            .note("a kernel's name is the symbol the host program looks up (`cuModuleGetFunction`), so kdslc never renames a kernel")
            .help("give the kernel another name"),
            CheckError::ParamsTooLarge { used, limit, span, kernel } => Diagnostic::error(
                "E0127",
                format!("kernel parameters need {used} bytes, more than the {limit} bytes of parameter space"),
            )
            .primary(span, "this parameter does not fit")
            .secondary(kernel, "the parameters of this kernel")
            .note("parameters are packed at their natural alignment: 8 bytes for a `global` array or a 64-bit scalar, 4 for a 32-bit scalar or `bool`, 2 for `f16`/`bf16`")
            .note("up to 4352 bytes work with any PTX version; up to 32764 bytes kdslc emits PTX ISA 8.1, which needs a CUDA 12.1 or newer driver")
            .help("pass large data in a `global` array instead of as separate parameters"),
            CheckError::NeedsCluster { feature, span, kernel } => Diagnostic::error(
                "E0123",
                format!("{feature} requires a kernel with a `cluster(...)` launch attribute"),
            )
            .primary(span, "used here")
            .secondary(kernel, "this kernel has no `cluster(...)` attribute")
            .help("add a launch attribute such as `cluster(2)` after the kernel's parameters"),
            CheckError::TargetTooOld { feature, needs, current, span } => Diagnostic::error(
                "E0200",
                format!("{feature} requires {needs} or newer (compiling for {current})"),
            )
            .primary(span, format!("needs {needs}"))
            .help(format!("compile with `--target {needs}` or newer")),
            CheckError::ArrayIndexNotConstant { name, span, decl } => Diagnostic::error(
                "E0440",
                format!("the index of register array `{name}` is not a compile-time constant"),
            )
            .primary(span, "not known at compile time")
            .secondary(decl, format!("`{name}` is declared here: each of its elements is a register"))
            .note(format!(
                "a register cannot be chosen at run time, so each index of `{name}` is a constant where it runs: a constant or kernel constant, an element of a loop over a constant list, an immutable variable bound to such values, or the variable of a range `for` loop with constant bounds (at most {} iterations), which the compiler unrolls for it",
                crate::check::stmts::MAX_ACCUM_TRIPS
            ))
            .help("kdsl never moves a register array to local memory; for values chosen at run time, use a shared array with a row per thread (`shared t: [f32; 256, 8];`, indexed `t[thread_idx.x, i]`)"),
            CheckError::ArrayIndexOutOfBounds { name, index, dim, len, dims, span, decl } => {
                let which = if dims == 1 {
                    format!("`{name}` has {len} elements")
                } else {
                    let ordinal = ["first", "second", "third", "fourth"]
                        .get(dim)
                        .map_or_else(|| format!("dimension {}", dim + 1), |o| format!("{o} dimension"));
                    format!("`{name}`'s {ordinal} has {len} elements")
                };
                Diagnostic::error(
                    "E0441",
                    format!("index {index} is out of bounds for register array `{name}`"),
                )
                .primary(span, format!("{which}, numbered from 0"))
                .secondary(decl, format!("`{name}` is declared here"))
            }
            CheckError::ArrayValue { name, why, label, span, ty, help, fix } => {
                let mut d = Diagnostic::error("E0442", format!("register array `{name}`: {why}"))
                    .primary(span, label);
                if let Some((t, label)) = ty {
                    d = d.secondary(t, label);
                }
                if let Some(h) = help {
                    d = d.help(h);
                }
                match fix {
                    Some(f) => d.fix(f.message, f.span, f.replacement),
                    None => d,
                }
            }
            CheckError::ArraySize { name, why, label, span } => Diagnostic::error(
                "E0443",
                format!("register array `{name}` {why}"),
            )
            .primary(span, label)
            .note(format!(
                "each element of a register array is a register of its own, and a thread has at most {} registers of 32 bits (a 64-bit element takes two); what does not fit would be spilled to local memory, which kdsl never does silently",
                crate::ir::REGS_PER_THREAD
            )),
            CheckError::ArrayTypeHere { span, note, fix } => {
                let d = Diagnostic::error(
                    "E0444",
                    "a register array type is only the type of a `let`",
                )
                .primary(span, "not a scalar type")
                .note(note);
                match fix {
                    Some(f) => d.fix(f.message, f.span, f.replacement),
                    None => d,
                }
            }
            CheckError::BadAccum { name, shape, why, span } => Diagnostic::error(
                "E0412",
                format!("accumulator `{name}`: {shape} is not the shape of a wgmma accumulator"),
            )
            .primary(span, why)
            .note("a `wgmma` computes a 64 x N tile: the accumulator is `[f32; 64, N]` (f16, bf16, tf32 and fp8 inputs), `[f16; 64, N]` (f16 and fp8 inputs) or `[i32; 64, N]` (s8 and u8 inputs); a fragment that is a register operand is `[bf16; 64, N]` or `[f16; 64, N]`, a row vector `[f32; 64]`"),
            CheckError::BadWgmmaTile { why, span, decl } => Diagnostic::error(
                "E0410",
                "a wgmma operand tile that does not fit its array",
            )
            .primary(span, why)
            .secondary(decl, "declared here"),
            CheckError::BadWgmmaTypes { form, why, span, acc } => Diagnostic::error(
                "E0411",
                format!("no wgmma form: {form}"),
            )
            .primary(span, why)
            .secondary(acc, "the accumulator")
            .note("the forms: `f16` x `f16` into `f32` or `f16`; `bf16` x `bf16` and `tf32` x `tf32` into `f32`; `e4m3`/`e5m2` x `e4m3`/`e5m2` into `f32` or `f16`; `i8`/`u8` x `i8`/`u8` into `i32`; transposed (MN-major) operands only for `f16` and `bf16`"),
            CheckError::BadFragment { op, why, span, decl } => {
                let d = Diagnostic::error("E0450", format!("`{op}` on fragments that do not fit it"))
                    .primary(span, why)
                    .note("fragments are `accum` declarations: `[f32; 64, N]` (a wgmma result), `[bf16; 64, N]` or `[f16; 64, N]` (a register operand, two to a register), `[f32; 64]` (a row vector, one value per row); the row operations and `acc_convert` work on whole fragments in the fragment map (language.md §16.7)");
                match decl {
                    Some(decl) => d.secondary(decl, "declared here"),
                    None => d,
                }
            }
            CheckError::WgmmaOutsideKernel { op, span } => Diagnostic::error(
                "E0419",
                format!("`{op}` in a device function"),
            )
            .primary(span, "outside a kernel")
            .note("the compiler follows a warpgroup's wgmma groups (what is pending, where a fence goes) through a kernel's body, and accumulators are a kernel's declarations")
            .help("call it in the kernel"),
            CheckError::WaitTooDeep { n, span } => Diagnostic::error(
                "E0417",
                format!("`wgmma_wait({n})`: at most 7 groups can be left pending"),
            )
            .primary(span, "more than 7")
            .note("ptxas accepts any count but waits as for 7 (`WARPGROUP.DEPBAR.LE gsb0, 0x7`): a larger one would not mean what it says")
            .help("wait with a count from 0 to 7"),
            CheckError::AccumIndex { name, index, elements, span } => Diagnostic::error(
                "E0418",
                format!("element {index} of accumulator `{name}`, which holds {elements} per thread"),
            )
            .primary(span, format!("elements 0 to {}", elements.saturating_sub(1)))
            .note("each of a warpgroup's 128 threads holds 64 * N / 128 = N / 2 elements of a 64 x N accumulator"),
            CheckError::BadRegisterCount { n, span } => {
                let why = if n % 8 != 0 { "not a multiple of 8" } else if n < 24 { "fewer than 24" } else { "more than 256" };
                let near = (n.clamp(24, 256) + 4) / 8 * 8;
                Diagnostic::error("E0420", format!("`set_max_regs({n})`: a register count must be a multiple of 8 from 24 to 256"))
                    .primary(span, why)
                    .note("`setmaxnreg` counts registers per thread in steps of 8, from 24 to 256 (PTX ISA 9.7.19.5); ptxas rejects any other immediate")
                    .help(format!("the nearest count it takes is {}", near.clamp(24, 256)))
            }
            CheckError::RegistersWithoutBlock { span, kernel } => {
                let d = Diagnostic::error("E0421", "`set_max_regs` needs a kernel with `block(...)`")
                    .primary(span, match kernel { Some(_) => "the register pool depends on the block's threads", None => "in a device function" });
                match kernel {
                    Some(k) => d.secondary(k, "this kernel has no `block(...)`")
                        .note("a CTA of T threads starts each warp at min(255, 8 * floor(65536 / (8 * T))) registers per thread; the compiler checks the budgets against that pool and must pin it (`.reqntid` with `.minnctapersm 1`), or ptxas drops every `setmaxnreg`")
                        .help("give the block's shape, for example `block(384)` for three warpgroups"),
                    None => d.note("a warpgroup's register budget belongs to its kernel's roles: call `set_max_regs` in the kernel, in the branch of each role"),
                }
            }
            CheckError::TargetNotArch { feature, needs, first, current, span } => Diagnostic::error(
                "E0200",
                format!("{feature} requires {needs} (compiling for {current})"),
            )
            .primary(span, format!("needs {needs}"))
            .note("the instruction is architecture-specific: the portable targets (sm_90, sm_100) do not have it")
            .help(format!("compile with `--target {first}`; such a module runs only on that architecture")),
            CheckError::Unused { name, span } => Diagnostic::warning("W0001", format!("unused variable `{name}`"))
                .primary(span, "never used")
                .fix(
                    format!("if this is intentional, prefix it with an underscore: `_{name}`"),
                    span,
                    format!("_{name}"),
                ),
            CheckError::NoKernel { span, empty } => {
                Diagnostic::warning("W0003", "the file defines no kernel")
                    .primary(span, if empty { "this file is empty" } else { "no `kernel` item in this file" })
                    .note("the PTX module of a file without kernels has no entry point to launch")
                    .help("declare one with `kernel name(params) block(n) { ... }`; a file of constants and functions is meant to be imported by one that does")
            }
            CheckError::NonPortableCluster { size, span } => {
                Diagnostic::warning("W0002", format!("cluster size {size} is not portable"))
                    .primary(span, format!("{size} CTAs per cluster"))
                    .note("clusters of more than 8 CTAs need the non-portable cluster size attribute at launch (cudaFuncAttributeNonPortableClusterSizeAllowed)")
            }
            CheckError::UnsupportedScope { scope, span, closest } => {
                let mut d = Diagnostic::error("E0302", format!("Unsupported scope: {scope}"))
                    .primary(span, "not a barrier scope")
                    .help("the barrier scopes are `cta` (only this CTA's threads arrive) and `cluster` (threads of other CTAs in the cluster arrive too); `named(threads = k)` declares CTA hardware barriers instead");
                if let Some(c) = closest {
                    d = d.help(format!("did you mean `{c}`?")).fix(format!("replace with `{c}`"), span, c);
                }
                d
            }
            CheckError::NotSingleBarrier { name, shape, span, decl } => Diagnostic::error(
                "E0304",
                format!("Expected a single barrier, got a barrier reference with shape {shape}"),
            )
            .primary(span, "this names more than one barrier")
            .secondary(decl, "group declared here")
            .help(format!("barrier operations act on one barrier: index the group with a single integer, e.g. `{name}[i]`")),
            CheckError::ClusterScopeWithoutCluster { decl, scope, kernel, cta_fix } => {
                let d = Diagnostic::error(
                    "E0308",
                    "cluster-scope barrier in a kernel without a cluster launch attribute",
                )
                .primary(decl, "cluster-scope barrier group")
                .secondary(kernel, "this kernel has no `cluster(...)` attribute");
                if cta_fix {
                    // Two ways out, each said once.
                    d.help("add a launch attribute such as `cluster(2)` after the kernel's parameters")
                        .fix("declare the group with scope `cta`", scope, "cta")
                } else {
                    d.help("add a launch attribute such as `cluster(2)` after the kernel's parameters (the group's cluster-only operations need scope `cluster`)")
                }
            }
            CheckError::BadBarrierCount { name, n, span } => Diagnostic::error(
                "E0311",
                format!("barrier group `{name}` must hold between 1 and 64 barriers, found {n}"),
            )
            .primary(span, "barrier count"),
            CheckError::NamedThreads { name, n, span } => Diagnostic::error(
                "E0144",
                format!("named barrier `{name}` must count a positive multiple of 32 threads up to 1024, found {n}"),
            )
            .primary(span, "thread count")
            .note("threads arrive at a hardware barrier a warp (32 threads) at a time, and a CTA has at most 1024"),
            CheckError::NamedThreadsOverBlock { name, n, block, span } => Diagnostic::error(
                "E0145",
                format!("named barrier `{name}` counts {n} threads, but a block has only {block}"),
            )
            .primary(span, format!("more than the {} of `block(...)`", plural(block, "thread")))
            .note("a phase could never complete: at most every thread of the CTA arrives"),
            CheckError::NamedCount { name, n, span } => Diagnostic::error(
                "E0149",
                format!("named-barrier group `{name}` must hold between 1 and 15 barriers, found {n}"),
            )
            .primary(span, "barrier count")
            .note("a CTA has 16 hardware barriers; id 0 is `sync_threads()`'s, which leaves 15"),
            CheckError::TooManyNamed { needed, span, others } => {
                let mut d = Diagnostic::error(
                    "E0149",
                    format!("the kernel's named barriers need {needed} hardware barriers, more than the 15 a CTA has"),
                )
                .primary(span, "this group does not fit");
                if !others.is_empty() {
                    d = d.note(format!("declared before: {}", others.join(", ")));
                }
                d.note("a CTA has 16 hardware barriers; id 0 is `sync_threads()`'s, which leaves 15")
            }
            CheckError::UnknownNamedArg { callee, name, span, takes, similar } => {
                let mut d = Diagnostic::error("E0140", format!("`{callee}` has no argument named `{name}`"))
                    .primary(span, "unknown argument name");
                d = if takes.is_empty() {
                    d.note(format!("`{callee}` takes no named arguments"))
                } else {
                    let what = if takes.len() == 1 { "argument" } else { "arguments" };
                    d.help(format!("`{callee}` takes the named {what} {}", word_list(&takes)))
                };
                if let Some(s) = similar {
                    d = d.fix(format!("did you mean `{s}`?"), span, s.clone());
                }
                d
            }
            CheckError::PositionalByName { callee, name, span, position, unname } => {
                let d = Diagnostic::error("E0140", format!("`{callee}` takes `{name}` by position, not by name"))
                    .primary(span, "given by name");
                let nth = ordinal(position + 1);
                match unname {
                    Some(s) => d.fix(format!("pass it as the {nth} argument, without `{name} =`"), s, ""),
                    None => d.help(format!("pass `{name}` as the {nth} argument, without `{name} =`")),
                }
            }
            CheckError::DuplicateNamedArg { name, span, first } => {
                Diagnostic::error("E0140", format!("argument `{name}` is given more than once"))
                    .primary(span, "given again here")
                    .secondary(first, "first given here")
                    .help("remove one of them")
            }
            CheckError::PositionalAfterNamed { span, named } => {
                Diagnostic::error("E0140", "positional argument after a named argument")
                    .primary(span, "positional argument")
                    .secondary(named, "named argument before it")
                    .help("write the positional arguments first, then the named ones: `atomic_add(x[i], v, order = acquire)`")
            }
            CheckError::UnknownWord { what, word, span, words, similar } => {
                let mut d = Diagnostic::error("E0141", format!("unknown {what} `{word}`"))
                    .primary(span, format!("not a {what}"))
                    .help(format!("the {what}s are {}", word_list(&words)));
                if let Some(s) = similar {
                    d = d.fix(format!("did you mean `{s}`?"), span, s.clone());
                }
                d
            }
            CheckError::OrderNotAllowed { callee, order, span, allowed } => {
                let why = if callee == "fence" {
                    "a fence is `acq_rel` (`fence.acq_rel`) or `sc` (`fence.sc`); one-sided fences need PTX ISA 8.6"
                } else {
                    "PTX atomics have no sequentially consistent form: put a `fence(order = sc)` before the atomic"
                };
                Diagnostic::error("E0142", format!("`{callee}` cannot have order `{order}`"))
                    .primary(span, format!("not an order of `{callee}`"))
                    .note(why)
                    .help(format!("`{callee}` takes the orders {}", word_list(&allowed)))
            }
            CheckError::ScopeTooNarrow { callee, scope, place } => Diagnostic::error(
                "E0143",
                format!("`{callee}` on another CTA's shared memory cannot have scope `cta`"),
            )
            .primary(scope, "scope `cta` leaves out the CTA that owns the memory")
            .secondary(place, "this element is in a CTA of the cluster chosen by rank")
            .note("an atomic is atomic only with respect to the threads of its scope: the owning CTA's threads, and those of every other CTA of the cluster, would not see it as one")
            .fix("use scope `cluster`", scope, "cluster"),
            CheckError::NotVectorLoad { span, pattern, names } => Diagnostic::error(
                "E0146",
                format!("a `let` pattern of {} needs a vector load", plural(names, "name")),
            )
            .primary(span, "this is not `load2(...)` or `load4(...)`")
            .secondary(pattern, "the pattern")
            .note("kdsl has no tuples: a `let ( ... )` pattern binds the elements a vector load reads, `let (a, b) = load2(x[i]);` or `let (a, b, c, d) = load4(x[i]);`"),
            CheckError::VectorNames {
                callee,
                n,
                names,
                pattern,
                call,
            } => Diagnostic::error(
                "E0146",
                format!("`{callee}` gives {} but the pattern has {}", plural(n, "value"), plural(names, "name")),
            )
            .primary(pattern, format!("expected {}", plural(n, "name")))
            .secondary(call, if callee.starts_with("ldmatrix") {
                format!("{}, a register each", plural(n, "matrix"))
            } else {
                format!("{n} consecutive {}", noun_for(n, "element"))
            })
            .help(format!("bind every element: `let ({}) = {callee}(...);`", pattern_names(n))),
            CheckError::VectorAsValue { callee, n, span } => Diagnostic::error(
                "E0146",
                if n == 1 {
                    format!("`{callee}` gives its value through a pattern")
                } else {
                    format!("`{callee}` gives {n} values, not one")
                },
            )
            .primary(span, if callee.starts_with("ldmatrix") {
                format!("{}, a register each", plural(n, "matrix"))
            } else {
                format!("{n} consecutive elements")
            })
            .help(format!("bind them with a pattern: `let ({}) = {callee}(...);`", pattern_names(n))),
            CheckError::VectorTooWide {
                callee,
                elem,
                n,
                bytes,
                span,
            } => Diagnostic::error(
                "E0147",
                format!("`{callee}` of `{elem}` moves {bytes} bytes, more than the 16 of one vector access"),
            )
            .primary(span, format!("{n} elements of `{elem}`"))
            .note("PTX's `ld.v2`/`ld.v4`/`st.v2`/`st.v4` move at most 16 bytes: `load4`/`store4` take elements of up to 4 bytes, `load2`/`store2` of up to 8")
            .help(if n == 4 { "use two `load2`/`store2`, at indices `i` and `i + 2`" } else { "use scalar loads and stores" }),
            CheckError::VectorMisaligned { callee, n, index, span } => Diagnostic::error(
                "E0148",
                format!("`{callee}` at {index}, which is never a multiple of {n}"),
            )
            .primary(span, format!("not aligned to {n} elements"))
            .note(format!("a vector access must be aligned to its whole size: the element index of `{callee}` must be a multiple of {n} (arrays start aligned to at least 16 bytes)"))
            .help(format!("use an index that is a multiple of {n}, or scalar accesses")),
            CheckError::VectorUnproven { callee, n, span } => Diagnostic::warning(
                "W0325",
                format!("cannot prove that the index of `{callee}` is a multiple of {n}"),
            )
            .primary(span, format!("the element index must be a multiple of {n}"))
            .note("a misaligned vector access faults on the GPU (the simulator reports S0003); the compiler proves alignment from constants, `*`, `<<`, `+`, `-`, `&`, immutable variables and loop variables")
            .help(format!("write the index so that it shows as a multiple, such as `x[k * {n}]`, or silence the warning with `-A W0325` if it always is one")),
            CheckError::MatrixPlace { callee, found, span } => Diagnostic::error(
                "E0430",
                format!("`{callee}` needs an element of a shared array of this CTA, not {found}"),
            )
            .primary(span, "each lane gives the address of a row here")
            .note("`ldmatrix` and `stmatrix` move 8 x 8 matrices between registers and this CTA's shared memory (`.shared`): global memory and other CTAs' shared memory are not theirs")
            .help("stage the tile in a shared array first (`tma_load`, or plain stores and `sync_threads()`)"),
            CheckError::MatrixElem { callee, elem, span } => Diagnostic::error(
                "E0431",
                format!("`{callee}` moves 16-bit elements, not `{elem}`"),
            )
            .primary(span, format!("an element of `{elem}`"))
            .note("the `.m8n8` forms move `.b16` elements: the array must be of `f16`, `bf16` (registers `f16x2`, `bf16x2`), `u16` or `i16` (registers `u32`)"),
            CheckError::MatrixMisaligned { callee, index, span } => Diagnostic::error(
                "E0432",
                format!("`{callee}` at {index}, which is never a multiple of 8"),
            )
            .primary(span, "this row is not 16-byte aligned")
            .note(format!("each lane's address names a row of 8 consecutive 16-bit elements, which must be 16-byte aligned: the element index of `{callee}`'s place must be a multiple of 8 (shared arrays start aligned to 128 bytes)"))
            .help("start each row at a column that is a multiple of 8"),
            CheckError::MatrixUnproven { callee, span } => Diagnostic::warning(
                "W0432",
                format!("cannot prove that the rows of `{callee}` are 16-byte aligned"),
            )
            .primary(span, "the element index must be a multiple of 8")
            .note("a misaligned row address is undefined on the GPU (the simulator reports S0003); the compiler proves alignment from constants, `*`, `<<`, `+`, `-`, `&`, immutable variables and loop variables")
            .help("write the index so that it shows as a multiple of 8, such as `tile[lane_id % 8, 8 * k]`, or silence the warning with `-A W0432` if it always is one"),
            CheckError::MatrixRows {
                callee,
                array,
                inner,
                span,
                decl,
            } => Diagnostic::error(
                "E0433",
                format!("the rows of `{array}` are {inner} elements, not a whole number of `{callee}`'s 8"),
            )
            .primary(span, "a row of 8 elements starts here")
            .secondary(decl, format!("the innermost dimension is {inner}"))
            .note("each lane's address names 8 consecutive elements of one row of the array: its innermost dimension must be a multiple of 8, or rows would run into the next")
            .help("declare the array with an innermost dimension that is a multiple of 8"),
            CheckError::MatrixDivergent {
                callee,
                span,
                cond,
                threads,
            } => {
                let d = Diagnostic::error(
                    "E0434",
                    match threads {
                        Some(n) => format!("`{callee}` in a block of {n} threads, whose last warp is partial"),
                        None => format!("`{callee}` under a condition that may split a warp"),
                    },
                )
                .primary(span, "every lane of the warp must run this together");
                let d = match cond {
                    Some(c) => d.secondary(c, "this condition may differ between the lanes of a warp"),
                    None => d,
                };
                d.note("`ldmatrix`/`stmatrix` are `.sync.aligned`: all 32 lanes of the warp execute the same instruction together, each giving one row; a lane that does not arrive leaves the warp hanging or its result undefined")
                    .help(match threads {
                        Some(_) => "give the block a multiple of 32 threads",
                        None => "move it out of the condition, or make the condition the same in every lane of a warp (one on `warp_id`, parameters or constants)",
                    })
            }
            CheckError::ArrivalsOutOfRange { n, span } => {
                Diagnostic::error("E0306", format!("arrival count {n} is out of range (1..=1048575)"))
                    .primary(span, "arrival count")
                    .note("an mbarrier counts at most 2^20 - 1 pending arrivals per phase")
            }
        }
    }
}
