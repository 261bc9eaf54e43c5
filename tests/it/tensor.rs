//! Tensor data on Hopper (`docs/language.md` §15): tensor-map parameters
//! (their `.param` form, layout and manifest), swizzled shared arrays
//! (alignment to the swizzle's repeat, element access through the swizzle
//! in the simulator against a Rust reference) and the storage types, each
//! assembled by ptxas for sm_90 and sm_90a.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::common;
use crate::sim_support::{array, kdsl_str_with, launch, run_clean};
use kdsl::ir::layout::{ParamLayout, Placement, SharedLayout};
use kdsl::ir::{ParamType, Swizzle};
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
const DECLS: &str = include_str!("../valid/tensor_decls.kdsl");

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

const COPIES: &str = include_str!("../fixtures/tensor/copies.kdsl");

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
