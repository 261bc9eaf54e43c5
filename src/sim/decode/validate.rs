//! What ptxas refuses, for the subset the simulator runs: a module a GPU
//! would not load must not run here either. Module directives (a missing
//! or unknown `.version`, an unknown `.target` or one the version does not
//! support, `.address_size` other than 32 or 64), and the rules the
//! opcode tables check where they decode (`inst*.rs`: barrier numbers and
//! thread counts, `mbarrier.init` counts, operand types). Each error's
//! wording follows ptxas 13.5's.

use super::{err, LoadError, LoadErrorKind, RegClass};
use crate::sim::ptx::ast::{self, Pos};

/// The PTX ISA versions ptxas 13.5 knows (ISA 9.5 and earlier).
const VERSIONS: &[(u32, &[u32])] = &[
    (1, &[0, 1, 2, 3, 4, 5]),
    (2, &[0, 1, 2, 3]),
    (3, &[0, 1, 2]),
    (4, &[0, 1, 2, 3]),
    (5, &[0, 1]),
    (6, &[0, 1, 2, 3, 4, 5]),
    (7, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
    (8, &[0, 1, 2, 3, 4, 5, 6, 7, 8]),
    (9, &[0, 1, 2, 3, 4, 5]),
];

/// The targets ptxas 13.5 takes (`sm_` and `compute_`), with the first PTX
/// ISA version that supports each.
const TARGETS: &[(&str, (u32, u32))] = &[
    ("50", (4, 0)),
    ("52", (4, 1)),
    ("53", (4, 2)),
    ("60", (5, 0)),
    ("61", (5, 0)),
    ("62", (5, 0)),
    ("70", (6, 0)),
    ("72", (6, 1)),
    ("75", (6, 3)),
    ("80", (7, 0)),
    ("86", (7, 1)),
    ("87", (7, 4)),
    ("88", (9, 0)),
    ("89", (7, 8)),
    ("90", (7, 8)),
    ("90a", (8, 0)),
    ("100", (8, 6)),
    ("100a", (8, 6)),
    ("100f", (8, 8)),
    ("103", (8, 8)),
    ("103a", (8, 8)),
    ("103f", (8, 8)),
    ("110", (9, 0)),
    ("110a", (9, 0)),
    ("110f", (9, 0)),
    ("120", (8, 7)),
    ("120a", (8, 7)),
    ("120f", (8, 8)),
    ("121", (8, 8)),
    ("121a", (8, 8)),
    ("121f", (8, 8)),
];

/// The target options that may follow the architecture on `.target`.
const TARGET_OPTIONS: &[&str] = &[
    "texmode_unified",
    "texmode_independent",
    "debug",
    "map_f64_to_f32",
];

/// The position of the first line whose first word is `directive`, or the
/// module's first line.
fn directive_pos(ptx: &str, directive: &str) -> Pos {
    let mut start = 0u32;
    for (i, line) in ptx.split_inclusive('\n').enumerate() {
        let trimmed = line.trim_start();
        if trimmed.split_whitespace().next() == Some(directive) {
            let lead = (line.len() - trimmed.len()) as u32;
            let text = trimmed.trim_end();
            return Pos {
                start: start + lead,
                end: start + lead + text.len() as u32,
                line: i as u32 + 1,
            };
        }
        start += line.len() as u32;
    }
    Pos {
        start: 0,
        end: ptx.lines().next().map_or(0, |l| l.len() as u32),
        line: 1,
    }
}

/// The module's directives, as ptxas checks them.
pub(super) fn module(ptx: &str, m: &ast::Module) -> Result<(), LoadError> {
    let Some((major, minor)) = m.version else {
        return err(
            directive_pos(ptx, ".version"),
            LoadErrorKind::Invalid,
            "missing `.version` directive at the start of the module (ptxas: Missing .version directive)",
        );
    };
    let vpos = || directive_pos(ptx, ".version");
    let known = VERSIONS
        .iter()
        .any(|(ma, mis)| *ma == major && mis.contains(&minor));
    if !known {
        return err(
            vpos(),
            LoadErrorKind::Invalid,
            format!(
                "unsupported `.version {major}.{minor}`: ptxas 13.5 knows PTX ISA 9.5 and earlier"
            ),
        );
    }
    let tpos = || directive_pos(ptx, ".target");
    let Some(target) = &m.target else {
        return err(
            tpos(),
            LoadErrorKind::Invalid,
            "missing `.target` directive",
        );
    };
    let mut words = target.split(',').map(str::trim);
    let arch = words.next().unwrap_or("");
    if let Some(opt) = words.find(|w| !TARGET_OPTIONS.contains(w)) {
        return err(
            tpos(),
            LoadErrorKind::Invalid,
            format!("unknown `.target` option `{opt}`"),
        );
    }
    let number = arch
        .strip_prefix("sm_")
        .or_else(|| arch.strip_prefix("compute_"));
    let Some(&(_, min)) = number.and_then(|n| TARGETS.iter().find(|(t, _)| *t == n)) else {
        return err(
            tpos(),
            LoadErrorKind::Invalid,
            format!("unsupported `.target {arch}`"),
        );
    };
    if (major, minor) < min {
        return err(
            vpos(),
            LoadErrorKind::Invalid,
            format!(
                "PTX `.version {major}.{minor}` does not support `.target {arch}` (it needs {}.{} or later)",
                min.0, min.1
            ),
        );
    }
    if let Some(size) = m.address_size {
        if size != 32 && size != 64 {
            return err(
                directive_pos(ptx, ".address_size"),
                LoadErrorKind::Invalid,
                format!("illegal value {size} for `.address_size` (must be 32 or 64)"),
            );
        }
    }
    Ok(())
}

/// An initialiser with more elements than its variable: ptxas's
/// "Greater number of elements in array initializer".
pub(super) fn initializer(v: &ast::VarDecl) -> Result<(), LoadError> {
    if v.init.is_empty() || v.dims.iter().any(Option::is_none) {
        return Ok(());
    }
    let elements = v.dims.iter().fold(u64::from(v.vector.max(1)), |n, d| {
        n.saturating_mul(d.unwrap_or(1))
    });
    if v.init.len() as u64 > elements {
        return err(
            v.pos,
            LoadErrorKind::Invalid,
            format!(
                "the initializer of `{}` has {} elements, more than its {elements}",
                v.name,
                v.init.len()
            ),
        );
    }
    Ok(())
}

/// Which registers wider than an operand's type an instruction admits
/// (PTX ISA §5.2.1, as ptxas 13.5 applies it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Wider {
    /// None: arithmetic, comparisons, moves.
    No,
    /// For an 8- or 16-bit type only: the source of a conversion of a
    /// wider integer to a float (`cvt.rn.f32.u32 %f1, %rd1` is refused).
    SubWord,
    /// For any type: loads, stores and other conversions (`ld.u32 %rd1`,
    /// `st.f32 [a], %rd1`, `cvt.s64.s32 %rd1, %rd2`).
    Any,
}

/// Whether a register declared `have` may stand where an instruction
/// operand of type `want` is (PTX ISA §5.2.1; ptxas's "Arguments
/// mismatch"): a `.bN` operand takes any register of N bits, an integer one
/// bit and integer registers, a float one bit registers and floats of its
/// type; `wider` admits a bit or integer register wider than the type.
pub(super) fn compatible(have: RegClass, want: RegClass, wider: Wider) -> bool {
    if have.kind == b'p' || want.kind == b'p' {
        return have.kind == want.kind;
    }
    let kinds_ok = match want.kind {
        b'b' => true,
        b'u' | b's' => matches!(have.kind, b'b' | b'u' | b's'),
        _ => have.kind == b'b' || have.kind == b'f',
    };
    if !kinds_ok {
        return false;
    }
    let admitted = match wider {
        Wider::No => false,
        Wider::SubWord => want.bits < 32,
        Wider::Any => true,
    };
    have.bits == want.bits || (admitted && have.bits > want.bits && have.kind != b'f')
}
