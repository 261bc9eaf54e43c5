//! Every diagnostic code, its first-line template and its long explanation.
//!
//! The first lines are the contract of the language reference's diagnostics
//! catalogue (§8), plus the project's additions (E0004, E0114–E0119, E0123,
//! E0124–E0127, E0130–E0132, E0140–E0149, E0160–E0163, E0400–E0409, E0440–E0444, E0450, E0451, W0003,
//! W0324–W0326, W0330).
//! Each code's explanation is a markdown file in `explain/`, compiled in with
//! `include_str!` so that `kdslc explain` needs no files at run time. The
//! same texts, joined by [`render_docs`], are `docs/diagnostics.md`;
//! `tests/it/docs/catalog.rs` keeps that file, the headings and the examples in sync.
//!
//! An explanation is `# CODE: title`, a few paragraphs, `## Example` with a
//! ```` ```kdsl ```` block that triggers the code, `## Fixed` with one that
//! compiles cleanly, and optionally `## See also`. A block whose first line
//! is `// kdslc --target sm_80` is compiled for that target; one whose first
//! line starts with [`NOT_COMPILED`] is not compiled (only the import codes,
//! whose examples need several files, and E0127's wrong example, abridged
//! from 4096 parameters); one whose first line starts with
//! [`LATIN1_PREFIX`] is compiled from a file written in Latin-1. A line
//! ending in `// ×N` ([`REPEAT`]) stands for N copies of itself.

use super::Severity;

/// One diagnostic code.
#[derive(Debug)]
pub struct CodeInfo {
    /// `E0301`, `W0001`.
    pub code: &'static str,
    pub severity: Severity,
    /// The first-line template with `{placeholders}`, exactly as in the
    /// catalogue; alternative first lines are joined with " / ".
    pub title: &'static str,
    /// The long explanation: markdown, the whole `explain/CODE.md` file.
    pub explanation: &'static str,
}

/// The start of the first line of an example block that must not be
/// compiled on its own; the line goes on with the reason.
pub const NOT_COMPILED: &str = "// not compiled: ";

/// The first line of an example block that is compiled from a file encoded
/// in Latin-1 instead of UTF-8 (E0004's wrong example).
pub const LATIN1_PREFIX: &str = "// saved as Latin-1";

/// The prefix of an example block's first line that selects the target.
pub const TARGET_PREFIX: &str = "// kdslc --target ";

macro_rules! code {
    ($code:literal, $severity:ident, $title:literal) => {
        CodeInfo {
            code: $code,
            severity: Severity::$severity,
            title: $title,
            explanation: include_str!(concat!("explain/", $code, ".md")),
        }
    };
}

