//! Shared memory past 48 KiB and the launch manifest: the manifest of every
//! sample and of docs/manifest.md's example, `kdslc sim`'s dynamic shared
//! memory (kdsl kernels sized by the compiler, `.ptx` ones by
//! `--shared-bytes`), its bounds and reports, and the launch errors.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::common;
use crate::common::rng::Lcg;
use crate::common::sim::{kdsl_file, launch, ptx_str, rendered, report_codes, run, u32s, u32v};
use crate::common::{assert_contains, text};
use kdsl::ir::layout::{ParamLayout, SharedLayout, SHARED_LIMIT};
use kdsl::target::Target;
use std::fs;
use std::path::Path;
use std::process::Output;

fn kdslc_in(dir: &Path, args: &[&str]) -> Output {
    common::kdslc_command(dir)
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("kdslc runs")
}

fn manifest_of(path: &Path, target: Target) -> (kdsl::Compilation, String) {
    let c = kdsl::compile(path, &common::for_target(target)).unwrap();
    assert!(
        !c.diagnostics.iter().any(|d| d.is_error()),
        "{}:\n{}",
        path.display(),
        kdsl::diagnostics::render::short(&c.sources, &c.diagnostics)
    );
    let m = kdsl::manifest::of_module(
        c.module.as_ref().unwrap(),
        c.ptx.as_deref().unwrap(),
        target,
    )
    .unwrap();
    let json = kdsl::manifest::to_json(&m).unwrap();
    (c, json)
}

