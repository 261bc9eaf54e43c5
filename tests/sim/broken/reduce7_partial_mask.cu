// sim --grid 2 --block 256 --shared-bytes 1024 --arg 0=i32:iota:2048 --arg 1=i32:zeros:2 --arg 2=u32:2048
// cuda-samples' reduce7 (Samples/2_Concepts_and_Techniques/reduction,
// reduction_kernel.cu; int, 256 threads, nIsPow2): the final warp reduces
// the 8 warp sums with `__shfl_down_sync(ballot_result, ...)`, whose mask
// holds lanes 0..7 only, at offsets 16 and 8 too: lanes 0..7 read lanes
// outside the mask, which the PTX ISA leaves undefined. (A simulator that
// gave each such lane its own value computed 4 times the sum.) The shuffle
// is inlined from `__shfl_down_sync` into `warpReduceSum` into the kernel:
// the report points at the kernel's line, the outermost `inlined_at`.
template <class T>
struct SharedMemory {
    __device__ inline operator T*() {
        extern __shared__ int __smem[];
        return (T*)__smem;
    }
};

template <class T>
__device__ __forceinline__ T warpReduceSum(unsigned int mask, T mySum) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        mySum += __shfl_down_sync(mask, mySum, offset);
    }
    return mySum;
}

template <typename T, unsigned int blockSize, bool nIsPow2>
__global__ void reduce7(const T* __restrict__ g_idata, T* __restrict__ g_odata, unsigned int n) {
    T* sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int gridSize = blockSize * gridDim.x;
    unsigned int maskLength = (blockSize & 31);
    maskLength = (maskLength > 0) ? (32 - maskLength) : maskLength;
    const unsigned int mask = (0xffffffff) >> maskLength;
    T mySum = 0;
    if (nIsPow2) {
        unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
        gridSize = gridSize << 1;
        while (i < n) {
            mySum += g_idata[i];
            if ((i + blockSize) < n) {
                mySum += g_idata[i + blockSize];
            }
            i += gridSize;
        }
    } else {
        unsigned int i = blockIdx.x * blockSize + threadIdx.x;
        while (i < n) {
            mySum += g_idata[i];
            i += gridSize;
        }
    }
    mySum = warpReduceSum<T>(mask, mySum);
    if ((tid % warpSize) == 0) {
        sdata[tid / warpSize] = mySum;
    }
    __syncthreads();
    const unsigned int shmem_extent = (blockSize / warpSize) > 0 ? (blockSize / warpSize) : 1;
    const unsigned int ballot_result = __ballot_sync(mask, tid < shmem_extent);
    if (tid < shmem_extent) {
        mySum = sdata[tid];
        mySum = warpReduceSum<T>(ballot_result, mySum); //~ S0050 shfl.sync.down, inlined twice
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = mySum;
    }
}

template __global__ void reduce7<int, 256, true>(const int*, int*, unsigned int);