/// Every code, sorted.
pub static CODES: &[CodeInfo] = &[
    code!("E0001", Error, "unexpected character {c:?}"),
    code!("E0002", Error, "unterminated block comment"),
    code!(
        "E0003",
        Error,
        "invalid number literal / literal out of range for {type}"
    ),
    code!("E0004", Error, "source file is not valid UTF-8"),
    code!("E0010", Error, "expected {expected}, found {found}"),
    code!("E0011", Error, "unexpected end of file"),
    code!("E0100", Error, "cannot find {kind} `{name}` in this scope"),
    code!("E0101", Error, "`{name}` is defined more than once"),
    code!(
        "E0102",
        Error,
        "cannot assign twice to immutable variable `{name}`"
    ),
    code!(
        "E0103",
        Error,
        "cannot store through read-only pointer `{name}`"
    ),
    code!(
        "E0110",
        Error,
        "mismatched types: expected `{expected}`, found `{found}`"
    ),
    code!(
        "E0111",
        Error,
        "{callee} takes {n} arguments but {m} were supplied"
    ),
    code!(
        "E0112",
        Error,
        "{name} has {n} dimensions but {m} indices were supplied"
    ),
    code!(
        "E0113",
        Error,
        "`{name}` is not a function / is not an array / is not a barrier group"
    ),
    code!(
        "E0114",
        Error,
        "recursive call to `{name}`: device functions cannot be recursive"
    ),
    code!("E0115", Error, "`{keyword}` outside of a loop"),
    code!(
        "E0116",
        Error,
        "function `{name}` may finish without returning a value"
    ),
    code!(
        "E0117",
        Error,
        "expected a constant expression / division by zero"
    ),
    code!("E0118", Error, "cannot apply `{op}` to type `{type}`"),
    code!(
        "E0119",
        Error,
        "`global` arrays can only be kernel parameters"
    ),
    code!("E0120", Error, "invalid launch bounds: {why}"),
    code!(
        "E0121",
        Error,
        "declarations of shared memory and barriers must be at the top level of a kernel"
    ),
    code!(
        "E0122",
        Error,
        "shared memory exceeds {limit} bytes ({used} used)"
    ),
    code!(
        "E0123",
        Error,
        "{feature} requires a kernel with a `cluster(...)` launch attribute"
    ),
    code!("E0124", Error, "nesting too deep: more than {limit} levels"),
    code!("E0125", Error, "cyclic constant definition: {cycle}"),
    code!("E0126", Error, "kernel name `{name}` cannot be used in PTX"),
    code!(
        "E0127",
        Error,
        "kernel parameters need {used} bytes, more than the {limit} bytes of parameter space"
    ),
    code!(
        "E0130",
        Error,
        "cannot read imported file `{path}`: {reason}"
    ),
    code!("E0131", Error, "import cycle: {files}"),
    code!("E0132", Error, "shared array `{name}` has zero length"),
    code!(
        "E0140",
        Error,
        "`{callee}` has no argument named `{name}` / `{callee}` takes `{name}` by position, not by name / argument `{name}` is given more than once / positional argument after a named argument"
    ),
    code!("E0141", Error, "unknown {what} `{word}`"),
    code!("E0142", Error, "`{callee}` cannot have order `{order}`"),
    code!(
        "E0143",
        Error,
        "`{callee}` on another CTA's shared memory cannot have scope `cta`"
    ),
    code!(
        "E0144",
        Error,
        "named barrier `{name}` must count a positive multiple of 32 threads up to 1024, found {n}"
    ),
    code!(
        "E0145",
        Error,
        "named barrier `{name}` counts {n} threads, but a block has only {block}"
    ),
    code!(
        "E0146",
        Error,
        "a `let` pattern of {names} names needs a vector load / `{callee}` gives {n} values but the pattern has {names} names / `{callee}` gives {n} values, not one / `{callee}` gives its value through a pattern"
    ),
    code!(
        "E0147",
        Error,
        "`{callee}` of `{elem}` moves {bytes} bytes, more than the 16 of one vector access"
    ),
    code!(
        "E0148",
        Error,
        "`{callee}` at {index}, which is never a multiple of {n}"
    ),
    code!(
        "E0149",
        Error,
        "named-barrier group `{name}` must hold between 1 and 15 barriers, found {n} / the kernel's named barriers need {needed} hardware barriers, more than the 15 a CTA has"
    ),
    code!("E0160", Error, "`{keyword}` in a loop over a constant list"),
    code!("E0161", Error, "invalid loop attribute: {why}"),
    code!(
        "E0162",
        Error,
        "loops over constant lists unroll to too much code"
    ),
    code!("E0163", Error, "invalid kernel constant: {why}"),
    code!(
        "E0200",
        Error,
        "{feature} requires {target} or newer (compiling for {current}) / {feature} requires {targets} (compiling for {current})"
    ),
    code!("E0301", Error, "Can only await on CTA-local barriers"),
    code!("E0302", Error, "Unsupported scope: {scope}"),
    code!(
        "E0303",
        Error,
        "operation on barrier group `{name}` without an index"
    ),
    code!(
        "E0304",
        Error,
        "Expected a single barrier, got a barrier reference with shape {shape}"
    ),
    code!(
        "E0305",
        Error,
        "barrier index {i} is out of bounds for group `{name}` of {n} barriers"
    ),
    code!(
        "E0306",
        Error,
        "arrival count {n} is out of range (1..=1048575)"
    ),
    code!("E0307", Error, "{op} requires a cluster-scope barrier"),
    code!(
        "E0308",
        Error,
        "cluster-scope barrier in a kernel without a cluster launch attribute"
    ),
    code!(
        "E0309",
        Error,
        "transaction size {n} must be a positive multiple of 16 no larger than 1048575"
    ),
    code!("E0310", Error, "wait parity must be 0 or 1, found {n}"),
    code!(
        "E0311",
        Error,
        "barrier group `{name}` must hold between 1 and 64 barriers, found {n}"
    ),
    code!("E0400", Error, "invalid tensor declaration: {why}"),
    code!(
        "E0401",
        Error,
        "the box of `{map}` is {box} but `{slice}` is {shape}"
    ),
    code!(
        "E0402",
        Error,
        "`{map}` holds `{elem}` but `{slice}` holds `{elem2}`"
    ),
    code!(
        "E0403",
        Error,
        "`{what}` does not fit a {n}-byte swizzle: {why}"
    ),
    code!(
        "E0404",
        Error,
        "`{map}` is copied to and from arrays of different swizzles: `{a}` ({s}) and `{b}` ({t})"
    ),
    code!("E0405", Error, "invalid tensor box: {why}"),
    code!(
        "E0406",
        Error,
        "barrier `{name}` expects {n} transaction bytes but the tensor copies complete {m}"
    ),
    code!(
        "E0407",
        Error,
        "stage discipline: {why} / stage discipline: `{slice}` is read with no wait on `{barrier}` before it"
    ),
    code!(
        "E0408",
        Error,
        "barrier group `{name}` cannot guard `{array}`: {why}"
    ),
    code!("E0409", Error, "invalid tensor copy: {why}"),
    code!(
        "E0410",
        Error,
        "a wgmma operand tile that does not fit its array"
    ),
    code!("E0411", Error, "no wgmma form: {form}"),
    code!(
        "E0412",
        Error,
        "accumulator `{name}`: {shape} is not the shape of a wgmma accumulator"
    ),
    code!(
        "E0413",
        Error,
        "`{op}` under a condition that may split a warpgroup / `{op}` in a kernel whose block's x extent, {x}, is not a multiple of 128 / `{op}` in a kernel without `block(...)`"
    ),
    code!(
        "E0414",
        Error,
        "`{name}` is accessed while a wgmma group writing it may be pending"
    ),
    code!(
        "E0415",
        Error,
        "a stage of `{array}` is released while a wgmma group reading it may be pending"
    ),
    code!("E0416", Error, "`{name}` is read before it is written"),
    code!(
        "E0417",
        Error,
        "`wgmma_wait({n})`: at most 7 groups can be left pending"
    ),
    code!(
        "E0418",
        Error,
        "element {index} of accumulator `{name}`, which holds {elements} per thread / the element index of `{name}` is not a compile-time constant"
    ),
    code!("E0419", Error, "`{op}` in a device function"),
    code!(
        "E0420",
        Error,
        "`set_max_regs({n})`: a register count must be a multiple of 8 from 24 to 256"
    ),
    code!(
        "E0421",
        Error,
        "`set_max_regs` needs a kernel with `block(...)` / `set_max_regs` again with no synchronisation since the last one / `set_max_regs` in a loop / `set_max_regs({n})` increases the count on one path and decreases it on another"
    ),
    code!(
        "E0422",
        Error,
        "warpgroups request {budgets} = {total} registers per thread; the pool holds {w} × {entry} = {pool}"
    ),
    code!(
        "E0423",
        Error,
        "accumulators need {regs} registers in warpgroup {w}, whose budget is {budget}"
    ),
    code!(
        "E0424",
        Error,
        "wgmma with a {shape} accumulator needs {need} registers at entry; {threads} threads leave {entry}"
    ),
    code!(
        "E0425",
        Error,
        "ptxas cannot compile this with {have} registers per thread; it needs {need} (C7602)"
    ),
    code!(
        "E0430",
        Error,
        "`{callee}` needs an element of a shared array of this CTA, not {found}"
    ),
    code!("E0431", Error, "`{callee}` moves 16-bit elements, not `{elem}`"),
    code!(
        "E0432",
        Error,
        "`{callee}` at {index}, which is never a multiple of 8"
    ),
    code!(
        "E0433",
        Error,
        "the rows of `{array}` are {inner} elements, not a whole number of `{callee}`'s 8"
    ),
    code!(
        "E0434",
        Error,
        "`{callee}` under a condition that may split a warp / `{callee}` in a block of {n} threads, whose last warp is partial"
    ),
    code!(
        "E0440",
        Error,
        "the index of register array `{name}` is not a compile-time constant"
    ),
    code!(
        "E0441",
        Error,
        "index {index} is out of bounds for register array `{name}`"
    ),
    code!("E0442", Error, "register array `{name}`: {why}"),
    code!("E0443", Error, "register array `{name}` {why}"),
    code!(
        "E0444",
        Error,
        "a register array type is only the type of a `let`"
    ),
    code!("E0450", Error, "`{op}` on fragments that do not fit it"),
    code!(
        "E0451",
        Error,
        "`{name}` is accessed while a wgmma group reading it may be pending"
    ),
    code!("S0001", Error, "deadlock: no thread can make progress"),
    code!("S0002", Error, "out-of-bounds {access} in {space} memory"),
    code!("S0003", Error, "misaligned {access} in {space} memory"),
    code!("S0004", Error, "mbarrier `{name}` used before `init`"),
    code!(
        "S0005",
        Error,
        "mbarrier `{name}` initialised again while a phase is pending"
    ),
    code!(
        "S0006",
        Error,
        "arrival on mbarrier `{name}` takes its pending count below zero"
    ),
    code!(
        "S0007",
        Error,
        "transaction count of mbarrier `{name}` out of range"
    ),
    code!("S0008", Error, "wait on mbarrier `{name}` is {n} phases behind"),
    code!(
        "S0009",
        Error,
        "warp-synchronous mask names threads that never arrive / warp-synchronous mask leaves out the executing thread"
    ),
    code!(
        "S0010",
        Error,
        "access to the shared memory of cluster rank {rank}, which has exited"
    ),
    code!("S0011", Error, "no progress within {n} steps"),
    code!(
        "S0012",
        Error,
        "bulk copy of {size} bytes is not a multiple of 16 bytes or not 16-byte aligned / tensor copy at shared address {address}, which is not 128-byte aligned"
    ),
    code!(
        "S0013",
        Error,
        "PTX instruction `{name}` is outside the simulator's subset"
    ),
    code!("S0014", Error, "cannot load the PTX module: {why}"),
    code!("S0015", Error, "launch does not fit kernel `{name}`: {why}"),
    code!("S0016", Error, "a thread executed `trap`"),
    code!("S0017", Error, "{access} to read-only {space} memory"),
    code!(
        "S0018",
        Error,
        "`.noComplete` arrival completed a phase of mbarrier `{name}`"
    ),
    code!(
        "S0020",
        Error,
        "{access} past the end of the launch's dynamic shared memory"
    ),
    code!(
        "S0021",
        Error,
        "the map operand of `{instruction}` is not a tensor map"
    ),
    code!(
        "S0022",
        Error,
        "`.{n}d` tensor copy on a map of rank {rank} / tensor copy of a {size}-byte box, more than shared memory holds / `.{op}` tensor reduction on {type} elements / multicast mask {mask} names CTAs outside the cluster of {n}"
    ),
    code!(
        "S0023",
        Error,
        "{kind} register `{name}` {read or written} while a wgmma using it is pending"
    ),
    code!(
        "S0024",
        Error,
        "shared memory that a pending wgmma reads is overwritten"
    ),
    code!(
        "S0025",
        Error,
        "wgmma descriptor of {operand} reads outside the CTA's shared memory / wgmma descriptor of {operand} has a base offset"
    ),
    code!(
        "S0026",
        Error,
        "the warps of a warpgroup disagree on a wgmma / the lanes of a warp disagree on a wgmma / wgmma by a warpgroup of {n} warps / the warps of a warpgroup execute different `setmaxnreg`s"
    ),
    code!(
        "S0027",
        Error,
        "`setmaxnreg.inc` to {n} registers, below the warp's {count} / `setmaxnreg.dec` to {n} registers, above the warp's {count}"
    ),
    code!(
        "S0028",
        Error,
        "{kind} register `{name}` {read or written} and then used by a wgmma with no `wgmma.fence` between / no `wgmma.fence` before the first wgmma of a warp / accumulator register `{name}` used by wgmmas of two shapes with no `wgmma.fence` between"
    ),
    code!("S0030", Error, "data race on {memory}"),
    code!(
        "S0031",
        Error,
        "{memory} written by the generic proxy and read by the async proxy without `fence.proxy.async`"
    ),
    code!("S0032", Error, "read of uninitialised {memory}"),
    code!(
        "S0033",
        Error,
        "more transaction bytes complete in phase {n} of mbarrier `{name}` than it expects / mbarrier `{name}` completed phase {n} before a copy's {n} bytes landed"
    ),
    code!(
        "S0034",
        Error,
        "threads reach CTA barrier {id} at {n} different instructions / CTA barrier {id} completed without {n} threads that exited"
    ),
    code!(
        "S0040",
        Error,
        "{n} `printf` calls dropped: the printf buffer ({size} MiB) was full"
    ),
    code!("S0041", Error, "assertion `{condition}` failed"),
    code!(
        "S0050",
        Error,
        "shuffle reads lane {lane}, which is not in its mask / shuffle reads lane {lane}, which has exited / shuffle reads lane {lane}, which has no thread"
    ),
    code!("W0001", Warning, "unused variable `{name}`"),
    code!("W0002", Warning, "cluster size {n} is not portable"),
    code!("W0003", Warning, "the file defines no kernel"),
    code!(
        "W0320",
        Warning,
        "barrier operation in divergent control flow"
    ),
    code!(
        "W0321",
        Warning,
        "barrier `{name}` expects {n} arrivals per phase but {m} threads arrive"
    ),
    code!(
        "W0322",
        Warning,
        "bulk copy completes on barrier `{name}`, which never expects transactions"
    ),
    code!(
        "W0323",
        Warning,
        "barrier `{name}` expects {n} transaction bytes but the copies complete {m}"
    ),
    code!(
        "W0324",
        Warning,
        "named barrier `{name}` used under a condition that splits warps"
    ),
    code!(
        "W0325",
        Warning,
        "cannot prove that the index of `{callee}` is a multiple of {n}"
    ),
    code!(
        "W0326",
        Warning,
        "named barrier `{name}` counts {n} threads but {m} threads can reach it"
    ),
    code!("W0330", Warning, "`{hint}` cannot be honoured: {why}"),
    code!(
        "W0425",
        Warning,
        "a budget of {budget} registers is below the about {need} that a wgmma it reaches needs"
    ),
    code!(
        "W0426",
        Warning,
        "ptxas ignores every `set_max_regs`: a budget is below what the code needs (C7507)"
    ),
    code!(
        "W0427",
        Warning,
        "ptxas ignores every `set_max_regs`: it cannot tell the register count at entry (C7508)"
    ),
    code!(
        "W0428",
        Warning,
        "ptxas serialises the wgmma instructions: too few registers for the wgmma pipeline (C7511)"
    ),
    code!(
        "W0429",
        Warning,
        "ptxas inserted a wait for a wgmma group before its accumulators are used (C7517)"
    ),
    code!(
        "W0432",
        Warning,
        "cannot prove that the rows of `{callee}` are 16-byte aligned"
    ),
];

