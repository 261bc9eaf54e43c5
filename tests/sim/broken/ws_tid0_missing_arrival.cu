// sim --grid 1 --block 64 --arg 0=f32:iota:64 --arg 1=f32:zeros:64 --arg 2=u32:64
// A producer warp fills a buffer and arrives on the mbarrier `full`, which
// expects all 32 of its lanes; lane 0 forgets to arrive, so the consumer
// warp waits forever. The barrier is a local static of a kernel with
// parameters (`_ZZ7ws_tid0PKfPfjE4full`): the report calls it `full`. The
// wait is two helpers deep (`wait_full` → `mbar_wait` → inline PTX): the
// report points at the kernel's line, the outermost `inlined_at`.
__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(unsigned b, unsigned n) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(b), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned b) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(b) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned b, unsigned parity) {
    asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
                 :: "r"(b), "r"(parity) : "memory");
}
__device__ __forceinline__ void wait_full(unsigned b) { mbar_wait(b, 0); }

__global__ void ws_tid0(const float* x, float* y, unsigned n) {
    __shared__ float buf[64];
    __shared__ unsigned long long full;
    unsigned t = threadIdx.x;
    if (t == 0) {
        mbar_init(smem(&full), 32);
    }
    __syncthreads();
    if (t < 32) {
        buf[t] = x[t];
        if (t != 0) {
            mbar_arrive(smem(&full));
        }
    } else if (t < n) {
        wait_full(smem(&full)); //~ S0001 mbarrier.try_wait, two helpers deep
        y[t] = buf[t - 32];
    }
}
