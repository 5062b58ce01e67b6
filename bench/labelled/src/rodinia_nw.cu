// Needleman-Wunsch alignment, as Rodinia nw runs it: the score matrix is processed in 16x16
// tiles along anti-diagonals, one launch per diagonal (blocks of the upper-left triangle in
// the first kernel, of the lower-right triangle in the second). Each block loads the row above
// and the column left of its tile and the reference scores into shared memory, fills its tile
// in a wavefront, and writes the tile back into the score matrix.
// Imitates: Rodinia 3.1 nw, needle_cuda_shared_1 / needle_cuda_shared_2 (cuda/nw/needle_kernel.cu).

#define NW_BLOCK 16

__device__ int nw_maximum(int a, int b, int c)
{
    int k = (a <= b) ? b : a;
    return (k <= c) ? c : k;
}

__device__ void nw_tile(const int* referrence, int* matrix_cuda, int cols, int penalty,
                        int b_index_x, int b_index_y)
{
    int tx = threadIdx.x;
    int index = cols * NW_BLOCK * b_index_y + NW_BLOCK * b_index_x + tx + (cols + 1);
    int index_n = cols * NW_BLOCK * b_index_y + NW_BLOCK * b_index_x + tx + (1);
    int index_w = cols * NW_BLOCK * b_index_y + NW_BLOCK * b_index_x + (cols);
    int index_nw = cols * NW_BLOCK * b_index_y + NW_BLOCK * b_index_x;

    __shared__ int temp[NW_BLOCK + 1][NW_BLOCK + 1];
    __shared__ int ref[NW_BLOCK][NW_BLOCK];

    if (tx == 0)
        temp[tx][0] = matrix_cuda[index_nw];
    for (int ty = 0; ty < NW_BLOCK; ty++)
        ref[ty][tx] = referrence[index + cols * ty];
    __syncthreads();
    temp[tx + 1][0] = matrix_cuda[index_w + cols * tx];
    __syncthreads();
    temp[0][tx + 1] = matrix_cuda[index_n];
    __syncthreads();

    for (int m = 0; m < NW_BLOCK; m++) {
        if (tx <= m) {
            int x = tx + 1, y = m - tx + 1;
            temp[y][x] = nw_maximum(temp[y - 1][x - 1] + ref[y - 1][x - 1],
                                    temp[y][x - 1] - penalty, temp[y - 1][x] - penalty);
        }
        __syncthreads();
    }
    for (int m = NW_BLOCK - 2; m >= 0; m--) {
        if (tx <= m) {
            int x = tx + NW_BLOCK - m, y = NW_BLOCK - tx;
            temp[y][x] = nw_maximum(temp[y - 1][x - 1] + ref[y - 1][x - 1],
                                    temp[y][x - 1] - penalty, temp[y - 1][x] - penalty);
        }
        __syncthreads();
    }
    for (int ty = 0; ty < NW_BLOCK; ty++)
        matrix_cuda[index + ty * cols] = temp[ty + 1][tx + 1];
}

extern "C" __global__ void needle_cuda_shared_1(const int* referrence, int* matrix_cuda, int cols,
                                                int penalty, int i, int block_width)
{
    int bx = blockIdx.x;
    nw_tile(referrence, matrix_cuda, cols, penalty, bx, i - 1 - bx);
}

extern "C" __global__ void needle_cuda_shared_2(const int* referrence, int* matrix_cuda, int cols,
                                                int penalty, int i, int block_width)
{
    int bx = blockIdx.x;
    nw_tile(referrence, matrix_cuda, cols, penalty, bx + block_width - i, block_width - bx - 1);
}
