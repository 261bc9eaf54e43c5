// sim --grid 1 --block 32 --arg 0=f32:iota:32 --arg 1=f32:zeros:1
// A butterfly sum written for 16 lanes (`__shfl_xor_sync(0xffff, ...)`) run by
// a full warp: lanes 16..31 execute a `.sync` shuffle whose mask leaves
// them out, which the PTX ISA leaves undefined (every executing thread
// must be in `membermask`).
extern "C" __global__ void sync_mask_leaves_out_lane(const float* x, float* out) {
    float v = x[threadIdx.x];
    for (int o = 8; o > 0; o /= 2) v += __shfl_xor_sync(0xffff, v, o); //~ S0009 shfl.sync.bfly
    if (threadIdx.x == 0) *out = v;
}
