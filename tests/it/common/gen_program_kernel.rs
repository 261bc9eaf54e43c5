//! The items of a generated program: constants, device functions, an
//! import, and kernels built from sections (locals and assignments,
//! control flow, shared arrays, atomics, barriers, bulk copies, clusters
//! and distributed shared memory, the hardware limits).

use super::{Env, Gen, Program, Ty, INTS, MASK_VALUES, TYS};
use kdsl::target::Target;

/// Static shared memory per CTA: past it a kernel's shared memory is
/// dynamic.
const SHARED_STATIC: u64 = 48 * 1024;

/// A kernel being built.
struct K {
    name: String,
    params: Vec<String>,
    launch: String,
    /// Shared arrays and barrier groups (kernel top level).
    decls: Vec<String>,
    body: Vec<String>,
    env: Env,
    /// Every local: each is read in the kernel's last store (no W0001).
    sinks: Vec<(String, Ty)>,
    sm90: bool,
    cluster: bool,
}

impl K {
    fn stmt(&mut self, s: impl Into<String>) {
        self.body.push(s.into());
    }

    fn local(&mut self, name: &str, ty: Ty) {
        self.env.vars.push((name.to_string(), ty));
        self.sinks.push((name.to_string(), ty));
    }

    fn text(&self) -> String {
        let mut s = format!(
            "kernel {}({}){} {{\n",
            self.name,
            self.params.join(", "),
            self.launch
        );
        for d in &self.decls {
            s.push_str(&format!("    {d}\n"));
        }
        for b in &self.body {
            for line in b.lines() {
                s.push_str(&format!("    {line}\n"));
            }
        }
        let uses: Vec<String> = self
            .sinks
            .iter()
            .map(|(n, t)| match t {
                Ty::Bool => format!("select({n}, 1.0, 0.0)"),
                t if t.is_packed() => format!("({n}.lo as f32)"),
                _ => format!("({n} as f32)"),
            })
            .collect();
        let sum = if uses.is_empty() {
            "0.0".to_string()
        } else {
            uses.join("\n        + ")
        };
        s.push_str(&format!("    out[thread_idx.x] = {sum};\n}}\n"));
        s
    }
}

/// The program with this index (what it covers is swept by the index)
/// and seed (the random choices).
pub fn program(index: u64, seed: u64) -> Program {
    let mut g = Gen::new(index, seed);
    // One program in three uses nothing past sm_80, so it is assembled for
    // sm_80 too.
    let sm90 = !index.is_multiple_of(3);
    g.p.sm90 = sm90;
    let mut items = String::new();
    let mut env = Env {
        cluster_values: false,
        ..Env::default()
    };

    let consts = constants(&mut g, &mut items);
    functions(&mut g, &mut items, &mut env);
    if g.chance(3) || index.is_multiple_of(5) {
        g.note("item:import");
        items.push_str("import \"lib.kdsl\";\n");
        g.p.lib = Some(
            "const LIB_SCALE: u32 = 3;\nfn lib_twice(x: f32) -> f32 {\n    x * 2.0\n}\n".into(),
        );
        env.fns
            .push(("lib_twice".into(), vec![Ty::F32], Some(Ty::F32)));
        env.vars.push(("LIB_SCALE".into(), Ty::U32));
    }
    env.vars.extend(consts);

    let main = main_kernel(&mut g, &env, sm90);
    items.push_str(&main);
    if sm90 && (index % 2 == 1 || g.chance(3)) {
        items.push_str(&cluster_kernel(&mut g, &env));
    }
    if sm90 {
        items.push_str(&tensor_kernel(&mut g));
    }
    items.push_str(&matrix_kernel(&mut g, sm90));
    if index % 4 == 2 || g.chance(4) {
        items.push_str(&limits_kernel(&mut g, sm90));
    }
    if index.is_multiple_of(3) || g.chance(3) {
        items.push_str(&const_kernel(&mut g));
    }
    // One program in six is for sm_90a, with register budgets.
    if sm90 && index % 6 == 1 {
        g.p.sm90a = true;
        items.push_str(&warpgroup_kernel(&mut g, &env));
        items.push_str(&forms_kernel(&mut g));
    }
    if g.chance(3) {
        g.note("item:two_kernels");
        g.note("launch:none");
        let e = g.expr(
            Ty::U32,
            &Env {
                in_kernel: true,
                ..env.clone()
            },
            2,
        );
        items.push_str(&format!(
            "kernel second(o: global mut [u32]) {{\n    o[thread_idx.x] = {e};\n}}\n"
        ));
    }
    g.p.source = items;
    g.p
}

/// A kernel with constants (language.md §2.6): a block size, an element
/// type, a `bool` and one derived from the others with `size_of`, each
/// used where its kind goes (the launch, types, an array's shape, an `if`
/// condition). Compiled with its defaults (the block size then a boundary:
/// 1024, and 1025 is E0120) or with `--const` values that make several
/// instantiations.
fn const_kernel(g: &mut Gen) -> String {
    let ty = g.sweep(&TYS, 1, 7);
    let on = g.pick(&["true", "false"]);
    g.note("kernel_const:u32");
    g.note("kernel_const:type");
    g.note("kernel_const:bool");
    g.note("kernel_const:derived");
    g.note("kernel_const:if");
    g.note("builtin:size_of");
    let block = if g.index.is_multiple_of(2) {
        g.note("kernel_const:defaults");
        g.bound("kernel_const:block", "1024", "1025", "E0120")
    } else {
        g.note("kernel_const:instances");
        for n in ["32", "96"] {
            g.p.consts.push(format!("N={n}"));
        }
        if g.chance(2) {
            g.note("kernel_const:instances:type");
            let other = g.pick(&TYS);
            g.p.consts.push(format!("T={}", other.name()));
            g.p.consts.push(format!("T={}", ty.name()));
        }
        if g.chance(2) {
            g.note("kernel_const:instances:bool");
            g.p.consts.push("ON=true".into());
            g.p.consts.push("ON=false".into());
        }
        "64".to_string()
    };
    format!(
        "kernel consts<const N: u32 = {block}, const T: type = {t}, const ON: bool = {on}, const W: u32 = N * 2 + size_of(T)>(out: global mut [f32], x: global [T]) block(N) {{
    shared s: [T; W];
    s[thread_idx.x] = x[thread_idx.x];
    sync_threads();
    let v = s[W - 1 - thread_idx.x - size_of(T)] as f32;
    if ON {{
        out[thread_idx.x] = v;
    }} else {{
        out[thread_idx.x + N] = v * 2.0;
    }}
}}
",
        t = ty.name()
    )
}

/// A few constants, from literals, casts, `if`, the foldable built-ins and
/// each other.
fn constants(g: &mut Gen, items: &mut String) -> Vec<(String, Ty)> {
    let mut consts: Vec<(String, Ty)> = Vec::new();
    for _ in 0..2 + g.below(3) {
        let ty = g.pick(&TYS);
        let name = g.name("C");
        let e = const_expr(g, ty, &consts, 3);
        g.note("item:const");
        if !consts.is_empty() {
            g.note("item:const_uses_const");
        }
        items.push_str(&format!("const {name}: {} = {e};\n", ty.name()));
        consts.push((name, ty));
    }
    consts
}

/// A constant expression of `ty`.
fn const_expr(g: &mut Gen, ty: Ty, consts: &[(String, Ty)], d: u32) -> String {
    let same: Vec<&String> = consts
        .iter()
        .filter(|(_, t)| *t == ty)
        .map(|(n, _)| n)
        .collect();
    if d == 0 || g.chance(3) {
        if !same.is_empty() && g.chance(2) {
            return same[g.below(same.len() as u64) as usize].clone();
        }
        return g.literal(ty);
    }
    match g.below(5) {
        0 => {
            let from = g.pick(&TYS);
            g.note(format!("cast:{}->{}", from.name(), ty.name()));
            format!(
                "({} as {})",
                const_anchored(g, from, consts, d - 1),
                ty.name()
            )
        }
        1 => {
            g.note("expr:if");
            let c = const_expr(g, Ty::Bool, consts, d - 1);
            let (a, b) = (
                const_expr(g, ty, consts, d - 1),
                const_expr(g, ty, consts, d - 1),
            );
            format!("if ({c}) {{ {a} }} else {{ {b} }}")
        }
        2 if ty == Ty::Bool => {
            let t = g.pick(&[Ty::I32, Ty::U64, Ty::F32]);
            g.note("op:<");
            let (a, b) = (
                const_anchored(g, t, consts, d - 1),
                const_expr(g, t, consts, d - 1),
            );
            format!("({a} < {b})")
        }
        2 if ty.is_int() || ty.is_wide_float() => {
            let f = g.pick(&["min", "max"]);
            g.note(format!("builtin:{f}"));
            let (a, b) = (
                const_expr(g, ty, consts, d - 1),
                const_expr(g, ty, consts, d - 1),
            );
            format!("{f}({a}, {b})")
        }
        3 if ty.is_wide_float() => {
            g.note("builtin:fma");
            let (a, b, c) = (
                const_expr(g, ty, consts, d - 1),
                const_expr(g, ty, consts, d - 1),
                const_expr(g, ty, consts, d - 1),
            );
            format!("fma({a}, {b}, {c})")
        }
        4 if ty != Ty::Bool => {
            let op = g.pick(&["+", "-", "*"]);
            g.note(format!("op:{op}"));
            let (a, b) = (
                const_expr(g, ty, consts, d - 1),
                const_expr(g, ty, consts, d - 1),
            );
            format!("({a} {op} {b})")
        }
        _ => g.literal(ty),
    }
}