/// The example in docs/manifest.md is the compiler's real output.
#[test]
fn manifest_doc_example_is_current() {
    let block = |lang: &str| common::doc_example("docs/manifest.md", lang);
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("k.kdsl"), block("kdsl")).unwrap();
    let out = kdslc_in(
        dir.path(),
        &["build", "k.kdsl", "--emit", "manifest", "-o", "-"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        block("json"),
        "regenerate the example in docs/manifest.md"
    );
    // Without `-o`: STEM.manifest.json, the same bytes.
    let out = kdslc_in(dir.path(), &["k.kdsl", "--emit", "manifest"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = fs::read_to_string(dir.path().join("k.manifest.json")).unwrap();
    assert_eq!(written, block("json"));
}

/// Every sample has a manifest, deterministic, whose numbers are the
/// layouts the PTX follows: each parameter's offset and size, the entry
/// names and `.param` lines of the PTX, the shared memory.
#[test]
fn every_sample_has_a_consistent_manifest() {
    let samples = common::kdsl_suite("samples", 10);
    let mut dynamic = 0;
    for path in &samples {
        let target = common::source_target(path);
        let (c, json) = manifest_of(path, target);
        let (_, again) = manifest_of(path, target);
        assert_eq!(json, again, "{}: not deterministic", path.display());
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let ptx = c.ptx.as_deref().unwrap();
        let module = c.module.as_ref().unwrap();
        assert_eq!(v["manifest_version"], 1);
        assert_eq!(v["target"], target.name());
        assert_eq!(v["compute_capability"], "9.0");
        assert_eq!(v["arch_specific"], target.is_arch_specific());
        let version = ptx
            .lines()
            .find_map(|l| l.strip_prefix(".version "))
            .unwrap();
        assert_eq!(v["ptx_version"], version);
        let kernels = v["kernels"].as_array().unwrap();
        assert_eq!(kernels.len(), module.kernels.len());
        for (k, ir) in kernels.iter().zip(&module.kernels) {
            let name = k["name"].as_str().unwrap();
            assert_eq!(name, ir.name);
            assert!(ptx.contains(&format!(".visible .entry {name}(")));
            let layout = ParamLayout::of(ir);
            let params = k["params"].as_array().unwrap();
            assert_eq!(params.len(), ir.params.len());
            for (i, p) in params.iter().enumerate() {
                assert_eq!(p["offset"], layout.offsets[i]);
                let (ty, name) = (p["ptx_type"].as_str().unwrap(), p["name"].as_str().unwrap());
                // A tensor map is `.param .align 128 .b8 $p_a[128]`.
                let decl = match ty.strip_suffix("[128]") {
                    Some(b) => format!(".param .align 128 .{b} $p_{name}[128]"),
                    None => format!(".param .{ty} $p_{name}"),
                };
                assert!(ptx.contains(&decl), "{}: no `{decl}`", path.display());
            }
            assert_eq!(k["param_bytes"], layout.total);
            let shared = SharedLayout::of(ir);
            let s = &k["shared"];
            let total = shared.total.unwrap();
            assert_eq!(
                s["static_bytes"].as_u64().unwrap() + s["dynamic_bytes"].as_u64().unwrap(),
                total
            );
            assert_eq!(s["opt_in"], total > SHARED_LIMIT);
            // Past 48 KiB, or with a swizzled array (aligned past 128).
            if total > SHARED_LIMIT || shared.align() > 128 {
                dynamic += 1;
                assert_eq!(s["placement"], "dynamic");
                let align: u64 = ptx
                    .lines()
                    .find_map(|l| l.strip_prefix(".extern .shared .align "))
                    .and_then(|l| l.split_whitespace().next())
                    .and_then(|a| a.parse().ok())
                    .unwrap();
                assert!(align >= shared.align(), "{}", path.display());
            }
            match ir.block {
                Some(b) => assert_eq!(k["block"], serde_json::json!(b)),
                None => assert!(k["block"].is_null()),
            }
        }
    }
    assert!(dynamic >= 1, "a sample past 48 KiB (big_pipeline)");
}

/// big_pipeline's numbers, spelled out: 4 × 32 KiB of ring, two barrier
/// groups padded to 128 bytes, `partial`.
#[test]
fn big_pipeline_manifest() {
    let path = common::repo_root().join("samples/big_pipeline.kdsl");
    let (_, json) = manifest_of(&path, Target::Sm90);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let s = &v["kernels"][0]["shared"];
    assert_eq!(s["placement"], "dynamic");
    assert_eq!(s["static_bytes"], 0);
    assert_eq!(s["dynamic_bytes"], 128 + 4 * 32768 + 128);
    assert_eq!(s["opt_in"], true);
    assert_eq!(s["target_max_bytes"], 232_448);
    let names: Vec<_> = s["layout"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["name"].as_str().unwrap(), l["offset"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("full", 0),
            ("empty", 32),
            ("ring", 128),
            ("partial", 131_200)
        ]
    );
    // The bytes ptxas allocates statically: none.
    if let Some(ptxas) = common::ptxas::require_ptxas() {
        let c = kdsl::compile(&path, &kdsl::Options::default()).unwrap();
        let log = common::ptxas::assemble_with(&ptxas, c.ptx.as_deref().unwrap(), "sm_90", &["-v"])
            .unwrap()
            .log;
        assert!(!log.contains("bytes smem"), "{log}");
    }
}

const OOB: &str = "\
kernel oob(out: global mut [u32], n: u32) block(32) {
    shared a: [u32; 16384];
    shared b: [u32; 64];
    a[thread_idx.x] = 1;
    b[thread_idx.x] = 2;
    a[n + thread_idx.x] = 5;
    sync_threads();
    out[thread_idx.x] = a[thread_idx.x] + b[thread_idx.x];
}
";

/// An index just past a declaration of a kernel in dynamic shared memory
/// faults and names the declaration, as in static shared memory; it does
/// not land silently in the next one (which follows it directly in the
/// real layout).
#[test]
fn an_index_past_a_dynamic_declaration_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("oob.kdsl");
    fs::write(&path, OOB).unwrap();
    let k = kdsl_file(&path);
    let sig = k.program.signature("oob").unwrap();
    assert_eq!(sig.dynamic_shared, Some(65536 + 256));
    let mut l = launch("oob", 1, 32, 1, vec![u32s("out", &[0; 32]), u32v(16380)]);
    l.dynamic_shared = 65536 + 256;
    let o = run(&k, &l);
    let shown = rendered(&k, &o);
    assert_eq!(report_codes(&o), ["S0002"], "{shown}");
    assert!(
        shown.contains("just past the end of `a` (16384 elements of 4 bytes")
            && shown.contains("this is element 16384)"),
        "{shown}"
    );
    assert!(shown.contains("oob.kdsl:6:5"), "{shown}");
    // In bounds, the two arrays are separate (b keeps its 2s).
    l.args[1] = u32v(16352);
    let o = run(&k, &l);
    assert!(o.reports.is_empty(), "{}", rendered(&k, &o));
    assert_eq!(crate::common::sim::as_u32(&o.arrays[0]), vec![3; 32]);
    // A launch with less than the layout needs is refused.
    l.dynamic_shared = 65536;
    let o = run(&k, &l);
    assert_eq!(report_codes(&o), ["S0015"]);
    assert!(rendered(&k, &o).contains("needs 65792 bytes of dynamic shared memory"));
}

