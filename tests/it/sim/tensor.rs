//! Tensor data on Hopper (`docs/language.md` §15): tensor-map parameters
//! (their `.param` form, layout and manifest), swizzled shared arrays
//! (alignment to the swizzle's repeat, element access through the swizzle
//! in the simulator against a Rust reference) and the storage types, each
//! assembled by ptxas for sm_90 and sm_90a.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::common;
use crate::common::sim::{array, kdsl_str_with, launch, rendered, run_clean, run_with};
use kdsl::ir::layout::{ParamLayout, Placement, SharedLayout};
use kdsl::ir::{ParamType, Swizzle};
use kdsl::sim::Schedule;
use kdsl::target::Target;
use kdsl::types::Scalar;

fn compile(src: &str, target: Target) -> kdsl::Compilation {
    let opts = kdsl::Options {
        target,
        ..kdsl::Options::default()
    };
    let c = kdsl::compile_str("t.kdsl", src, &opts);
    assert!(
        c.diagnostics.is_empty(),
        "{}",
        kdsl::diagnostics::render::short(&c.sources, &c.diagnostics)
    );
    c
}

/// Every element type a map takes, every clause, the three swizzles and
/// `guards`, in one kernel.
const DECLS: &str = include_str!("../../valid/tensor_decls.kdsl");

#[test]
fn tensor_maps_are_128_byte_grid_constants() {
    let c = compile(DECLS, Target::Sm90);
    let ptx = c.ptx.as_deref().unwrap();
    let k = &c.module.as_ref().unwrap().kernels[0];
    // 15 maps at 128-byte offsets, then the pointer and the u32.
    let layout = ParamLayout::of(k);
    let maps: Vec<u64> = (0..15).map(|i| i * 128).collect();
    assert_eq!(layout.offsets[..15], maps[..]);
    assert_eq!(layout.offsets[15..], [1920, 1928]);
    assert_eq!(layout.total, 1932);
    for name in ["a", "b", "o"] {
        assert!(ptx.contains(&format!(".param .align 128 .b8 $p_{name}[128]")));
    }
    // The generic address of each map: `mov` + `cvta.param` (t27).
    assert_eq!(ptx.matches("cvta.param.u64").count(), 15);
    let ParamType::Tensor(b) = k.params[1].ty else {
        panic!("b is a map")
    };
    assert_eq!(b.box_dims(), [8, 32]);
    assert_eq!(b.box_bytes(), 1024);
    assert_eq!(b.type_text(), "tensor mut [f32; 8, 32] fill(nan) l2(128)");
    assert_eq!(k.barriers[0].guards.len(), 1);
    assert_eq!(k.barriers[1].guards.len(), 2);
}

#[test]
fn parameters_past_the_classic_space_count_tensor_maps() {
    let kernel = |maps: usize| {
        let params: Vec<String> = (0..maps)
            .map(|i| format!("m{i}: tensor [u8; 16]"))
            .collect();
        format!(
            "kernel k({}, out: global mut [u8]) {{ out[0] = 1u8; }}",
            params.join(", ")
        )
    };
    // 33 maps and a pointer: 4232 bytes, the classic space.
    let c = compile(&kernel(33), Target::Sm90);
    assert!(c.ptx.as_deref().unwrap().contains(".version 7.8"));
    // 34 maps and a pointer: 4360 bytes, PTX ISA 8.1.
    let c = compile(&kernel(34), Target::Sm90);
    assert!(c.ptx.as_deref().unwrap().contains(".version 8.1"));
    // 255 maps and a pointer: 32648 bytes fit; 256 maps do not.
    let c = compile(&kernel(255), Target::Sm90);
    assert!(c.ptx.is_some());
    let c = kdsl::compile_str("t.kdsl", &kernel(256), &kdsl::Options::default());
    let codes: Vec<&str> = c.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0127"]);
}