/// [`Gen::anchored`] for constants.
fn const_anchored(g: &mut Gen, ty: Ty, consts: &[(String, Ty)], d: u32) -> String {
    let e = const_expr(g, ty, consts, d);
    if ty == Ty::Bool {
        return e;
    }
    let env = Env {
        vars: consts.to_vec(),
        ..Env::default()
    };
    let typed = g.typed_leaf(ty, &env);
    format!("({typed} + {e})")
}

/// Device functions: one with a value (an early `return` and an `if` as
/// its tail), one that calls it, and one without a value called as a
/// statement.
fn functions(g: &mut Gen, items: &mut String, env: &mut Env) {
    let ret = g.pick(&TYS);
    let (pa, pb) = (g.pick(&TYS), g.pick(&TYS));
    let name = g.name("f");
    // `_`: a function need not read its parameters (no W0001).
    let fenv = Env {
        vars: vec![("_a".into(), pa), ("_b".into(), pb)],
        ..Env::default()
    };
    let (c, early) = (g.expr(Ty::Bool, &fenv, 2), g.expr(ret, &fenv, 2));
    let (c2, x, y) = (
        g.expr(Ty::Bool, &fenv, 2),
        g.expr(ret, &fenv, 2),
        g.expr(ret, &fenv, 2),
    );
    g.note("item:fn");
    g.note("stmt:return_value");
    g.note("stmt:expr_block_tail_if");
    items.push_str(&format!(
        "fn {name}(_a: {}, _b: {}) -> {} {{\n    if {c} {{\n        return {early};\n    }}\n    if {c2} {{ {x} }} else {{ {y} }}\n}}\n",
        pa.name(),
        pb.name(),
        ret.name()
    ));
    env.fns.push((name.clone(), vec![pa, pb], Some(ret)));

    let outer = g.name("f");
    let t = g.pick(&[Ty::U32, Ty::F32, Ty::I64]);
    let mut fenv2 = Env {
        vars: vec![("_v".into(), t)],
        ..Env::default()
    };
    fenv2.fns.push((name.clone(), vec![pa, pb], Some(ret)));
    let args = (g.expr(pa, &fenv2, 1), g.expr(pb, &fenv2, 1));
    let v = g.expr(t, &fenv2, 1);
    g.note("item:fn_calls_fn");
    items.push_str(&format!(
        "fn {outer}(_v: {}) -> {} {{\n    let r = {name}({}, {});\n    ({v}) + (r as {})\n}}\n",
        t.name(),
        t.name(),
        args.0,
        args.1,
        t.name()
    ));
    env.fns.push((outer, vec![t], Some(t)));

    let void = g.name("s");
    g.note("item:fn_void");
    items.push_str(&format!(
        "fn {void}(n: u32) {{\n    if n > 3 {{\n        return;\n    }}\n    let _ignored = n + 1;\n}}\n"
    ));
    env.fns.push((void, vec![Ty::U32], None));
}

/// The launch attributes of the main kernel, swept through every form and
/// every boundary of the block's shape.
fn block_launch(g: &mut Gen) -> String {
    match g.sweep(&[0u8, 1, 2, 3, 4, 5, 6, 7], 1, 0) {
        0 => g.noted("launch:none", String::new()),
        1 => {
            g.note("bound:block:product1024");
            block_at_bound(g, "launch:block1", "block:x1024", ["1024", "1025"], "@")
        }
        2 => block_at_bound(g, "launch:block2", "block:y1024", ["1024", "1025"], "1, @"),
        3 => block_at_bound(g, "launch:block3", "block:z64", ["64", "65"], "16, 1, @"),
        4 => block_at_bound(
            g,
            "launch:block2",
            "block:product1024",
            ["32", "33"],
            "32, @",
        ),
        _ => {
            let x = 32 * (1 + g.below(8));
            match g.below(3) {
                0 => g.noted("launch:block1", format!(" block({x})")),
                1 => g.noted("launch:block2", format!(" block({x}, 2)")),
                _ => g.noted("launch:block3", format!(" block({}, 2, 2)", x / 2)),
            }
        }
    }
}

/// ` block(SHAPE)` of the `form` noted, with `@` in `shape` a boundary
/// `feature` at `value`, whose step `past` it is E0120.
fn block_at_bound(
    g: &mut Gen,
    form: &str,
    feature: &str,
    [value, past]: [&str; 2],
    shape: &str,
) -> String {
    g.note(form);
    let v = g.bound(feature, value, past, "E0120");
    format!(" block({})", shape.replace('@', &v))
}

fn new_kernel(g: &mut Gen, env: &Env, name: &str, sm90: bool) -> K {
    let mut k = K {
        name: name.to_string(),
        params: vec!["out: global mut [f32]".into(), "n: u32".into()],
        launch: String::new(),
        decls: Vec::new(),
        body: Vec::new(),
        env: Env {
            in_kernel: true,
            ..env.clone()
        },
        sinks: Vec::new(),
        sm90,
        cluster: false,
    };
    k.env.vars.push(("n".into(), Ty::U32));
    // Scalar parameters of every type over the run.
    for j in 0..3 {
        let t = g.sweep(&TYS, 3, j);
        let p = g.name("p");
        g.note(format!("param:{}", t.name()));
        k.params.push(format!("{p}: {}", t.name()));
        k.env.vars.push((p, t));
    }
    k
}

fn main_kernel(g: &mut Gen, env: &Env, sm90: bool) -> String {
    let mut k = new_kernel(g, env, "main", sm90);
    k.launch = block_launch(g);
    g.note("stmt:return_kernel");
    k.stmt("if n == 4294967295u32 {\n    return;\n}");
    globals(g, &mut k);
    lets(g, &mut k);
    register_arrays(g, &mut k);
    casts(g, &mut k);
    control(g, &mut k);
    shared(g, &mut k);
    vectors(g, &mut k);
    packed(g, &mut k);
    atomics(g, &mut k);
    cta_barriers(g, &mut k);
    named_barriers(g, &mut k);
    if sm90 {
        tx_barriers(g, &mut k);
        bulk(g, &mut k);
    }
    calls(g, &mut k);
    k.text()
}

/// Global arrays: read-only ones loaded, writable ones stored to with
/// every assignment operator.
fn globals(g: &mut Gen, k: &mut K) {
    for j in 0..2 {
        let t = g.sweep(&TYS, 2, j);
        let a = g.name("g");
        g.note(format!("global:{}", t.name()));
        k.params.push(format!("{a}: global [{}]", t.name()));
        let v = g.name("v");
        k.stmt(format!("let {v} = {a}[thread_idx.x];"));
        k.local(&v, t);
    }
    for j in 0..2 {
        let t = g.sweep(&TYS, 2, j);
        let a = g.name("gm");
        g.note(format!("global_mut:{}", t.name()));
        k.params.push(format!("{a}: global mut [{}]", t.name()));
        let e = g.expr(t, &k.env, 2);
        g.note("store:=");
        k.stmt(format!("{a}[thread_idx.x + 1] = {e};"));
        store_op(g, k, &format!("{a}[thread_idx.x]"), t, j, "store");
    }
}

/// The compound assignment operators that apply to `ty`.
fn ops_for(ty: Ty) -> &'static [&'static str] {
    match ty {
        Ty::Bool => &["&=", "|=", "^="],
        t if t.is_int() => &["+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="],
        _ => &["+=", "-=", "*=", "/="],
    }
}

/// `place op= value` with an operator swept for the type.
fn store_op(g: &mut Gen, k: &mut K, place: &str, ty: Ty, j: u64, kind: &str) {
    let ops = ops_for(ty);
    let op = g.sweep(ops, 1, j);
    g.note(format!("{kind}:{op}"));
    let value = match op {
        "/=" | "%=" if ty.is_int() => format!("({} | 1)", g.expr(ty, &k.env, 1)),
        "<<=" | ">>=" => {
            let t = g.pick(&INTS);
            g.note(format!("shift_amount:{}", t.name()));
            g.anchored(t, &k.env, 1)
        }
        _ => g.expr(ty, &k.env, 2),
    };
    k.stmt(format!("{place} {op} {value};"));
}

