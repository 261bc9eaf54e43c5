//! Generated valid kdsl programs that, over a run, exercise every statement
//! and expression form of docs/language.md and every operand boundary the
//! hardware has, with an "invalid by one" variant for each boundary.
//!
//! Every program must compile without diagnostics (the warnings a program
//! carries on purpose, such as W0002 for a cluster of 9 to 16 CTAs, are
//! listed in [`Program::allow`]) and ptxas must accept its PTX. Coverage is
//! recorded where the text is written ([`Gen::note`] sits beside each
//! emission) and checked against [`required_features`]: a generator that
//! stops producing something fails the coverage test.
//!
//! Boundaries are written with a marker comment (`/*@3*/1048575`); each
//! marker has a [`Variant`]: the same program with the value one step past
//! the boundary, which must be exactly one error with the expected code.
//! Enumerations (cast pairs, element types, cluster sizes, ...) are swept
//! by the program's index, so that a fixed number of consecutive programs
//! covers all of them whatever the random choices.

use super::rng::XorShift;
use std::collections::BTreeSet;

/// The scalar types, shared with the expression generator.
pub use super::gen_expr::Ty;

pub const TYS: [Ty; 13] = Ty::ALL;
const INTS: [Ty; 8] = Ty::INTS;

/// The per-thread mask values: the lane masks and the active mask.
const MASK_VALUES: [&str; 6] = [
    "lane_mask_eq",
    "lane_mask_lt",
    "lane_mask_le",
    "lane_mask_gt",
    "lane_mask_ge",
    "active_mask",
];

/// One boundary stepped over: replace `marker` (with the value after it)
/// by `replacement`; the compiler must say `code`, and nothing else.
#[derive(Clone, Debug)]
pub struct Variant {
    pub marker: String,
    pub replacement: String,
    pub code: &'static str,
    pub what: String,
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    pub source: String,
    /// The text of `lib.kdsl`, which the program imports, if it does.
    pub lib: Option<String>,
    /// Uses something that needs sm_90 (else it is also assembled for sm_80).
    pub sm90: bool,
    /// Uses something only sm_90a has (`set_max_regs`): compiled and
    /// assembled for sm_90a alone.
    pub sm90a: bool,
    /// Warnings the program has on purpose, allowed when it is compiled.
    pub allow: Vec<&'static str>,
    pub features: BTreeSet<String>,
    pub variants: Vec<Variant>,
    /// `--const` values the program is compiled with (kernel constants):
    /// every instantiation they make is compiled and assembled.
    pub consts: Vec<String>,
}

impl Program {
    pub fn variant_source(&self, v: &Variant) -> String {
        self.source.replacen(&v.marker, &v.replacement, 1)
    }
}

/// What a kernel body can read.
#[derive(Clone, Default)]
struct Env {
    vars: Vec<(String, Ty)>,
    /// Device functions: name, parameter types, return type.
    fns: Vec<(String, Vec<Ty>, Option<Ty>)>,
    /// Built-in values of clusters are usable (sm_90).
    cluster_values: bool,
    /// In a kernel (warp functions are fine anywhere; this gates nothing
    /// today but keeps functions free of kernel-only names).
    in_kernel: bool,
}

impl Env {
    /// The variables of type `ty`.
    fn of_type(&self, ty: Ty) -> Vec<&String> {
        self.vars
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(n, _)| n)
            .collect()
    }
}

pub struct Gen {
    state: XorShift,
    /// The program's index: sweeps go round with it.
    pub index: u64,
    fresh: usize,
    markers: usize,
    p: Program,
}

