// 256-bin histogram, as the cuda-samples histogram sample runs it: each warp owns a shared
// sub-histogram, threads read 32-bit words of packed bytes and add to their warp's bins with
// shared atomics; the block then sums the warp histograms and writes its partial histogram;
// the merge kernel sums the partial histograms of all blocks, one bin per block.
// Imitates: NVIDIA cuda-samples histogram, histogram256Kernel / mergeHistogram256Kernel
// (Samples/2_Concepts_and_Techniques/histogram/histogram256.cu).

#define H256_BIN_COUNT 256
#define H256_LOG2_WARP_SIZE 5U
#define H256_WARP_SIZE (1U << H256_LOG2_WARP_SIZE)
#define H256_WARP_COUNT 6
#define H256_THREADBLOCK_SIZE (H256_WARP_COUNT << H256_LOG2_WARP_SIZE)
#define H256_THREADBLOCK_MEMORY (H256_WARP_COUNT * H256_BIN_COUNT)
#define H256_MERGE_THREADBLOCK_SIZE 256

typedef unsigned int uint;

__device__ inline void h256_addByte(uint* s_WarpHist, uint data) { atomicAdd(s_WarpHist + data, 1); }

__device__ inline void h256_addWord(uint* s_WarpHist, uint data)
{
    h256_addByte(s_WarpHist, (data >> 0) & 0xFFU);
    h256_addByte(s_WarpHist, (data >> 8) & 0xFFU);
    h256_addByte(s_WarpHist, (data >> 16) & 0xFFU);
    h256_addByte(s_WarpHist, (data >> 24) & 0xFFU);
}

extern "C" __global__ void histogram256Kernel(uint* d_PartialHistograms, const uint* d_Data,
                                              uint dataCount)
{
    __shared__ uint s_Hist[H256_THREADBLOCK_MEMORY];
    uint* s_WarpHist = s_Hist + (threadIdx.x >> H256_LOG2_WARP_SIZE) * H256_BIN_COUNT;
#pragma unroll
    for (uint i = 0; i < (H256_THREADBLOCK_MEMORY / H256_THREADBLOCK_SIZE); i++)
        s_Hist[threadIdx.x + i * H256_THREADBLOCK_SIZE] = 0;
    __syncthreads();
    for (uint pos = blockIdx.x * blockDim.x + threadIdx.x; pos < dataCount;
         pos += blockDim.x * gridDim.x)
        h256_addWord(s_WarpHist, d_Data[pos]);
    __syncthreads();
    for (uint bin = threadIdx.x; bin < H256_BIN_COUNT; bin += H256_THREADBLOCK_SIZE) {
        uint sum = 0;
        for (uint i = 0; i < H256_WARP_COUNT; i++)
            sum += s_Hist[bin + i * H256_BIN_COUNT];
        d_PartialHistograms[blockIdx.x * H256_BIN_COUNT + bin] = sum;
    }
}

extern "C" __global__ void mergeHistogram256Kernel(uint* d_Histogram,
                                                   const uint* d_PartialHistograms,
                                                   uint histogramCount)
{
    uint sum = 0;
    for (uint i = threadIdx.x; i < histogramCount; i += H256_MERGE_THREADBLOCK_SIZE)
        sum += d_PartialHistograms[blockIdx.x + i * H256_BIN_COUNT];
    __shared__ uint data[H256_MERGE_THREADBLOCK_SIZE];
    data[threadIdx.x] = sum;
    for (uint stride = H256_MERGE_THREADBLOCK_SIZE / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        if (threadIdx.x < stride)
            data[threadIdx.x] += data[threadIdx.x + stride];
    }
    if (threadIdx.x == 0)
        d_Histogram[blockIdx.x] = data[0];
}