/// Casts between every pair of scalar types, swept over the run (three
/// pairs a program: the 169 pairs in 57 programs); the random expressions
/// cast too, at random.
fn casts(g: &mut Gen, k: &mut K) {
    for j in 0..3 {
        let pair = g.sweep(&(0..TYS.len() * TYS.len()).collect::<Vec<_>>(), 3, j);
        let (from, to) = (TYS[pair / TYS.len()], TYS[pair % TYS.len()]);
        let e = g.cast(from, to, &k.env, 1);
        let v = g.name("c");
        k.stmt(format!("let {v}: {} = {e};", to.name()));
        k.local(&v, to);
    }
}

/// Locals: annotated, inferred, mutable, shadowed; assigned with every
/// operator over the run.
fn lets(g: &mut Gen, k: &mut K) {
    for j in 0..3 {
        let t = g.sweep(&TYS, 3, j);
        let v = g.name("v");
        let e = g.expr(t, &k.env, 3);
        g.note(format!("let_annotated:{}", t.name()));
        g.note("stmt:let");
        k.stmt(format!("let {v}: {} = {e};", t.name()));
        k.local(&v, t);
    }
    for j in 0..4 {
        let t = g.pick(&TYS);
        let v = g.name("m");
        let e = g.expr(t, &k.env, 2);
        g.note("stmt:let_mut");
        k.stmt(format!("let mut {v}: {} = {e};", t.name()));
        store_op(g, k, &v, t, j, "assign");
        g.note("assign:=");
        let e2 = g.expr(t, &k.env, 1);
        k.stmt(format!("{v} = {e2};"));
        k.local(&v, t);
    }
    // Shadowing: the new `w` reads the old one.
    let t = g.pick(&[Ty::U32, Ty::F32, Ty::I64]);
    let w = g.name("w");
    let e = g.expr(t, &k.env, 1);
    g.note("stmt:shadow");
    k.stmt(format!(
        "let {w}: {} = {e};\nlet {w} = {w} + {w};",
        t.name()
    ));
    k.local(&w, t);
    g.note("stmt:empty");
    k.stmt(";");
}

/// Register arrays (language.md §5.8): one of an element type swept by the
/// program's index, given a value by the repeat form, written element by
/// element in unrolled loops (through a variable computed from the loop's
/// variable) with an operator swept for its type, and a typed list, read
/// at constant indices; the last index of a dimension is a boundary (one
/// past it is E0441).
fn register_arrays(g: &mut Gen, k: &mut K) {
    let t = g.sweep(&TYS, 1, 0);
    let (d0, d1) = (1 + g.below(3), 1 + g.below(4));
    let (ra, rl) = (g.name("ra"), g.name("rl"));
    let (i, j, r) = (g.name("i"), g.name("j"), g.name("r"));
    let e = g.expr(t, &k.env, 2);
    g.note(format!("register_array:{}", t.name()));
    g.note("register_array:repeat");
    k.stmt(format!(
        "let mut {ra}: [{t}; {d0}, {d1}] = [{e}; {d0}, {d1}];",
        t = t.name()
    ));
    let op = g.sweep(ops_for(t), 1, 0);
    g.note(format!("register_array:{op}"));
    let value = match op {
        "/=" | "%=" if t.is_int() => format!("({} | 1)", g.expr(t, &k.env, 1)),
        "<<=" | ">>=" => format!("({j} as {})", t.name()),
        _ => g.expr(t, &k.env, 1),
    };
    g.note("register_array:unrolled");
    k.stmt(format!(
        "for {i} in 0..{d0}u32 {{\n    let {r} = {i};\n    for {j} in 0..{d1}u32 {{\n        {ra}[{r}, {j}] {op} {value};\n    }}\n}}"
    ));
    let items: Vec<String> = (0..3).map(|_| g.expr(t, &k.env, 1)).collect();
    g.note("register_array:list");
    k.stmt(format!(
        "let {rl}: [{}; 3] = [{}];",
        t.name(),
        items.join(", ")
    ));
    let last = g.bound(
        "register_index",
        &(d1 - 1).to_string(),
        &d1.to_string(),
        "E0441",
    );
    let (s1, s2) = (g.name("ru"), g.name("ru"));
    k.stmt(format!("let {s1} = {ra}[{}, {last}];", d0 - 1));
    k.stmt(format!("let {s2} = {rl}[2];"));
    k.local(&s1, t);
    k.local(&s2, t);
}

/// `if`/`else if`/`else`, `while`, `while true`, `for` with and without a
/// step, `break`, `continue`.
fn control(g: &mut Gen, k: &mut K) {
    let c = g.name("c");
    k.stmt(format!("let mut {c}: u32 = 0;"));
    let (a, b) = (g.expr(Ty::Bool, &k.env, 2), g.expr(Ty::Bool, &k.env, 2));
    g.note("stmt:if");
    g.note("stmt:else_if");
    g.note("stmt:else");
    k.stmt(format!(
        "if {a} {{\n    {c} += 1;\n}} else if {b} {{\n    {c} += 2;\n}} else {{\n    {c} ^= 3;\n}}"
    ));
    let j = g.name("j");
    g.note("stmt:for");
    g.note("stmt:break");
    g.note("stmt:continue");
    k.stmt(format!(
        "for {j} in 0..{} {{\n    if {j} == 2 {{\n        continue;\n    }}\n    {c} += {j} as u32;\n    if {j} > 5 {{\n        break;\n    }}\n}}",
        3 + g.below(8)
    ));
    let j2 = g.name("j");
    let t = g.pick(&INTS);
    g.note("stmt:for_step");
    k.stmt(format!(
        "for {j2} in (1 as {t})..(40 as {t}) step {} {{\n    {c} += {j2} as u32;\n}}",
        1 + g.below(7),
        t = t.name()
    ));
    let j3 = g.name("j");
    g.note("stmt:for_runtime_step");
    k.stmt(format!(
        "for {j3} in thread_idx.x..n step (n | 1) {{\n    {c} += {j3};\n}}"
    ));
    // A loop over a constant list (unrolled by the checker), and hinted
    // range loops: written out, and N copies per test.
    let j4 = g.name("j");
    g.note("stmt:for_list");
    let items: Vec<String> = (0..1 + g.below(5))
        .map(|_| g.below(50).to_string())
        .collect();
    k.stmt(format!(
        "for {j4} in [{}u32{}] {{\n    {c} += {j4};\n}}",
        items[0],
        items[1..]
            .iter()
            .map(|i| format!(", {i}"))
            .collect::<String>()
    ));
    let j5 = g.name("j");
    g.note("stmt:for_unroll");
    k.stmt(format!(
        "#[unroll]\nfor {j5} in 0u32..{} {{\n    {c} += {j5} * 3;\n}}",
        1 + g.below(40)
    ));
    let j6 = g.name("j");
    g.note("stmt:for_unroll_n");
    k.stmt(format!(
        "#[unroll({})]\nfor {j6} in thread_idx.x..n step {} {{\n    {c} ^= {j6};\n}}",
        1 + g.below(16),
        1 + g.below(64)
    ));
    // The lane-mask registers and the active mask, every program.
    for f in MASK_VALUES {
        g.note(format!("builtin:{f}"));
    }
    k.stmt(format!(
        "{c} += (lane_mask_lt() ^ lane_mask_ge() ^ lane_mask_eq() ^ lane_mask_le() ^ lane_mask_gt()) & active_mask() & 7;"
    ));
    // Every lane of the warp syncs, and one of them is elected.
    g.note("builtin:sync_warp");
    g.note("builtin:elect_one");
    k.stmt(format!(
        "sync_warp();\nif elect_one() {{\n    {c} += 1;\n}}\nsync_warp(0xFFFF_FFFF);"
    ));
    g.note("stmt:while");
    k.stmt(format!("while {c} < 10 {{\n    {c} += 1;\n}}"));
    g.note("stmt:while_true");
    k.stmt(format!(
        "while true {{\n    {c} += 1;\n    if {c} > 20 {{\n        break;\n    }}\n}}"
    ));
    while_never(g, k, &c);
    k.local(&c, Ty::U32);
}

