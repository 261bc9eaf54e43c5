// sim --grid 1 --block 64 --arg 0=f32:iota:64 --arg 1=f32:zeros:1
// The last-warp reduction of CUDA's pre-Volta reduction samples:
// `volatile` shared memory and no `__syncwarp()`. Since Volta the lanes of
// a warp do not run in lockstep, so a lane may add its partner's element
// before or after the partner added to it; on a GPU this happens to work
// today, in the simulator (threads run one at a time) it gives a wrong
// sum — and either way it is a data race.
extern "C" __global__ void volatile_warp_reduce(const float* x, float* out) {
    __shared__ float s[64];
    unsigned t = threadIdx.x;
    s[t] = x[t];
    __syncthreads();
    if (t < 32) {
        volatile float* v = s;
        v[t] += v[t + 32]; //~ S0030 st.volatile.shared
        v[t] += v[t + 16];
        v[t] += v[t + 8];
        v[t] += v[t + 4];
        v[t] += v[t + 2];
        v[t] += v[t + 1];
        if (t == 0) out[0] = v[0];
    }
}
