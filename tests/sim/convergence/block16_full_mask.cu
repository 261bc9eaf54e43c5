// sim --grid 3 --block 16 --arg 0=u32:iota:48 --arg 1=u32:zeros:48
// A 16-thread block: its one warp has no lanes 16..31, which the full
// mask names. They count as arrived (as on a GPU); the butterfly reduction
// reads lanes 0..15 only.
__global__ void block16_full_mask(const unsigned* x, unsigned* out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i];
    for (int o = 8; o > 0; o /= 2) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    unsigned odd = __ballot_sync(0xffffffffu, x[i] & 1);
    __syncwarp();
    out[i] = v * 65536u + odd;
}
