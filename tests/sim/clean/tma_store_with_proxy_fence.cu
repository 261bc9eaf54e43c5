// sim --grid 1 --block 128 --arg 0=f32:iota:128 --arg 1=f32:zeros:128
// The twin of tma_store_without_proxy_fence.cu: each thread fences its
// generic writes for the async proxy before the barrier.
extern "C" __global__ void tma_store_with_proxy_fence(const float* x, float* out) {
    __shared__ __align__(128) float tile[128];
    unsigned t = threadIdx.x;
    tile[t] = 2.0f * x[t];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (t == 0) {
        unsigned s = (unsigned)__cvta_generic_to_shared(tile);
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 512;" :: "l"(out), "r"(s) : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}
