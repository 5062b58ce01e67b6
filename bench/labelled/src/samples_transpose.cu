// Matrix transpose, as the cuda-samples transpose sample runs it: 32x32 tiles, 32x8 threads,
// each thread handling TILE_DIM / BLOCK_ROWS rows; the naive kernel writes with a stride, the
// coalesced one stages the tile in padded shared memory.
// Imitates: NVIDIA cuda-samples transpose, transposeNaive / transposeCoalesced
// (Samples/6_Performance/transpose/transpose.cu).

#define TR_TILE_DIM 32
#define TR_BLOCK_ROWS 8

extern "C" __global__ void transposeNaive(float* odata, const float* idata, int width, int height)
{
    int xIndex = blockIdx.x * TR_TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TR_TILE_DIM + threadIdx.y;
    int index_in = xIndex + width * yIndex;
    int index_out = yIndex + height * xIndex;
    for (int i = 0; i < TR_TILE_DIM; i += TR_BLOCK_ROWS)
        odata[index_out + i] = idata[index_in + i * width];
}

extern "C" __global__ void transposeCoalesced(float* odata, const float* idata, int width,
                                              int height)
{
    __shared__ float tile[TR_TILE_DIM][TR_TILE_DIM + 1];
    int xIndex = blockIdx.x * TR_TILE_DIM + threadIdx.x;
    int yIndex = blockIdx.y * TR_TILE_DIM + threadIdx.y;
    int index_in = xIndex + (yIndex)*width;
    xIndex = blockIdx.y * TR_TILE_DIM + threadIdx.x;
    yIndex = blockIdx.x * TR_TILE_DIM + threadIdx.y;
    int index_out = xIndex + (yIndex)*height;
    for (int i = 0; i < TR_TILE_DIM; i += TR_BLOCK_ROWS)
        tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
    __syncthreads();
    for (int i = 0; i < TR_TILE_DIM; i += TR_BLOCK_ROWS)
        odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
}