/// The code's entry, ignoring ASCII case (`e0301` finds `E0301`).
pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    let code = code.trim();
    CODES
        .iter()
        .find(|info| info.code.eq_ignore_ascii_case(code))
}

/// The language of a code's examples: `ptx` for the simulator reports that
/// only foreign PTX can trigger (their blocks are ```` ```ptx ````), else `kdsl`.
pub fn example_language(info: &CodeInfo) -> &'static str {
    if info.explanation.contains("\n```ptx\n") {
        "ptx"
    } else {
        "kdsl"
    }
}

/// The wrong and the fixed example: the first two ```` ```kdsl ```` (or
/// ```` ```ptx ````) blocks of the explanation, each with a final newline
/// and its [`REPEAT`] lines written out. A missing block is empty.
pub fn examples(info: &CodeInfo) -> (String, String) {
    let mut blocks = kdsl_blocks(info.explanation).into_iter();
    let wrong = expand_repeats(&blocks.next().unwrap_or_default());
    let fixed = expand_repeats(&blocks.next().unwrap_or_default());
    (wrong, fixed)
}

/// An example line ending in this marker and a count (`    + 1 // ×25000`)
/// stands for that many copies of the line without the marker: an example
/// of a limit need not be as long as the limit.
pub const REPEAT: &str = "// ×";

