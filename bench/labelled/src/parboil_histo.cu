// Saturating image histogram, as Parboil histo runs it: a prescan samples the input to find
// the range of bins worth keeping per block (folded across blocks with atomicMin/atomicMax);
// the main kernel accumulates each block's pixels into a shared sub-histogram and merges it
// into the global sub-histograms with global atomic adds; the final kernel reads the global
// histogram and the overflow counters, writes the saturated 8-bit histogram and clears the
// counters for the next frame.
// Imitates: Parboil histo, histo_prescan_kernel / histo_main_kernel / histo_final_kernel
// (benchmarks/histo/src/cuda/), reduced to one sub-histogram layout.

#define HI_PRESCAN_THREADS 64
#define HI_BINS 256

extern "C" __global__ void histo_prescan(const unsigned int* input, int size, unsigned int* minmax)
{
    __shared__ float Avg[HI_PRESCAN_THREADS];
    __shared__ float StdDev[HI_PRESCAN_THREADS];
    int stride = size / gridDim.x;
    int addr = blockIdx.x * stride + threadIdx.x;
    int end = blockIdx.x * stride + stride / 8;
    float avg = 0.0f;
    unsigned int count = 0;
    while (addr < end) {
        avg += input[addr];
        count++;
        addr += blockDim.x;
    }
    avg /= count;
    Avg[threadIdx.x] = avg;
    int addr2 = blockIdx.x * stride + threadIdx.x;
    float stddev = 0;
    while (addr2 < end) {
        stddev += (input[addr2] - avg) * (input[addr2] - avg);
        addr2 += blockDim.x;
    }
    stddev /= count;
    StdDev[threadIdx.x] = sqrtf(stddev);
    for (int s = HI_PRESCAN_THREADS / 2; s >= 1; s >>= 1) {
        __syncthreads();
        if (threadIdx.x < s) {
            Avg[threadIdx.x] += Avg[threadIdx.x + s];
            StdDev[threadIdx.x] += StdDev[threadIdx.x + s];
        }
    }
    if (threadIdx.x == 0) {
        float a = Avg[0] / HI_PRESCAN_THREADS;
        float d = StdDev[0] / HI_PRESCAN_THREADS;
        atomicMin(minmax, ((unsigned int)(a - 10 * d)) / 1024);
        atomicMax(minmax + 1, ((unsigned int)(a + 10 * d)) / 1024);
    }
}

extern "C" __global__ void histo_main(const unsigned int* input, int size,
                                      unsigned int* global_subhisto, unsigned int* global_overflow)
{
    __shared__ unsigned int sub[HI_BINS];
    for (int b = threadIdx.x; b < HI_BINS; b += blockDim.x)
        sub[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < size; i += blockDim.x * gridDim.x) {
        unsigned int bin = input[i];
        if (bin < HI_BINS)
            atomicAdd(&sub[bin], 1u);
        else
            atomicAdd(global_overflow, 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < HI_BINS; b += blockDim.x)
        if (sub[b])
            atomicAdd(&global_subhisto[b], sub[b]);
}

extern "C" __global__ void histo_final(unsigned int histo_size, unsigned int* global_histo,
                                       unsigned int* global_overflow, unsigned char* final_histo)
{
    unsigned int start_offset = threadIdx.x + blockIdx.x * blockDim.x;
    for (unsigned int i = start_offset; i < histo_size; i += gridDim.x * blockDim.x) {
        unsigned int value = global_histo[i] + global_overflow[i];
        global_histo[i] = 0;
        global_overflow[i] = 0;
        final_histo[i] = (unsigned char)min(value, 255u);
    }
}