/// A `while` loop whose condition ptxas proves false, holding a loop and a
/// `return`, at the end of a `for` body: on the plain loop shape ptxas 13.5
/// crashed (SIGSEGV) on this, so the writer guards such loops
/// (docs/architecture.md, "ptxas workarounds"). The forms of the condition
/// are swept: the generated fuzz cases' `w < N && false` first, then the
/// ones only ptxas folds.
fn while_never(g: &mut Gen, k: &mut K, c: &str) {
    let (j, w, f) = (g.name("j"), g.name("w"), g.name("f"));
    let cond = g.sweep(
        &[
            "{w} < 18 && false",
            "false && {w} < n",
            "!({w} < n || true)",
            "{f}",
            "{w} < n && ({w} * 0) == 1",
        ],
        1,
        0,
    );
    if cond.contains("{f}") {
        k.stmt(format!("let {f} = false;"));
    }
    let cond = cond.replace("{w}", &w).replace("{f}", &f);
    g.note("stmt:while_never");
    k.stmt(format!(
        "for {j} in 0..n {{\n    {c} += {j};\n    let mut {w}: u32 = {j};\n    while {cond} {{\n        {w} += 1;\n        while {w} < n {{\n            {w} += 1;\n        }}\n        if {w} > 7 {{\n            return;\n        }}\n    }}\n}}"
    ));
}

/// Shared arrays of every element type over the run, 1 to 3 dimensions,
/// written, synchronised, read, and assigned with the operators.
fn shared(g: &mut Gen, k: &mut K) {
    for j in 0..3 {
        let t = g.sweep(&TYS, 3, j);
        let s = g.name("sh");
        g.note(format!("shared:{}", t.name()));
        let (decl, first, second) = match g.below(3) {
            0 => (
                "[32]".to_string(),
                "thread_idx.x % 32".to_string(),
                "(thread_idx.x + 1) % 32".to_string(),
            ),
            1 => {
                g.note("shared:2d");
                (
                    "[4, 8]".into(),
                    "0, thread_idx.x % 8".into(),
                    "1, lane_id % 8".into(),
                )
            }
            _ => {
                g.note("shared:3d");
                (
                    "[2, 2, 8]".into(),
                    "1, 0, thread_idx.x % 8".into(),
                    "0, 1, lane_id % 8".into(),
                )
            }
        };
        let dims = decl.trim_matches(|c| c == '[' || c == ']');
        k.decls.push(format!("shared {s}: [{}; {dims}];", t.name()));
        let e = g.expr(t, &k.env, 2);
        k.stmt(format!("{s}[{first}] = {e};"));
        store_op(g, k, &format!("{s}[{second}]"), t, j, "store");
        g.note("builtin:sync_threads");
        k.stmt("sync_threads();");
        let v = g.name("r");
        k.stmt(format!("let {v} = {s}[{second}];"));
        k.local(&v, t);
    }
}

/// Vector loads and stores (`load2`/`load4`, `store2`/`store4`): every
/// element type over the run with each width it fits (at most 16 bytes),
/// on read-only and writable global arrays and a shared array, at indices
/// whose alignment the checker proves.
fn vectors(g: &mut Gen, k: &mut K) {
    let t = g.sweep(&TYS, 1, 0);
    let size = t.size();
    let n: u32 = if size == 8 || g.below(2) == 0 { 2 } else { 4 };
    g.note(format!("vector:{}", t.name()));
    g.note(format!("vector:load{n}"));
    g.note(format!("vector:store{n}"));
    let (r, w, s) = (g.name("vr"), g.name("vw"), g.name("vs"));
    k.params.push(format!("{r}: global [{}]", t.name()));
    k.params.push(format!("{w}: global mut [{}]", t.name()));
    k.decls
        .push(format!("shared {s}: [{}; 4, {}];", t.name(), 2 * n));
    let names: Vec<String> = (0..n).map(|_| g.name("e")).collect();
    let list = names.join(", ");
    // Indices the checker proves aligned, in several forms.
    let index = match g.below(3) {
        0 => format!("thread_idx.x * {n}"),
        1 => format!("(block_idx.x * 32 + thread_idx.x) * {n} + {}", 2 * n),
        _ => format!("(thread_idx.x << {}) + {n}", n.trailing_zeros() + 1),
    };
    k.stmt(format!("let ({list}) = load{n}({r}[{index}]);"));
    g.note("vector:global");
    let e = g.expr(t, &k.env, 1);
    let mut values = names.clone();
    if let Some(last) = values.last_mut() {
        *last = e;
    }
    k.stmt(format!(
        "store{n}({s}[thread_idx.x % 4, {n}], {});",
        values.join(", ")
    ));
    g.note("vector:shared");
    k.stmt("sync_threads();");
    let back: Vec<String> = (0..n).map(|_| g.name("e")).collect();
    k.stmt(format!(
        "let ({}) = load{n}({s}[lane_id % 4, 0]);",
        back.join(", ")
    ));
    k.stmt(format!(
        "store{n}({w}[thread_idx.x * {}], {});",
        2 * n,
        back.join(", ")
    ));
    for v in names.iter().chain(&back) {
        k.local(v, t);
    }
}

/// Packed halves: a pair from halves and one from `f32`s, an operator and
/// a built-in on them (swept), a half of the result, a global array of
/// pairs; in sm_90 programs also an fp8 (swept) and `tf32` conversion to
/// and back, and a `store2` of two fp8 conversions.
fn packed(g: &mut Gen, k: &mut K) {
    let (t, h) = g.sweep(&[(Ty::F16x2, Ty::F16), (Ty::BF16x2, Ty::BF16)], 1, 0);
    let name = t.name();
    g.note(format!("builtin:{name}"));
    g.note(format!("packed:{name}"));
    let (a, b, c) = (g.name("pk"), g.name("pk"), g.name("pk"));
    // Anchored: a pair's untyped literals are halves.
    let (x, y) = (g.anchored(h, &k.env, 1), g.anchored(h, &k.env, 1));
    k.stmt(format!("let {a} = {name}({x}, {y});"));
    let (f1, f2) = (
        g.anchored(Ty::F32, &k.env, 1),
        g.anchored(Ty::F32, &k.env, 1),
    );
    k.stmt(format!("let {b} = {name}({f1}, {f2});"));
    let arr = g.name("gp");
    k.params.push(format!("{arr}: global mut [{name}]"));
    // Picked, not swept: the sweeps of one program move together.
    let op = g.pick(&["+", "-", "*"]);
    g.note(format!("packed:op:{op}"));
    let f = g.pick(&["min", "max", "abs", "fma", "neg", "select"]);
    g.note(format!("packed:{f}"));
    let e = match f {
        "min" | "max" => format!("{f}({a}, {b})"),
        "abs" => format!("abs({a})"),
        "fma" => format!("fma({a}, {b}, {arr}[thread_idx.x])"),
        "select" => format!("select(lane_id < 5, {a}, {b})"),
        _ => format!("-{a}"),
    };
    k.stmt(format!("let {c} = {e} {op} {arr}[thread_idx.x + 1];"));
    k.stmt(format!("{arr}[thread_idx.x] = {c};"));
    k.local(&c, t);
    let half = g.pick(&["lo", "hi"]);
    g.note(format!("packed:.{half}"));
    let l = g.name("ph");
    k.stmt(format!("let {l} = {a}.{half} + {b}.{half};"));
    k.local(&l, h);
    if !k.sm90 {
        return;
    }
    let s = g.pick(&["e4m3", "e5m2"]);
    let from = g.pick(&[Ty::F32, Ty::F16, Ty::BF16]);
    g.note(format!("fp8:{s}:{}", from.name()));
    let (q, r, tf) = (g.name("q"), g.name("q"), g.name("q"));
    let v = g.anchored(from, &k.env, 1);
    k.stmt(format!("let {q}: {s} = {v} as {s};"));
    k.stmt(format!("let {r} = {q} as {};", from.name()));
    k.local(&r, from);
    let w = g.anchored(Ty::F32, &k.env, 1);
    g.note("tf32");
    k.stmt(format!("let {tf} = ({w} as tf32) as f32;"));
    k.local(&tf, Ty::F32);
    let bytes = g.name("gq");
    k.params.push(format!("{bytes}: global mut [{s}]"));
    g.note("fp8:store2");
    k.stmt(format!(
        "store2({bytes}[2 * thread_idx.x], {r} as {s}, {a}.lo as {s});"
    ));
}

/// The atomics, those with six element types first (each comes round every
/// 11 programs, with the next type: 64 programs see every type of each).
pub const ATOMICS: [&str; 11] = [
    "atomic_add",
    "atomic_sub",
    "atomic_exch",
    "atomic_max",
    "atomic_min",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "atomic_cas",
    "atomic_inc",
    "atomic_dec",
];

