// The tensor-core GEMM (samples/hopper_gemm.kdsl, sm_90a) from C++ through
// the header `kdslc --emit header` writes: the tensor maps encoded by the
// header's helpers from the matrices' shapes, the 197,632 bytes of dynamic
// shared memory and their opt-in, the block shape and the parameter packing
// all from the kernel's manifest.
//
//   kdslc ../../samples/hopper_gemm.kdsl --target sm_90a --emit header -o hopper_gemm.h
//   c++ -std=c++17 -I$CUDA/include gemm.cpp -lcuda -o gemm && ./gemm check
//
// C = A · Bᵀ with A [m, k], B [n, k], C [m, n], bf16, row-major, at ragged
// sizes (m = 300, n = 520, k = 200) on small integers, so that every sum is
// exact and C is compared bit for bit with a CPU reference. Without `check`
// it only launches (what the tests do against a stub driver).
#include "hopper_gemm.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int failed(const char *what, CUresult r)
{
    const char *name = nullptr;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr)
        name = "an unknown result";
    std::fprintf(stderr, "gemm: %s: %s (%d)\n", what, name, static_cast<int>(r));
    return 2;
}

// f32 -> bf16, rounding to nearest even (cvt.rn.bf16.f32); no NaNs here.
uint16_t bf16(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return static_cast<uint16_t>(u >> 16);
}

} // namespace

#define TRY(call)                         \
    do {                                  \
        CUresult r_ = (call);             \
        if (r_ != CUDA_SUCCESS)           \
            return failed(#call, r_);     \
    } while (0)

int main(int argc, char **argv)
{
    const uint32_t m = 300, n = 520, k = 200;
    const bool check = argc > 1 && std::strcmp(argv[1], "check") == 0;
    std::vector<uint16_t> a(size_t(m) * k), b(size_t(n) * k), c(size_t(m) * n);
    std::vector<int> ai(a.size()), bi(b.size());
    for (size_t i = 0; i < a.size(); i++) {
        ai[i] = int(i * 7 % 5) - 2;
        a[i] = bf16(float(ai[i]));
    }
    for (size_t i = 0; i < b.size(); i++) {
        bi[i] = int(i * 3 % 7) - 3;
        b[i] = bf16(float(bi[i]));
    }

    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction gemm;
    CUdeviceptr da, db, dc;
    TRY(cuInit(0));
    TRY(cuDeviceGet(&device, 0));
    TRY(kdsl_hopper_gemm_module_check_device(device));
    TRY(cuDevicePrimaryCtxRetain(&context, device));
    TRY(cuCtxSetCurrent(context));
    TRY(kdsl_hopper_gemm_module_load(&module));
    TRY(kdsl_hopper_gemm_function(module, &gemm));
    TRY(cuMemAlloc(&da, a.size() * 2));
    TRY(cuMemAlloc(&db, b.size() * 2));
    TRY(cuMemAlloc(&dc, c.size() * 2));
    TRY(cuMemcpyHtoD(da, a.data(), a.size() * 2));
    TRY(cuMemcpyHtoD(db, b.data(), b.size() * 2));
    TRY(cuMemsetD8(dc, 0xff, c.size() * 2));

    // The maps from the matrices' shapes, outermost first: {rows, columns}.
    CUtensorMap map_a, map_b;
    const cuuint64_t shape_a[2] = {m, k}, shape_b[2] = {n, k};
    TRY(kdsl_hopper_gemm_a_encode_dense(&map_a, da, shape_a));
    TRY(kdsl_hopper_gemm_b_encode_dense(&map_b, db, shape_b));
    // One CTA per 128 x 256 tile of C.
    const kdsl_dim3 grid = {(n + 255) / 256, (m + 127) / 128, 1};
    TRY(kdsl::launch(gemm, nullptr, grid, kdsl_hopper_gemm_args{&map_a, &map_b, dc, m, n, k}));
    TRY(cuCtxSynchronize());
    TRY(cuMemcpyDtoH(c.data(), dc, c.size() * 2));

    if (check) {
        size_t bad = 0;
        for (uint32_t i = 0; i < m; i++) {
            for (uint32_t j = 0; j < n; j++) {
                int sum = 0;
                for (uint32_t l = 0; l < k; l++)
                    sum += ai[size_t(i) * k + l] * bi[size_t(j) * k + l];
                const uint16_t want = bf16(float(sum)), got = c[size_t(i) * n + j];
                if (got != want && bad++ < 5)
                    std::fprintf(stderr, "gemm: c[%u, %u] = 0x%04x, want 0x%04x (%d)\n", i, j, got, want, sum);
            }
        }
        if (bad) {
            std::fprintf(stderr, "gemm: %zu of %zu elements differ\n", bad, c.size());
            return 1;
        }
        std::printf("gemm: %u x %u x %u: all %zu elements match the CPU\n", m, n, k, c.size());
    }
    TRY(cuMemFree(da));
    TRY(cuMemFree(db));
    TRY(cuMemFree(dc));
    TRY(cuModuleUnload(module));
    TRY(cuDevicePrimaryCtxRelease(device));
    return 0;
}
