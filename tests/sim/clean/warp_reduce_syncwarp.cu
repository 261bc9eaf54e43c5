// sim --grid 1 --block 64 --arg 0=f32:iota:64 --arg 1=f32:zeros:1
// The twin of volatile_warp_reduce.cu as CUDA's samples write it since
// Volta: each step reads into a register, `__syncwarp()`, writes,
// `__syncwarp()` — every lane's read is ordered before its partner's write.
extern "C" __global__ void warp_reduce_syncwarp(const float* x, float* out) {
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    if (t < 32) {
        float v = s[t] + s[t + 32];
        for (unsigned d = 16; d > 0; d >>= 1) {
            __syncwarp();
            s[t] = v;
            __syncwarp();
            v += s[t + d];
        }
        if (t == 0) out[0] = v;
    }
}