/// The element types of each atomic.
pub fn atomic_types(f: &str) -> &'static [Ty] {
    match f {
        "atomic_add" | "atomic_sub" | "atomic_exch" => {
            &[Ty::U32, Ty::I32, Ty::U64, Ty::I64, Ty::F32, Ty::F64]
        }
        "atomic_inc" | "atomic_dec" => &[Ty::U32],
        // `atom.cas.b16`: the narrow integers' one atomic.
        "atomic_cas" => &[Ty::U32, Ty::I32, Ty::U64, Ty::I64, Ty::U16, Ty::I16],
        _ => &[Ty::U32, Ty::I32, Ty::U64, Ty::I64],
    }
}

/// The orders and scopes the atomics and fences of a program have (no
/// `cluster`: the main kernel is also compiled for sm_80), `None` where
/// the default is left out.
const ATOMIC_SEMS: [(Option<&str>, Option<&str>); 7] = [
    (None, None),
    (Some("acquire"), None),
    (Some("release"), Some("cta")),
    (Some("acq_rel"), Some("sys")),
    (Some("relaxed"), Some("gpu")),
    (None, Some("cta")),
    (Some("acq_rel"), Some("gpu")),
];

/// `, order = o, scope = s` for the sweep's next pair, noted.
fn sem_args(g: &mut Gen, (order, scope): (Option<&str>, Option<&str>), what: &str) -> String {
    let mut text = String::new();
    if let Some(o) = order {
        g.note(format!("{what}_order:{o}"));
        text.push_str(&format!(", order = {o}"));
    }
    if let Some(s) = scope {
        g.note(format!("{what}_scope:{s}"));
        text.push_str(&format!(", scope = {s}"));
    }
    text
}

/// Atomics on global and shared elements, as values and as statements,
/// with orders and scopes; and a fence.
fn atomics(g: &mut Gen, k: &mut K) {
    let f = g.sweep(&ATOMICS, 1, 0);
    let types = atomic_types(f);
    let t = g.sweep(types, 0, g.index / ATOMICS.len() as u64);
    g.note(format!("{f}:{}", t.name()));
    g.note(format!("builtin:{f}"));
    let sem = g.sweep(&ATOMIC_SEMS, 1, 3);
    let sem = sem_args(g, sem, "atomic");
    let a = g.name("acc");
    k.params.push(format!("{a}: global mut [{}]", t.name()));
    let s = g.name("hist");
    k.decls.push(format!("shared {s}: [{}; 64];", t.name()));
    let args = |g: &mut Gen, k: &K| -> String {
        let v = g.expr(t, &k.env, 1);
        if f == "atomic_cas" {
            format!("{}, {v}", g.expr(t, &k.env, 1))
        } else {
            v
        }
    };
    g.note(format!("{f}:global"));
    let x = args(g, k);
    let old = g.name("old");
    k.stmt(format!("let {old} = {f}({a}[thread_idx.x % 4], {x}{sem});"));
    k.local(&old, t);
    g.note(format!("{f}:shared"));
    g.note("stmt:value_dropped");
    let y = args(g, k);
    k.stmt(format!("{f}({s}[lane_id], {y});"));
    let fence = g.sweep(
        &[
            (None, None),
            (Some("sc"), Some("cta")),
            (Some("acq_rel"), Some("sys")),
            (Some("sc"), None),
            (None, Some("gpu")),
        ],
        1,
        1,
    );
    g.note("builtin:fence");
    let fence = sem_args(g, fence, "fence");
    k.stmt(format!("fence({});", fence.trim_start_matches(", ")));
}

/// CTA-scope barrier groups (every target): counts and arrival counts at
/// their limits, every wait and test form, both parities.
fn cta_barriers(g: &mut Gen, k: &mut K) {
    let b = g.name("bar");
    let count = g.sweep(&[1u32, 64, 2, 8], 1, 0);
    let count_text = match count {
        1 => g.bound("barrier_count:1", "1", "0", "E0311"),
        64 => g.bound("barrier_count:64", "64", "65", "E0311"),
        c => c.to_string(),
    };
    let arrivals = match g.sweep(&[0u8, 1, 2], 1, 0) {
        0 => g.bound("arrivals:1", "1", "0", "E0306"),
        1 => g.bound("arrivals:1048575", "1048575", "1048576", "E0306"),
        _ => "32".to_string(),
    };
    let index = if count == 1 {
        // A group of one: its bare name names its barrier.
        k.decls.push(format!(
            "barrier {b}[{count_text}]: cta(arrivals = {arrivals});"
        ));
        b.clone()
    } else {
        k.decls.push(format!(
            "barrier {b}[{count_text}]: cta(arrivals = {arrivals});"
        ));
        if g.chance(2) {
            let last = g.bound(
                "barrier_index",
                &(count - 1).to_string(),
                &count.to_string(),
                "E0305",
            );
            format!("{b}[{last}]")
        } else {
            format!("{b}[thread_idx.x % {count}]")
        }
    };
    g.note("barrier:arrive()");
    k.stmt(format!("if warp_id == 0 {{\n    {index}.arrive();\n}}"));
    let p = parity(g, "wait");
    let p2 = parity(g, "test");
    g.note("barrier:wait()");
    g.note("barrier:wait(p)");
    g.note("barrier:test()");
    g.note("barrier:test(p)");
    let (t1, t2) = (g.name("t"), g.name("t"));
    k.stmt(format!(
        "{index}.wait();\n{index}.wait({p});\nlet {t1} = {index}.test();\nlet {t2} = {index}.test({p2});"
    ));
    k.local(&t1, Ty::Bool);
    k.local(&t2, Ty::Bool);
}

/// Named barriers (every target): a group at the 15-id limit or a single
/// one, thread counts at the warp and CTA limits, `sync()` by every thread,
/// `arrive()` and `sync()` by whole warps, constant and run-time indices.
fn named_barriers(g: &mut Gen, k: &mut K) {
    let b = g.name("nb");
    let threads = match g.sweep(&[0u8, 1], 1, 0) {
        0 => g.bound("named_threads:32", "32", "33", "E0144"),
        _ => g.bound("named_threads:0", "32", "0", "E0144"),
    };
    if g.chance(2) {
        let count = g.bound("named_count:15", "15", "16", "E0149");
        k.decls
            .push(format!("barrier {b}[{count}]: named(threads = {threads});"));
        g.note("named:sync");
        g.note("named:arrive");
        k.stmt(format!(
            "{b}[warp_id % 15].sync();
if warp_id == 0 {{
    {b}[14].arrive();
}} else {{
    {b}[14].sync();
}}"
        ));
    } else {
        k.decls
            .push(format!("barrier {b}: named(threads = {threads});"));
        g.note("named:sync");
        k.stmt(format!("{b}.sync();"));
    }
}

/// A parity operand, 0 or 1 (2 in the variant: E0310).
fn parity(g: &mut Gen, op: &str) -> String {
    let p = g.pick(&["0", "1"]);
    g.bound(&format!("parity:{op}:{p}"), p, "2", "E0310")
}

/// sm_90 barrier operations: `arrive(n)`, `arrive_expect_tx`, `expect_tx`,
/// at the limits of their operands.
fn tx_barriers(g: &mut Gen, k: &mut K) {
    let b = g.name("tx");
    k.decls.push(format!("barrier {b}: cta(arrivals = 2);"));
    let n = match g.sweep(&[0u8, 1], 1, 0) {
        0 => g.bound("arrive_n:1", "1", "0", "E0306"),
        _ => g.bound("arrive_n:1048575", "1048575", "1048576", "E0306"),
    };
    let bytes = |g: &mut Gen, what: &str| match g.below(2) {
        0 => g.bound(&format!("{what}:16"), "16", "15", "E0309"),
        _ => g.bound(&format!("{what}:1048560"), "1048560", "1048576", "E0309"),
    };
    let (e1, e2) = (bytes(g, "arrive_expect_tx"), bytes(g, "expect_tx"));
    g.note("barrier:arrive(n)");
    g.note("barrier:arrive_expect_tx");
    g.note("barrier:expect_tx");
    k.stmt(format!(
        "if thread_idx.x == 0 {{\n    {b}.arrive({n});\n    {b}.expect_tx({e2});\n    {b}.arrive_expect_tx({e1});\n}}\n{b}.wait();"
    ));
}

