// sim --grid 4 --block 256 --arg 0=f32:iota:1024
// Every thread of the grid prints its element 64 times (a debugging loop
// left in): about 2.6 MB of text, where the printf buffer holds 1 MiB. A
// GPU drops the calls that do not fit without a word.
#include <cstdio>
extern "C" __global__ void printf_buffer_full(const float* x) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < 64; r++) printf("x[%4u] = %8.3f\n", i, x[i]); //~ S0040 vprintf
}
