// sim --grid 1 --block 64 --arg 0=u32:zeros:64 --arg 1=u32:zeros:1
// A hand-over through a flag in global memory between two warps of a
// CTA, without a barrier: thread 0 writes the data and sets the flag with
// a release store; warp 1 spins on an acquire load of the flag, then
// reads.
extern "C" __global__ void flag_release_acquire(unsigned* data, unsigned* flag) {
    unsigned t = threadIdx.x;
    if (t < 32) {
        if (t == 0) {
            for (unsigned i = 0; i < 32; i++) data[i] = i + 1;
            asm volatile("st.release.gpu.global.u32 [%0], 1;" :: "l"(flag) : "memory");
        }
    } else {
        unsigned f = 0;
        while (f == 0) asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(f) : "l"(flag) : "memory");
        data[t] = data[t - 32] * 2;
    }
}
