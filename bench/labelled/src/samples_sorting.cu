// Sorting networks and merge sort, as the cuda-samples sortingNetworks and mergeSort samples
// run them: bitonicSortShared sorts 1024-element segments of key/value pairs in shared memory
// (512 threads, two elements each); bitonicMergeGlobal does one global compare-exchange step
// of the bitonic merge for large strides (the sample calls it with the same arrays as source
// and destination); mergeSortShared sorts 1024-element segments by merging runs through
// binary-search ranks in shared memory.
// Imitates: NVIDIA cuda-samples sortingNetworks, bitonicSortShared / bitonicMergeGlobal
// (Samples/2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu) and mergeSort,
// mergeSortSharedKernel (Samples/0_Introduction/mergeSort/mergeSort.cu).

#define SN_SHARED_SIZE_LIMIT 1024U

typedef unsigned int uint;

__device__ inline void sn_comparator(uint& keyA, uint& valA, uint& keyB, uint& valB, uint dir)
{
    uint t;
    if ((keyA > keyB) == dir) {
        t = keyA; keyA = keyB; keyB = t;
        t = valA; valA = valB; valB = t;
    }
}

extern "C" __global__ void bitonicSortShared(uint* d_DstKey, uint* d_DstVal, const uint* d_SrcKey,
                                             const uint* d_SrcVal, uint arrayLength, uint dir)
{
    __shared__ uint s_key[SN_SHARED_SIZE_LIMIT];
    __shared__ uint s_val[SN_SHARED_SIZE_LIMIT];
    d_SrcKey += blockIdx.x * SN_SHARED_SIZE_LIMIT + threadIdx.x;
    d_SrcVal += blockIdx.x * SN_SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstKey += blockIdx.x * SN_SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstVal += blockIdx.x * SN_SHARED_SIZE_LIMIT + threadIdx.x;
    s_key[threadIdx.x + 0] = d_SrcKey[0];
    s_val[threadIdx.x + 0] = d_SrcVal[0];
    s_key[threadIdx.x + (SN_SHARED_SIZE_LIMIT / 2)] = d_SrcKey[(SN_SHARED_SIZE_LIMIT / 2)];
    s_val[threadIdx.x + (SN_SHARED_SIZE_LIMIT / 2)] = d_SrcVal[(SN_SHARED_SIZE_LIMIT / 2)];
    for (uint size = 2; size < arrayLength; size <<= 1) {
        uint ddd = dir ^ ((threadIdx.x & (size / 2)) != 0);
        for (uint stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            uint pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
            sn_comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], ddd);
        }
    }
    for (uint stride = arrayLength / 2; stride > 0; stride >>= 1) {
        __syncthreads();
        uint pos = 2 * threadIdx.x - (threadIdx.x & (stride - 1));
        sn_comparator(s_key[pos + 0], s_val[pos + 0], s_key[pos + stride], s_val[pos + stride], dir);
    }
    __syncthreads();
    d_DstKey[0] = s_key[threadIdx.x + 0];
    d_DstVal[0] = s_val[threadIdx.x + 0];
    d_DstKey[(SN_SHARED_SIZE_LIMIT / 2)] = s_key[threadIdx.x + (SN_SHARED_SIZE_LIMIT / 2)];
    d_DstVal[(SN_SHARED_SIZE_LIMIT / 2)] = s_val[threadIdx.x + (SN_SHARED_SIZE_LIMIT / 2)];
}

extern "C" __global__ void bitonicMergeGlobal(uint* d_DstKey, uint* d_DstVal, const uint* d_SrcKey,
                                              const uint* d_SrcVal, uint arrayLength, uint size,
                                              uint stride, uint dir)
{
    uint global_comparatorI = blockIdx.x * blockDim.x + threadIdx.x;
    uint comparatorI = global_comparatorI & (arrayLength / 2 - 1);
    uint ddd = dir ^ ((comparatorI & (size / 2)) != 0);
    uint pos = 2 * global_comparatorI - (global_comparatorI & (stride - 1));
    uint keyA = d_SrcKey[pos + 0];
    uint valA = d_SrcVal[pos + 0];
    uint keyB = d_SrcKey[pos + stride];
    uint valB = d_SrcVal[pos + stride];
    sn_comparator(keyA, valA, keyB, valB, ddd);
    d_DstKey[pos + 0] = keyA;
    d_DstVal[pos + 0] = valA;
    d_DstKey[pos + stride] = keyB;
    d_DstVal[pos + stride] = valB;
}