/// Bulk copies in and out of shared memory, with the fence and the groups.
fn bulk(g: &mut Gen, k: &mut K) {
    let (tile, done, src, dst) = (
        g.name("tile"),
        g.name("loaded"),
        g.name("src"),
        g.name("dst"),
    );
    k.decls.push(format!("shared {tile}: [f32; 64];"));
    k.decls.push(format!("barrier {done}: cta(arrivals = 1);"));
    k.params.push(format!("{src}: global [f32]"));
    k.params.push(format!("{dst}: global mut [f32]"));
    let expect = g.bound("arrive_expect_tx:16", "16", "15", "E0309");
    let bytes = g.bound("copy_async:16", "16", "15", "E0309");
    let store_bytes = g.bound("copy_async_store:16", "16", "15", "E0309");
    let groups = g.below(4);
    for f in [
        "copy_async",
        "copy_async_store",
        "copy_async_commit",
        "copy_async_wait",
        "fence_proxy_async",
    ] {
        g.note(format!("builtin:{f}"));
    }
    k.stmt(format!(
        "if thread_idx.x == 0 {{\n    {done}.arrive_expect_tx({expect});\n    copy_async({tile}[0], {src}[block_idx.x * 64], {bytes}, {done});\n}}\n\
         {done}.wait();\nfence_proxy_async();\nsync_threads();\n\
         if thread_idx.x == 0 {{\n    copy_async_store({dst}[block_idx.x * 64], {tile}[0], {store_bytes});\n    copy_async_commit();\n    copy_async_wait({groups});\n}}"
    ));
}

/// A kernel of warp matrix accesses: `ldmatrix_x1/x2/x4` (swept) from a
/// plain or swizzled shared array of 16-bit elements, transposed or not,
/// at rows whose alignment shows; in sm_90 programs the `stmatrix` of the
/// same count back into the array.
fn matrix_kernel(g: &mut Gen, sm90: bool) -> String {
    // Shifted by index / 3, so that every count meets sm_90 programs
    // (`index % 3 != 0`).
    let n = g.sweep(&[1usize, 2, 4], 1, g.index / 3);
    let elem = g.pick(&["f16", "bf16", "u16"]);
    g.note(format!("matrix:{elem}"));
    let (t, out) = (g.name("mt"), g.name("mo"));
    let swizzled = g.chance(2);
    let decl = if swizzled {
        g.note("matrix:swizzle");
        format!("shared {t}: [{elem}; 2, 8, 64] swizzle(128);")
    } else {
        format!("shared {t}: [{elem}; 32, 32];")
    };
    let reg = if elem == "u16" { "u32" } else { "" };
    let reg = if reg.is_empty() {
        format!("{elem}x2")
    } else {
        reg.into()
    };
    let fill = if swizzled {
        format!(
            "for i in thread_idx.x..1024 step 64 {{
        {t}[i / 512, (i / 64) % 8, i % 64] = i as {elem};
    }}"
        )
    } else {
        format!(
            "for i in thread_idx.x..1024 step 64 {{
        {t}[i / 32, i % 32] = i as {elem};
    }}"
        )
    };
    let place = if swizzled {
        "[warp_id, lane_id % 8, 8 * (lane_id / 8)]".to_string()
    } else {
        "[lane_id, 8 * (warp_id + lane_id % 3)]".to_string()
    };
    let trans = if g.chance(2) {
        g.note("matrix:trans");
        ", trans = true"
    } else {
        ""
    };
    let names: Vec<String> = (0..n).map(|_| g.name("r")).collect();
    g.note(format!("builtin:ldmatrix_x{n}"));
    let mut body = format!(
        "    {fill}
    sync_threads();
    let ({}) = ldmatrix_x{n}({t}{place}{trans});
",
        names.join(", ")
    );
    if sm90 {
        g.note(format!("builtin:stmatrix_x{n}"));
        body.push_str(&format!(
            "    sync_threads();
    stmatrix_x{n}({t}{place}, {}{trans});
",
            names.join(", ")
        ));
    }
    body.push_str(&format!(
        "    {out}[thread_idx.x] = {};
",
        names.join(if reg == "u32" { " ^ " } else { " + " })
    ));
    format!(
        "kernel {}({out}: global mut [{reg}]) block(64) {{
    {decl}
{body}}}
",
        g.name("matrices")
    )
}

/// The element types of tensor maps, with their bytes.
pub const TENSOR_ELEMS: [(&str, u64); 15] = [
    ("u8", 1),
    ("i8", 1),
    ("u16", 2),
    ("i16", 2),
    ("u32", 4),
    ("i32", 4),
    ("u64", 8),
    ("i64", 8),
    ("f16", 2),
    ("bf16", 2),
    ("f32", 4),
    ("f64", 8),
    ("tf32", 4),
    ("e4m3", 1),
    ("e5m2", 1),
];

/// A kernel of tensor copies (sm_90, language.md §15): a map of each
/// element type over the run, loaded into a ring of slices with each
/// swizzle and guarded stages, its bytes expected with `bytes_of`; a
/// tile stored and reduced through a writable map; the box limits at
/// their edges on maps no copy uses.
fn tensor_kernel(g: &mut Gen) -> String {
    // The programs with this kernel are those of sm_90 (index not a
    // multiple of 3): `n` counts them, and sweeps the types and swizzles.
    let n = (g.index - g.index / 3).saturating_sub(1) as usize;
    let (elem, size) = TENSOR_ELEMS[n % TENSOR_ELEMS.len()];
    let swizzle = ["none", "32", "64", "128"][n % 4];
    g.note(format!("tensor:elem:{elem}"));
    g.note(format!("tensor:swizzle:{swizzle}"));
    let row_bytes: u64 = swizzle.parse().unwrap_or(32);
    let cols = row_bytes / size;
    let clause = match swizzle {
        "none" => String::new(),
        s => format!(" swizzle({s})"),
    };
    let (map, out_map, lim, inner) = (g.name("tm"), g.name("tout"), g.name("lim"), g.name("inner"));
    let (stages, tile, full) = (g.name("st"), g.name("sc"), g.name("full"));
    let big = g.bound("tensor_box:256", "256", "257", "E0405");
    let inner_bytes = g.bound("tensor_inner:16", "16", "15", "E0405");
    let span = g.bound("swizzle_span:64", "64", "63", "E0403");
    let extra = g.bound("tensor_tx:exact", "0", "16", "E0406");
    let stage = g.bound("stage:own_barrier", "1", "0", "E0407");
    let spare = g.name("spare");
    for f in ["tma_load", "tma_store", "tma_reduce_add", "bytes_of"] {
        g.note(format!("builtin:{f}"));
    }
    format!(
        "kernel tensors(out: global mut [f32], {map}: tensor [{elem}; 8, {cols}], {out_map}: tensor mut [f32; 8, 32],
               {lim}: tensor [u8; {big}, 16], {inner}: tensor [u8; 4, {inner_bytes}]) block(128) {{
    shared {stages}: [{elem}; 2, 8, {cols}]{clause};
    shared {tile}: [f32; 8, 32];
    shared {spare}: [bf16; 2, 8, {span}] swizzle(128);
    barrier {full}[2]: cta(arrivals = 1) guards({stages});
    let t = thread_idx.x;
    if t == 0 {{
        {full}[1].arrive_expect_tx(bytes_of({stages}[1]) + {extra});
        tma_load({stages}[1], {map}[(block_idx.x * 8) as i32, 0], {full}[{stage}]);
    }}
    {full}[1].wait();
    {tile}[t / 32, t % 32] = out[t];
    {spare}[0, t % 8, t % 64] = 1.0;
    fence_proxy_async();
    sync_threads();
    if t == 0 {{
        tma_store({out_map}[block_idx.x * 16, 0], {tile});
        tma_reduce_add({out_map}[block_idx.x * 16 + 8, 0], {tile});
        copy_async_commit();
        copy_async_wait(0);
    }}
    out[t] = {spare}[1, t % 8, 63 - t % 64] as f32;
}}
"
    )
}

/// Calls as statements: a function without a value, and one whose value
/// is dropped.
fn calls(g: &mut Gen, k: &mut K) {
    let fns = k.env.fns.clone();
    for (name, params, ret) in fns {
        let args: Vec<String> = params.iter().map(|t| g.expr(*t, &k.env, 1)).collect();
        match ret {
            None => g.note("stmt:call_stmt"),
            Some(_) => g.note("stmt:value_dropped"),
        }
        k.stmt(format!("{name}({});", args.join(", ")));
    }
}

