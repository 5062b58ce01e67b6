// Two-point angular correlation, as Parboil tpacf runs it: each block correlates one data set
// (the observed set against itself, or against one random set), bins the dot products by a
// binary search over the bin boundaries held in constant memory, counts them in per-warp
// shared histograms with shared atomics, reduces those, and writes its own row of the
// histogram array.
// Imitates: Parboil tpacf, gen_hists (benchmarks/tpacf/src/cuda/tpacf_kernel.cu), with fewer bins.

#define TP_BLOCK 128
#define TP_NUM_BINS 20
#define TP_WARP 32
#define TP_NUM_HIST (TP_BLOCK / TP_WARP)

__constant__ float dev_binb[TP_NUM_BINS + 1];

extern "C" __global__ void tpacf_gen_hists(unsigned int* histograms, const float* all_x_data,
                                           const float* all_y_data, const float* all_z_data,
                                           int NUM_SETS, int NUM_ELEMENTS)
{
    unsigned int bx = blockIdx.x;
    unsigned int tid = threadIdx.x;
    bool do_self = (bx < (NUM_SETS + 1));
    const float *data_x, *data_y, *data_z, *random_x, *random_y, *random_z;
    __shared__ float3 data_s[TP_BLOCK];
    __shared__ unsigned int warp_hists[TP_NUM_BINS][TP_NUM_HIST];

    for (unsigned int w = tid; w < TP_NUM_BINS * TP_NUM_HIST; w += TP_BLOCK)
        warp_hists[w / TP_NUM_HIST][w % TP_NUM_HIST] = 0;
    if (!do_self) {
        data_x = all_x_data;
        data_y = all_y_data;
        data_z = all_z_data;
        random_x = all_x_data + NUM_ELEMENTS * (bx - NUM_SETS);
        random_y = all_y_data + NUM_ELEMENTS * (bx - NUM_SETS);
        random_z = all_z_data + NUM_ELEMENTS * (bx - NUM_SETS);
    } else {
        random_x = all_x_data + NUM_ELEMENTS * bx;
        random_y = all_y_data + NUM_ELEMENTS * bx;
        random_z = all_z_data + NUM_ELEMENTS * bx;
        data_x = random_x;
        data_y = random_y;
        data_z = random_z;
    }
    for (unsigned int i = 0; i < NUM_ELEMENTS; i += TP_BLOCK) {
        __syncthreads();
        if (tid + i < NUM_ELEMENTS)
            data_s[tid] = make_float3(data_x[tid + i], data_y[tid + i], data_z[tid + i]);
        __syncthreads();
        for (unsigned int j = (do_self ? i + 1 : 0); j < NUM_ELEMENTS; j += TP_BLOCK) {
            float rx = 0.0f, ry = 0.0f, rz = 0.0f;
            if (tid + j < NUM_ELEMENTS) {
                rx = random_x[tid + j];
                ry = random_y[tid + j];
                rz = random_z[tid + j];
            }
            for (unsigned int k = 0; (k < TP_BLOCK) && (k + i < NUM_ELEMENTS); k += 1) {
                float distance = data_s[k].x * rx + data_s[k].y * ry + data_s[k].z * rz;
                unsigned int min = 0, max = TP_NUM_BINS;
                while (max > min + 1) {
                    unsigned int k2 = (min + max) / 2;
                    if (distance >= dev_binb[k2])
                        max = k2;
                    else
                        min = k2;
                }
                unsigned int bin_index = max - 1;
                unsigned int warpnum = tid / TP_WARP;
                if ((distance < dev_binb[min]) && (distance >= dev_binb[max]) &&
                    (!do_self || (tid + j > i + k)) && (tid + j < NUM_ELEMENTS))
                    atomicAdd(&warp_hists[bin_index][warpnum], 1U);
            }
        }
    }
    __syncthreads();
    unsigned int* hist_base = histograms + TP_NUM_BINS * bx;
    for (unsigned int b = tid; b < TP_NUM_BINS; b += TP_BLOCK) {
        unsigned int sum = 0;
        for (int w = 0; w < TP_NUM_HIST; w++)
            sum += warp_hists[b][w];
        hist_base[b] = sum;
    }
}