const PTX_DYN: &str = "\
.version 8.0
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 buf[];
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, buf;
	mad.lo.u32 %r3, %r1, 4, %r2;
	st.shared.u32 [%r3], %r1;
	bar.sync 0;
	ld.shared.u32 %r4, [%r3];
	mov.u32 %r5, %dynamic_smem_size;
	add.u32 %r4, %r4, %r5;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r1, 4;
	add.u64 %rd2, %rd2, %rd3;
	st.global.u32 [%rd2], %r4;
	ret;
}
";

/// A `.ptx` kernel's dynamic shared memory is what the launch gives
/// (`--shared-bytes`): `%dynamic_smem_size` reads it, and an access past it
/// is S0020 with the bytes given and the bytes touched.
#[test]
fn ptx_dynamic_shared_memory_is_the_launchs() {
    let k = ptx_str("dyn.ptx", PTX_DYN).unwrap();
    assert_eq!(k.program.signature("k").unwrap().dynamic_shared, None);
    let mut l = launch("k", 1, 8, 1, vec![u32s("out", &[0; 8])]);
    l.dynamic_shared = 32;
    let o = run(&k, &l);
    assert!(o.reports.is_empty(), "{}", rendered(&k, &o));
    let want: Vec<u32> = (0..8).map(|t| t + 32).collect();
    assert_eq!(crate::common::sim::as_u32(&o.arrays[0]), want);
    l.dynamic_shared = 20;
    let o = run(&k, &l);
    let shown = rendered(&k, &o);
    // The store, and then the load of what it did not store.
    assert_eq!(report_codes(&o), ["S0020", "S0020"], "{shown}");
    assert!(
        shown.contains("store past the end of the launch's dynamic shared memory")
            && shown.contains("the launch gives 20 bytes of dynamic shared memory; this store is at bytes 20..24 of it"),
        "{shown}"
    );
    // More than sm_80 allows one CTA.
    l.dynamic_shared = 166_913;
    let o = run(&k, &l);
    assert_eq!(report_codes(&o), ["S0015"]);
    assert!(rendered(&k, &o).contains("more than sm_80 gives one CTA (166912)"));
}

/// The command line: `--shared-bytes` sizes a `.ptx` kernel's dynamic
/// shared memory and is refused for a `.kdsl` kernel, whose size the
/// compiler knows; `kdslc sim` runs a kernel past 48 KiB by itself.
#[test]
fn shared_bytes_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("dyn.ptx"), PTX_DYN).unwrap();
    fs::write(dir.path().join("oob.kdsl"), OOB).unwrap();
    let sim = |line: &str| {
        let args: Vec<&str> = std::iter::once("sim")
            .chain(line.split_whitespace())
            .collect();
        kdslc_in(dir.path(), &args)
    };
    let out = sim("dyn.ptx --grid 1 --block 8 --arg out=u32:zeros:8 --shared-bytes 32 --dump out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "out: u32[8] = [32, 33, 34, 35, 36, 37, 38, 39]\n"
    );
    let out = sim("dyn.ptx --grid 1 --block 8 --arg out=u32:zeros:8 --shared-bytes 16");
    assert_eq!(out.status.code(), Some(4));
    assert_contains(&text(&out.stderr), &["error[S0020]"]);
    let out = sim("dyn.ptx --grid 1 --block 8 --arg out=u32:zeros:8 --shared-bytes 300000");
    assert_eq!(out.status.code(), Some(2));
    assert_contains(&text(&out.stderr), &["at most 232448 bytes"]);
    let out = sim("oob.kdsl --grid 1 --arg out=zeros:32 --arg n=0 --dump out");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("out: u32[32] = [7, 7, 7"),
        "{}",
        text(&out.stdout)
    );
    let out = sim("oob.kdsl --grid 1 --arg out=zeros:32 --arg n=0 --shared-bytes 100");
    assert_eq!(out.status.code(), Some(2));
    assert_contains(&text(&out.stderr), &["`--shared-bytes 100` is for a .ptx input: kdslc lays out the shared memory of kernel `oob` itself (65792 bytes of dynamic shared memory)"]);
}

