// Hybrid bucket/merge sort, as Rodinia hybridsort counts its buckets: the pivots sit in
// constant memory; each thread binary-searches its element's bucket, takes a slot in the
// block's shared counter of that bucket with an atomic increment (its old value becomes the
// element's rank in the bucket), and at the end the block writes its counters to its row of
// the prefix-offset table.
// Imitates: Rodinia 3.1 hybridsort, bucketcount (cuda/hybridsort/bucketsort_kernel.cu).

#define HS_LOG_DIVISIONS 6
#define HS_DIVISIONS (1 << HS_LOG_DIVISIONS)
#define HS_BUCKET_WARP_LOG_SIZE 5
#define HS_BUCKET_WARP_N 1
#define HS_BUCKET_BLOCK_MEMORY (HS_DIVISIONS * HS_BUCKET_WARP_N)

__constant__ float c_pivotPoints[HS_DIVISIONS];

extern "C" __global__ void hybridsort_bucketcount(const float* input, int* indice,
                                                  unsigned int* d_prefixoffsets, int size)
{
    volatile __shared__ unsigned int s_offset[HS_BUCKET_BLOCK_MEMORY];
    const unsigned int warpBase = (threadIdx.x >> HS_BUCKET_WARP_LOG_SIZE) * HS_DIVISIONS * 0;
    const int numThreads = blockDim.x * gridDim.x;
    for (int i = threadIdx.x; i < HS_BUCKET_BLOCK_MEMORY; i += blockDim.x)
        s_offset[i] = 0;
    __syncthreads();
    for (int tid = threadIdx.x + blockIdx.x * blockDim.x; tid < size; tid += numThreads) {
        float elem = input[tid];
        int idx = HS_DIVISIONS / 2 - 1;
        int jump = HS_DIVISIONS / 4;
        float piv = c_pivotPoints[idx];
        while (jump >= 1) {
            idx = (elem < piv) ? (idx - jump) : (idx + jump);
            piv = c_pivotPoints[idx];
            jump /= 2;
        }
        idx = (elem < piv) ? idx : (idx + 1);
        if (idx > HS_DIVISIONS - 1)
            idx = HS_DIVISIONS - 1;
        indice[tid] = (atomicInc((unsigned int*)&s_offset[warpBase + idx], 0xFFFFFFFFu)
                       << HS_LOG_DIVISIONS) + idx;
    }
    __syncthreads();
    int prefixBase = blockIdx.x * HS_BUCKET_BLOCK_MEMORY;
    for (int i = threadIdx.x; i < HS_BUCKET_BLOCK_MEMORY; i += blockDim.x)
        d_prefixoffsets[prefixBase + i] = s_offset[i] & 0x07FFFFFFU;
}
