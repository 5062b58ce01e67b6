// MRI non-Cartesian gridding, as Parboil mri-gridding prepares its samples: binning computes
// each sample's grid cell and reserves a slot in that cell's counter with a global atomic add
// (giving it back with an atomic subtract when the cell is full); after the sort, reorder
// gathers the samples into sorted order through the sorted index array.
// Imitates: Parboil mri-gridding, binning_kernel / reorder_kernel
// (benchmarks/mri-gridding/src/cuda/GPU_kernels.cu).

struct ReconstructionSample {
    float real;
    float imag;
    float kX;
    float kY;
    float kZ;
    float sdc;
};

__constant__ int gridSize_c[3];
__constant__ int size_xy_c;

extern "C" __global__ void mrig_binning(unsigned int n, const ReconstructionSample* sample_g,
                                        unsigned int* idxKey_g, unsigned int* idxValue_g,
                                        unsigned int* binCount_g, unsigned int binsize,
                                        unsigned int gridNumElems)
{
    unsigned int sampleIdx = blockIdx.x * blockDim.x + threadIdx.x;
    if (sampleIdx < n) {
        ReconstructionSample pt = sample_g[sampleIdx];
        unsigned int binIdx = (unsigned int)(pt.kZ) * size_xy_c +
                              (unsigned int)(pt.kY) * gridSize_c[0] + (unsigned int)(pt.kX);
        unsigned int key;
        if (binCount_g[binIdx] < binsize) {
            unsigned int count = atomicAdd(binCount_g + binIdx, 1);
            if (count < binsize) {
                key = binIdx;
            } else {
                atomicSub(binCount_g + binIdx, 1);
                key = gridNumElems;
            }
        } else {
            key = gridNumElems;
        }
        idxKey_g[sampleIdx] = key;
        idxValue_g[sampleIdx] = sampleIdx;
    }
}

extern "C" __global__ void mrig_reorder(int n, const unsigned int* idxValue_g,
                                        const ReconstructionSample* samples_g,
                                        ReconstructionSample* sortedSample_g)
{
    unsigned int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index < n) {
        unsigned int old_index = idxValue_g[index];
        ReconstructionSample pt = samples_g[old_index];
        sortedSample_g[index] = pt;
    }
}
