// Prefix sums, as the cuda-samples scan and shfl_scan samples compute them.
// scan: each thread loads a uint4, scans it, and the block scans the per-thread totals in
// shared memory (with warp-level inclusive scans); out of place. uniformUpdate then adds each
// block's offset to its elements in place.
// shfl_scan: each thread's value is scanned within its warp with shuffles, warp totals are
// scanned in shared memory, and the result overwrites the input; the last thread of each
// block writes the block total.
// Imitates: NVIDIA cuda-samples scan, scanExclusiveShared / uniformUpdate
// (Samples/2_Concepts_and_Techniques/scan/scan.cu) and shfl_scan, shfl_scan_test
// (Samples/2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu).

#define SC_THREADBLOCK_SIZE 256
#define SC_LOG2_WARP_SIZE 5U
#define SC_WARP_SIZE (1U << SC_LOG2_WARP_SIZE)

typedef unsigned int uint;

__device__ inline uint sc_warpScanInclusive(uint idata, volatile uint* s_Data, uint size)
{
    uint pos = 2 * threadIdx.x - (threadIdx.x & (size - 1));
    s_Data[pos] = 0;
    pos += size;
    s_Data[pos] = idata;
    for (uint offset = 1; offset < size; offset <<= 1) {
        __syncwarp();
        uint t = s_Data[pos] + s_Data[pos - offset];
        __syncwarp();
        s_Data[pos] = t;
    }
    return s_Data[pos];
}

__device__ inline uint sc_warpScanExclusive(uint idata, volatile uint* s_Data, uint size)
{
    return sc_warpScanInclusive(idata, s_Data, size) - idata;
}

__device__ inline uint sc_scan1Inclusive(uint idata, volatile uint* s_Data, uint size)
{
    if (size > SC_WARP_SIZE) {
        uint warpResult = sc_warpScanInclusive(idata, s_Data, SC_WARP_SIZE);
        __syncthreads();
        if ((threadIdx.x & (SC_WARP_SIZE - 1)) == (SC_WARP_SIZE - 1))
            s_Data[threadIdx.x >> SC_LOG2_WARP_SIZE] = warpResult;
        __syncthreads();
        if (threadIdx.x < (SC_THREADBLOCK_SIZE / SC_WARP_SIZE)) {
            uint val = s_Data[threadIdx.x];
            s_Data[threadIdx.x] = sc_warpScanExclusive(val, s_Data, size >> SC_LOG2_WARP_SIZE);
        }
        __syncthreads();
        return warpResult + s_Data[threadIdx.x >> SC_LOG2_WARP_SIZE];
    }
    return sc_warpScanInclusive(idata, s_Data, size);
}

extern "C" __global__ void scanExclusiveShared(uint4* d_Dst, const uint4* d_Src, uint size)
{
    __shared__ uint s_Data[2 * SC_THREADBLOCK_SIZE];
    uint pos = blockIdx.x * blockDim.x + threadIdx.x;
    uint4 idata4 = d_Src[pos];
    idata4.y += idata4.x;
    idata4.z += idata4.y;
    idata4.w += idata4.z;
    uint oval = sc_scan1Inclusive(idata4.w, s_Data, size / 4) - idata4.w;
    uint4 odata4;
    odata4.x = oval;
    odata4.y = oval + idata4.x;
    odata4.z = oval + idata4.y;
    odata4.w = oval + idata4.z;
    d_Dst[pos] = odata4;
}

extern "C" __global__ void uniformUpdate(uint4* d_Data, const uint* d_Buffer)
{
    __shared__ uint buf;
    uint pos = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        buf = d_Buffer[blockIdx.x];
    __syncthreads();
    uint4 data4 = d_Data[pos];
    data4.x += buf;
    data4.y += buf;
    data4.z += buf;
    data4.w += buf;
    d_Data[pos] = data4;
}

extern "C" __global__ void shfl_scan_test(int* data, int width, int* partial_sums)
{
    extern __shared__ int sums[];
    int id = ((blockIdx.x * blockDim.x) + threadIdx.x);
    int lane_id = id % warpSize;
    int warp_id = threadIdx.x / warpSize;
    int value = data[id];
#pragma unroll
    for (int i = 1; i <= width; i *= 2) {
        unsigned int mask = 0xffffffff;
        int n = __shfl_up_sync(mask, value, i, width);
        if (lane_id >= i)
            value += n;
    }
    if (threadIdx.x % warpSize == warpSize - 1)
        sums[warp_id] = value;
    __syncthreads();
    if (warp_id == 0 && lane_id < (blockDim.x / warpSize)) {
        int warp_sum = sums[lane_id];
        int mask = (1 << (blockDim.x / warpSize)) - 1;
        for (int i = 1; i <= (blockDim.x / warpSize); i *= 2) {
            int n = __shfl_up_sync(mask, warp_sum, i, (blockDim.x / warpSize));
            if (lane_id >= i)
                warp_sum += n;
        }
        sums[lane_id] = warp_sum;
    }
    __syncthreads();
    int blockSum = 0;
    if (warp_id > 0)
        blockSum = sums[warp_id - 1];
    value += blockSum;
    data[id] = value;
    if (partial_sums != NULL && threadIdx.x == blockDim.x - 1)
        partial_sums[blockIdx.x] = value;
}
