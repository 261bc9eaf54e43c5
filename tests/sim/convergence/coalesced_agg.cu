// sim --grid 2 --block 64 --arg 0=i32:iota:100 --arg 1=i32:zeros:1 --arg 2=i32:fill:100:-1 --arg 3=i32:100
// Warp-aggregated atomic increment with cooperative groups (the CUDA
// programming guide's `atomicAggInc`): `coalesced_threads()` is the lanes
// that took the branch, its leader adds their count, and each lane takes
// a slot of the range it got. Every index with an odd x lands once.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void coalesced_agg(const int* x, int* counter, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && (x[i] & 1)) {
        cg::coalesced_group g = cg::coalesced_threads();
        int base = 0;
        if (g.thread_rank() == 0) {
            base = atomicAdd(counter, (int)g.size());
        }
        base = g.shfl(base, 0);
        out[base + g.thread_rank()] = i;
    }
}
