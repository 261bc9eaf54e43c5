// sim --grid 2 --block 64 --arg 0=f32:iota:128 --arg 1=f32:zeros:128
// An `assert` on the input range that the last elements fail: the run
// reports the condition, the threads that failed it and the line a GPU
// prints; the other threads run to the end.
#include <cassert>
extern "C" __global__ void assert_fails(const float* x, float* out) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(x[i] < 120.0f); //~ S0041 __assertfail
    out[i] = 2.0f * x[i];
}