#[test]
fn swizzled_arrays_start_on_their_repeat_in_dynamic_shared_memory() {
    let c = compile(DECLS, Target::Sm90);
    let k = &c.module.as_ref().unwrap().kernels[0];
    let layout = SharedLayout::of(k);
    // Barriers (4 + 2) first, then sa at its 1024-byte repeat, sb (512),
    // sc (256), plain (128).
    let offsets: Vec<(u64, u64, u64)> = layout
        .slots
        .iter()
        .map(|s| (s.offset.unwrap(), s.size.unwrap(), s.align))
        .collect();
    assert_eq!(
        offsets,
        [
            (0, 32, 8),
            (32, 16, 8),
            (1024, 65536, 1024),
            (66560, 1024, 512),
            (67584, 512, 256),
            (68096, 512, 128),
        ]
    );
    assert_eq!(layout.placement(), Placement::Dynamic);
    assert_eq!(layout.align(), 1024);
    let ptx = c.ptx.as_deref().unwrap();
    assert!(ptx.contains(".extern .shared .align 1024 .b8 $dsmem[];"));
    // Small, but still dynamic: the bytes ptxas would give static
    // variables of two alignments depend on the order it picks.
    let small = compile(
        "kernel k(out: global mut [f32]) block(32) {
            shared s: [f32; 8, 8] swizzle(32);
            shared p: [f32; 4];
            s[thread_idx.x / 8, thread_idx.x % 8] = 1.0;
            p[0] = 2.0;
            out[thread_idx.x] = s[7 - thread_idx.x / 8, thread_idx.x % 8] + p[0];
        }",
        Target::Sm90,
    );
    let k = &small.module.as_ref().unwrap().kernels[0];
    let layout = SharedLayout::of(k);
    assert_eq!(layout.placement(), Placement::Dynamic);
    assert_eq!((layout.dynamic_bytes(), layout.align()), (384, 256));
    assert!(!layout.needs_opt_in());
    let ptx = small.ptx.as_deref().unwrap();
    assert!(ptx.contains(".extern .shared .align 256 .b8 $dsmem[];"));
    // Without a swizzle nothing changes: static, 128-aligned.
    let plain = compile(
        "kernel k(out: global mut [f32]) block(32) {
            shared s: [f32; 8, 8];
            s[thread_idx.x / 8, thread_idx.x % 8] = 1.0;
            out[thread_idx.x] = s[7 - thread_idx.x / 8, thread_idx.x % 8];
        }",
        Target::Sm90,
    );
    let k = &plain.module.as_ref().unwrap().kernels[0];
    assert_eq!(SharedLayout::of(k).placement(), Placement::Static);
}

#[test]
fn ptxas_assembles_tensor_declarations_for_sm_90_and_sm_90a() {
    let Some(ptxas) = common::ptxas::require_ptxas() else {
        return;
    };
    for target in [Target::Sm90, Target::Sm90a] {
        let c = compile(DECLS, target);
        common::ptxas::assemble(&ptxas, c.ptx.as_deref().unwrap(), target.name())
            .unwrap_or_else(|e| panic!("{target}: {e}"));
    }
    // Older targets have no tensor maps (E0200) but swizzled arrays.
    let c = kdsl::compile_str(
        "t.kdsl",
        DECLS,
        &kdsl::Options {
            target: Target::Sm80,
            ..kdsl::Options::default()
        },
    );
    assert!(c.diagnostics.iter().all(|d| d.code == "E0200"));
    assert_eq!(c.diagnostics.len(), 15);
    let swizzled = compile(
        "kernel k(out: global mut [f32]) block(32) {
            shared s: [f32; 2, 8, 32] swizzle(128);
            s[1, thread_idx.x / 4, thread_idx.x] = 1.0;
            out[thread_idx.x] = s[1, 7 - thread_idx.x / 4, thread_idx.x];
        }",
        Target::Sm80,
    );
    common::ptxas::assemble(&ptxas, swizzled.ptx.as_deref().unwrap(), "sm_80").unwrap();
}

