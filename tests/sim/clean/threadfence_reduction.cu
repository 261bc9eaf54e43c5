// sim --grid 6 --block 128 --arg 0=f32:iota:3000 --arg 1=f32:zeros:6 --arg 2=u32:zeros:1 --arg 3=f32:zeros:1 --arg 4=u32:3000
// CUDA's threadFenceReduction: each block writes its part, `__threadfence()`
// then a relaxed atomic ticket; the last block, after its ticket, reads
// every part. The fences around the relaxed atomic order the parts.
extern "C" __global__ void threadfence_reduction(const float* x, float* part, unsigned* tickets, float* total, unsigned n) {
    __shared__ float sum;
    __shared__ bool last;
    unsigned t = threadIdx.x;
    if (t == 0) sum = 0.0f;
    __syncthreads();
    float acc = 0.0f;
    for (unsigned i = blockIdx.x * 128 + t; i < n; i += gridDim.x * 128) acc += x[i];
    atomicAdd(&sum, acc);
    __syncthreads();
    if (t == 0) {
        part[blockIdx.x] = sum;
        __threadfence();
        unsigned ticket = atomicInc(tickets, gridDim.x);
        last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (last && t == 0) {
        __threadfence();
        float s = 0.0f;
        for (unsigned b = 0; b < gridDim.x; b++) s += part[b];
        total[0] = s;
        *tickets = 0;
    }
}
