// sim --grid 2 --block 32 --arg 0=u32:zeros:32 --arg 1=u32:zeros:1
// The hand-written CUDA flag: CTA 0 writes 32 words and sets a `volatile`
// flag; CTA 1 spins until it sees the flag and reads the words. A
// volatile access is a plain one that the compiler may not remove; it
// orders nothing between threads. The flag's store and loads race (the
// spin is reported), and so do the writes and reads of the data: the
// flag needs `__threadfence()` on both sides (or `cuda::atomic_ref` with
// release and acquire).
extern "C" __global__ void flag_volatile_without_fence(unsigned* data, volatile unsigned* flag) {
    unsigned t = threadIdx.x;
    if (blockIdx.x == 0) {
        data[t] = t + 1;
        __syncthreads();
        if (t == 0) *flag = 1;
    } else {
        while (*flag == 0) { //~ S0030 ld.volatile.global
        }
        data[t] = data[t] * 2;
    }
}