impl Gen {
    pub fn new(index: u64, seed: u64) -> Gen {
        Gen {
            state: XorShift(
                (seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03))
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    | 1,
            ),
            index,
            fresh: 0,
            markers: 0,
            p: Program::default(),
        }
    }

    fn next(&mut self) -> u64 {
        self.state.next()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    /// The `k`-th of `xs` for this program when each program takes `per`
    /// of them: consecutive programs sweep the list.
    fn sweep<T: Copy>(&self, xs: &[T], per: u64, k: u64) -> T {
        xs[((self.index.wrapping_mul(per) + k) % xs.len() as u64) as usize]
    }

    fn name(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    /// Records a feature as covered: called right where its text is made.
    fn note(&mut self, feature: impl Into<String>) {
        self.p.features.insert(feature.into());
    }

    /// `text`, noting that it uses `feature`.
    fn noted(&mut self, feature: impl Into<String>, text: String) -> String {
        self.note(feature);
        text
    }

    /// A boundary value with its invalid neighbour.
    fn bound(&mut self, feature: &str, value: &str, past: &str, code: &'static str) -> String {
        self.markers += 1;
        let marker = format!("/*@{}*/{value}", self.markers);
        self.p.variants.push(Variant {
            marker: marker.clone(),
            replacement: past.to_string(),
            code,
            what: format!("{feature}: {value} -> {past}"),
        });
        self.note(format!("bound:{feature}"));
        marker
    }

    // ---- literals and expressions -------------------------------------

    fn literal(&mut self, ty: Ty) -> String {
        match ty {
            Ty::Bool => self.pick(&["true", "false"]).to_string(),
            t if t.is_int() => {
                // In range for every integer type: `i8` takes up to 127
                // (and -128), `u8` up to 255.
                let v = if t == Ty::I8 {
                    self.below(100) + 1
                } else {
                    self.below(200) + 1
                };
                match self.below(7) {
                    0 => self.noted("lit:hex", format!("0x{v:X}")),
                    1 => self.noted("lit:bin", format!("0b{v:b}")),
                    2 => self.noted(
                        format!("lit:suffix:{}", t.name()),
                        format!("{v}{}", t.name()),
                    ),
                    3 if t.size() == 1 => self.noted("lit:underscore", format!("1_{}", v % 10)),
                    3 => self.noted("lit:underscore", format!("1_{v:03}")),
                    4 if t.is_signed() => self.noted("lit:negative", format!("(-{v})")),
                    _ => v.to_string(),
                }
            }
            t => {
                let (a, b) = (self.below(20), self.below(10));
                match self.below(6) {
                    0 => self.noted("lit:exponent", format!("{a}.{b}e-1")),
                    1 => self.noted(
                        format!("lit:suffix:{}", t.name()),
                        format!("{a}.{b}{}", t.name()),
                    ),
                    2 => self.noted("lit:int_as_float", format!("{}", a + 1)),
                    3 => self.noted("lit:negative", format!("(-{a}.{b})")),
                    _ => format!("{a}.{b}"),
                }
            }
        }
    }

    fn builtin_value(&mut self, env: &Env) -> String {
        let mut names = vec![
            "thread_idx.x",
            "thread_idx.y",
            "thread_idx.z",
            "block_dim.x",
            "block_dim.y",
            "block_dim.z",
            "block_idx.x",
            "block_idx.y",
            "block_idx.z",
            "grid_dim.x",
            "grid_dim.y",
            "grid_dim.z",
            "lane_id",
            "warp_id",
        ];
        if env.cluster_values {
            names.extend([
                "cluster_rank",
                "cluster_size",
                "cluster_idx.x",
                "cluster_idx.y",
                "cluster_idx.z",
                "cluster_dim.x",
                "cluster_dim.y",
                "cluster_dim.z",
                "cluster_grid_idx.x",
                "cluster_grid_idx.y",
                "cluster_grid_dim.z",
            ]);
        }
        let n = self.pick(&names);
        self.note(format!("value:{}", n.split('.').next().unwrap_or(n)));
        n.to_string()
    }

    fn leaf(&mut self, ty: Ty, env: &Env) -> String {
        let vars = env.of_type(ty);
        if !vars.is_empty() && self.below(3) != 0 {
            return vars[self.below(vars.len() as u64) as usize].clone();
        }
        if ty == Ty::U32 && self.chance(3) {
            return self.builtin_value(env);
        }
        self.literal(ty)
    }

    fn cast(&mut self, from: Ty, to: Ty, env: &Env, d: u32) -> String {
        self.note(format!("cast:{}->{}", from.name(), to.name()));
        let e = self.anchored(from, env, d);
        format!("({e} as {})", to.name())
    }

    /// A leaf that has its type whatever the context: a variable, or a
    /// literal with a suffix.
    fn typed_leaf(&mut self, ty: Ty, env: &Env) -> String {
        let vars = env.of_type(ty);
        if !vars.is_empty() && self.chance(2) {
            return vars[self.below(vars.len() as u64) as usize].clone();
        }
        match ty {
            Ty::Bool => "true".into(),
            t => {
                self.note(format!("lit:suffix:{}", t.name()));
                let v = if t.is_float() { "1.5" } else { "1" };
                format!("{v}{}", t.name())
            }
        }
    }

    /// An expression of `ty` for a place that gives no type to its literals
    /// (a cast's operand, a comparison's): with a typed leaf beside it, so
    /// that `(15 / (2.5 + 2))` cannot make its first literal an `i32`.
    fn anchored(&mut self, ty: Ty, env: &Env, d: u32) -> String {
        let e = self.expr(ty, env, d);
        if ty == Ty::Bool {
            return e;
        }
        let typed = self.typed_leaf(ty, env);
        format!("({typed} + {e})")
    }

    /// An expression of type `ty`.
    fn expr(&mut self, ty: Ty, env: &Env, depth: u32) -> String {
        if depth == 0 || self.chance(4) {
            return self.leaf(ty, env);
        }
        let d = depth - 1;
        match self.below(10) {
            0 => {
                let from = self.pick(&TYS);
                return self.cast(from, ty, env, d);
            }
            1 => {
                self.note("expr:if");
                let c = self.expr(Ty::Bool, env, d);
                let (a, b) = (self.expr(ty, env, d), self.expr(ty, env, d));
                if self.chance(2) {
                    self.note("expr:if_nested");
                    let c2 = self.expr(Ty::Bool, env, d);
                    let a2 = self.expr(ty, env, 0);
                    return format!("if ({c}) {{ if ({c2}) {{ {a} }} else {{ {a2} }} }} else if !({c}) {{ {b} }} else {{ {a} }}");
                }
                return format!("if ({c}) {{ {a} }} else {{ {b} }}");
            }
            2 => {
                self.note("builtin:select");
                let c = self.expr(Ty::Bool, env, d);
                let (a, b) = (self.expr(ty, env, d), self.expr(ty, env, d));
                return format!("select({c}, {a}, {b})");
            }
            3 => {
                let fns: Vec<(String, Vec<Ty>)> = env
                    .fns
                    .iter()
                    .filter(|(_, _, r)| *r == Some(ty))
                    .map(|(n, p, _)| (n.clone(), p.clone()))
                    .collect();
                if let Some((name, params)) = fns.first().cloned() {
                    self.note("expr:call");
                    let args: Vec<String> = params.iter().map(|t| self.expr(*t, env, d)).collect();
                    return format!("{name}({})", args.join(", "));
                }
            }
            _ => {}
        }
        match ty {
            Ty::Bool => self.bool_expr(env, d),
            t if t.is_int() => self.int_expr(t, env, d),
            t if t.is_half() => {
                let op = self.pick(&["+", "-", "*", "/", "neg"]);
                self.arith(op, t, env, d)
            }
            t => self.float_expr(t, env, d),
        }
    }

    fn arith(&mut self, op: &str, ty: Ty, env: &Env, d: u32) -> String {
        if op == "neg" {
            self.note("op:neg");
            let e = self.expr(ty, env, d);
            return format!("(-{e})");
        }
        self.note(format!("op:{op}"));
        let (a, b) = (self.expr(ty, env, d), self.expr(ty, env, d));
        format!("({a} {op} {b})")
    }

    fn int_expr(&mut self, t: Ty, env: &Env, d: u32) -> String {
        match self.below(12) {
            0..=2 => {
                let op = self.pick(&["+", "-", "*", "&", "|", "^"]);
                self.arith(op, t, env, d)
            }
            3 => {
                let op = self.pick(&["/", "%"]);
                self.note(format!("op:{op}"));
                let a = self.expr(t, env, d);
                // Never a constant zero divisor: a literal from 1, or `| 1`.
                let b = if self.chance(2) {
                    format!("{}", self.below(40) + 1)
                } else {
                    format!("({} | 1)", self.expr(t, env, d))
                };
                format!("({a} {op} {b})")
            }
            4 => self.shift(t, env, d),
            5 if t.is_signed() => self.arith("neg", t, env, d),
            5 => {
                self.note("op:!");
                let e = self.expr(t, env, d);
                format!("(!{e})")
            }
            6 => {
                let f = self.pick(&["min", "max"]);
                self.note(format!("builtin:{f}"));
                let (a, b) = (self.expr(t, env, d), self.expr(t, env, d));
                format!("{f}({a}, {b})")
            }
            7 if t.is_signed() => {
                self.note("builtin:abs");
                let e = self.expr(t, env, d);
                format!("abs({e})")
            }
            8 if matches!(t, Ty::U32 | Ty::I32) || t.is_narrow() => {
                let f = self.pick(&["shfl_down", "shfl_up", "shfl_xor", "shfl_idx"]);
                self.note(format!("builtin:{f}"));
                let v = self.expr(t, env, d);
                let lane = self.expr(Ty::U32, env, 0);
                // The whole warp, spelled out half the time: the same
                // instruction, through the mask argument.
                if self.below(2) == 0 {
                    self.note("builtin:warp_mask");
                    format!("{f}({v}, {lane}, 0xFFFF_FFFF)")
                } else {
                    format!("{f}({v}, {lane})")
                }
            }
            9 if t == Ty::U32 => {
                self.note("builtin:ballot");
                let p = self.expr(Ty::Bool, env, d);
                format!("ballot({p})")
            }
            10 if t == Ty::U32 => {
                // Lane masks and the active mask: per-thread values, no
                // synchronisation.
                let f = self.pick(&MASK_VALUES);
                self.note(format!("builtin:{f}"));
                format!("{f}()")
            }
            11 if matches!(t, Ty::U32 | Ty::I32) => {
                let f = self.pick(&[
                    "redux_add",
                    "redux_min",
                    "redux_max",
                    "redux_and",
                    "redux_or",
                    "redux_xor",
                ]);
                self.note(format!("builtin:{f}"));
                let v = self.expr(t, env, d);
                // The mask by position, by name, or left out.
                match self.below(3) {
                    0 => format!("{f}({v}, 0xFFFF_FFFF)"),
                    1 => self.noted(
                        "builtin:mask_by_name",
                        format!("{f}({v}, mask = 0xFFFF_FFFF)"),
                    ),
                    _ => format!("{f}({v})"),
                }
            }
            _ => self.leaf(t, env),
        }
    }

    /// A shift, its amount one of the boundaries of the width (0, w - 1,
    /// w: all defined in kdsl, the last one clamps) or any integer value.
    fn shift(&mut self, t: Ty, env: &Env, d: u32) -> String {
        let op = self.pick(&["<<", ">>"]);
        self.note(format!("op:{op}"));
        let a = self.expr(t, env, d);
        let w = t.size() * 8;
        let amount = match self.below(4) {
            0 => {
                self.note(format!("bound:shift:{w}:0"));
                "0".to_string()
            }
            1 => self.noted(format!("bound:shift:{w}:w-1"), format!("{}", w - 1)),
            2 => {
                self.note(format!("bound:shift:{w}:w"));
                let ty = self.pick(&INTS);
                format!("{w}{}", ty.name())
            }
            _ => {
                let ty = self.pick(&INTS);
                self.note(format!("shift_amount:{}", ty.name()));
                self.anchored(ty, env, d)
            }
        };
        format!("({a} {op} {amount})")
    }

    fn float_expr(&mut self, t: Ty, env: &Env, d: u32) -> String {
        match self.below(10) {
            0..=3 => {
                let op = self.pick(&["+", "-", "*", "/", "neg"]);
                self.arith(op, t, env, d)
            }
            4 => {
                let f = self.pick(&["min", "max"]);
                self.note(format!("builtin:{f}"));
                let (a, b) = (self.expr(t, env, d), self.expr(t, env, d));
                format!("{f}({a}, {b})")
            }
            5 => {
                let f = self.pick(&["abs", "sqrt", "rsqrt"]);
                self.note(format!("builtin:{f}"));
                let e = self.expr(t, env, d);
                format!("{f}({e})")
            }
            6 => {
                self.note("builtin:fma");
                let (a, b, c) = (
                    self.expr(t, env, d),
                    self.expr(t, env, d),
                    self.expr(t, env, d),
                );
                format!("fma({a}, {b}, {c})")
            }
            7 if t == Ty::F32 => {
                let f = self.pick(&["exp2", "log2", "exp", "log", "sin", "cos"]);
                self.note(format!("builtin:{f}"));
                let e = self.expr(t, env, d);
                format!("{f}({e})")
            }
            8 if t == Ty::F32 => {
                let f = self.pick(&["shfl_down", "shfl_up", "shfl_xor", "shfl_idx"]);
                self.note(format!("builtin:{f}"));
                let v = self.expr(t, env, d);
                format!("{f}({v}, {}u32)", self.below(32))
            }
            _ => self.leaf(t, env),
        }
    }

    fn bool_expr(&mut self, env: &Env, d: u32) -> String {
        match self.below(8) {
            0..=2 => {
                let t = self.pick(&TYS);
                let ops: &[&str] = if t == Ty::Bool {
                    &["==", "!="]
                } else {
                    &["==", "!=", "<", "<=", ">", ">="]
                };
                let op = self.pick(ops);
                self.note(format!("op:{op}"));
                let (a, b) = (self.anchored(t, env, d), self.expr(t, env, d));
                format!("({a} {op} {b})")
            }
            3 | 4 => {
                let op = self.pick(&["&&", "||", "&", "|", "^"]);
                self.note(format!("op:{op}"));
                let (a, b) = (self.expr(Ty::Bool, env, d), self.expr(Ty::Bool, env, d));
                format!("({a} {op} {b})")
            }
            5 => {
                self.note("op:!");
                let e = self.expr(Ty::Bool, env, d);
                format!("(!{e})")
            }
            6 => {
                let f = self.pick(&["any", "all"]);
                self.note(format!("builtin:{f}"));
                let e = self.expr(Ty::Bool, env, d);
                format!("{f}({e})")
            }
            _ => self.leaf(Ty::Bool, env),
        }
    }
}

/// Every feature a long enough run must cover.
/// Pushes `prefix` followed by each of `items`.
fn prefixed(f: &mut Vec<String>, prefix: &str, items: &[&str]) {
    f.extend(items.iter().map(|i| format!("{prefix}{i}")));
}

pub fn required_features() -> Vec<String> {
    let mut f: Vec<String> = Vec::new();
    for a in TYS {
        for b in TYS {
            f.push(format!("cast:{}->{}", a.name(), b.name()));
        }
        f.push(format!("shared:{}", a.name()));
        f.push(format!("param:{}", a.name()));
        f.push(format!("global:{}", a.name()));
        f.push(format!("global_mut:{}", a.name()));
        f.push(format!("let_annotated:{}", a.name()));
        f.push(format!("register_array:{}", a.name()));
    }
    prefixed(
        &mut f,
        "register_array:",
        &[
            "repeat", "list", "unrolled", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=",
            ">>=",
        ],
    );
    f.push("bound:register_index".into());
    for t in TYS.into_iter().filter(|t| *t != Ty::Bool) {
        f.push(format!("lit:suffix:{}", t.name()));
    }
    for t in INTS {
        f.push(format!("shift_amount:{}", t.name()));
    }
    prefixed(
        &mut f,
        "op:",
        &[
            "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=",
            "&&", "||", "!", "neg",
        ],
    );
    for op in [
        "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=",
    ] {
        f.push(format!("assign:{op}"));
        f.push(format!("store:{op}"));
    }
    prefixed(
        &mut f,
        "builtin:",
        &[
            "min",
            "max",
            "abs",
            "sqrt",
            "rsqrt",
            "exp2",
            "log2",
            "exp",
            "log",
            "sin",
            "cos",
            "fma",
            "select",
            "atomic_add",
            "atomic_sub",
            "atomic_max",
            "atomic_min",
            "atomic_exch",
            "atomic_and",
            "atomic_or",
            "atomic_xor",
            "atomic_inc",
            "atomic_dec",
            "atomic_cas",
            "fence",
            "shfl_down",
            "shfl_up",
            "shfl_xor",
            "shfl_idx",
            "ballot",
            "any",
            "all",
            "redux_add",
            "redux_min",
            "redux_max",
            "redux_and",
            "redux_or",
            "redux_xor",
            "warp_mask",
            "mask_by_name",
            "lane_mask_eq",
            "lane_mask_lt",
            "lane_mask_le",
            "lane_mask_gt",
            "lane_mask_ge",
            "active_mask",
            "sync_warp",
            "elect_one",
            "sync_threads",
            "cluster_sync",
            "fence_proxy_async",
            "copy_async",
            "copy_async_store",
            "copy_async_commit",
            "copy_async_wait",
            "tma_load",
            "tma_store",
            "tma_reduce_add",
            "bytes_of",
            "size_of",
            "set_max_regs",
            "wgmma",
            "wgmma_commit",
            "wgmma_wait",
            "acc_row",
            "acc_col",
            "row_max",
            "row_sum",
            "row_scale",
            "row_exp2",
            "acc_convert",
            "f16x2",
            "bf16x2",
            "ldmatrix_x1",
            "ldmatrix_x2",
            "ldmatrix_x4",
            "stmatrix_x1",
            "stmatrix_x2",
            "stmatrix_x4",
        ],
    );
    prefixed(
        &mut f,
        "matrix:",
        &["trans", "swizzle", "f16", "bf16", "u16"],
    );
    prefixed(
        &mut f,
        "packed:",
        &[
            "f16x2", "bf16x2", "op:+", "op:-", "op:*", "min", "max", "abs", "fma", "neg", "select",
            ".lo", ".hi",
        ],
    );
    for s in ["e4m3", "e5m2"] {
        for t in ["f32", "f16", "bf16"] {
            f.push(format!("fp8:{s}:{t}"));
        }
    }
    prefixed(&mut f, "", &["tf32", "fp8:store2"]);
    for (e, _) in kernel::TENSOR_ELEMS {
        f.push(format!("tensor:elem:{e}"));
    }
    for s in ["none", "32", "64", "128"] {
        f.push(format!("tensor:swizzle:{s}"));
    }
    // Register budgets: each block of whole warpgroups, the pool filled to
    // its last 8 registers (a budget 8 higher is E0422; two warpgroups
    // cannot go past it: 256 each is the most), a count past the step
    // (E0420), each way of naming a warpgroup.
    for w in [3, 4, 5, 6, 7, 8] {
        f.push(format!("bound:pool:{w}"));
    }
    prefixed(&mut f, "warpgroups:", &["2", "1"]);
    prefixed(&mut f, "bound:", &["regs_count", "accum_n", "wgmma_wait"]);
    prefixed(
        &mut f,
        "wgmma_form:",
        &[
            "f32.f16.f16",
            "f16.f16.f16",
            "f32.bf16.bf16",
            "f32.tf32.tf32",
            "f32.e4m3.e4m3",
            "f32.e5m2.e4m3",
            "f32.e4m3.e5m2",
            "f16.e4m3.e5m2",
            "f16.e5m2.e5m2",
            "f16.e5m2.e4m3",
            "i32.i8.i8",
            "i32.u8.u8",
            "i32.u8.i8",
            "i32.i8.u8",
        ],
    );
    prefixed(&mut f, "wgmma_transpose:", &["a", "b", "both"]);
    f.push("wgmma_rs".to_string());
    prefixed(
        &mut f,
        "warpgroup_index:",
        &["warp_id / 4", "warp_id >> 2", "thread_idx.x / 128"],
    );
    prefixed(
        &mut f,
        "value:",
        &[
            "thread_idx",
            "block_dim",
            "block_idx",
            "grid_dim",
            "lane_id",
            "warp_id",
            "cluster_rank",
            "cluster_size",
            "cluster_idx",
            "cluster_dim",
            "cluster_grid_idx",
            "cluster_grid_dim",
        ],
    );
    for t in TYS {
        f.push(format!("vector:{}", t.name()));
    }
    prefixed(
        &mut f,
        "vector:",
        &["load2", "load4", "store2", "store4", "global", "shared"],
    );
    for a in kernel::ATOMICS {
        for space in ["global", "shared"] {
            f.push(format!("{a}:{space}"));
        }
        for t in kernel::atomic_types(a) {
            f.push(format!("{a}:{}", t.name()));
        }
    }
    // The narrow integers' one atomic: the 16-bit compare-and-swap.
    prefixed(&mut f, "atomic_cas:", &["u16", "i16"]);
    for a in [
        "atomic_add",
        "atomic_max",
        "atomic_min",
        "atomic_cas",
        "atomic_sub",
        "atomic_exch",
        "atomic_and",
        "atomic_or",
        "atomic_xor",
    ] {
        f.push(format!("{a}:remote"));
    }
    prefixed(
        &mut f,
        "atomic_order:",
        &["relaxed", "acquire", "release", "acq_rel"],
    );
    prefixed(&mut f, "atomic_scope:", &["cta", "cluster", "gpu", "sys"]);
    prefixed(&mut f, "fence_order:", &["acq_rel", "sc"]);
    prefixed(&mut f, "fence_scope:", &["cta", "cluster", "gpu", "sys"]);
    prefixed(
        &mut f,
        "barrier:",
        &[
            "arrive()",
            "arrive(n)",
            "arrive_expect_tx",
            "expect_tx",
            "arrive_remote",
            "wait()",
            "wait(p)",
            "test()",
            "test(p)",
            "wait_cluster()",
            "wait_cluster(p)",
            "test_cluster()",
            "test_cluster(p)",
        ],
    );
    f.push("named:sync".to_string());
    f.push("named:arrive".to_string());
    for p in ["0", "1"] {
        for op in ["wait", "test", "wait_cluster", "test_cluster"] {
            f.push(format!("bound:parity:{op}:{p}"));
        }
    }
    prefixed(
        &mut f,
        "stmt:",
        &[
            "let",
            "let_mut",
            "shadow",
            "if",
            "else_if",
            "else",
            "while",
            "while_true",
            "while_never",
            "for",
            "for_step",
            "for_runtime_step",
            "for_list",
            "for_unroll",
            "for_unroll_n",
            "break",
            "continue",
            "return_kernel",
            "return_value",
            "call_stmt",
            "value_dropped",
            "empty",
            "expr_block_tail_if",
        ],
    );
    prefixed(&mut f, "expr:", &["if", "if_nested", "call"]);
    prefixed(
        &mut f,
        "lit:",
        &[
            "hex",
            "bin",
            "underscore",
            "negative",
            "exponent",
            "int_as_float",
        ],
    );
    prefixed(
        &mut f,
        "item:",
        &[
            "const",
            "const_uses_const",
            "fn",
            "fn_void",
            "fn_calls_fn",
            "import",
            "two_kernels",
        ],
    );
    // Kernel constants: each kind, a default that uses an earlier one and
    // `size_of`, a branch under a `bool` constant, instantiations made by
    // `--const` (several values of one constant, a type, a `bool`).
    prefixed(
        &mut f,
        "kernel_const:",
        &[
            "u32",
            "type",
            "bool",
            "derived",
            "if",
            "defaults",
            "instances",
            "instances:type",
            "instances:bool",
        ],
    );
    prefixed(
        &mut f,
        "launch:",
        &[
            "none", "block1", "block2", "block3", "cluster1", "cluster2", "cluster3",
        ],
    );
    prefixed(&mut f, "remote:", &["load", "store"]);
    f.push("shared:2d".into());
    f.push("shared:3d".into());
    f.push("shared:static_max".into());
    f.push("shared:dynamic_min".into());
    f.push("shared:max_sm80".into());
    prefixed(
        &mut f,
        "bound:",
        &[
            "arrivals:1",
            "arrivals:1048575",
            "arrive_n:1",
            "arrive_n:1048575",
            "arrive_expect_tx:16",
            "arrive_expect_tx:1048560",
            "expect_tx:16",
            "expect_tx:1048560",
            "copy_async:16",
            "copy_async_store:16",
            "tensor_box:256",
            "tensor_inner:16",
            "swizzle_span:64",
            "tensor_tx:exact",
            "stage:own_barrier",
            "block:x1024",
            "block:y1024",
            "block:z64",
            "block:product1024",
            "shared:max",
            "params:4352",
            "params:4356",
            "params:32764",
            "barrier_count:1",
            "barrier_count:64",
            "barrier_index",
            "named_threads:32",
            "named_threads:0",
            "named_count:15",
            "kernel_const:block",
        ],
    );
    for c in 1..=16 {
        f.push(format!("bound:cluster:{c}"));
    }
    for w in [8, 16, 32, 64] {
        for a in ["0", "w-1", "w"] {
            f.push(format!("bound:shift:{w}:{a}"));
        }
    }
    f.sort();
    f.dedup();
    f
}

#[path = "gen_program_kernel.rs"]
mod kernel;

pub use kernel::program;
