// Radix sort passes, in the style of the CUDPP-derived radix sort of the older cuda-samples
// (radixSort) : radixSortBlocks sorts each 4*CTA-element block by a 4-bit digit in shared
// memory (one bit at a time, a block-wide split through a shared scan), out of place;
// findRadixOffsets finds, in each sorted block, where every digit starts and how many keys
// carry it; reorderData scatters every key and value to its global position, computed from
// the scanned per-block digit counts (read from memory).
// Imitates: the radixSortBlocks / findRadixOffsets / reorderData kernels of the cuda-samples
// radix sort (radixsort_kernel.cu of CUDPP 1.1 as shipped with the SDK), simplified to one key
// per thread.

#define RS_CTA 128
#define RS_BITS 4
#define RS_DIGITS (1 << RS_BITS)

typedef unsigned int uint;

__device__ uint rs_block_scan(uint v, uint* s)  // exclusive scan over the block, returns total in s[RS_CTA]
{
    s[threadIdx.x] = v;
    __syncthreads();
    for (uint off = 1; off < RS_CTA; off <<= 1) {
        uint t = threadIdx.x >= off ? s[threadIdx.x - off] : 0;
        __syncthreads();
        s[threadIdx.x] += t;
        __syncthreads();
    }
    uint incl = s[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == RS_CTA - 1)
        s[RS_CTA] = incl;
    __syncthreads();
    return incl - v;
}

extern "C" __global__ void radixSortBlocks(uint nbits, uint startbit, uint* keysOut,
                                           uint* valuesOut, const uint* keysIn,
                                           const uint* valuesIn)
{
    __shared__ uint sKeys[RS_CTA];
    __shared__ uint sVals[RS_CTA];
    __shared__ uint sScan[RS_CTA + 1];
    uint i = blockIdx.x * RS_CTA + threadIdx.x;
    uint key = keysIn[i];
    uint val = valuesIn[i];
    for (uint shift = startbit; shift < startbit + nbits; ++shift) {
        uint lsb = !((key >> shift) & 0x1);
        uint r = rs_block_scan(lsb, sScan);
        uint numTrue = sScan[RS_CTA];
        uint dst = lsb ? r : numTrue + threadIdx.x - r;
        sKeys[dst] = key;
        sVals[dst] = val;
        __syncthreads();
        key = sKeys[threadIdx.x];
        val = sVals[threadIdx.x];
        __syncthreads();
    }
    keysOut[i] = key;
    valuesOut[i] = val;
}

extern "C" __global__ void findRadixOffsets(const uint* keys, uint* counters, uint* blockOffsets,
                                            uint startbit, uint numElements, uint totalBlocks)
{
    __shared__ uint sRadix1[RS_CTA];
    __shared__ uint sStartPointers[RS_DIGITS];
    uint blockId = blockIdx.x;
    uint i = blockId * RS_CTA + threadIdx.x;
    uint radix = (keys[i] >> startbit) & (RS_DIGITS - 1);
    sRadix1[threadIdx.x] = radix;
    if (threadIdx.x < RS_DIGITS)
        sStartPointers[threadIdx.x] = 0;
    __syncthreads();
    if ((threadIdx.x > 0) && (sRadix1[threadIdx.x] != sRadix1[threadIdx.x - 1]))
        sStartPointers[sRadix1[threadIdx.x]] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x < RS_DIGITS)
        blockOffsets[blockId * RS_DIGITS + threadIdx.x] = sStartPointers[threadIdx.x];
    __syncthreads();
    if ((threadIdx.x > 0) && (sRadix1[threadIdx.x] != sRadix1[threadIdx.x - 1]))
        sStartPointers[sRadix1[threadIdx.x - 1]] =
            threadIdx.x - sStartPointers[sRadix1[threadIdx.x - 1]];
    if (threadIdx.x == RS_CTA - 1)
        sStartPointers[sRadix1[RS_CTA - 1]] = RS_CTA - sStartPointers[sRadix1[RS_CTA - 1]];
    __syncthreads();
    if (threadIdx.x < RS_DIGITS)
        counters[threadIdx.x * totalBlocks + blockId] = sStartPointers[threadIdx.x];
}

extern "C" __global__ void reorderData(uint startbit, uint* outKeys, uint* outValues,
                                       const uint* keys, const uint* values,
                                       const uint* blockOffsets, const uint* offsets,
                                       uint totalBlocks)
{
    uint blockId = blockIdx.x;
    uint i = blockId * RS_CTA + threadIdx.x;
    uint key = keys[i];
    uint radix = (key >> startbit) & (RS_DIGITS - 1);
    uint globalOffset = offsets[radix * totalBlocks + blockId] + threadIdx.x -
                        blockOffsets[blockId * RS_DIGITS + radix];
    outKeys[globalOffset] = key;
    outValues[globalOffset] = values[i];
}
