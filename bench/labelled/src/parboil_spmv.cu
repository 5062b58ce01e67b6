// Sparse matrix-vector product in JDS format, as Parboil spmv runs it: one thread per
// (permuted) row, the column-start table of the jagged diagonals and the per-warp diagonal
// counts in constant memory, the result scattered through the row permutation.
// Imitates: Parboil spmv, spmv_jds (benchmarks/spmv/src/cuda/jds_kernels.cu), without the
// software prefetching of the next element.

#define SP_WARP_BITS 5
#define SP_MAX_DIAGS 512
#define SP_MAX_WARPS 512

__constant__ int jds_ptr_int[SP_MAX_DIAGS];
__constant__ int sh_zcnt_int[SP_MAX_WARPS];

extern "C" __global__ void spmv_jds(float* dst_vector, const float* d_data, const int* d_index,
                                    const int* d_perm, const float* x_vec, const int dim)
{
    int ix = blockIdx.x * blockDim.x + threadIdx.x;
    int warp_id = ix >> SP_WARP_BITS;
    if (ix < dim) {
        float sum = 0.0f;
        int bound = sh_zcnt_int[warp_id];
        for (int k = 0; k < bound; k++) {
            int j = jds_ptr_int[k] + ix;
            float d = d_data[j];
            int i = d_index[j];
            sum += d * x_vec[i];
        }
        dst_vector[d_perm[ix]] = sum;
    }
}
