//! PTX module → [`Program`]: names resolved to register slots, addresses
//! and instruction indices once, so that running a kernel never looks at a
//! string.
//!
//! The layout a [`Program`] fixes:
//! - **Register file** (per thread, `u64` slots): slot 0 holds 1 (the guard
//!   of unguarded instructions), then the special registers
//!   ([`specials::COUNT`] of them), then every register of every function (each
//!   function has its own slots, so a call needs no frame) and every
//!   distinct immediate (constant slots).
//! - **Shared memory** (per CTA): every `.shared` variable of the module,
//!   from offset [`SHARED_BASE`], with a red zone after each so that an
//!   overrun of one is reported instead of landing in the next.
//! - **Local memory** and **function parameters** (per thread): the same,
//!   for `.local` variables and the `.param` variables of `.func`s and call
//!   sites.
//! - **Global memory**: module `.global`/`.const` variables first, then the
//!   launch's array arguments, each its own allocation.

mod inst;
mod inst_control;
mod inst_cp_async;
mod inst_memory;
mod inst_sync;
mod inst_tensor;
pub(crate) mod layout;
mod mods;
pub mod ops;
mod scope;
mod validate;
use validate::Wider;
pub mod sem;
pub mod specials;

pub use inst_memory::STRONG_LOAD;

use super::ptx::ast::{self, FuncKind, Item, Loc, Pos};
use crate::launch::DynamicLayout;
use crate::span::Span;
use ops::*;
use scope::{Binding, Scopes};
use std::collections::HashMap;

/// Where the CTA's shared variables start (sm_90 reserves the first KiB).
pub const SHARED_BASE: u32 = 1024;
/// Bytes left unused after each shared/local variable.
pub const RED_ZONE: u32 = 32;
/// The most register slots a thread may have.
const MAX_SLOTS: u32 = 1 << 18;
/// The unsupported instructions a module keeps for its reports (the rest
/// are counted per function).
const MAX_UNSUPPORTED_KEPT: usize = 1000;

/// An error found while loading: the position in the PTX text and what.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadError {
    pub pos: Pos,
    pub kind: LoadErrorKind,
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadErrorKind {
    /// Not PTX the parser understands.
    Syntax,
    /// Valid PTX outside the simulator's subset.
    Unsupported,
    /// An unknown name, a bad operand.
    Invalid,
}

/// Where an instruction came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    pub pos: Pos,
    /// The latest `.loc` before the instruction.
    pub loc: Option<Loc>,
    /// The source span (filled by [`super::load`] from the `PtxSource`).
    pub span: Option<Span>,
    /// The function it belongs to.
    pub func: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct KernelParam {
    pub name: String,
    pub ty: Ty,
    pub offset: u32,
    pub size: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub func: u32,
    pub params: Vec<KernelParam>,
    pub param_size: u32,
    pub attrs: ast::FuncAttrs,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: String,
    pub entry: u32,
    pub end: u32,
}

/// A variable with a place in shared or local memory, for reports.
#[derive(Clone, Debug, PartialEq)]
pub struct MemVar {
    pub name: String,
    pub offset: u32,
    pub size: u32,
    pub elem: u32,
    pub decl: Site,
}

/// A module `.global`/`.const` variable: its own global allocation,
/// allocated when a launch runs (a declared size costs nothing at load).
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleVar {
    pub name: String,
    /// Bytes (at most 1 GiB).
    pub size: u64,
    /// The initialiser's bytes, at most `size`; the rest are zeros.
    pub init: Vec<u8>,
    pub read_only: bool,
    /// Its declared type, when a value type (`.f32`; not `.b8`).
    pub ty: Option<Ty>,
    pub elem: u32,
    pub decl: Site,
}

