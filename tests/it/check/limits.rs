//! Everything kdslc accepts, ptxas accepts: each hardware limit kdslc checks
//! is tried with the real ptxas at the limit (kdslc and ptxas accept) and
//! just past it (kdslc reports the error, and the PTX kdslc would have
//! written is rejected by ptxas, where ptxas checks that limit at all).
//!
//! - shared memory: generated kernels, kdslc's static total against
//!   `ptxas -v`'s, byte for byte, on both sides of 48 KiB (past it the
//!   kernel's shared memory is dynamic: 0 static bytes); E0122 at each
//!   target's opt-in maximum;
//! - parameter space (E0127 and the `.version` raise to 8.1);
//! - arrival counts (E0306) in declarations and in `arrive(count)`;
//! - block and cluster shapes (E0120; ptxas accepts any `.reqntid`, the
//!   launch fails, so only kdslc's side can be checked);
//! - names (E0126): every PTX opcode, directive, type, state space, special
//!   register and modifier word as a kernel, function, parameter, shared
//!   array, barrier group and local name.

use crate::common::{ptxas, rng};
use kdsl::diagnostics::Diagnostic;
use kdsl::ir::layout::{SharedLayout, SHARED_LIMIT};
use kdsl::target::Target;
use kdsl::{compile_str, Compilation, Options};
use std::path::Path;

fn compile(src: &str, target: Target) -> Compilation {
    let opts = Options {
        target,
        ..Options::default()
    };
    compile_str("limits.kdsl", src, &opts)
}

fn codes(c: &Compilation) -> Vec<&'static str> {
    c.diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| d.code)
        .collect()
}

/// The PTX the writer produces for a program whose only errors are the
/// limit checks under test: what ptxas would have been given without them.
fn unchecked_ptx(c: &Compilation, target: Target) -> String {
    let checked = kdsl::check::check_with_references(&c.sources, &c.files, &c.loaded_by, target);
    let module = checked.module;
    let info = kdsl::analysis::analyze(&module);
    kdsl::ptx::write(&module, &info, target).expect("the writer accepts the module")
}

/// The PTX of a clean program.
fn clean_ptx(src: &str, target: Target) -> String {
    let c = compile(src, target);
    let errors: Vec<&Diagnostic> = c.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{src}\n{errors:#?}");
    c.ptx.expect("PTX for a clean program")
}

fn assemble(ptxas: &Path, ptx: &str, arch: &str) -> Result<String, String> {
    ptxas::assemble_with(ptxas, ptx, arch, &["-v"]).map(|a| a.log)
}

/// `N bytes smem` of each entry in a `ptxas -v` log (0 when not printed).
fn smem_per_entry(log: &str) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = Vec::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or("").to_string();
            out.push((name, 0));
        } else if let Some(i) = line.find(" bytes smem") {
            let n = line[..i].rsplit([' ', ',']).next().unwrap_or("0");
            if let Some(last) = out.last_mut() {
                last.1 = n.parse().unwrap_or_else(|_| panic!("{line}"));
            }
        }
    }
    out
}

/// `0xc000`-style numbers in ptxas's "uses too much shared data (0x... bytes"
fn too_much(log: &str, what: &str) -> Option<u64> {
    let rest = log.split(&format!("uses too much {what} (0x")).nth(1)?;
    u64::from_str_radix(rest.split(' ').next()?, 16).ok()
}