#[test]
fn the_manifest_gives_every_compile_time_field_of_a_map() {
    let c = compile(
        "kernel gemm(a: tensor [bf16; 128, 64], c: tensor mut [f32; 8, 32] fill(nan) l2(64),
                     n: u32) block(128) {
            shared sa: [bf16; 2, 128, 64] swizzle(128);
            sa[0, 0, thread_idx.x % 64] = sa[1, 0, 0];
        }",
        Target::Sm90a,
    );
    let m = kdsl::manifest::of_module(
        c.module.as_ref().unwrap(),
        c.ptx.as_deref().unwrap(),
        Target::Sm90a,
    )
    .unwrap();
    let json = kdsl::manifest::to_json(&m).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let params = v["kernels"][0]["params"].as_array().unwrap();
    assert_eq!(params[0]["kind"], "tensor_map");
    assert_eq!(params[0]["type"], "tensor [bf16; 128, 64]");
    assert_eq!(params[0]["ptx_type"], "b8[128]");
    assert_eq!(
        (params[0]["offset"].as_u64(), params[0]["size"].as_u64()),
        (Some(0), Some(128))
    );
    let map = &params[0]["tensor_map"];
    assert_eq!(map["data_type"], "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16");
    assert_eq!(map["rank"], 2);
    assert_eq!(map["box_dim"], serde_json::json!([64, 128]));
    assert_eq!(map["element_strides"], serde_json::json!([1, 1]));
    assert_eq!(map["oob_fill"], "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE");
    assert_eq!(map["l2_promotion"], "CU_TENSOR_MAP_L2_PROMOTION_L2_256B");
    let out = &params[1]["tensor_map"];
    assert_eq!(
        out["oob_fill"],
        "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"
    );
    assert_eq!(out["l2_promotion"], "CU_TENSOR_MAP_L2_PROMOTION_L2_64B");
    assert_eq!(out["writable"], true);
    assert_eq!(params[2]["offset"], 256);
    assert!(params[2].get("tensor_map").is_none());
    assert_eq!(v["kernels"][0]["param_bytes"], 260);
    insta::assert_snapshot!("tensor_manifest", json);
    // A map's swizzle is its copies' arrays': `a` is loaded into a
    // 128-byte swizzled ring, `v` into a plain array.
    let c = compile(COPIES, Target::Sm90a);
    let m = kdsl::manifest::of_module(
        c.module.as_ref().unwrap(),
        c.ptx.as_deref().unwrap(),
        Target::Sm90a,
    )
    .unwrap();
    let params = &m.kernels[0].params;
    let swizzle = |i: usize| params[i].tensor_map.as_ref().unwrap().swizzle;
    assert_eq!(swizzle(0), "CU_TENSOR_MAP_SWIZZLE_128B");
    assert_eq!(swizzle(1), "CU_TENSOR_MAP_SWIZZLE_NONE");
    assert_eq!(swizzle(3), "CU_TENSOR_MAP_SWIZZLE_128B");
}

/// The bytes a swizzled array holds: element `i` (row-major index) of
/// `elem_bytes` bytes at `swizzle.apply(i * elem_bytes)` of the array
/// (whose start is on the repeat, so the offset's swizzle is the address's).
fn swizzled_image(values: &[u8], elem_bytes: usize, swizzle: Swizzle) -> Vec<u8> {
    let mut out = vec![0u8; values.len()];
    for (i, chunk) in values.chunks_exact(elem_bytes).enumerate() {
        let at = swizzle.apply((i * elem_bytes) as u32) as usize;
        out[at..at + elem_bytes].copy_from_slice(chunk);
    }
    out
}