/// `block` with each [`REPEAT`] line written out; everything else exactly
/// as it was (line endings, a missing final newline).
pub fn expand_repeats(block: &str) -> String {
    let mut out = String::with_capacity(block.len());
    for line in block.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let repeat = body.rsplit_once(REPEAT).and_then(|(text, n)| {
            let n: usize = n.trim().parse().ok()?;
            Some((text.trim_end(), n))
        });
        match repeat {
            Some((text, n)) => {
                for _ in 0..n {
                    out.push_str(text);
                    out.push('\n');
                }
            }
            None => {
                out.push_str(body);
                out.push_str(end);
            }
        }
    }
    out
}

/// The contents of every ```` ```kdsl ```` and ```` ```ptx ```` fenced
/// block, in order. An unclosed block runs to the end of the text.
fn kdsl_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match current.as_mut() {
            None if matches!(line.trim_end(), "```kdsl" | "```ptx") => {
                current = Some(String::new())
            }
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    blocks.extend(current);
    blocks
}

fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// The anchor of a code's section in `docs/diagnostics.md`.
fn anchor(code: &str) -> String {
    code.to_ascii_lowercase()
}

/// The full text of `docs/diagnostics.md`: an index of every code, then
/// every explanation in code order with its headings one level deeper.
pub fn render_docs() -> String {
    let mut out = String::new();
    out.push_str("# kdslc diagnostics\n\n");
    out.push_str(concat!(
        "<!-- Generated from src/diagnostics/explain/*.md by\n",
        "     `KDSL_BLESS=1 cargo test --test it docs::catalog::`; do not edit by hand. -->\n\n",
    ));
    out.push_str(concat!(
        "Every diagnostic of `kdslc` has a stable code. Errors (`E…`) fail the\n",
        "build; warnings (`W…`) do not, unless `-D warnings` is given, and `-A CODE`\n",
        "silences one. Simulator reports (`S…`) come from running a kernel with\n",
        "`kdslc sim`: a deadlock, an invalid access, a barrier protocol violation;\n",
        "each is an error (exit status 4). Their examples carry the launch in a\n",
        "first `// sim ...` line. The first line of each message is the template below with its\n",
        "`{…}` filled in. `kdslc explain CODE` prints the section of one code: what it\n",
        "means, why the rule exists, an example that triggers it and the example\n",
        "fixed.\n\n",
    ));
    out.push_str("| code | severity | first line |\n| --- | --- | --- |\n");
    for info in CODES {
        out.push_str(&format!(
            "| [{}](#{}) | {} | {} |\n",
            info.code,
            anchor(info.code),
            severity_name(info.severity),
            info.title.replace('|', "\\|")
        ));
    }
    for info in CODES {
        out.push_str(&format!("\n<a id=\"{}\"></a>\n\n", anchor(info.code)));
        out.push_str(&demote_headings(info.explanation));
    }
    out
}