/// A small deterministic generator (no dependency, same cases every run).
struct Lcg(rng::Lcg);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0.step() >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A kernel with random shared arrays (element types of 1 to 8 bytes, one
/// or two dimensions), random barrier groups, declared in a random order,
/// some arrays used, some only loaded into values nobody needs (which
/// ptxas removes), some untouched. Sizes are drawn around the limit.
fn random_kernel(rng: &mut Lcg, name: &str) -> String {
    let types = [
        ("bool", 1u64),
        ("u8", 1),
        ("i16", 2),
        ("f16", 2),
        ("u32", 4),
        ("f32", 4),
        ("f64", 8),
    ];
    let budget = 40_000 + rng.below(16_000);
    let arrays = 1 + rng.below(5);
    let mut decls = Vec::new();
    let mut uses = Vec::new();
    for i in 0..arrays {
        let (ty, size) = types[rng.below(types.len() as u64) as usize];
        let bytes = (budget / arrays).saturating_sub(rng.below(600)).max(size);
        let elems = (bytes / size).max(1);
        let dims = if elems % 2 == 0 && rng.below(2) == 0 {
            format!("2, {}", elems / 2)
        } else {
            elems.to_string()
        };
        decls.push(format!("    shared a{i}: [{ty}; {dims}];"));
        let index = if dims.contains(',') { "0, 0" } else { "0" };
        match rng.below(3) {
            0 => uses.push(format!("    out[{i}] = a{i}[{index}] as f32;")),
            1 => uses.push(format!("    let _dead{i} = a{i}[{index}];")),
            _ => {}
        }
    }
    for i in 0..rng.below(4) {
        let count = 1 + rng.below(64);
        decls.push(format!("    barrier b{i}[{count}]: cta(arrivals = 1);"));
    }
    // Declarations in a random order.
    for i in (1..decls.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        decls.swap(i, j);
    }
    format!(
        "kernel {name}(out: global mut [f32]) block(32) {{\n{}\n{}\n}}\n",
        decls.join("\n"),
        uses.join("\n")
    )
}

/// kdslc's layout of every kernel of a compilation (checked or not).
fn layouts(c: &Compilation, target: Target) -> Vec<(String, Option<u64>)> {
    let checked = kdsl::check::check_with_references(&c.sources, &c.files, &c.loaded_by, target);
    let module = checked.module;
    module
        .kernels
        .iter()
        .map(|k| (k.name.clone(), SharedLayout::of(k).total))
        .collect()
}

#[test]
fn shared_memory_is_what_ptxas_allocates() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let mut rng = Lcg(rng::Lcg(0x5eed_0f5a_7e00));
    let mut all = String::new();
    let mut dynamic = 0;
    for i in 0..60 {
        let name = format!("k{i}");
        let src = random_kernel(&mut rng, &name);
        let c = compile(&src, Target::Sm90);
        // Past 48 KiB is dynamic shared memory, far below sm_90's maximum.
        assert!(codes(&c).is_empty(), "{src}\n{:#?}", c.diagnostics);
        let total = layouts(&c, Target::Sm90)[0].1.expect("a small total");
        dynamic += usize::from(total > SHARED_LIMIT);
        all.push_str(&src);
    }
    assert!(dynamic >= 5, "the generator should cross 48 KiB often");

    // ptxas allocates exactly kdslc's total as static shared memory up to
    // 48 KiB, and none past it (the layout is then an offset into the
    // module's `.extern .shared` array, which each launch sizes).
    let c = compile(&all, Target::Sm90);
    assert!(codes(&c).is_empty(), "{:#?}", c.diagnostics);
    let ptx = c.ptx.as_deref().expect("PTX");
    let module = c.module.as_ref().expect("IR");
    let log = assemble(&ptxas, ptx, "sm_90").expect("ptxas accepts");
    let mut got = smem_per_entry(&log);
    got.sort();
    let mut expected: Vec<(String, u64)> = module
        .kernels
        .iter()
        .map(|k| (k.name.clone(), SharedLayout::of(k).static_bytes()))
        .collect();
    expected.sort();
    assert_eq!(got, expected, "kdslc's static totals against ptxas -v");
    assert_eq!(
        expected.iter().filter(|(_, n)| *n == 0).count(),
        dynamic,
        "every kernel past 48 KiB has no static shared memory"
    );
}

/// `n` bytes of shared memory in one kernel: 16 barriers (128 bytes) and
/// `n - 128` booleans.
fn kernel_of(n: u64) -> String {
    format!(
        "kernel k(out: global mut [f32]) block(32) {{\n    barrier b[16]: cta(arrivals = 1);\n    shared a: [bool; {}];\n    a[thread_idx.x] = true;\n    b[0].arrive();\n    b[0].wait();\n    if a[31 - thread_idx.x] {{ out[0] = 1.0; }}\n}}\n",
        n - 128
    )
}