template <uint sortDir>
static inline __device__ uint ms_binarySearchInclusive(uint val, const uint* data, uint L, uint stride)
{
    if (L == 0)
        return 0;
    uint pos = 0;
    for (; stride > 0; stride >>= 1) {
        uint newPos = umin(pos + stride, L);
        if ((sortDir && (data[newPos - 1] <= val)) || (!sortDir && (data[newPos - 1] >= val)))
            pos = newPos;
    }
    return pos;
}

template <uint sortDir>
static inline __device__ uint ms_binarySearchExclusive(uint val, const uint* data, uint L, uint stride)
{
    if (L == 0)
        return 0;
    uint pos = 0;
    for (; stride > 0; stride >>= 1) {
        uint newPos = umin(pos + stride, L);
        if ((sortDir && (data[newPos - 1] < val)) || (!sortDir && (data[newPos - 1] > val)))
            pos = newPos;
    }
    return pos;
}

extern "C" __global__ void mergeSortShared(uint* d_DstKey, uint* d_DstVal, const uint* d_SrcKey,
                                           const uint* d_SrcVal, uint arrayLength)
{
    __shared__ uint s_key[SN_SHARED_SIZE_LIMIT];
    __shared__ uint s_val[SN_SHARED_SIZE_LIMIT];
    d_SrcKey += blockIdx.x * SN_SHARED_SIZE_LIMIT + threadIdx.x;
    d_SrcVal += blockIdx.x * SN_SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstKey += blockIdx.x * SN_SHARED_SIZE_LIMIT + threadIdx.x;
    d_DstVal += blockIdx.x * SN_SHARED_SIZE_LIMIT + threadIdx.x;
    s_key[threadIdx.x + 0] = d_SrcKey[0];
    s_val[threadIdx.x + 0] = d_SrcVal[0];
    s_key[threadIdx.x + (SN_SHARED_SIZE_LIMIT / 2)] = d_SrcKey[(SN_SHARED_SIZE_LIMIT / 2)];
    s_val[threadIdx.x + (SN_SHARED_SIZE_LIMIT / 2)] = d_SrcVal[(SN_SHARED_SIZE_LIMIT / 2)];
    for (uint stride = 1; stride < arrayLength; stride <<= 1) {
        uint lPos = threadIdx.x & (stride - 1);
        uint* baseKey = s_key + 2 * (threadIdx.x - lPos);
        uint* baseVal = s_val + 2 * (threadIdx.x - lPos);
        __syncthreads();
        uint keyA = baseKey[lPos + 0];
        uint valA = baseVal[lPos + 0];
        uint keyB = baseKey[lPos + stride];
        uint valB = baseVal[lPos + stride];
        uint posA = ms_binarySearchExclusive<1>(keyA, baseKey + stride, stride, stride) + lPos;
        uint posB = ms_binarySearchInclusive<1>(keyB, baseKey + 0, stride, stride) + lPos;
        __syncthreads();
        baseKey[posA] = keyA;
        baseVal[posA] = valA;
        baseKey[posB] = keyB;
        baseVal[posB] = valB;
    }
    __syncthreads();
    d_DstKey[0] = s_key[threadIdx.x + 0];
    d_DstVal[0] = s_val[threadIdx.x + 0];
    d_DstKey[(SN_SHARED_SIZE_LIMIT / 2)] = s_key[threadIdx.x + (SN_SHARED_SIZE_LIMIT / 2)];
    d_DstVal[(SN_SHARED_SIZE_LIMIT / 2)] = s_val[threadIdx.x + (SN_SHARED_SIZE_LIMIT / 2)];
}