/// A decoded PTX module.
#[derive(Clone, Debug)]
pub struct Program {
    pub ptx: String,
    pub target: String,
    pub code: Vec<Inst>,
    pub sites: Vec<Site>,
    /// The memory semantics of each instruction (the run-time checks').
    pub sems: Vec<sem::Sem>,
    pub lists: Vec<u32>,
    pub syncs: Vec<SyncOp>,
    pub calls: Vec<CallInfo>,
    pub setp_ext: Vec<SetpExt>,
    pub funcs: Vec<Func>,
    pub kernels: Vec<Kernel>,
    /// The initial register file: constants in their slots, zero elsewhere.
    pub template: Vec<u64>,
    pub shared: Vec<MemVar>,
    pub shared_size: u32,
    /// The static shared variables as a GPU lays them out (each aligned
    /// after the one before, no red zones): `%total_smem_size`'s part.
    pub gpu_static_shared: u32,
    /// Where the dynamic shared memory starts, when the module declares an
    /// unsized `.extern .shared` array (every such array starts there; each
    /// launch gives its size: `crate::sim::shared`).
    pub dynamic_base: Option<u32>,
    /// The indices in `shared` of those arrays (size 0 here).
    pub dynamic_vars: Vec<usize>,
    pub local: Vec<MemVar>,
    pub local_size: u32,
    pub fparam_size: u32,
    pub module_vars: Vec<ModuleVar>,
    /// Per byte of shared / local memory: 1 + the index of the variable
    /// there, 0 in the red zones (see [`owner_map`]).
    pub shared_owner: Vec<u16>,
    pub local_owner: Vec<u16>,
    /// The declared registers, for reports: (first slot, count, name; a
    /// range `%f<128>` is `%f` with 128 slots), in increasing slots.
    pub reg_names: Vec<(u32, u32, String)>,
    /// The instructions outside the subset (decoded as `trap`, never run:
    /// a kernel that reaches one is refused), the first
    /// [`MAX_UNSUPPORTED_KEPT`] of the module, and how many each function
    /// has in all.
    pub unsupported: Vec<(u32, LoadError)>,
    pub unsupported_count: Vec<u64>,
}

impl Program {
    /// The functions a kernel runs: its own and every one it calls,
    /// directly or not (ascending).
    pub fn reach(&self, kernel: &Kernel) -> Vec<u32> {
        let n = self.funcs.len();
        let mut seen = vec![false; n];
        let mut stack = vec![kernel.func];
        while let Some(f) = stack.pop() {
            let Some(s) = seen.get_mut(f as usize) else {
                continue;
            };
            if *s {
                continue;
            }
            *s = true;
            let Some(func) = self.funcs.get(f as usize) else {
                continue;
            };
            let range = func.entry as usize..(func.end as usize).min(self.code.len());
            for inst in self.code.get(range).unwrap_or(&[]) {
                if inst.op == Op::Call {
                    if let Some(c) = self.calls.get(inst.aux as usize) {
                        stack.push(c.func);
                    }
                }
            }
        }
        (0..n as u32)
            .filter(|&f| seen.get(f as usize) == Some(&true))
            .collect()
    }