#[test]
fn shared_memory_boundary_is_exact() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    // Exactly 48 KiB: static, as ptxas counts it.
    let log = assemble(
        &ptxas,
        &clean_ptx(&kernel_of(SHARED_LIMIT), Target::Sm90),
        "sm_90",
    )
    .expect("ptxas accepts");
    assert_eq!(smem_per_entry(&log), [("k".to_string(), SHARED_LIMIT)]);
    // One byte more (a 128-byte slot more): dynamic, no static shared
    // memory, for every target that has the room.
    for target in [
        Target::Sm80,
        Target::Sm86,
        Target::Sm90,
        Target::Sm100,
        Target::Sm120,
    ] {
        let ptx = clean_ptx(&kernel_of(SHARED_LIMIT + 1), target);
        assert!(
            ptx.contains(".extern .shared .align 128 .b8 $dsmem[];"),
            "{ptx}"
        );
        let log = assemble(&ptxas, &ptx, target.name()).expect("ptxas accepts");
        assert_eq!(smem_per_entry(&log), [("k".to_string(), 0)], "{target}");
    }
}

/// E0122 at each target's opt-in maximum, to the byte: at the maximum
/// kdslc and ptxas accept the kernel (ptxas cannot check the dynamic size:
/// the launch gives it, and the driver refuses one past the device's
/// maximum), one byte past it kdslc refuses it.
#[test]
fn each_target_has_its_shared_memory_maximum() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    for target in Target::ALL {
        let max = target.max_shared_per_block();
        let ptx = clean_ptx(&kernel_of(max), target);
        assemble(&ptxas, &ptx, target.name()).expect("ptxas accepts");
        let c = compile(&kernel_of(max + 1), target);
        assert_eq!(codes(&c), ["E0122"], "{target}");
        let first = c.diagnostics[0].message.clone();
        assert_eq!(
            first,
            format!("shared memory exceeds {max} bytes ({} used)", max + 128),
            "{target}"
        );
    }
}

/// `n` parameters of `ty`, named `p0`...
fn params_kernel(prefix: &str, ty: &str, n: usize, suffix: &str) -> String {
    let params: Vec<String> = (0..n).map(|i| format!("p{i}: {ty}")).collect();
    format!(
        "kernel k({prefix}{}{suffix}) block(32) {{\n}}\n",
        params.join(", ")
    )
}

fn ptx_version(ptx: &str) -> &str {
    ptx.lines()
        .find_map(|l| l.strip_prefix(".version "))
        .expect(".version")
}

#[test]
fn parameter_space_boundaries() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    for target in [Target::Sm80, Target::Sm90] {
        let arch = target.name();
        let floor = target.min_ptx_version().to_string();
        // 4352 bytes: any version.
        for src in [
            params_kernel("", "u32", 1088, ""),
            // One-byte parameters, packed without padding.
            params_kernel("", "u8", 4352, ""),
            params_kernel("a: i16, ", "i8", 4350, ""),
        ] {
            let ptx = clean_ptx(&src, target);
            assert_eq!(ptx_version(&ptx), floor, "{src}");
            assemble(&ptxas, &ptx, arch).expect("4352 bytes at the target's version");
        }
        // 4356 bytes, and 4354 counting the padding of a trailing f16
        // (2 + 6 padding + 543 × 8 + 2): PTX 8.1, and ptxas needs it.
        for src in [
            params_kernel("", "u32", 1089, ""),
            params_kernel("first: f16, ", "u64", 543, ", last: f16"),
            // 4353 bytes of bytes, and 1 + 7 padding + 543 × 8 + 1 with a
            // u8 before the u64s and an i8 after them.
            params_kernel("", "u8", 4353, ""),
            params_kernel("first: u8, ", "u64", 543, ", last: i8"),
            params_kernel("first: u16, ", "u8", 4351, ""),
        ] {
            let ptx = clean_ptx(&src, target);
            assert_eq!(ptx_version(&ptx), "8.1", "{src}");
            assemble(&ptxas, &ptx, arch).expect("accepted at 8.1");
            let old = ptx.replace(".version 8.1", &format!(".version {floor}"));
            let log = assemble(&ptxas, &old, arch).expect_err("needs 8.1");
            assert!(log.contains("larger than 4352 bytes"), "{log}");
        }
        // 32764 bytes: the most there is.
        let ptx = clean_ptx(&params_kernel("", "u32", 8191, ""), target);
        assemble(&ptxas, &ptx, arch).expect("32764 bytes at 8.1");
        // 32768 bytes: E0127, and ptxas agrees.
        for src in [
            params_kernel("", "u32", 8192, ""),
            params_kernel("", "global [f32]", 4096, ""),
            params_kernel("a: bool, ", "u64", 4095, ""),
        ] {
            let c = compile(&src, target);
            assert_eq!(codes(&c), ["E0127"]);
            let log = assemble(&ptxas, &unchecked_ptx(&c, target), arch)
                .expect_err("ptxas refuses it too");
            assert_eq!(too_much(&log, "parameter space"), Some(32768), "{log}");
        }
    }
}