/// Distributed shared memory and cluster barriers in dynamic shared memory:
/// `remote(peer, 0)` of a declaration past the first and a remote arrival
/// on a barrier, assembled by ptxas and run in the simulator (CTA 1 hands
/// its partial sum to CTA 0 through `peer`, which follows 64 KiB of `big`).
#[test]
fn a_cluster_kernel_in_dynamic_shared_memory() {
    let src = "\
kernel cluster_sum(x: global [f32], out: global mut [f32], n: u32) block(128) cluster(2) {
    shared partial: [f32; 4];
    shared big: [f32; 16384];
    shared peer: [f32; 1];
    barrier ready: cluster(arrivals = 1);
    let mut acc = 0.0;
    for i in block_idx.x * 128 + thread_idx.x..n step grid_dim.x * 128 {
        acc += x[i];
    }
    let mut d = 16u32;
    while d > 0 {
        acc += shfl_down(acc, d);
        d = d >> 1;
    }
    if lane_id == 0 { partial[warp_id] = acc; big[16383 - warp_id] = acc; }
    sync_threads();
    if thread_idx.x == 0 {
        let v = big[16383] + partial[1] + partial[2] + big[16380];
        if cluster_rank == 1 {
            remote(peer, 0)[0] = v;
            ready.arrive_remote(0);
        } else {
            ready.wait_cluster(0);
            atomic_add(out[0], v + peer[0]);
        }
    }
}
";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cluster.kdsl");
    fs::write(&path, src).unwrap();
    let c = kdsl::compile(&path, &kdsl::Options::default()).unwrap();
    let ptx = c.ptx.as_deref().unwrap();
    // The peer's address ($dsmem plus its offset) is what `mapa` maps.
    let peer = ptx
        .lines()
        .find_map(|l| {
            let l = l.trim().strip_prefix("mov.u32 ")?;
            l.strip_suffix(", $dsmem+65792;")
        })
        .unwrap_or_else(|| panic!("no address of peer: {ptx}"));
    assert!(
        ptx.lines()
            .any(|l| l.trim().starts_with("mapa.shared::cluster.u32 ")
                && l.trim().ends_with(&format!(", {peer}, 0;"))),
        "{ptx}"
    );
    if let Some(ptxas) = common::ptxas::require_ptxas() {
        common::ptxas::assemble(&ptxas, ptx, "sm_90").unwrap();
    }
    let k = kdsl_file(&path);
    // Small integers: every order of the sums is exact.
    let n = 3000u32;
    let x: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    let mut l = launch(
        "cluster_sum",
        4,
        128,
        2,
        vec![
            crate::common::sim::f32s("x", &x),
            crate::common::sim::f32s("out", &[0.0]),
            u32v(n),
        ],
    );
    l.dynamic_shared = k
        .program
        .signature("cluster_sum")
        .unwrap()
        .dynamic_shared
        .unwrap();
    let o = run(&k, &l);
    assert!(o.reports.is_empty(), "{}", rendered(&k, &o));
    let want: f32 = x.iter().sum();
    assert_eq!(crate::common::sim::as_f32(&o.arrays[1]), [want]);
}