/// Element access of a swizzled array puts each element where the tensor
/// copies and the tensor cores expect it: written element by element, the
/// array's bytes (copied out whole by a 1-D bulk copy, which moves bytes
/// as they are) are the reference's swizzled image; and bytes copied in
/// whole read back element by element through the swizzle. Each swizzle,
/// 4- and 2-byte elements, two stages.
#[test]
fn element_access_goes_through_the_swizzle_in_the_simulator() {
    for swizzle in [Swizzle::B32, Swizzle::B64, Swizzle::B128] {
        for (elem, size) in [(Scalar::U32, 4u64), (Scalar::U16, 2)] {
            let row = swizzle.span() / size;
            let n = 2 * 8 * row; // two stages of 8 rows
            let bytes = n * size;
            let src = format!(
                "kernel swz(x: global [{elem}], raw: global mut [{elem}], back: global mut [{elem}]) block(64) {{
                    shared sa: [{elem}; 2, 8, {row}] swizzle({s});
                    shared sb: [{elem}; 2, 8, {row}] swizzle({s});
                    barrier loaded: cta(arrivals = 1);
                    let t = thread_idx.x;
                    for i in t..{n} step 64 {{
                        sa[i / {stage}, (i / {row}) % 8, i % {row}] = x[i];
                    }}
                    if t == 0 {{
                        loaded.arrive_expect_tx({bytes});
                        copy_async(sb[0, 0, 0], x[0], {bytes}, loaded);
                    }}
                    fence_proxy_async();
                    sync_threads();
                    if t == 0 {{
                        copy_async_store(raw[0], sa[0, 0, 0], {bytes});
                        copy_async_commit();
                        copy_async_wait(0);
                    }}
                    loaded.wait();
                    for i in t..{n} step 64 {{
                        back[i] = sb[i / {stage}, (i / {row}) % 8, i % {row}];
                    }}
                }}",
                s = swizzle.name(),
                stage = 8 * row,
            );
            let l = kdsl_str_with("swz.kdsl", &src, &kdsl::Options::default());
            let values: Vec<u8> = (0..bytes).map(|i| (i * 7 % 251) as u8).collect();
            let mut launch = launch(
                "swz",
                [1, 1, 1],
                [64, 1, 1],
                [1, 1, 1],
                vec![
                    array("x", elem, values.clone()),
                    array("raw", elem, vec![0; bytes as usize]),
                    array("back", elem, vec![0; bytes as usize]),
                ],
            );
            launch.dynamic_shared = l.program.signature("swz").unwrap().dynamic_shared.unwrap();
            let o = run_clean(&l, &launch);
            let image = swizzled_image(&values, size as usize, swizzle);
            let what = format!("{elem} swizzle({})", swizzle.name());
            assert_ne!(image, values, "{what}: the swizzle moves bytes");
            assert_eq!(o.arrays[1].data, image, "{what}: bytes stored");
            // Read back through the swizzle: element i of `back` is the
            // element at the swizzled place of `x`'s bytes.
            let mut expect = vec![0u8; bytes as usize];
            let size = size as usize;
            for i in 0..n as usize {
                let at = swizzle.apply((i * size) as u32) as usize;
                expect[i * size..(i + 1) * size].copy_from_slice(&values[at..at + size]);
            }
            assert_eq!(o.arrays[2].data, expect, "{what}: bytes loaded");
        }
    }
}

const COPIES: &str = include_str!("../../fixtures/tensor/copies.kdsl");

/// Every form of tensor copy has golden PTX (sm_90a) and assembles: with
/// the multicast on sm_90a and sm_100a, without it on sm_90 too.
#[test]
fn tensor_copies_match_golden_ptx_and_assemble() {
    let c = compile(COPIES, Target::Sm90a);
    let ptx = c.ptx.as_deref().unwrap();
    let golden = common::repo_root().join("tests/golden/tensor_copies.sm_90a.ptx");
    if std::env::var_os("KDSL_BLESS").is_some() {
        std::fs::write(&golden, ptx).unwrap();
    }
    let expected = std::fs::read_to_string(&golden).unwrap_or_default();
    assert!(
        expected == ptx,
        "{} is out of date (rerun with KDSL_BLESS=1 and review the diff)",
        golden.display()
    );
    for form in [
        "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
        "cp.async.bulk.tensor.3d.",
        "cp.async.bulk.tensor.4d.",
        "cp.async.bulk.tensor.5d.",
        "complete_tx::bytes.multicast::cluster",
        "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group",
        // Coordinates innermost first: `v[-8]`, `c3[0, 1, 2]`.
        "{-8}",
        "{2, 1, 0}",
    ] {
        assert!(ptx.contains(form), "no `{form}`");
    }
    let Some(ptxas) = common::ptxas::require_ptxas() else {
        return;
    };
    for target in [Target::Sm90a, Target::Sm100a] {
        let c = compile(COPIES, target);
        common::ptxas::assemble(&ptxas, c.ptx.as_deref().unwrap(), target.name())
            .unwrap_or_else(|e| panic!("{target}: {e}"));
    }
    let plain = COPIES
        .replace(", mask = 3", "")
        .replace("2 * bytes_of(sa[s])", "bytes_of(sa[s])");
    let c = compile(&plain, Target::Sm90);
    common::ptxas::assemble(&ptxas, c.ptx.as_deref().unwrap(), "sm_90").unwrap();
}