#[test]
fn arrival_counts_at_the_mbarrier_limits() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let decl = |n: &str| {
        format!(
            "kernel k(out: global mut [f32]) block(32) {{\n    barrier b: cta(arrivals = {n});\n    b.arrive();\n    b.wait();\n    out[0] = 1.0;\n}}\n"
        )
    };
    let op = |n: &str| {
        format!(
            "kernel k(out: global mut [f32]) block(32) {{\n    barrier b: cta(arrivals = 1048575);\n    b.arrive({n});\n    b.wait();\n    out[0] = 1.0;\n}}\n"
        )
    };
    for make in [decl, op] {
        for n in ["1", "1048575"] {
            let ptx = clean_ptx(&make(n), Target::Sm90);
            assemble(&ptxas, &ptx, "sm_90").expect("accepted at the limit");
        }
        for n in ["0", "1048576"] {
            let c = compile(&make(n), Target::Sm90);
            assert_eq!(codes(&c), ["E0306"], "{}", make(n));
        }
    }
    // Past the limit, ptxas refuses both counts of 0 and an init count of
    // 2^20 (the PTX at the limit, edited). It accepts an `arrive` count of
    // 2^20, which the ISA does not allow: kdslc is stricter there.
    let at = clean_ptx(&decl("1048575"), Target::Sm90);
    for (from, to) in [("], 1048575;", "], 1048576;"), ("], 1048575;", "], 0;")] {
        let past = at.replace(from, to);
        assert_ne!(past, at);
        assemble(&ptxas, &past, "sm_90").expect_err("mbarrier.init past its range");
    }
    let at = clean_ptx(&op("1"), Target::Sm90);
    let past = at.replace("[$b_b], 1;", "[$b_b], 0;");
    assert_ne!(past, at);
    assemble(&ptxas, &past, "sm_90").expect_err("mbarrier.arrive with a count of 0");
}

#[test]
fn launch_shapes_at_the_hardware_limits() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    let kernel = |attrs: &str| {
        format!("kernel k(out: global mut [f32]) {attrs} {{\n    out[0] = 1.0;\n}}\n")
    };
    for attrs in [
        "block(1024)",
        "block(1, 1024)",
        "block(1, 1, 64)",
        "block(16, 1, 64)",
        "block(32, 32, 1)",
        "block(32) cluster(16)",
        "block(32) cluster(1, 1, 16)",
        "block(32) cluster(2, 2, 2)",
    ] {
        let ptx = clean_ptx(&kernel(attrs), Target::Sm90);
        assemble(&ptxas, &ptx, "sm_90").unwrap_or_else(|e| panic!("{attrs}: {e}"));
    }
    for attrs in [
        "block(1025)",
        "block(1, 1025)",
        "block(1, 1, 65)",
        "block(2, 1, 513)",
        "block(32, 33)",
        "block(4294967295, 4294967295, 4294967295)",
        "block(32) cluster(17)",
        "block(32) cluster(4, 4, 2)",
        "block(32) cluster(4294967295, 4294967295, 4294967295)",
    ] {
        let c = compile(&kernel(attrs), Target::Sm90);
        assert_eq!(codes(&c), ["E0120"], "{attrs}");
    }
}