    /// The name of the register in `slot` (`%f12`), if it is one.
    pub fn reg_name(&self, slot: u32) -> Option<String> {
        let i = self
            .reg_names
            .partition_point(|&(base, _, _)| base <= slot)
            .checked_sub(1)?;
        let (base, count, name) = self.reg_names.get(i)?;
        if slot >= base + count {
            return None;
        }
        Some(if *count == 1 && !name.ends_with('<') {
            name.clone()
        } else {
            format!("{}{}", name.trim_end_matches('<'), slot - base)
        })
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The instruction's text as written (opcode and operands).
    pub fn inst_text(&self, pc: usize) -> &str {
        self.sites
            .get(pc)
            .and_then(|s| self.ptx.get(s.pos.start as usize..s.pos.end as usize))
            .unwrap_or("")
    }
}

/// Decodes a parsed module.
///
/// `dynamic` gives kdslc's layout of each kernel placed in dynamic shared
/// memory: the decoder resolves `$dsmem+offset` in that kernel to where the
/// simulator places the declaration ([`crate::sim::dynamic::remap`]).
pub fn decode<'m>(
    ptx: &str,
    module: &'m ast::Module,
    dynamic: &'m [(String, DynamicLayout)],
) -> Result<Program, LoadError> {
    validate::module(ptx, module)?;
    let mut b = Builder::new(module);
    if ptx.contains("%reserved_smem_offset_") {
        // The reserved KiB below the variables (sm_80+), which the module
        // addresses through `%reserved_smem_offset_*`: a variable of its
        // own, so that accesses inside it are in bounds (and an access at
        // offset 0 of a module that does not read them stays a fault).
        b.shared.push(MemVar {
            name: specials::RESERVED_NAME.to_string(),
            offset: 0,
            size: specials::RESERVED_END,
            elem: 1,
            decl: b.site(Pos::default()),
        });
    }
    b.dynamic_base = layout::dynamic_base(module)?;
    b.layouts = dynamic;
    b.module_vars()?;
    b.declare_functions()?;
    for (i, f) in module.functions.iter().enumerate() {
        b.function(i as u32, f)?;
    }
    b.check_recursion()?;
    let shared_owner = layout::owner_map(&b.shared, b.shared_size);
    let local_owner = layout::owner_map(&b.local, b.local_size);
    Ok(Program {
        ptx: ptx.to_string(),
        target: module.target.clone().unwrap_or_default(),
        code: b.code,
        sites: b.sites,
        sems: b.sems,
        lists: b.lists,
        syncs: b.syncs,
        calls: b.calls,
        setp_ext: b.setp_ext,
        funcs: b.funcs,
        kernels: b.kernels,
        template: b.template,
        shared: b.shared,
        shared_size: b.shared_size,
        gpu_static_shared: u32::try_from(b.gpu_static_shared).unwrap_or(u32::MAX),
        dynamic_base: b.dynamic_base,
        dynamic_vars: b.dynamic_vars,
        local: b.local,
        local_size: b.local_size,
        fparam_size: b.fparam_size,
        module_vars: b.module_vars,
        shared_owner,
        local_owner,
        reg_names: b.reg_names,
        unsupported: b.unsupported,
        unsupported_count: b.unsupported_count,
    })
}

/// The formal parameters of a function in the thread's parameter area.
#[derive(Clone, Debug, Default)]
struct Formals {
    params: Vec<(u32, u32)>,
    rets: Vec<(u32, u32)>,
}

struct Builder<'m> {
    module: &'m ast::Module,
    code: Vec<Inst>,
    sites: Vec<Site>,
    sems: Vec<sem::Sem>,
    lists: Vec<u32>,
    syncs: Vec<SyncOp>,
    calls: Vec<CallInfo>,
    setp_ext: Vec<SetpExt>,
    funcs: Vec<Func>,
    formals: Vec<Formals>,
    kernels: Vec<Kernel>,
    template: Vec<u64>,
    consts: HashMap<u64, u32>,
    shared: Vec<MemVar>,
    shared_size: u32,
    gpu_static_shared: u64,
    dynamic_base: Option<u32>,
    dynamic_vars: Vec<usize>,
    /// kdslc's dynamic layouts, by kernel, and the one of the kernel being
    /// decoded.
    layouts: &'m [(String, DynamicLayout)],
    layout: Option<&'m DynamicLayout>,
    local: Vec<MemVar>,
    local_size: u32,
    fparam_size: u32,
    module_vars: Vec<ModuleVar>,
    scopes: Scopes,
    /// The function being decoded and the latest `.loc`.
    func: u32,
    loc: Option<Loc>,
    reg_names: Vec<(u32, u32, String)>,
    unsupported: Vec<(u32, LoadError)>,
    unsupported_count: Vec<u64>,
    /// The declared type of each register: (first slot, count, type), in
    /// increasing slots.
    reg_types: Vec<(u32, u32, Option<Ty>)>,
    /// The same with the type's kind as written (`.b32` is not `.u32` to
    /// ptxas's operand checks).
    reg_classes: Vec<(u32, u32, Option<RegClass>)>,
}

/// A register or instruction type as written: its kind (`b`, `u`, `s`,
/// `f`, `p` for `.pred`) and bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RegClass {
    pub kind: u8,
    pub bits: u32,
}

impl RegClass {
    /// `b32` → (`b`, 32); `pred` → (`p`, 1); packed and unknown types: none.
    pub(super) fn of(word: &str) -> Option<RegClass> {
        if word == "pred" {
            return Some(RegClass {
                kind: b'p',
                bits: 1,
            });
        }
        let kind = *word.as_bytes().first()?;
        let bits: u32 = word.get(1..)?.parse().ok()?;
        matches!(kind, b'b' | b'u' | b's' | b'f').then_some(RegClass { kind, bits })
    }
}

