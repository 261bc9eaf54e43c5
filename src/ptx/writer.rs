//! The state of one PTX function being written: its instruction text, the
//! virtual-register allocator, the label counter and the PTX version floor
//! the instructions emitted so far need.
//!
//! Every value gets a fresh virtual register (ptxas allocates the real ones);
//! locals get one register each, assigned with `mov`. Registers of a function
//! are declared once per class at its top (`.reg .b32 %r<N>;`), which is why
//! the body is written into a buffer first.

use super::error::{Error, ErrorKind, Result};
use super::lines::Lines;
use super::names::{barrier_symbol, shared_symbol, DYNAMIC_SHARED};
use crate::analysis::BodyInfo;
use crate::ir::layout::{Placement, SharedDecl, SharedLayout};
use crate::ir::{self, Special};
use crate::span::Span;
use crate::target::{PtxVersion, Target};
use crate::types::Scalar;
use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};

/// A register class: what `.reg` type a value lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Class {
    Pred,
    B16,
    B32,
    B64,
    F32,
    F64,
}

impl Class {
    pub(super) const ALL: [Class; 6] = [
        Class::Pred,
        Class::B16,
        Class::B32,
        Class::B64,
        Class::F32,
        Class::F64,
    ];

    /// `bool` → predicate, integers → `.b32`/`.b64`, `f16`/`bf16` → `.b16`,
    /// floats → `.f32`/`.f64` (what nvcc does; ptx-notes §9). The narrow
    /// integers (`u8`, `i8`, `u16`, `i16`) live in `.b32` registers, always
    /// sign- or zero-extended from their width (PTX has no 8-bit registers,
    /// and 16-bit integer registers would only add conversions).
    pub(super) fn of(ty: Scalar) -> Class {
        match ty {
            Scalar::Bool => Class::Pred,
            Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => Class::B32,
            Scalar::I32 | Scalar::U32 => Class::B32,
            // Storage types are moved, never computed with: their bits
            // (an fp8 zero-extended) in a `.b32` register.
            Scalar::E4M3 | Scalar::E5M2 | Scalar::TF32 => Class::B32,
            // A pair of halves: one `.b32` register, as nvcc keeps `half2`.
            Scalar::F16x2 | Scalar::BF16x2 => Class::B32,
            Scalar::I64 | Scalar::U64 => Class::B64,
            Scalar::F16 | Scalar::BF16 => Class::B16,
            Scalar::F32 => Class::F32,
            Scalar::F64 => Class::F64,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Class::Pred => "%p",
            Class::B16 => "%h",
            Class::B32 => "%r",
            Class::B64 => "%rd",
            Class::F32 => "%f",
            Class::F64 => "%fd",
        }
    }

    fn decl(self) -> &'static str {
        match self {
            Class::Pred => ".pred",
            Class::B16 => ".b16",
            Class::B32 => ".b32",
            Class::B64 => ".b64",
            Class::F32 => ".f32",
            Class::F64 => ".f64",
        }
    }
}

/// A virtual register, `%r7`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct Reg {
    pub(super) class: Class,
    n: u32,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.class.prefix(), self.n)
    }
}

/// An instruction operand: a register or an immediate (integer, `0f…`/`0d…`
/// float). `bool` and `f16`/`bf16` values are always in registers.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Operand {
    Reg(Reg),
    Imm(String),
}

impl Operand {
    pub(super) fn imm(v: impl fmt::Display) -> Operand {
        Operand::Imm(v.to_string())
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Reg(r) => r.fmt(f),
            Operand::Imm(s) => f.write_str(s),
        }
    }
}

/// A branch target, `$L_3` (`$` cannot appear in kdsl names, so labels never
/// collide with user symbols).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Label(u32);

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "$L_{}", self.0)
    }
}

/// A memory address, `[base+off]`: base is a register or a symbol.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Addr {
    pub(super) base: String,
    pub(super) off: i64,
}

