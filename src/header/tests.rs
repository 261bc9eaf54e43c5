use super::*;
use crate::target::Target;

fn header(src: &str, target: Target, ptx: Option<&str>) -> String {
    let opts = crate::Options {
        target,
        ..crate::Options::default()
    };
    let c = crate::compile_str("k.kdsl", src, &opts);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let text = c.ptx.as_deref().unwrap();
    let m = crate::manifest::of_module(c.module.as_ref().unwrap(), text, target).unwrap();
    write(&Input {
        manifest: &m,
        source_name: "k.kdsl",
        module: "k",
        ptx: match ptx {
            Some(p) => Ptx::Path(p),
            None => Ptx::Embed(text),
        },
    })
    .unwrap()
}

#[test]
fn a_launcher_per_kernel_with_typed_arguments() {
    let h = header(
        "kernel saxpy(a: f32, x: global [f32], y: global mut [f32], n: u32, on: bool, h: f16) block(256) {
            let i = block_idx.x * 256 + thread_idx.x;
            if on && i < n { y[i] = a * x[i] + y[i] + (h as f32); }
        }
        kernel fill(out: global mut [u32], grid: u32) {
            out[block_idx.x * block_dim.x + thread_idx.x] = grid;
        }",
        Target::Sm90,
        None,
    );
    assert!(h.contains(
        "static inline CUresult kdsl_saxpy_launch(CUfunction function, CUstream stream, kdsl_dim3 grid,\n    \
         float a,\n    CUdeviceptr x,\n    CUdeviceptr y,\n    uint32_t n,\n    bool on,\n    \
         uint16_t h /* the bits of an IEEE binary16 (f16) */)\n"
    ), "{h}");
    // A bool is passed as a u32 0 or 1.
    assert!(
        h.contains("    uint32_t kdsl_value_4 = on ? 1u : 0u;\n"),
        "{h}"
    );
    assert!(h.contains("    params[4] = &kdsl_value_4;\n"), "{h}");
    assert!(h.contains("    config.blockDimX = 256u;\n"), "{h}");
    // No block(...): the launch takes one; a parameter named `grid` is renamed.
    assert!(h.contains(
        "kdsl_fill_launch(CUfunction function, CUstream stream, kdsl_dim3 grid, kdsl_dim3 block,\n    \
         CUdeviceptr out,\n    uint32_t grid_)"
    ), "{h}");
    assert!(h.contains("    config.blockDimX = block.x;\n"), "{h}");
    // The PTX, embedded.
    assert!(
        h.contains("static const char kdsl_k_module_ptx[] =\n    \"//"),
        "{h}"
    );
    assert!(h.contains("    \".target sm_90\\n\"\n"), "{h}");
    assert!(
        h.contains("return cuModuleLoadData(module, kdsl_k_module_ptx);"),
        "{h}"
    );
    assert!(h.contains("major * 10 + minor < 90"), "{h}");
    assert!(h.contains("inline CUresult launch(CUfunction function, CUstream stream, kdsl_dim3 grid, kdsl_dim3 block,\n    const kdsl_fill_args &args)"), "{h}");
}

#[test]
fn shared_memory_opt_in_and_clusters() {
    let h = header(
        "kernel k(out: global mut [f32]) block(128) cluster(2, 1, 1) {
            barrier full[4]: cta(arrivals = 128);
            shared stage: [f32; 4, 8192];
            stage[0, thread_idx.x] = 1.0;
            full[0].arrive();
            full[0].wait();
            out[thread_idx.x] = stage[0, 127 - thread_idx.x];
        }",
        Target::Sm90a,
        Some("k \"x\".ptx"),
    );
    assert!(h.contains(
        "r = cuFuncSetAttribute(*function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 131200);"
    ), "{h}");
    assert!(h.contains("    config.sharedMemBytes = 131200u;\n"), "{h}");
    assert!(
        h.contains("if (grid.x % 2u != 0 || grid.y % 1u != 0 || grid.z % 1u != 0)"),
        "{h}"
    );
    assert!(!h.contains("NON_PORTABLE"), "{h}");
    assert!(
        h.contains("#define KDSL_K_MODULE_PTX_PATH \"k \\\"x\\\".ptx\"\n"),
        "{h}"
    );
    assert!(!h.contains("module_ptx[]"), "{h}");
    assert!(h.contains("major != 9 || minor != 0"), "{h}");
}

#[test]
fn tensor_maps_get_encoders() {
    let h = header(
        "kernel t(a: tensor [bf16; 64, 64], out: global mut [bf16]) block(128) {
            shared s: [bf16; 1, 64, 64] swizzle(128);
            barrier full[1]: cta(arrivals = 1) guards(s);
            if thread_idx.x == 0 {
                full[0].arrive_expect_tx(bytes_of(s[0]));
                tma_load(s[0], a[0, 0], full[0]);
            }
            full[0].wait();
            out[thread_idx.x] = s[0, 0, thread_idx.x % 64];
        }",
        Target::Sm90,
        None,
    );
    assert!(
        h.contains("kdsl_t_a_encode(CUtensorMap *map, CUdeviceptr base,"),
        "{h}"
    );
    assert!(
        h.contains("static const cuuint32_t box[2] = {64u, 64u};"),
        "{h}"
    );
    assert!(
        h.contains("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, (void *)(uintptr_t)base"),
        "{h}"
    );
    assert!(h.contains("CU_TENSOR_MAP_SWIZZLE_128B"), "{h}");
    assert!(
        h.contains("kdsl_t_a_encode_dense(CUtensorMap *map, CUdeviceptr base,"),
        "{h}"
    );
    assert!(h.contains("    const CUtensorMap *a,\n"), "{h}");
    assert!(h.contains("    params[0] = (void *)a;\n"), "{h}");
}

#[test]
fn c_strings_escape_what_c_would_read_otherwise() {
    assert_eq!(
        c_string("a\"b\\c??=\n\té"),
        "\"a\\\"b\\\\c\\?\\?=\\n\\t\\303\\251\""
    );
    let mut out = String::new();
    c_string_lines(&mut out, "x\ny").unwrap();
    assert_eq!(out, "    \"x\\n\"\n    \"y\";\n");
}

#[test]
fn no_parameters_and_a_non_portable_cluster() {
    let opts = crate::Options::default();
    let c = crate::compile_str("z.kdsl", "kernel z() block(32) cluster(16) {}", &opts);
    let text = c.ptx.as_deref().unwrap();
    let m = crate::manifest::of_module(c.module.as_ref().unwrap(), text, Target::Sm90).unwrap();
    let h = write(&Input {
        manifest: &m,
        source_name: "z.kdsl",
        module: "z",
        ptx: Ptx::Path("z.ptx"),
    })
    .unwrap();
    assert!(
        h.contains("kdsl_z_launch(CUfunction function, CUstream stream, kdsl_dim3 grid)\n"),
        "{h}"
    );
    assert!(
        h.contains("return cuLaunchKernelEx(&config, function, NULL, NULL);"),
        "{h}"
    );
    assert!(
        h.contains("CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);"),
        "{h}"
    );
    // No argument struct, no C++ overload.
    assert!(
        !h.contains("kdsl_z_args") && !h.contains("namespace kdsl"),
        "{h}"
    );
}