/// A kernel with a cluster (sm_90): every cluster size 1 to 16 over the run
/// (9 to 16 carry W0002, allowed), distributed shared memory, a cluster
/// barrier group with every cluster-scope operation.
fn cluster_kernel(g: &mut Gen, env: &Env) -> String {
    let mut k = new_kernel(g, env, "clustered", true);
    k.cluster = true;
    k.env.cluster_values = true;
    // Odd programs have a cluster kernel: sizes 1, 2, ... in turn (an sm_80
    // program skips one, which comes again 16 programs later).
    let size = g.sweep(&(1..=16u32).collect::<Vec<_>>(), 0, g.index / 2);
    g.note(format!("bound:cluster:{size}"));
    if size > 8 {
        g.p.allow.push("W0002");
    }
    let shape = if size == 16 {
        g.note("launch:cluster1");
        g.bound("cluster:16", "16", "17", "E0120")
    } else if size.is_multiple_of(4) && g.chance(2) {
        g.note("launch:cluster3");
        format!("{}, 2, 2", size / 4)
    } else if size.is_multiple_of(2) && (size % 4 == 2 || g.chance(2)) {
        // Sizes 2, 6, 10, 14 always take this shape: the coverage check
        // must not hang on a coin toss.
        g.note("launch:cluster2");
        format!("2, {}", size / 2)
    } else {
        g.note("launch:cluster1");
        size.to_string()
    };
    k.launch = format!(" block(64) cluster({shape})");
    let (inbox, got) = (g.name("inbox"), g.name("got"));
    // Cluster kernels are in odd programs: each atomic in turn over eight
    // of them (not in step with the orders below, which turn every one).
    let f = g.sweep(
        &["atomic_add", "atomic_max", "atomic_min", "atomic_cas"],
        0,
        g.index / 8,
    );
    let t = if f == "atomic_add" {
        g.pick(&[Ty::U32, Ty::I32, Ty::U64])
    } else {
        g.pick(&[Ty::U32, Ty::I32, Ty::U64, Ty::I64])
    };
    k.decls.push(format!("shared {inbox}: [{}; 8];", t.name()));
    let arrivals = g.pick(&["1", "2"]);
    k.decls
        .push(format!("barrier {got}: cluster(arrivals = {arrivals});"));
    g.note("builtin:cluster_sync");
    k.stmt("cluster_sync();");
    let peer = g.name("peer");
    let (v, w) = (g.expr(t, &k.env, 2), g.expr(t, &k.env, 1));
    g.note(format!("{f}:remote"));
    g.note("value:cluster_rank");
    g.note("value:cluster_size");
    let atomic_args = if f == "atomic_cas" {
        format!("{w}, {w}")
    } else {
        w.clone()
    };
    // One of the newer atomics on the peer's memory at cluster scope.
    let f2 = g.sweep(
        &[
            "atomic_sub",
            "atomic_exch",
            "atomic_and",
            "atomic_or",
            "atomic_xor",
        ],
        0,
        g.index / 2,
    );
    let o2 = g.sweep(
        &["relaxed", "acquire", "release", "acq_rel"],
        0,
        g.index / 2,
    );
    g.note(format!("{f2}:remote"));
    g.note("atomic_scope:cluster");
    g.note("fence_scope:cluster");
    let r = g.name("remote");
    g.note("remote:store");
    g.note("remote:load");
    g.note("barrier:arrive_remote");
    let (p, p2) = (parity(g, "wait_cluster"), parity(g, "test_cluster"));
    for op in [
        "wait_cluster()",
        "wait_cluster(p)",
        "test_cluster()",
        "test_cluster(p)",
    ] {
        g.note(format!("barrier:{op}"));
    }
    let (t1, t2) = (g.name("t"), g.name("t"));
    k.stmt(format!(
        "let {peer} = (cluster_rank + 1) % cluster_size;\n\
         remote({inbox}, {peer})[cluster_rank % 8] = {v};\n\
         let {r} = remote({inbox}, {peer})[0];\n\
         {f}(remote({inbox}, {peer})[1], {atomic_args});\n\
         {f2}(remote({inbox}, {peer})[2], {w}, order = {o2}, scope = cluster);\n\
         fence(scope = cluster);\n\
         if thread_idx.x == 0 {{\n    {got}.arrive_remote({peer});\n}}\n\
         {got}.wait_cluster();\n{got}.wait_cluster({p});\n\
         let {t1} = {got}.test_cluster();\nlet {t2} = {got}.test_cluster({p2});"
    ));
    k.local(&r, t);
    k.local(&t1, Ty::Bool);
    k.local(&t2, Ty::Bool);
    let e = g.expr(Ty::U32, &k.env, 2);
    let cv = g.name("cv");
    k.stmt(format!(
        "let {cv}: u32 = {e} + cluster_idx.y + cluster_dim.z + cluster_grid_idx.x * cluster_grid_dim.y;"
    ));
    g.note("value:cluster_idx");
    g.note("value:cluster_dim");
    g.note("value:cluster_grid_idx");
    g.note("value:cluster_grid_dim");
    k.local(&cv, Ty::U32);
    k.stmt("cluster_sync();");
    k.text()
}

/// A kernel at the hardware's limits: shared memory filled to exactly
/// 48 KiB after its barriers, and a parameter list of exactly 4352, 4356 or
/// 32764 bytes.
fn limits_kernel(g: &mut Gen, sm90: bool) -> String {
    let mut s = String::from("kernel limits(out: global mut [f32]");
    let (bytes, past) = match g.sweep(&[0u8, 1, 2], 1, 0) {
        0 => (4352u32, None),
        1 => (4356, None),
        _ => (32764, Some("E0127")),
    };
    // After `out` (8 bytes): u32 parameters up to the total.
    for i in 0..(bytes - 8) / 4 {
        s.push_str(&format!(", q{i}: u32"));
    }
    g.note(format!("bound:params:{bytes}"));
    if let Some(code) = past {
        let m = g.bound(&format!("params:{bytes}"), "", ", q_past: u32", code);
        s.push_str(&m);
    }
    s.push_str(") block(32) {\n");
    let groups = g.below(3);
    let mut barrier_bytes = 0;
    for i in 0..groups {
        let count = 1 + g.below(4);
        barrier_bytes += 8 * count;
        s.push_str(&format!(
            "    barrier lb{i}[{count}]: cta(arrivals = 32);\n"
        ));
    }
    let start = barrier_bytes.div_ceil(128) * 128;
    let t = g.pick(&[Ty::Bool, Ty::F16, Ty::F32, Ty::F64, Ty::U32, Ty::I64]);
    // At the target's maximum (dynamic shared memory; on sm_90 one element
    // more is E0122), or at the 48 KiB of static shared memory or one element past
    // it (both clean: past 48 KiB the kernel's shared memory is dynamic).
    let size = u64::from(t.size());
    // Swept where the limits kernel always comes (index 2 mod 4), so that
    // the fixed run meets all three on sm_80 (index 0 mod 3) too.
    let choice = if g.index % 4 == 2 {
        g.index / 12 % 3
    } else {
        g.below(3)
    };
    let len_text = match choice {
        0 => {
            g.note("shared:static_max");
            ((SHARED_STATIC - start) / size).to_string()
        }
        1 => {
            g.note("shared:dynamic_min");
            ((SHARED_STATIC - start) / size + 1).to_string()
        }
        // Variants are compiled for sm_90: one element past sm_80's
        // maximum is clean there, so that one is no boundary variant.
        _ if !sm90 => {
            g.note("shared:max_sm80");
            ((Target::Sm80.max_shared_per_block() - start) / size).to_string()
        }
        _ => {
            let len = (Target::Sm90.max_shared_per_block() - start) / size;
            g.bound(
                "shared:max",
                &len.to_string(),
                &(len + 1).to_string(),
                "E0122",
            )
        }
    };
    s.push_str(&format!("    shared big: [{}; {len_text}];\n", t.name()));
    let value = match t {
        Ty::Bool => "true".to_string(),
        _ => "1".to_string(),
    };
    s.push_str(&format!("    big[thread_idx.x] = {value};\n"));
    for i in 0..groups {
        s.push_str(&format!(
            "    if warp_id == 0 {{\n        lb{i}[0].arrive();\n    }}\n    lb{i}[0].wait();\n"
        ));
    }
    let read = match t {
        Ty::Bool => "select(big[1], 1.0, 0.0)".to_string(),
        _ => "big[1] as f32".to_string(),
    };
    s.push_str(&format!("    out[0] = {read};\n}}\n"));
    s
}