impl Addr {
    /// The address as a `mov.u32` source: `sym` or `sym+off` (ptxas takes
    /// both; the shared-window address of the symbol plus the offset).
    pub(super) fn symbol_text(&self) -> String {
        match self.off {
            0 => self.base.clone(),
            off => format!("{}+{}", self.base, off),
        }
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.off {
            0 => write!(f, "[{}]", self.base),
            off => write!(f, "[{}+{}]", self.base, off),
        }
    }
}

/// Where `continue` and `break` go in the innermost loop.
#[derive(Clone, Copy, Debug)]
pub(super) struct LoopLabels {
    pub(super) cont: Label,
    pub(super) brk: Label,
}

/// How a `return` leaves the function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Exit {
    /// A kernel: `ret;`.
    Ret,
    /// A kernel that must synchronise its cluster before exiting: jump to
    /// the one exit block.
    Cluster(Label),
    /// A device function: store the value (if any) in `$ret`, then `ret;`.
    Func(Option<Scalar>),
}

/// How many registers of each class a function uses.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    pred: u32,
    b16: u32,
    b32: u32,
    b64: u32,
    f32: u32,
    f64: u32,
}

impl Counts {
    fn of(&mut self, class: Class) -> &mut u32 {
        match class {
            Class::Pred => &mut self.pred,
            Class::B16 => &mut self.b16,
            Class::B32 => &mut self.b32,
            Class::B64 => &mut self.b64,
            Class::F32 => &mut self.f32,
            Class::F64 => &mut self.f64,
        }
    }
}

/// Module-wide names the body needs: the `.func` symbol of every function.
pub(super) struct Names {
    pub(super) funcs: Vec<String>,
}

/// The writer of one `.entry` or `.func` body.
pub(super) struct Writer<'a> {
    pub(super) target: Target,
    pub(super) module: &'a ir::Module,
    pub(super) names: &'a Names,
    /// The kernel being written (`None` for a device function).
    pub(super) kernel: Option<&'a ir::Kernel>,
    pub(super) body: &'a ir::Body,
    /// The facts about `body`, by node id.
    pub(super) info: &'a BodyInfo,
    /// `kernel k` or `fn f`, for errors.
    item: String,
    out: String,
    /// For each line of `out`, the span current when it was written
    /// (`None` for labels and comments): the PTX→source map.
    spans: Vec<Option<Span>>,
    /// The IR node being written; set by [`Writer::at`].
    span: Option<Span>,
    counts: Counts,
    labels: u32,
    version: PtxVersion,
    pub(super) locals: Vec<Option<Reg>>,
    /// The registers in `locals`, to tell a local's register from a
    /// temporary in constant time (a scan of `locals` per operand made a
    /// body of N `let`s cost N^2).
    local_regs: HashSet<Reg>,
    /// Kernel parameters: the value (scalar) or the global base address.
    pub(super) params: Vec<Option<Reg>>,
    /// Special registers read once in the prologue.
    pub(super) specials: HashMap<Special, Operand>,
    pub(super) loops: Vec<LoopLabels>,
    /// Writing a copy of a guarded `while` loop's condition
    /// (`Writer::guarded_while`): loops inside keep the plain shape.
    pub(super) copying_condition: bool,
    /// Tracked-parity bits of each barrier group (kernels only): one
    /// 32-bit word per 32 barriers (see `barrier.rs`); empty when untracked.
    pub(super) parity: Vec<Vec<Reg>>,
    pub(super) exit: Exit,
    /// Registers holding the address of a shared symbol, set in the prologue.
    pub(super) bases: HashMap<String, Reg>,
    /// Registers holding the low word of the matrix descriptor of each
    /// array `wgmma` reads (and whether MN-major) at its start, set in
    /// the prologue (`tensor.rs`).
    pub(super) descriptor_bases: HashMap<(ir::SharedId, bool), Reg>,
    /// The kernel's shared-memory layout (kernels only): where each shared
    /// declaration starts ([`Writer::shared_start`]).
    pub(super) shared: Option<SharedLayout>,
}

/// What the writer of one body is given.
pub(super) struct Context<'a> {
    pub(super) target: Target,
    pub(super) module: &'a ir::Module,
    pub(super) names: &'a Names,
}

