// c = a (m×k) * b (k×n), row-major, register-tiled on CUDA cores: a block of
// 256 threads computes a 128×128 tile of c, each thread an 8×8 block of it in
// 64 registers, stepping through k 8 at a time through shared memory.
extern "C" __global__ void __launch_bounds__(256) sgemm_regtile(const float* __restrict__ a, const float* __restrict__ b,
                                                  float* c, unsigned m, unsigned n, unsigned k) {
    __shared__ __align__(16) float ta[8][128];  // the tile of a, transposed: ta[kk][row]
    __shared__ __align__(16) float tb[8][128];  // the tile of b: tb[kk][col]
    unsigned tid = threadIdx.x;
    unsigned tx = tid % 16, ty = tid / 16;
    unsigned row0 = blockIdx.y * 128, col0 = blockIdx.x * 128;
    float acc[8][8];
#pragma unroll
    for (unsigned i = 0; i < 8; i++)
#pragma unroll
        for (unsigned j = 0; j < 8; j++) acc[i][j] = 0.0f;
    for (unsigned t = 0; t < (k + 7) / 8; t++) {
        // Each thread stages 4 elements of each tile (element tid + 256 r, row-major).
        for (unsigned r = 0; r < 4; r++) {
            unsigned ar = tid / 8 + 32 * r, ak = tid % 8;
            unsigned ga = row0 + ar, ka = 8 * t + ak;
            ta[ak][ar] = (ga < m && ka < k) ? a[ga * k + ka] : 0.0f;
            unsigned bk = tid / 128 + 2 * r, bc = tid % 128;
            unsigned kb = 8 * t + bk, gb = col0 + bc;
            tb[bk][bc] = (kb < k && gb < n) ? b[kb * n + gb] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (unsigned kk = 0; kk < 8; kk++) {
            float4 a0 = *reinterpret_cast<const float4*>(&ta[kk][8 * ty]);
            float4 a1 = *reinterpret_cast<const float4*>(&ta[kk][8 * ty + 4]);
            float4 b0 = *reinterpret_cast<const float4*>(&tb[kk][8 * tx]);
            float4 b1 = *reinterpret_cast<const float4*>(&tb[kk][8 * tx + 4]);
            float ra[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float rb[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (unsigned i = 0; i < 8; i++)
#pragma unroll
                for (unsigned j = 0; j < 8; j++) acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (unsigned i = 0; i < 8; i++) {
        unsigned row = row0 + 8 * ty + i;
#pragma unroll
        for (unsigned j = 0; j < 8; j++) {
            unsigned col = col0 + 8 * tx + j;
            if (row < m && col < n) c[row * n + col] = acc[i][j];
        }
    }
}