/// A warp-specialised kernel for sm_90a: warpgroup 0 gives registers back
/// (`set_max_regs(24 or 40)`), the others take what the pool has left, to
/// the last 8 registers (one more step is E0422). Blocks of 1 to 8
/// warpgroups are swept.
fn warpgroup_kernel(g: &mut Gen, env: &Env) -> String {
    // Which programs get here: index 1 mod 6; sweep the warpgroups.
    let w = 1 + (g.index / 6 % 8) as u32;
    let threads = 128 * w;
    let entry = (65536 / (8 * threads) * 8).min(255);
    let producer = g.pick(&[24u32, 40]);
    // The warpgroup index in each of its spellings, swept too.
    let how = ["warp_id / 4", "warp_id >> 2", "thread_idx.x / 128"][(g.index / 6 % 3) as usize];
    g.note(format!("warpgroup_index:{how}"));
    g.note("builtin:set_max_regs");
    let mut s =
        format!("kernel roles(out: global mut [u32]) block({threads}) {{\n    let wg = {how};\n");
    let env = Env {
        in_kernel: true,
        ..env.clone()
    };
    let e = g.expr(Ty::U32, &env, 2);
    if w == 1 {
        g.note("warpgroups:1");
        let n = g.bound(
            "regs_count",
            &producer.to_string(),
            &(producer + 4).to_string(),
            "E0420",
        );
        s.push_str(&format!(
            "    set_max_regs({n});\n    out[thread_idx.x] = {e} + wg;\n}}\n"
        ));
        return s;
    }
    // The largest consumer budget that fits the pool (the count at entry
    // is the smaller of the launch's and the largest budget, so a budget
    // above the launch's count leaves the pool as it is).
    let pool = w * entry;
    let consumer = ((pool - producer) / (w - 1) / 8 * 8).min(256);
    let past = consumer + 8;
    let c = if past <= 256 && producer + (w - 1) * past > w * entry.min(past) {
        g.bound(
            &format!("pool:{w}"),
            &consumer.to_string(),
            &past.to_string(),
            "E0422",
        )
    } else {
        g.note(format!("warpgroups:{w}"));
        consumer.to_string()
    };
    let e2 = g.expr(Ty::U32, &env, 2);
    // The consumers multiply on the tensor cores, with an accumulator
    // their budget holds (and what a wgmma needs beside it).
    let mma = wgmma(g, consumer.min(entry), 0, "", true);
    s = s.replacen(
        " {\n    let wg",
        &format!(" {{\n{}    let wg", mma.decls),
        1,
    );
    s.push_str(&format!(
        "    if wg == 0 {{\n        set_max_regs({producer});\n        out[thread_idx.x] = {e};\n    }} else {{\n        set_max_regs({c});\n        out[thread_idx.x] = {e2};\n{}    }}\n}}\n",
        mma.body
    ));
    s
}

/// The `wgmma` forms: accumulator, A and B types, and the bytes of A's
/// and B's elements.
const FORMS: [(&str, &str, &str); 14] = [
    ("f32", "f16", "f16"),
    ("f16", "f16", "f16"),
    ("f32", "bf16", "bf16"),
    ("f32", "tf32", "tf32"),
    ("f32", "e4m3", "e4m3"),
    ("f32", "e5m2", "e4m3"),
    ("f32", "e4m3", "e5m2"),
    ("f16", "e4m3", "e5m2"),
    ("f16", "e5m2", "e5m2"),
    ("f16", "e5m2", "e4m3"),
    ("i32", "i8", "i8"),
    ("i32", "u8", "u8"),
    ("i32", "u8", "i8"),
    ("i32", "i8", "u8"),
];

/// The shared arrays and accumulator of a `wgmma`, and the statements that
/// multiply and store.
struct Mma {
    decls: String,
    body: String,
}

/// A `wgmma` of a form the program's index sweeps (the `k`-th of three),
/// its width chosen to fit `budget` registers (the accumulator's and about
/// 26 more); its declarations' names end in `suffix`; `bounds`: with the
/// boundary variants of its width and wait.
fn wgmma(g: &mut Gen, budget: u32, k: u64, suffix: &str, bounds: bool) -> Mma {
    let (d, a, b) = FORMS[((g.index / 6 * 3 + k) % FORMS.len() as u64) as usize];
    let third = k;
    g.note(format!("wgmma_form:{d}.{a}.{b}"));
    for f in ["wgmma", "wgmma_commit", "wgmma_wait", "acc_row", "acc_col"] {
        g.note(format!("builtin:{f}"));
    }
    let size = |t: &str| match t {
        "tf32" => 4,
        "f16" | "bf16" => 2,
        _ => 1,
    };
    let per_reg = if d == "f16" { 4 } else { 2 };
    let regs = budget.saturating_sub(26 + 8);
    let widths: Vec<u32> = if d == "i32" {
        kdsl::ir::Accum::INT_N.to_vec()
    } else {
        (1..=32).map(|i| 8 * i).collect()
    };
    let fits: Vec<u32> = widths.into_iter().filter(|n| n / per_reg <= regs).collect();
    let n = fits
        .get(g.below(fits.len() as u64) as usize)
        .copied()
        .unwrap_or(8);
    let (row_a, row_b, k) = (128 / size(a), 128 / size(b), 32 / size(a));
    let (n_text, wait) = if bounds {
        (
            g.bound("accum_n", &n.to_string(), &(n + 4).to_string(), "E0412"),
            g.bound("wgmma_wait", "0", "8", "E0417"),
        )
    } else {
        (n.to_string(), "0".to_string())
    };
    // `f16`/`bf16` operands are transposed (MN-major) in turn: A, B,
    // both, swept so that the programs of a fixed run have each.
    let trans = if matches!(a, "f16" | "bf16") {
        (third + 2 * (g.index / 6)) % 4
    } else {
        0
    };
    let (ta, tb) = (trans & 1 != 0, trans & 2 != 0);
    if trans != 0 {
        let which = ["", "a", "b", "both"][trans as usize];
        g.note(format!("wgmma_transpose:{which}"));
    }
    // A transposed array: K rows of one span (64 halves) of M or N, the
    // spans of a wider tile before them.
    let array = |name: &str, t: &str, rows: u32, row: u32, trans: bool| {
        if trans {
            format!(
                "    shared {name}{suffix}: [{t}; {}, {}, {row}] swizzle(128);\n",
                rows.div_ceil(row),
                2 * k
            )
        } else {
            format!("    shared {name}{suffix}: [{t}; {rows}, {row}] swizzle(128);\n")
        }
    };
    let operand = |name: &str, at: u32, trans: bool| {
        if trans {
            format!("transpose({name}{suffix}[0, {at}, 0])")
        } else {
            format!("{name}{suffix}[0, {at}]")
        }
    };
    let mut decls = format!(
        "{}{}    accum acc{suffix}: [{d}; 64, {n_text}];\n",
        array("sa", a, 64, row_a, ta),
        array("sb", b, n, row_b, tb)
    );
    // Fragments as values (an `f32` result of 16-bit operands, room for
    // a 16-bit copy and three row vectors): the online-softmax steps, then
    // the result as the A operand of an RS wgmma onto itself.
    let fragments = d == "f32" && matches!(a, "f16" | "bf16") && n >= 16 && !bounds && {
        n / 2 + n / 4 + 6 <= regs
    };
    let frag_body = if fragments {
        for f in ["row_max", "row_sum", "row_scale", "row_exp2", "acc_convert"] {
            g.note(format!("builtin:{f}"));
        }
        g.note("wgmma_rs");
        decls.push_str(&format!(
            "    accum p{suffix}: [{a}; 64, {n}];\n    accum rm{suffix}: [f32; 64];\n    accum rl{suffix}: [f32; 64];\n"
        ));
        format!(
            "        for r in 0..2u32 {{\n            rm{suffix}[r] = -1.0e30;\n            rl{suffix}[r] = 0.0;\n        }}\n        row_max(rm{suffix}, acc{suffix});\n        row_exp2(acc{suffix}, rm{suffix}, 0.5);\n        row_sum(rl{suffix}, acc{suffix});\n        row_scale(acc{suffix}, rl{suffix});\n        acc_convert(p{suffix}, acc{suffix});\n        wgmma(acc{suffix}, p{suffix}[0], {});\n        wgmma_commit();\n        wgmma_wait(0);\n",
            operand("sb", 0, tb)
        )
    } else {
        String::new()
    };
    let body = format!(
        "        wgmma(acc{suffix}, {}, {}, accumulate = false);\n        wgmma(acc{suffix}, {}, {});\n        wgmma_commit();\n        wgmma_wait({wait});\n{frag_body}        for i in 0..{half}u32 {{\n            out[acc_row(acc{suffix}, i) * {n} + acc_col(acc{suffix}, i)] = acc{suffix}[i] as u32;\n        }}\n",
        operand("sa", 0, ta),
        operand("sb", 0, tb),
        operand("sa", k, ta),
        operand("sb", k, tb),
        half = n / 2
    );
    Mma { decls, body }
}

/// One warpgroup on the tensor cores with two more forms, one after the
/// other, in a block of one warpgroup without budgets.
fn forms_kernel(g: &mut Gen) -> String {
    let one = wgmma(g, 120, 1, "1", false);
    let two = wgmma(g, 120, 2, "2", false);
    format!(
        "kernel forms(out: global mut [u32]) block(128) {{\n{}{}    if warp_id < 4 {{\n{}{}    }}\n}}\n",
        one.decls, two.decls, one.body, two.body
    )
}