impl<'a> Writer<'a> {
    pub(super) fn new(
        cx: &Context<'a>,
        item: String,
        kernel: Option<&'a ir::Kernel>,
        (body, info): (&'a ir::Body, &'a BodyInfo),
        exit: Exit,
    ) -> Writer<'a> {
        Writer {
            target: cx.target,
            module: cx.module,
            names: cx.names,
            kernel,
            body,
            info,
            item,
            out: String::new(),
            spans: Vec::new(),
            span: None,
            counts: Counts::default(),
            labels: 0,
            version: cx.target.min_ptx_version(),
            locals: vec![None; body.locals.len()],
            local_regs: HashSet::new(),
            params: Vec::new(),
            specials: HashMap::new(),
            loops: Vec::new(),
            copying_condition: false,
            parity: Vec::new(),
            exit,
            bases: HashMap::new(),
            descriptor_bases: HashMap::new(),
            shared: kernel.map(SharedLayout::of),
        }
    }

    /// Where shared declaration `decl` of the kernel starts: its own
    /// `.shared` symbol in a static layout, the module's dynamic shared
    /// array plus the layout's offset in a dynamic one.
    pub(super) fn shared_start(&self, decl: SharedDecl) -> Result<Addr> {
        let (Some(k), Some(layout)) = (self.kernel, self.shared.as_ref()) else {
            return Err(self.invalid("shared memory outside a kernel"));
        };
        let symbol = match decl {
            SharedDecl::Array(id) => k.shared.get(id.index()).map(|a| shared_symbol(&a.name)),
            SharedDecl::Barriers(id) => k.barriers.get(id.index()).map(|b| barrier_symbol(&b.name)),
        };
        let Some(symbol) = symbol else {
            return Err(self.invalid(format!("shared declaration {decl:?} does not exist")));
        };
        match layout.placement() {
            Placement::Static => Ok(Addr {
                base: symbol,
                off: 0,
            }),
            Placement::Dynamic => {
                let offset = layout
                    .slots
                    .iter()
                    .find(|s| s.decl == decl)
                    .and_then(|s| s.offset)
                    .and_then(|o| i64::try_from(o).ok())
                    .filter(|o| *o <= i64::from(i32::MAX));
                match offset {
                    Some(off) => Ok(Addr {
                        base: DYNAMIC_SHARED.to_string(),
                        off,
                    }),
                    // The checker bounds the layout (E0122).
                    None => Err(self.invalid(format!(
                        "shared declaration `{symbol}` has no 32-bit offset in the dynamic layout"
                    ))),
                }
            }
        }
    }

    /// An error about the node being written.
    pub(super) fn error(&self, kind: ErrorKind) -> Error {
        Error {
            item: self.item.clone(),
            span: self.span,
            kind,
        }
    }

    /// [`Writer::error`] for IR that breaks an invariant.
    pub(super) fn invalid(&self, what: impl Into<String>) -> Error {
        self.error(ErrorKind::InvalidIr(what.into()))
    }

    /// An error unless the target is sm_90 or newer (the checker rejects
    /// `what` on older targets, E0200).
    pub(super) fn require_sm90(&self, what: &str) -> Result<()> {
        if self.target.has_sm90_features() {
            return Ok(());
        }
        Err(self.error(ErrorKind::NeedsSm90 {
            what: what.to_string(),
            target: self.target,
        }))
    }

    /// An error unless the target is one of `arch`, the
    /// architecture-specific targets of `what` (the checker rejects it
    /// elsewhere, E0200).
    pub(super) fn require_arch(&self, arch: &[Target], what: &str) -> Result<()> {
        if arch.contains(&self.target) {
            return Ok(());
        }
        Err(self.error(ErrorKind::NeedsArch {
            what: what.to_string(),
            arch: arch.to_vec(),
            target: self.target,
        }))
    }

    /// A fresh register of `class`.
    pub(super) fn reg(&mut self, class: Class) -> Reg {
        let c = self.counts.of(class);
        *c += 1;
        Reg { class, n: *c }
    }

    /// A fresh register for a value of type `ty`.
    pub(super) fn reg_for(&mut self, ty: Scalar) -> Reg {
        self.reg(Class::of(ty))
    }

    pub(super) fn label(&mut self) -> Label {
        self.labels += 1;
        Label(self.labels)
    }

    /// Records that the module needs at least PTX `major.minor`.
    pub(super) fn need(&mut self, major: u8, minor: u8) {
        self.version = self.version.max(PtxVersion::new(major, minor));
    }

    pub(super) fn version(&self) -> PtxVersion {
        self.version
    }

    /// Makes `span` the source of the instructions written from now on;
    /// returns the previous one, for the caller to restore with
    /// [`Writer::restore`] when the node is done.
    pub(super) fn at(&mut self, span: Span) -> Option<Span> {
        self.span.replace(span)
    }

    pub(super) fn restore(&mut self, previous: Option<Span>) {
        self.span = previous;
    }

    /// Appends one instruction line, mapped to the current span.
    pub(super) fn line(&mut self, args: fmt::Arguments<'_>) {
        let from = self.out.len();
        self.out.push('\t');
        let _ = self.out.write_fmt(args);
        self.out.push('\n');
        self.mark(from, self.span);
    }

    pub(super) fn place_label(&mut self, l: Label) {
        let from = self.out.len();
        let _ = writeln!(self.out, "{l}:");
        self.mark(from, None);
    }

    /// Maps every line written since byte `from` of the body to `span`.
    fn mark(&mut self, from: usize, span: Option<Span>) {
        let lines = self
            .out
            .get(from..)
            .map_or(0, |s| s.bytes().filter(|&b| b == b'\n').count());
        self.spans.extend(std::iter::repeat_n(span, lines));
    }

    /// The type of local `id`.
    pub(super) fn local_type(&self, id: ir::LocalId) -> Result<Scalar> {
        match self.body.locals.get(id.index()) {
            Some(l) => Ok(l.ty),
            None => Err(self.invalid(format!("local {} does not exist", id.0))),
        }
    }

    /// The register of local `id`, allocated on first use.
    pub(super) fn local(&mut self, id: ir::LocalId) -> Result<Reg> {
        if let Some(Some(r)) = self.locals.get(id.index()) {
            return Ok(*r);
        }
        let ty = self.local_type(id)?;
        let r = self.reg_for(ty);
        match self.locals.get_mut(id.index()) {
            Some(slot) => *slot = Some(r),
            None => return Err(self.invalid(format!("local {} does not exist", id.0))),
        }
        self.local_regs.insert(r);
        Ok(r)
    }

    /// A register holding the shared-window address of `symbol`: the one the
    /// prologue set, else a fresh `mov`.
    pub(super) fn symbol_base(&mut self, symbol: &str) -> Reg {
        if let Some(r) = self.bases.get(symbol) {
            return *r;
        }
        let r = self.reg(Class::B32);
        emit!(self, "mov.u32 {}, {};", r, symbol);
        r
    }

    pub(super) fn is_local_reg(&self, r: Reg) -> bool {
        self.local_regs.contains(&r)
    }

    /// `.reg` declarations for every class used, then the body with the
    /// span of each of its lines.
    pub(super) fn finish(mut self) -> (String, Lines) {
        let mut decls = String::new();
        for class in Class::ALL {
            let used = *self.counts.of(class);
            if used > 0 {
                let _ = writeln!(
                    decls,
                    "\t.reg {} {}<{}>;",
                    class.decl(),
                    class.prefix(),
                    used + 1
                );
            }
        }
        // Each accumulator's registers, for the whole kernel.
        for (i, a) in self.kernel.iter().flat_map(|k| k.accums.iter()).enumerate() {
            let _ = writeln!(
                decls,
                "\t.reg {} {}<{}>;",
                super::tensor::accum_decl(a.elem),
                super::tensor::accum_prefix(i),
                a.registers()
            );
        }
        (
            decls,
            Lines {
                text: self.out,
                spans: self.spans,
            },
        )
    }
}

/// Emits one instruction: `emit!(w, "add.s32 {}, {}, {};", d, a, b)`.
macro_rules! emit {
    ($w:expr, $($arg:tt)*) => {
        $w.line(format_args!($($arg)*))
    };
}
pub(super) use emit;
