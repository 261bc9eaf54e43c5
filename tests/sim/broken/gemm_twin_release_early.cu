// arch: sm_90a
// sim --grid 2,2 --block 384 --shared-bytes 196672 --arg 0=tmap:bf16:rand:200,512:1:box=128,64:swizzle=128 --arg 1=tmap:bf16:rand:300,512:2:box=256,64:swizzle=128 --arg 2=u16:zeros:60000 --arg 3=u32:200 --arg 4=u32:300 --arg 5=u32:512
// The CUDA twin of samples/hopper_gemm.kdsl (bench/kernels/hopper_gemm.cu)
// with the mistake of tests/ui/hopper_gemm_release_early.kdsl: each
// consumer warp arrives on its stage's `empty` barrier right after
// committing the wgmma group that reads the stage, before waiting for it.
// nvcc and ptxas accept it; the producer, released, lands the next tensor
// copy in a stage the tensor cores may still be reading. kdslc refuses the
// kdsl kernel (E0415); the simulator reports the overwrite (S0024) at the
// copies, naming the pending wgmma.
#include <cuda.h>   // CUtensorMap (bf16 values are their bits: unsigned short)

#define BM 128u
#define BN 256u
#define BK 64u
#define STAGES 4u
#define A_STAGE (BM * BK * 2u)     // 16384 bytes
#define B_STAGE (BN * BK * 2u)     // 32768 bytes
#define SMEM_BYTES (STAGES * (A_STAGE + B_STAGE) + 2u * STAGES * 8u)

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(unsigned b, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned b) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
}
__device__ __forceinline__ void mbar_expect(unsigned b, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned b, unsigned parity) {
    asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
                 :: "r"(b), "r"(parity) : "memory");
}
__device__ __forceinline__ void tma_load(unsigned dst, const CUtensorMap* map, int c0, int c1, unsigned bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(dst), "l"(map), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
// Two f32 as bf16x2 (hi into the upper half), one f32 as bf16.
__device__ __forceinline__ unsigned bf16x2(float hi, float lo) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ unsigned short bf16(float x) {
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
}
// A K-major operand in 128B-swizzled rows of 64 bf16: leading byte offset
// unused (1), 8-row groups 1024 bytes apart.
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) | 0x4000004000010000ull;
}

#define R8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), \
              "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define R32(i) R8(i), R8(i + 8), R8(i + 16), R8(i + 24)

// D (+)= A . B^T for one 64 x 256 x 16 slice; scale_d 0 on the first.
__device__ __forceinline__ void wgmma_256(float* d, unsigned long long da, unsigned long long db, unsigned scale_d) {
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %130, 0;\n"
        " wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, 0;\n}"
        : R32(0), R32(32), R32(64), R32(96)
        : "l"(da), "l"(db), "r"(scale_d));
}

extern "C" __global__ void __launch_bounds__(384, 1) hopper_gemm(
    const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,
    unsigned short* c, unsigned m, unsigned n, unsigned k) {
    extern __shared__ __align__(1024) unsigned char dsmem[];
    const unsigned sa = smem(dsmem);                    // STAGES x 16 KiB
    const unsigned sb = sa + STAGES * A_STAGE;          // STAGES x 32 KiB
    const unsigned full = sb + STAGES * B_STAGE;        // STAGES mbarriers
    const unsigned empty = full + STAGES * 8u;          // STAGES mbarriers
    const unsigned tid = threadIdx.x;
    const unsigned wg = tid / 128u;
    const unsigned m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const unsigned k_tiles = (k + BK - 1) / BK;

    if (tid == 0) {
        for (unsigned s = 0; s < STAGES; s++) {
            mbar_init(full + 8u * s, 1);
            mbar_init(empty + 8u * s, 8);               // one arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        // ---- producer ------------------------------------------------------
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid < 32) {
            unsigned elected;
            asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(elected));
            if (elected) {
                for (unsigned kt = 0; kt < k_tiles; kt++) {
                    const unsigned s = kt % STAGES;
                    if (kt >= STAGES) mbar_wait(empty + 8u * s, (kt / STAGES - 1u) & 1u);
                    mbar_expect(full + 8u * s, A_STAGE + B_STAGE);   // whole boxes, also at the edges
                    tma_load(sa + s * A_STAGE, &a, (int)(kt * BK), (int)m0, full + 8u * s);  //~ S0024 cp.async.bulk.tensor
                    tma_load(sb + s * B_STAGE, &b, (int)(kt * BK), (int)n0, full + 8u * s);
                }
            }
        }
        return;
    }

    // ---- consumers ---------------------------------------------------------
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    const unsigned cw = wg - 1u;                        // which 64-row half of the tile
    float d[128];
    for (unsigned kt = 0; kt < k_tiles; kt++) {
        const unsigned s = kt % STAGES;
        mbar_wait(full + 8u * s, (kt / STAGES) & 1u);
        const unsigned long long da = desc(sa + s * A_STAGE + cw * 64u * 128u);
        const unsigned long long db = desc(sb + s * B_STAGE);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (unsigned kk = 0; kk < 4; kk++) {
            // +32 bytes per 16-wide K slice: +2 in the descriptor.
            wgmma_256(d, da + 2u * kk, db + 2u * kk, (kt > 0 || kk > 0) ? 1u : 0u);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        // The mistake: the stage is released before the group reading it
        // has completed (kdslc: E0415).
        if (tid % 32 == 0) mbar_arrive(empty + 8u * s);
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");

    // ---- epilogue: the accumulator fragment, guarded at the edges of C -----
    // d[i] of warpgroup thread t (warp w, lane l) is row 16w + l/4 + 8((i>>1)&1),
    // column 8(i>>2) + 2(l%4) + (i&1) of the warpgroup's 64 x 256 slice.
    const unsigned t = tid % 128u, w = t / 32u, l = t % 32u;
    const unsigned row0 = m0 + cw * 64u + 16u * w + l / 4u;
    const unsigned col0 = n0 + 2u * (l % 4u);
#pragma unroll
    for (unsigned i = 0; i < 128; i += 2) {
        const unsigned row = row0 + 8u * ((i >> 1) & 1u);
        const unsigned col = col0 + 8u * (i >> 2);
        if (row >= m || col >= n) continue;
        unsigned short* p = c + (size_t)row * n + col;
        if (col + 1 < n && (n & 1u) == 0) {
            *reinterpret_cast<unsigned*>(p) = bf16x2(d[i + 1], d[i]);
        } else {
            p[0] = bf16(d[i]);
            if (col + 1 < n) p[1] = bf16(d[i + 1]);
        }
    }
}
