// Dynamic programming over a grid, as Rodinia pathfinder runs it: each block of 256 threads
// owns a column strip with a halo of `iteration` columns on each side, walks `iteration` rows
// of the wall in shared memory, and writes the surviving inner columns to the result row.
// The host swaps the source and result buffers between launches.
// Imitates: Rodinia 3.1 pathfinder, dynproc_kernel (cuda/pathfinder/pathfinder.cu).

#define PF_BLOCK 256
#define PF_HALO 1
#define PF_IN_RANGE(x, lo, hi) (((x) >= (lo)) && ((x) <= (hi)))
#define PF_CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : ((x) > (hi) ? (hi) : (x)))
#define PF_MIN(a, b) ((a) <= (b) ? (a) : (b))

extern "C" __global__ void dynproc_kernel(int iteration, const int* gpuWall, const int* gpuSrc,
                                          int* gpuResults, int cols, int rows, int startStep,
                                          int border)
{
    __shared__ int prev[PF_BLOCK];
    __shared__ int result[PF_BLOCK];

    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int small_block_cols = PF_BLOCK - iteration * PF_HALO * 2;
    int blkX = small_block_cols * bx - border;
    int blkXmax = blkX + PF_BLOCK - 1;
    int xidx = blkX + tx;
    int validXmin = (blkX < 0) ? -blkX : 0;
    int validXmax = (blkXmax > cols - 1) ? PF_BLOCK - 1 - (blkXmax - cols + 1) : PF_BLOCK - 1;
    int W = tx - 1;
    int E = tx + 1;
    W = (W < validXmin) ? validXmin : W;
    E = (E > validXmax) ? validXmax : E;
    bool isValid = PF_IN_RANGE(tx, validXmin, validXmax);

    if (PF_IN_RANGE(xidx, 0, cols - 1))
        prev[tx] = gpuSrc[xidx];
    __syncthreads();
    bool computed = false;
    for (int i = 0; i < iteration; i++) {
        computed = false;
        if (PF_IN_RANGE(tx, i + 1, PF_BLOCK - i - 2) && isValid) {
            computed = true;
            int left = prev[W];
            int up = prev[tx];
            int right = prev[E];
            int shortest = PF_MIN(left, up);
            shortest = PF_MIN(shortest, right);
            int index = cols * (startStep + i) + xidx;
            result[tx] = shortest + gpuWall[index];
        }
        __syncthreads();
        if (i == iteration - 1)
            break;
        if (computed)
            prev[tx] = result[tx];
        __syncthreads();
    }
    if (computed)
        gpuResults[xidx] = result[tx];
}