// ---- kdsl tensor copies in the simulator --------------------------------

/// A kdsl kernel compiled for `target`, loaded into the simulator, with
/// its launch signature (the IR's: tensor parameters as maps).
struct SimKernel {
    loaded: crate::common::sim::Loaded,
    sig: kdsl::launch::KernelSignature,
}

fn sim_kernel(name: &str, src: &str, target: Target) -> SimKernel {
    let opts = kdsl::Options {
        target,
        ..kdsl::Options::default()
    };
    let c = compile(src, target);
    let sig = kdsl::launch::signature::of_module(c.module.as_ref().unwrap())
        .into_iter()
        .next()
        .unwrap();
    SimKernel {
        loaded: kdsl_str_with(name, src, &opts),
        sig,
    }
}

/// The argument of tensor parameter `param`: a dense row-major tensor of
/// `dims` (outermost first) holding `data`, with the map the kernel
/// declares.
fn tensor_arg(k: &SimKernel, param: &str, data: Vec<u8>, dims: &[u64]) -> kdsl::launch::ArgValue {
    let p = k.sig.params.iter().find(|p| p.name == param).unwrap();
    let kdsl::launch::ParamKind::TensorMap(map) = p.kind else {
        panic!("`{param}` is not a tensor map: {:?}", p.kind)
    };
    kdsl::launch::ArgValue::TensorMap {
        array: kdsl::launch::Array {
            name: param.to_string(),
            elem: map.elem.storage(),
            data,
            writable: map.writable,
        },
        dims: dims.to_vec(),
        strides: kdsl::launch::tensor::dense_strides(dims, map.elem),
        map,
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32_of(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn launch_of(k: &SimKernel, grid: u32, args: Vec<kdsl::launch::ArgValue>) -> kdsl::launch::Launch {
    let mut launch = launch(
        &k.sig.name,
        [grid, 1, 1],
        k.sig.reqntid.unwrap(),
        k.sig.cluster.unwrap_or([1, 1, 1]),
        args,
    );
    launch.dynamic_shared = k.sig.dynamic_shared.unwrap_or(0);
    launch
}

fn array_named<'o>(o: &'o kdsl::sim::Outcome, name: &str) -> &'o kdsl::launch::Array {
    o.arrays
        .iter()
        .find(|a| a.name == name)
        .unwrap_or_else(|| panic!("no array `{name}`"))
}

/// A box loaded by kdsl's `tma_load` lands where element access reads it:
/// with each swizzle, a box partly outside the tensor on every side (a
/// negative coordinate, rows past the end), filled with zeros or NaNs,
/// against a Rust reference of the box.
#[test]
fn tensor_loads_with_each_swizzle_and_fill_in_the_simulator() {
    const R: u64 = 10;
    for (swizzle, w) in [("none", 8u64), ("32", 8), ("64", 16), ("128", 32)] {
        for fill in ["zero", "nan"] {
            let clause = if swizzle == "none" {
                String::new()
            } else {
                format!(" swizzle({swizzle})")
            };
            let src = format!(
                "kernel ld(a: tensor [f32; 8, {w}] fill({fill}), out: global mut [f32], m0: i32, k0: i32) block(64) {{
                    shared sa: [f32; 2, 8, {w}]{clause};
                    barrier full: cta(arrivals = 1);
                    if thread_idx.x == 0 {{
                        full.arrive_expect_tx(bytes_of(sa[1]));
                        tma_load(sa[1], a[m0, k0], full);
                    }}
                    full.wait();
                    for i in thread_idx.x..{n} step 64 {{
                        out[i] = sa[1, i / {w}, i % {w}];
                    }}
                }}",
                n = 8 * w
            );
            let l = sim_kernel("ld.kdsl", &src, Target::Sm90);
            let c = w + 4;
            let data: Vec<f32> = (0..R * c).map(|i| i as f32 + 1.0).collect();
            let (m0, k0) = (5i32, -4i32);
            let args = vec![
                tensor_arg(&l, "a", f32_bytes(&data), &[R, c]),
                array("out", Scalar::F32, vec![0; (8 * w * 4) as usize]),
                kdsl::launch::ArgValue::Scalar {
                    ty: Scalar::I32,
                    bits: u64::from(m0 as u32),
                },
                kdsl::launch::ArgValue::Scalar {
                    ty: Scalar::I32,
                    bits: u64::from(k0 as u32),
                },
            ];
            let o = run_clean(&l.loaded, &launch_of(&l, 1, args));
            let got = f32_of(&array_named(&o, "out").data);
            for r in 0..8i64 {
                for k in 0..w as i64 {
                    let (gr, gk) = (i64::from(m0) + r, i64::from(k0) + k);
                    let inside = (0..R as i64).contains(&gr) && (0..c as i64).contains(&gk);
                    let v = got[(r * w as i64 + k) as usize];
                    let what = format!("swizzle {swizzle} fill {fill}: ({r}, {k})");
                    if inside {
                        assert_eq!(v, data[(gr * c as i64 + gk) as usize], "{what}");
                    } else if fill == "nan" {
                        assert!(v.is_nan(), "{what}: {v}");
                    } else {
                        assert_eq!(v.to_bits(), 0, "{what}");
                    }
                }
            }
        }
    }
}