/// Generated kernels past 48 KiB, of arrays of every width, one or two
/// dimensions, and barrier groups, in a random order: the first and last
/// element of every array hold their own values (no two declarations
/// overlap, in the PTX's layout or the simulator's), ptxas accepts the
/// PTX, and the manifest's layout is the writer's.
#[test]
fn generated_kernels_past_48_kib() {
    let mut rng = Lcg(0x0d15_ea5e);
    let mut next = |n: u64| (rng.step() >> 33) % n;
    let ptxas = common::ptxas::require_ptxas();
    let mut dynamic = 0;
    for case in 0..12 {
        let types = [
            ("u32", 4u64),
            ("i32", 4),
            ("f32", 4),
            ("f64", 8),
            ("u64", 8),
            ("f16", 2),
        ];
        let arrays = 1 + next(4) as usize;
        let mut decls = Vec::new();
        let mut body = Vec::new();
        let mut total = 0;
        for i in 0..arrays {
            let (ty, size) = types[next(types.len() as u64) as usize];
            let elems = (50_000 + next(60_000)) / size / arrays as u64 + 1;
            total += elems * size;
            let (dims, first, last) = if elems.is_multiple_of(2) && next(2) == 0 {
                (
                    format!("2, {}", elems / 2),
                    "0, 0".to_string(),
                    format!("1, {}", elems / 2 - 1),
                )
            } else {
                (elems.to_string(), "0".to_string(), (elems - 1).to_string())
            };
            decls.push(format!("    shared a{i}: [{ty}; {dims}];"));
            body.push(format!("        a{i}[{first}] = {} as {ty};", i + 1));
            body.push(format!("        a{i}[{last}] = {} as {ty};", 100 + i));
        }
        for g in 0..next(3) {
            decls.push(format!(
                "    barrier b{g}[{}]: cta(arrivals = 1);",
                1 + next(9)
            ));
        }
        for i in (1..decls.len()).rev() {
            decls.swap(i, next(i as u64 + 1) as usize);
        }
        let mut reads = Vec::new();
        for (i, line) in body.iter().enumerate() {
            let place = line.trim().split(" = ").next().unwrap();
            reads.push(format!("        out[{i}] = {place} as u32;"));
        }
        let src = format!(
            "kernel g(out: global mut [u32]) block(32) {{\n{}\n    if thread_idx.x == 0 {{\n{}\n{}\n    }}\n}}\n",
            decls.join("\n"),
            body.join("\n"),
            reads.join("\n")
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(format!("g{case}.kdsl"));
        fs::write(&path, &src).unwrap();
        let (c, json) = manifest_of(&path, Target::Sm90);
        let ptx = c.ptx.as_deref().unwrap();
        let ir = &c.module.as_ref().unwrap().kernels[0];
        let layout = SharedLayout::of(ir);
        assert!(layout.total.unwrap() >= total);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let s = &v["kernels"][0]["shared"];
        if layout.total.unwrap() > SHARED_LIMIT {
            dynamic += 1;
            assert_eq!(s["dynamic_bytes"], layout.total.unwrap(), "{src}");
            for slot in s["layout"].as_array().unwrap() {
                let name = slot["name"].as_str().unwrap();
                let sym = if slot["kind"] == "array" {
                    format!("$s_{name}")
                } else {
                    format!("$b_{name}")
                };
                let line = format!(
                    "// {sym}: $dsmem+{}, {} bytes",
                    slot["offset"], slot["size"]
                );
                assert!(ptx.contains(&line), "{src}\nno `{line}` in\n{ptx}");
            }
        }
        if let Some(ptxas) = &ptxas {
            common::ptxas::assemble(ptxas, ptx, "sm_90").unwrap_or_else(|e| panic!("{src}\n{e}"));
        }
        let k = kdsl_file(&path);
        let mut l = launch("g", 1, 32, 1, vec![u32s("out", &vec![0; body.len()])]);
        l.dynamic_shared = k.program.signature("g").unwrap().dynamic_shared.unwrap();
        let o = run(&k, &l);
        assert!(o.reports.is_empty(), "{src}\n{}", rendered(&k, &o));
        let want: Vec<u32> = (0..arrays as u32).flat_map(|i| [i + 1, 100 + i]).collect();
        assert_eq!(crate::common::sim::as_u32(&o.arrays[0]), want, "{src}");
    }
    assert!(
        dynamic >= 8,
        "{dynamic} of 12 generated kernels past 48 KiB"
    );
}