/// Adds one `#` to every markdown heading outside fenced code blocks.
fn demote_headings(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + 16);
    let mut in_fence = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        } else if !in_fence && line.starts_with('#') {
            out.push('#');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_extracted_in_order() {
        let md = "# X\n\n```kdsl\na\nb\n```\n\ntext\n\n```rust\nno\n```\n\n```kdsl\nc\n```\n";
        assert_eq!(
            kdsl_blocks(md),
            vec!["a\nb\n".to_string(), "c\n".to_string()]
        );
    }

    #[test]
    fn repeat_lines_are_written_out() {
        assert_eq!(
            expand_repeats("a\n  + 1 // ×3\nb\n"),
            "a\n  + 1\n  + 1\n  + 1\nb\n"
        );
        assert_eq!(expand_repeats("x // × no\n"), "x // × no\n");
        assert_eq!(expand_repeats("a\r\nb"), "a\r\nb");
    }

    #[test]
    fn headings_in_code_are_kept() {
        let md = "# T\n```kdsl\n# not a heading\n```\n## S\n";
        assert_eq!(
            demote_headings(md),
            "## T\n```kdsl\n# not a heading\n```\n### S\n"
        );
    }

    #[test]
    fn lookup_ignores_case_and_unknown_codes() {
        assert_eq!(lookup("e0301").map(|i| i.code), Some("E0301"));
        assert_eq!(lookup(" W0001 ").map(|i| i.code), Some("W0001"));
        assert!(lookup("E9999").is_none());
        assert!(lookup("").is_none());
    }
}