/// bf16 and e4m3 boxes through a 128-byte swizzle: one row is 64 and 128
/// elements.
#[test]
fn narrow_elements_load_through_the_swizzle_in_the_simulator() {
    for (elem, size, w) in [("bf16", 2usize, 64u64), ("e4m3", 1, 128)] {
        let src = format!(
            "kernel ld(a: tensor [{elem}; 8, {w}], out: global mut [{elem}]) block(64) {{
                shared sa: [{elem}; 8, {w}] swizzle(128);
                barrier full: cta(arrivals = 1);
                if thread_idx.x == 0 {{
                    full.arrive_expect_tx(bytes_of(sa));
                    tma_load(sa, a[2, {w}], full);
                }}
                full.wait();
                for i in thread_idx.x..{n} step 64 {{
                    out[i] = sa[i / {w}, i % {w}];
                }}
            }}",
            n = 8 * w
        );
        let l = sim_kernel("ld.kdsl", &src, Target::Sm90);
        let (rows, cols) = (16u64, 2 * w);
        let data: Vec<u8> = (0..rows * cols * size as u64)
            .map(|i| (i * 37 % 251) as u8)
            .collect();
        let elem_ty = Scalar::from_name(elem).unwrap();
        let args = vec![
            tensor_arg(&l, "a", data.clone(), &[rows, cols]),
            array("out", elem_ty, vec![0; (8 * w) as usize * size]),
        ];
        let o = run_clean(&l.loaded, &launch_of(&l, 1, args));
        let got = &array_named(&o, "out").data;
        for r in 0..8usize {
            for k in 0..w as usize {
                let at = ((2 + r) * cols as usize + w as usize + k) * size;
                let mine = (r * w as usize + k) * size;
                assert_eq!(
                    got[mine..mine + size],
                    data[at..at + size],
                    "{elem} ({r}, {k})"
                );
            }
        }
    }
}

/// A multicast over a cluster of 2: each CTA loads half of a tile and
/// sends it to both, so each CTA holds the whole tile, its barrier having
/// received two boxes (the bytes E0406 checks).
#[test]
fn multicast_loads_fill_every_cta_of_the_mask_in_the_simulator() {
    let src = "kernel mc(a: tensor [f32; 8, 32], out: global mut [f32]) block(64) cluster(2) {
        shared sa: [f32; 2, 8, 32] swizzle(128);
        barrier full: cta(arrivals = 1);
        if thread_idx.x == 0 {
            full.arrive_expect_tx(2 * bytes_of(sa[0]));
            tma_load(sa[cluster_rank], a[(cluster_rank * 8) as i32, 0], full, mask = 3);
        }
        full.wait();
        for i in thread_idx.x..512 step 64 {
            out[cluster_rank * 512 + i] = sa[i / 256, i / 32 % 8, i % 32];
        }
    }";
    let l = sim_kernel("mc.kdsl", src, Target::Sm90a);
    let data: Vec<f32> = (0..16 * 32).map(|i| i as f32 * 0.5).collect();
    let args = vec![
        tensor_arg(&l, "a", f32_bytes(&data), &[16, 32]),
        array("out", Scalar::F32, vec![0; 2 * 512 * 4]),
    ];
    let launch = launch_of(&l, 2, args);
    for schedule in [Schedule::InOrder, Schedule::Random(1), Schedule::Random(2)] {
        let o = run_with(&l.loaded, &launch, schedule, 100_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l.loaded, &o));
        let got = f32_of(&array_named(&o, "out").data);
        for cta in 0..2 {
            assert_eq!(
                got[cta * 512..(cta + 1) * 512],
                data[..],
                "CTA {cta}, {schedule:?}"
            );
        }
    }
}

