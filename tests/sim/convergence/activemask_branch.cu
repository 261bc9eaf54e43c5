// sim --grid 1 --block 64 --arg 0=u32:iota:64 --arg 1=u32:zeros:128
// `__activemask()` inside a branch: the odd lanes execute it together and
// shuffle among themselves with its mask (lane ^ 2 keeps the parity);
// after the branch the whole warp is active again.
__global__ void activemask_branch(const unsigned* x, unsigned* out) {
    unsigned i = threadIdx.x;
    unsigned v = x[i];
    unsigned r = 0;
    if (i & 1) {
        unsigned m = __activemask();
        r = __shfl_xor_sync(m, v, 2) * 1000u + __popc(m);
        out[64 + i] = m;
    }
    unsigned all = __activemask();
    if ((i & 1) == 0) {
        out[64 + i] = all;
    }
    out[i] = r;
}