/// Every word PTX might reserve: opcodes, directives (without the dot),
/// types, state spaces, special registers (without `%`), modifiers and a
/// few conventions. kdsl keywords are left out: they cannot be names.
const PTX_WORDS: &str = "
abs activemask add addc alloca and applypriority atom bar bfe bfi bfind bmsk bra brev
brkpt brx call clusterlaunchcontrol clz cnot copysign cos cp createpolicy cvt cvta discard div
dp2a dp4a elect ex2 exit fence fma fns getctarank griddepcontrol isspacep istypeof ld ldmatrix
ldu lg2 lop3 mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24
multimem nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt
sad selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix
sub subc suld suq sured sust szext tanh tcgen05 tensormap testp tex tld4 trap txq vabsdiff
vabsdiff2 vabsdiff4 vadd vadd2 vadd4 vavrg2 vavrg4 vmad vmax vmax2 vmax4 vmin vmin2 vmin4 vote
vset vset2 vset4 vshl vshr vsub vsub2 vsub4 wgmma wmma xor
address_size align branchtargets callprototype calltargets common entry explicitcluster extern
file func loc local maxclusterrank maxnctapercta maxnreg maxntid minnctapersm noreturn param
pragma reg reqnctapercluster reqntid section sreg target version visible weak alias
abi_preserve abi_preserve_control blocksareclusters
s8 s16 s32 s64 u8 u16 u16x2 u32 u64 f16 f16x2 f32 f64 b8 b16 b32 b64 b128 pred bf16 bf16x2
e4m3 e5m2 e4m3x2 e5m2x2 tf32 texref samplerref surfref v2 v4 v8
tid ntid laneid warpid nwarpid ctaid nctaid smid nsmid gridid lanemask_eq lanemask_le
lanemask_lt lanemask_ge lanemask_gt clock clock64 clock_hi pm0 pm7 envreg0 globaltimer
globaltimer_lo total_smem_size aggr_smem_size dynamic_smem_size reserved_smem_offset_begin
cluster_ctaid cluster_nctaid cluster_ctarank cluster_nctarank is_explicit_cluster clusterid
nclusterid current_graph_exec
WARP_SZ _ __ ___ _1 __cuda_x __nv_x __internal main ptx PTX sm_90 sm_80 compute_90 NULL null rn
rz rm rp rni rzi sat ftz approx full sync aligned uni volatile relaxed acquire release acq_rel sc
cta gpu sys cluster ca cg cs lu cv wb wt nc L1 L2 to lo hi wide cc eq ne lt le gt ge ls hs equ
neu ltu leu gtu geu num nan inf INF NaN any all ballot up down bfly idx unified
texmode_unified texmode_independent map_f64_to_f32 debug nounroll
";

#[test]
fn ptx_words_as_kdsl_names() {
    let Some(ptxas) = ptxas::require_ptxas() else {
        return;
    };
    // PTX's `barrier`, `global`, `shared` and `const` are kdsl keywords.
    let words: Vec<&str> = PTX_WORDS.split_whitespace().collect();
    assert!(words.len() > 300);
    // Kernels keep their names: each is a kernel, or E0126 (and then ptxas
    // indeed refuses it as an `.entry` name).
    let mut kernels = String::new();
    for w in &words {
        let src = format!("kernel {w}(out: global mut [u32]) block(32) {{\n    out[0] = 1;\n}}\n");
        let c = compile(&src, Target::Sm90);
        match codes(&c).as_slice() {
            [] => kernels.push_str(&src),
            ["E0126"] => {
                let ptx = clean_ptx(&src.replacen(w, "placeholder_name", 1), Target::Sm90)
                    .replace(".entry placeholder_name(", &format!(".entry {w}("));
                assemble(&ptxas, &ptx, "sm_90").expect_err("E0126 names are ones ptxas refuses");
            }
            other => panic!("{w}: {other:?}"),
        }
    }
    assemble(&ptxas, &clean_ptx(&kernels, Target::Sm90), "sm_90")
        .expect("every other word is a kernel name ptxas accepts");

    // Every other kind of symbol may have any name: kdslc renames it.
    let mut program = String::new();
    for (i, w) in words.iter().enumerate() {
        program.push_str(&format!(
            "fn {w}(x: u32) -> u32 {{\n    let {w} = x + 1;\n    {w}\n}}\n\
             kernel kf_{i}(out: global mut [u32]) block(32) {{\n    out[0] = {w}(1);\n}}\n\
             kernel kp_{i}({w}: u32, out: global mut [u32]) block(32) {{\n    out[0] = {w};\n}}\n\
             kernel ks_{i}(out: global mut [u32]) block(32) {{\n    shared {w}: [u32; 32];\n    \
             barrier bar_{i}: cta(arrivals = 32);\n    {w}[thread_idx.x] = thread_idx.x;\n    \
             bar_{i}.arrive();\n    bar_{i}.wait();\n    out[thread_idx.x] = {w}[31 - thread_idx.x];\n}}\n\
             kernel kb_{i}(out: global mut [u32]) block(32) {{\n    barrier {w}: cta(arrivals = 32);\n    \
             {w}.arrive();\n    {w}.wait();\n    out[0] = 1;\n}}\n"
        ));
    }
    assemble(&ptxas, &clean_ptx(&program, Target::Sm90), "sm_90")
        .expect("functions, parameters, locals, shared arrays and barriers of any name");
}