/// `tma_store` writes a tile written element by element (through the
/// swizzle) into a box of the tensor, leaving what lies outside the
/// tensor unwritten; `tma_reduce_add` adds one to a box.
#[test]
fn tensor_stores_and_reductions_in_the_simulator() {
    let src =
        "kernel st(c: tensor mut [f32; 8, 32], src: global [f32], m0: i32, n0: i32) block(128) {
        shared sc: [f32; 8, 32] swizzle(128);
        let t = thread_idx.x;
        for i in t..256 step 128 {
            sc[i / 32, i % 32] = src[i];
        }
        fence_proxy_async();
        sync_threads();
        if t == 0 {
            tma_store(c[m0, n0], sc);
            tma_reduce_add(c[0, 0], sc);
            copy_async_commit();
            copy_async_wait(0);
        }
    }";
    let l = sim_kernel("st.kdsl", src, Target::Sm90);
    let (rows, cols) = (12u64, 40u64);
    let before: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let tile: Vec<f32> = (0..256).map(|i| 1000.0 + i as f32).collect();
    let (m0, n0) = (8i64, 16i64);
    let args = vec![
        tensor_arg(&l, "c", f32_bytes(&before), &[rows, cols]),
        array("src", Scalar::F32, f32_bytes(&tile)),
        kdsl::launch::ArgValue::Scalar {
            ty: Scalar::I32,
            bits: m0 as u64,
        },
        kdsl::launch::ArgValue::Scalar {
            ty: Scalar::I32,
            bits: n0 as u64,
        },
    ];
    let o = run_clean(&l.loaded, &launch_of(&l, 1, args));
    let got = f32_of(&array_named(&o, "c").data);
    let mut want = before.clone();
    for r in 0..8i64 {
        for k in 0..32i64 {
            let v = tile[(r * 32 + k) as usize];
            // The reduction's box: rows 0..8, columns 0..32.
            let at = (r * cols as i64 + k) as usize;
            want[at] += v;
            // The store's box, clipped to the tensor.
            let (gr, gk) = (m0 + r, n0 + k);
            if gr < rows as i64 && gk < cols as i64 {
                want[(gr * cols as i64 + gk) as usize] = v;
            }
        }
    }
    assert_eq!(got, want);
}

