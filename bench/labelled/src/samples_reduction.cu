// Parallel sum reduction, as the cuda-samples reduction sample runs its first and last
// variants: reduce0 (interleaved addressing in shared memory, one partial sum per block) and
// reduce6 (each thread first sums many elements in a grid-stride loop, two per step, then a
// shared-memory tree and a warp-shuffle finish), both out of place.
// Imitates: NVIDIA cuda-samples reduction, reduce0 / reduce6<T, blockSize, nIsPow2>
// (Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu).

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void reduce0(const int* g_idata, int* g_odata, unsigned int n)
{
    extern __shared__ int sdata0[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata0[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0)
            sdata0[tid] += sdata0[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        g_odata[blockIdx.x] = sdata0[0];
}

template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void reduce6(const T* g_idata, T* g_odata, unsigned int n)
{
    cg::thread_block cta = cg::this_thread_block();
    extern __shared__ T sdata6[];
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
            if ((i + blockSize) < n)
                mySum += g_idata[i + blockSize];
            i += gridSize;
        }
    } else {
        unsigned int i = blockIdx.x * blockSize + threadIdx.x;
        while (i < n) {
            mySum += g_idata[i];
            i += gridSize;
        }
    }
    mySum = cg::reduce(cg::tiled_partition<32>(cta), mySum, cg::plus<T>());
    if ((tid % 32) == 0)
        sdata6[tid / 32] = mySum;
    __syncthreads();
    const unsigned int shmem_extent = (blockSize / 32) > 0 ? (blockSize / 32) : 1;
    const unsigned int ballot_result = __ballot_sync(mask, tid < shmem_extent);
    if (tid < shmem_extent) {
        mySum = sdata6[tid];
        for (int offset = blockDim.x / (32 * 2); offset > 0; offset /= 2)
            mySum += __shfl_down_sync(ballot_result, mySum, offset);
    }
    if (tid == 0)
        g_odata[blockIdx.x] = mySum;
}

template __global__ void reduce6<float, 256, true>(const float*, float*, unsigned int);
