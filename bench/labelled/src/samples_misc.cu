// Smaller cuda-samples kernels: every global atomic intrinsic on one array
// (simpleAtomicIntrinsics), a single-pass reduction whose last block, elected by an atomic
// ticket on a module-scope counter, sums the per-block results (threadFenceReduction), a
// horizontal box filter over image rows with a running sum (boxFilter), and one radix-4 step
// of the fast Walsh-Hadamard transform (fastWalshTransform; the sample calls it in place).
// Imitates: NVIDIA cuda-samples simpleAtomicIntrinsics (simpleAtomicIntrinsics_kernel.cuh,
// testKernel), threadFenceReduction (threadFenceReduction_kernel.cuh, reduceSinglePass),
// boxFilter (boxFilter_kernel.cu, d_boxfilter_x_global) and fastWalshTransform
// (fastWalshTransform_kernel.cuh, fwtBatch2Kernel).

extern "C" __global__ void atomicIntrinsicsKernel(int* g_odata)
{
    const unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    atomicAdd(&g_odata[0], 10);
    atomicExch(&g_odata[1], tid);
    atomicMax(&g_odata[2], tid);
    atomicMin(&g_odata[3], tid);
    atomicInc((unsigned int*)&g_odata[4], 17);
    atomicDec((unsigned int*)&g_odata[5], 137);
    atomicCAS(&g_odata[6], tid - 1, tid);
    atomicAnd(&g_odata[7], 2 * tid + 7);
    atomicOr(&g_odata[8], 1 << tid);
    atomicXor(&g_odata[9], tid);
}

#define TF_BLOCK 128

__device__ unsigned int retirementCount = 0;

extern "C" __global__ void reduceSinglePass(const float* g_idata, float* g_odata, unsigned int n)
{
    __shared__ float sdata[TF_BLOCK];
    __shared__ bool amLast;
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (TF_BLOCK * 2) + threadIdx.x;
    unsigned int gridSize = TF_BLOCK * 2 * gridDim.x;
    float mySum = 0;
    while (i < n) {
        mySum += g_idata[i];
        if (i + TF_BLOCK < n)
            mySum += g_idata[i + TF_BLOCK];
        i += gridSize;
    }
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = TF_BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        g_odata[blockIdx.x] = sdata[0];
    if (gridDim.x > 1) {
        __threadfence();
        if (tid == 0) {
            unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
            amLast = (ticket == gridDim.x - 1);
        }
        __syncthreads();
        if (amLast) {
            i = tid;
            mySum = 0;
            while (i < gridDim.x) {
                mySum += g_odata[i];
                i += TF_BLOCK;
            }
            sdata[tid] = mySum;
            __syncthreads();
            for (unsigned int s = TF_BLOCK / 2; s > 0; s >>= 1) {
                if (tid < s)
                    sdata[tid] = mySum = mySum + sdata[tid + s];
                __syncthreads();
            }
            if (tid == 0) {
                g_odata[0] = sdata[0];
                retirementCount = 0;
            }
        }
    }
}

__device__ void bf_boxfilter_x(const float* id, float* od, int w, int h, int r)
{
    float scale = 1.0f / (float)((r << 1) + 1);
    float t = id[0] * r;
    for (int x = 0; x < (r + 1); x++)
        t += id[x];
    od[0] = t * scale;
    for (int x = 1; x < (r + 1); x++) {
        t += id[x + r];
        t -= id[0];
        od[x] = t * scale;
    }
    for (int x = (r + 1); x < w - r; x++) {
        t += id[x + r];
        t -= id[x - r - 1];
        od[x] = t * scale;
    }
    for (int x = w - r; x < w; x++) {
        t += id[w - 1];
        t -= id[x - r - 1];
        od[x] = t * scale;
    }
}

extern "C" __global__ void d_boxfilter_x_global(const float* id, float* od, int w, int h, int r)
{
    unsigned int y = blockIdx.x * blockDim.x + threadIdx.x;
    bf_boxfilter_x(&id[y * w], &od[y * w], w, h, r);
}

extern "C" __global__ void fwtBatch2Kernel(float* d_Output, const float* d_Input, int stride)
{
    const int pos = blockIdx.x * blockDim.x + threadIdx.x;
    const int N = blockDim.x * gridDim.x * 4;
    const float* d_Src = d_Input + blockIdx.y * N;
    float* d_Dst = d_Output + blockIdx.y * N;
    int lo = pos & (stride - 1);
    int i0 = ((pos - lo) << 2) + lo;
    int i1 = i0 + stride;
    int i2 = i1 + stride;
    int i3 = i2 + stride;
    float D0 = d_Src[i0];
    float D1 = d_Src[i1];
    float D2 = d_Src[i2];
    float D3 = d_Src[i3];
    float T;
    T = D0; D0 = D0 + D2; D2 = T - D2;
    T = D1; D1 = D1 + D3; D3 = T - D3;
    T = D0; d_Dst[i0] = D0 + D1; d_Dst[i1] = T - D1;
    T = D2; d_Dst[i2] = D2 + D3; d_Dst[i3] = T - D3;
}