/// A warp-specialised ring as a Hopper kernel writes it: one elected
/// producer thread streams the tiles of a row block through 4 swizzled
/// stages (full/empty barriers guarding them, expected bytes from
/// `bytes_of`), 4 consumer warps sum them. It compiles without a
/// diagnostic (E0406 and E0407 accept it), and in the simulator it sums
/// what a Rust reference sums, under in-order and random schedules.
#[test]
fn a_guarded_ring_streams_tiles_in_the_simulator() {
    let src = "const STAGES: u32 = 4;
    kernel ring(a: tensor [f32; 8, 32], out: global mut [f32], k_tiles: u32) block(160) {
        shared sa: [f32; STAGES, 8, 32] swizzle(128);
        barrier full[STAGES]: cta(arrivals = 1) guards(sa);
        barrier empty[STAGES]: cta(arrivals = 4) guards(sa);
        let t = thread_idx.x;
        if warp_id == 4 {
            if elect_one() {
                for kt in 0..k_tiles {
                    let s = kt % STAGES;
                    if kt >= STAGES {
                        empty[s].wait();
                    }
                    full[s].arrive_expect_tx(bytes_of(sa[s]));
                    tma_load(sa[s], a[(block_idx.x * 8) as i32, (kt * 32) as i32], full[s]);
                }
            }
        } else {
            let mut sum = 0.0;
            for kt in 0..k_tiles {
                let s = kt % STAGES;
                full[s].wait();
                sum = sum + sa[s, t / 32 * 2, t % 32] + sa[s, t / 32 * 2 + 1, t % 32];
                if elect_one() {
                    empty[s].arrive();
                }
            }
            out[block_idx.x * 128 + t] = sum;
        }
    }";
    let l = sim_kernel("ring.kdsl", src, Target::Sm90);
    let (blocks, k_tiles) = (2u64, 9u64);
    let (rows, cols) = (8 * blocks, 32 * k_tiles);
    // Small integers: every order of the sums is exact.
    let data: Vec<f32> = (0..rows * cols).map(|i| (i % 13) as f32).collect();
    let args = vec![
        tensor_arg(&l, "a", f32_bytes(&data), &[rows, cols]),
        array("out", Scalar::F32, vec![0; (blocks * 128 * 4) as usize]),
        kdsl::launch::ArgValue::Scalar {
            ty: Scalar::U32,
            bits: k_tiles,
        },
    ];
    let launch = launch_of(&l, blocks as u32, args);
    let mut want = vec![0f32; (blocks * 128) as usize];
    for b in 0..blocks {
        for t in 0..128u64 {
            let mut sum = 0.0;
            for kt in 0..k_tiles {
                for r in [t / 32 * 2, t / 32 * 2 + 1] {
                    sum += data[((b * 8 + r) * cols + kt * 32 + t % 32) as usize];
                }
            }
            want[(b * 128 + t) as usize] = sum;
        }
    }
    for schedule in [Schedule::InOrder, Schedule::Random(3), Schedule::Random(4)] {
        let o = run_with(&l.loaded, &launch, schedule, 100_000_000);
        assert!(o.reports.is_empty(), "{}", rendered(&l.loaded, &o));
        assert_eq!(f32_of(&array_named(&o, "out").data), want, "{schedule:?}");
    }
}

/// `kdslc sim` launches a kdsl kernel's tensor parameters from array forms
/// whose shape gives the tensor's dimensions, and writes a `tensor mut`
/// back with its shape (`--out`).
#[test]
fn kdslc_sim_takes_and_writes_back_tensor_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("t.kdsl");
    std::fs::write(
        &src,
        "kernel t(a: tensor [f32; 8, 32], c: tensor mut [f32; 8, 32]) block(32) {
            shared sa: [f32; 8, 32] swizzle(128);
            barrier full: cta(arrivals = 1);
            if thread_idx.x == 0 {
                full.arrive_expect_tx(bytes_of(sa));
                tma_load(sa, a[0, 0], full);
            }
            full.wait();
            for r in 0..8u32 {
                sa[r, thread_idx.x] = sa[r, thread_idx.x] * 2.0;
            }
            fence_proxy_async();
            sync_threads();
            if thread_idx.x == 0 {
                tma_store(c[4, 0], sa);
                copy_async_commit();
                copy_async_wait(0);
            }
        }",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kdslc"))
        .current_dir(dir.path())
        .args([
            "sim",
            "t.kdsl",
            "--grid",
            "1",
            "--arg",
            "a=iota:8,32",
            "--arg",
            "c=zeros:12,32",
            "--out",
            "o",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(dir.path().join("o/c.npy")).unwrap();
    let header = String::from_utf8_lossy(&bytes[..128.min(bytes.len())]).into_owned();
    assert!(header.contains("(12, 32, )"), "{header}");
    // The data follows the header: rows 0..4 untouched, 4..12 the doubled
    // rows 0..8 of `a`.
    let data = f32_of(&bytes[bytes.len() - 12 * 32 * 4..]);
    for r in 0..12usize {
        for k in 0..32usize {
            let want = if r < 4 {
                0.0
            } else {
                2.0 * ((r - 4) * 32 + k) as f32
            };
            assert_eq!(data[r * 32 + k], want, "({r}, {k})");
        }
    }
}