fn err<T>(pos: Pos, kind: LoadErrorKind, message: impl Into<String>) -> Result<T, LoadError> {
    Err(LoadError {
        pos,
        kind,
        message: message.into(),
    })
}

impl<'m> Builder<'m> {
    fn new(module: &'m ast::Module) -> Builder<'m> {
        let mut template = vec![1u64];
        template.resize(1 + specials::COUNT, 0);
        Builder {
            module,
            code: Vec::new(),
            sites: Vec::new(),
            sems: Vec::new(),
            lists: Vec::new(),
            syncs: Vec::new(),
            calls: Vec::new(),
            setp_ext: Vec::new(),
            funcs: Vec::new(),
            formals: Vec::new(),
            kernels: Vec::new(),
            template,
            consts: HashMap::new(),
            shared: Vec::new(),
            shared_size: SHARED_BASE,
            gpu_static_shared: 0,
            dynamic_base: None,
            dynamic_vars: Vec::new(),
            layouts: &[],
            layout: None,
            local: Vec::new(),
            local_size: 0,
            fparam_size: 0,
            module_vars: Vec::new(),
            scopes: Scopes::default(),
            func: 0,
            loc: None,
            reg_names: Vec::new(),
            unsupported: Vec::new(),
            unsupported_count: vec![0; module.functions.len()],
            reg_types: Vec::new(),
            reg_classes: Vec::new(),
        }
    }

    /// ptxas's operand check (`validate::compatible`): when `op` is a
    /// register (or a vector of them) with a declared type, it must suit
    /// an instruction operand of type `word` (`u32`, `b64`, `f32`);
    /// `wider` admits wider registers for 8- and 16-bit types (loads,
    /// stores, conversions).
    pub(super) fn check_operand(
        &self,
        op: Option<&ast::Operand>,
        word: &str,
        wider: validate::Wider,
        opcode: &str,
    ) -> Result<(), (LoadErrorKind, String)> {
        let Some(want) = RegClass::of(word) else {
            return Ok(());
        };
        let names: Vec<&str> = match op {
            Some(ast::Operand::Name(n)) => vec![n.as_str()],
            Some(ast::Operand::Vector(parts)) => parts
                .iter()
                .filter_map(|p| match p {
                    ast::Operand::Name(n) => Some(n.as_str()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
        for name in names {
            let Some(scope::Binding::Reg(slot)) = self.scopes.lookup(name) else {
                continue;
            };
            let Some(have) = self.slot_class(slot) else {
                continue;
            };
            if !validate::compatible(have, want, wider) {
                let kind = |c: RegClass| {
                    if c.kind == b'p' {
                        "pred".to_string()
                    } else {
                        format!("{}{}", c.kind as char, c.bits)
                    }
                };
                return Err((
                    LoadErrorKind::Invalid,
                    format!(
                        "`{name}` is a `.{}` register, and `{opcode}` takes `.{}` there (ptxas: Arguments mismatch for instruction '{opcode}')",
                        kind(have),
                        kind(want)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn slot_class(&self, slot: u32) -> Option<RegClass> {
        let i = self
            .reg_classes
            .partition_point(|&(base, _, _)| base <= slot)
            .checked_sub(1)?;
        let &(base, count, class) = self.reg_classes.get(i)?;
        if slot >= base + count {
            return None;
        }
        class
    }

    /// Whether `name` is a register declared `.pred`.
    fn is_pred_register(&self, name: &str) -> bool {
        matches!(self.scopes.lookup(name), Some(Binding::Reg(slot)) if self.slot_type(slot) == Some(Ty::Pred))
    }

    /// The declared type of the register in `slot` (`None`: not a
    /// register, or of a type the simulator does not name).
    fn slot_type(&self, slot: u32) -> Option<Ty> {
        let i = self
            .reg_types
            .partition_point(|&(base, _, _)| base <= slot)
            .checked_sub(1)?;
        let &(base, count, ty) = self.reg_types.get(i)?;
        if slot >= base + count {
            return None;
        }
        ty
    }

    /// An instruction (or call) outside the subset in the function being
    /// decoded: kept for the reports of the kernels that reach it.
    fn note_unsupported(&mut self, func: u32, error: LoadError) {
        if let Some(c) = self.unsupported_count.get_mut(func as usize) {
            *c += 1;
        }
        if self.unsupported.len() < MAX_UNSUPPORTED_KEPT {
            self.unsupported.push((func, error));
        }
    }

    fn site(&self, pos: Pos) -> Site {
        Site {
            pos,
            loc: self.loc,
            span: None,
            func: self.func,
        }
    }

    /// A constant slot holding `value`.
    fn constant(&mut self, value: u64) -> Result<u32, String> {
        if let Some(&slot) = self.consts.get(&value) {
            return Ok(slot);
        }
        let slot = self.new_slots(1)?;
        if let Some(s) = self.template.get_mut(slot as usize) {
            *s = value;
        }
        self.consts.insert(value, slot);
        Ok(slot)
    }

    fn new_slots(&mut self, n: u32) -> Result<u32, String> {
        let first = self.template.len() as u32;
        if first.saturating_add(n) > MAX_SLOTS {
            return Err(format!(
                "the module declares more than {MAX_SLOTS} registers, more than the simulator holds per thread"
            ));
        }
        self.template.resize((first + n) as usize, 0);
        Ok(first)
    }

    fn module_vars(&mut self) -> Result<(), LoadError> {
        for v in &self.module.vars {
            let binding = match v.space {
                ast::Space::Shared => Binding::Shared(self.add_shared(v)?),
                ast::Space::Global | ast::Space::Const => Binding::Global(self.add_module_var(v)?),
                ast::Space::Local => Binding::Local(self.add_local(v)?),
                ast::Space::Reg | ast::Space::Param => {
                    return err(
                        v.pos,
                        LoadErrorKind::Invalid,
                        "registers and parameters cannot be declared at module scope",
                    )
                }
            };
            self.scopes.declare_global(&v.name, binding);
        }
        Ok(())
    }

    /// Every function gets its index and its formal parameters before any
    /// body is decoded, so calls may precede the callee.
    fn declare_functions(&mut self) -> Result<(), LoadError> {
        let mut defined: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for f in &self.module.functions {
            if f.body.is_some() && !defined.insert(f.name.as_str()) {
                return err(
                    f.pos,
                    LoadErrorKind::Invalid,
                    format!("duplicate definition of function `{}`", f.name),
                );
            }
        }
        for (i, f) in self.module.functions.iter().enumerate() {
            if f.kind == FuncKind::Func {
                let mut formals = Formals::default();
                for p in &f.params {
                    formals.params.push(self.add_fparam(p)?);
                }
                for p in &f.rets {
                    formals.rets.push(self.add_fparam(p)?);
                }
                self.formals.push(formals);
            } else {
                self.formals.push(Formals::default());
            }
            self.funcs.push(Func {
                name: f.name.clone(),
                entry: u32::MAX,
                end: u32::MAX,
            });
            self.scopes.declare_global(&f.name, Binding::Func(i as u32));
        }
        Ok(())
    }

    fn function(&mut self, index: u32, f: &ast::Function) -> Result<(), LoadError> {
        self.func = index;
        self.loc = None;
        self.layout = match f.kind {
            FuncKind::Entry => self
                .layouts
                .iter()
                .find(|(k, _)| *k == f.name)
                .map(|(_, l)| l),
            _ => None,
        };
        let Some(body) = &f.body else {
            return Ok(());
        };
        let entry = self.code.len() as u32;
        self.scopes.push();
        let mut kernel_params = Vec::new();
        match f.kind {
            FuncKind::Entry => {
                let mut offset = 0u64;
                for p in &f.params {
                    let (size, align, _) =
                        Self::var_size(p).or_else(|m| err(p.pos, LoadErrorKind::Unsupported, m))?;
                    offset = layout::align_up(offset, align);
                    self.scopes.declare(&p.name, Binding::Param(offset as u32));
                    kernel_params.push(KernelParam {
                        name: p.name.clone(),
                        ty: Ty::from_name(&p.ty).unwrap_or(Ty::U8),
                        offset: offset as u32,
                        size: size as u32,
                    });
                    offset += size;
                }
                if offset > 32764 {
                    return err(
                        f.pos,
                        LoadErrorKind::Invalid,
                        "kernel parameters exceed 32764 bytes",
                    );
                }
                self.kernels.push(Kernel {
                    name: f.name.clone(),
                    func: index,
                    params: kernel_params,
                    param_size: offset as u32,
                    attrs: f.attrs.clone(),
                });
            }
            FuncKind::Func => {
                let formals = self
                    .formals
                    .get(index as usize)
                    .cloned()
                    .unwrap_or_default();
                for (p, (off, _)) in f.params.iter().zip(&formals.params) {
                    self.scopes.declare(&p.name, Binding::FuncParam(*off));
                }
                for (p, (off, _)) in f.rets.iter().zip(&formals.rets) {
                    self.scopes.declare(&p.name, Binding::FuncParam(*off));
                }
            }
        }
        // Pass 1: the pc of every label, block by block in walk order.
        let mut labels = Vec::new();
        let mut pc = entry;
        collect_labels(body, &mut pc, &mut labels)
            .or_else(|(pos, m)| err(pos.unwrap_or(f.pos), LoadErrorKind::Invalid, m))?;
        // Pass 2: declarations and instructions.
        let mut block_index = 0usize;
        self.block(body, &labels, &mut block_index)?;
        // Falling off the end returns.
        let end_pos = self.sites.last().map(|s| s.pos).unwrap_or(f.pos);
        self.push(
            Inst {
                op: Op::Ret,
                guard: 0,
                d: NO_DEST,
                a: 0,
                b: 0,
                c: 0,
                off: 0,
                aux: 0,
            },
            end_pos,
        );
        self.scopes.pop();
        if let Some(func) = self.funcs.get_mut(index as usize) {
            func.entry = entry;
            func.end = self.code.len() as u32;
        }
        Ok(())
    }

    fn push(&mut self, inst: Inst, pos: Pos) {
        self.code.push(inst);
        let site = self.site(pos);
        self.sites.push(site);
        self.sems.push(sem::Sem::default());
    }

    fn block(
        &mut self,
        block: &ast::Block,
        labels: &[HashMap<String, u32>],
        index: &mut usize,
    ) -> Result<(), LoadError> {
        let mine = labels.get(*index).cloned().unwrap_or_default();
        *index += 1;
        self.scopes.push();
        for (name, pc) in mine {
            self.scopes.declare(&name, Binding::Label(pc));
        }
        for item in &block.items {
            match item {
                Item::Label(..) => {}
                Item::Loc(loc) => self.loc = Some(*loc),
                Item::Block(inner) => self.block(inner, labels, index)?,
                Item::Var(v) => self.local_var(v)?,
                Item::Inst(i) => self.instruction(i)?,
            }
        }
        self.scopes.pop();
        Ok(())
    }

    fn local_var(&mut self, v: &ast::VarDecl) -> Result<(), LoadError> {
        let binding = match v.space {
            ast::Space::Reg => {
                let count = v.range.unwrap_or(1);
                let base = self
                    .new_slots(count.max(1))
                    .or_else(|m| err(v.pos, LoadErrorKind::Unsupported, m))?;
                self.reg_types
                    .push((base, count.max(1), Ty::from_name(&v.ty)));
                self.reg_classes
                    .push((base, count.max(1), RegClass::of(&v.ty)));
                if v.range.is_some() {
                    self.scopes.declare_range(&v.name, base, count);
                    // `<` marks a range: `%f<` names `%f0`, `%f1`, ...
                    self.reg_names
                        .push((base, count.max(1), format!("{}<", v.name)));
                    return Ok(());
                }
                self.reg_names.push((base, 1, v.name.clone()));
                Binding::Reg(base)
            }
            ast::Space::Shared => Binding::Shared(self.add_shared(v)?),
            ast::Space::Local => Binding::Local(self.add_local(v)?),
            ast::Space::Param => Binding::FuncParam(self.add_fparam(v)?.0),
            ast::Space::Global | ast::Space::Const => Binding::Global(self.add_module_var(v)?),
        };
        self.scopes.declare(&v.name, binding);
        Ok(())
    }

    /// Decodes one instruction. One outside the subset is noted and
    /// stands as a `trap` (its kernels are refused before they run), so
    /// that every such instruction is listed and the other kernels of the
    /// module still run; any other error ends the load.
    fn instruction(&mut self, i: &ast::Instruction) -> Result<(), LoadError> {
        let inst = match inst::decode(self, i) {
            Ok(inst) => inst,
            Err((LoadErrorKind::Unsupported, message)) => {
                let error = LoadError {
                    pos: i.pos,
                    kind: LoadErrorKind::Unsupported,
                    message,
                };
                self.note_unsupported(self.func, error);
                inst::base_inst(Op::Trap)
            }
            Err((kind, message)) => {
                return Err(LoadError {
                    pos: i.pos,
                    kind,
                    message,
                })
            }
        };
        self.push(inst, i.pos);
        if let Some(s) = self.sems.last_mut() {
            *s = sem::of(i);
        }
        Ok(())
    }

    /// A call cycle cannot be given static register slots: each call that
    /// closes one is noted as outside the subset.
    fn check_recursion(&mut self) -> Result<(), LoadError> {
        let n = self.funcs.len();
        let mut edges: Vec<Vec<(u32, usize)>> = vec![Vec::new(); n];
        for (pc, inst) in self.code.iter().enumerate() {
            if inst.op == Op::Call {
                if let (Some(site), Some(call)) =
                    (self.sites.get(pc), self.calls.get(inst.aux as usize))
                {
                    if let Some(e) = edges.get_mut(site.func as usize) {
                        e.push((call.func, pc));
                    }
                }
            }
        }
        // Depth-first search with colours: 0 new, 1 on the stack, 2 done.
        let mut colour = vec![0u8; n];
        for root in 0..n {
            if colour.get(root) != Some(&0) {
                continue;
            }
            let mut stack = vec![(root, 0usize)];
            if let Some(c) = colour.get_mut(root) {
                *c = 1;
            }
            while let Some((f, next)) = stack.pop() {
                let Some(&(callee, pc)) = edges.get(f).and_then(|e| e.get(next)) else {
                    if let Some(c) = colour.get_mut(f) {
                        *c = 2;
                    }
                    continue;
                };
                stack.push((f, next + 1));
                match colour.get(callee as usize) {
                    Some(1) => {
                        let pos = self.sites.get(pc).map(|s| s.pos).unwrap_or_default();
                        let name = self
                            .funcs
                            .get(callee as usize)
                            .map_or("?", |f| f.name.as_str())
                            .to_string();
                        self.note_unsupported(
                            f as u32,
                            LoadError {
                                pos,
                                kind: LoadErrorKind::Unsupported,
                                message: format!(
                                    "`call` is outside the simulator's PTX subset: recursive call of `{name}` (recursion is not supported)"
                                ),
                            },
                        );
                    }
                    Some(0) => {
                        if let Some(c) = colour.get_mut(callee as usize) {
                            *c = 1;
                        }
                        stack.push((callee as usize, 0));
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

/// Assigns pcs: the labels of each block (in walk order) and where they point.
/// A label defined twice in one block is an error at the second (ptxas:
/// "Duplicate definition of label").
fn collect_labels(
    block: &ast::Block,
    pc: &mut u32,
    out: &mut Vec<HashMap<String, u32>>,
) -> Result<(), (Option<Pos>, String)> {
    let me = out.len();
    out.push(HashMap::new());
    for item in &block.items {
        match item {
            Item::Label(name, pos) => {
                let labels = out
                    .get_mut(me)
                    .ok_or((None, "internal: label table".to_string()))?;
                if labels.insert(name.clone(), *pc).is_some() {
                    return Err((
                        Some(*pos),
                        format!("duplicate definition of label `{name}`"),
                    ));
                }
            }
            Item::Inst(_) => *pc += 1,
            Item::Block(inner) => collect_labels(inner, pc, out)?,
            Item::Var(_) | Item::Loc(_) => {}
        }
    }
    Ok(())
}
