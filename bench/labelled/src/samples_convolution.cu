// Separable 2D convolution, as the cuda-samples convolutionSeparable sample runs it: the
// 17-tap filter in constant memory; the row pass loads 8 result tiles plus a one-tile halo on
// each side per 16x4 block into shared memory (halo pixels outside the image read as 0), the
// column pass does the same along y with 16x8 blocks. Out of place.
// Imitates: NVIDIA cuda-samples convolutionSeparable, convolutionRowsKernel /
// convolutionColumnsKernel (Samples/2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable.cu).

#define CS_KERNEL_RADIUS 8
#define CS_KERNEL_LENGTH (2 * CS_KERNEL_RADIUS + 1)
#define CS_ROWS_BLOCKDIM_X 16
#define CS_ROWS_BLOCKDIM_Y 4
#define CS_ROWS_RESULT_STEPS 8
#define CS_ROWS_HALO_STEPS 1
#define CS_COLUMNS_BLOCKDIM_X 16
#define CS_COLUMNS_BLOCKDIM_Y 8
#define CS_COLUMNS_RESULT_STEPS 8
#define CS_COLUMNS_HALO_STEPS 1

__constant__ float c_Kernel[CS_KERNEL_LENGTH];

extern "C" __global__ void convolutionRowsKernel(float* d_Dst, const float* d_Src, int imageW,
                                                 int imageH, int pitch)
{
    __shared__ float s_Data[CS_ROWS_BLOCKDIM_Y]
                           [(CS_ROWS_RESULT_STEPS + 2 * CS_ROWS_HALO_STEPS) * CS_ROWS_BLOCKDIM_X];
    const int baseX = (blockIdx.x * CS_ROWS_RESULT_STEPS - CS_ROWS_HALO_STEPS) * CS_ROWS_BLOCKDIM_X +
                      threadIdx.x;
    const int baseY = blockIdx.y * CS_ROWS_BLOCKDIM_Y + threadIdx.y;
    d_Src += baseY * pitch + baseX;
    d_Dst += baseY * pitch + baseX;
#pragma unroll
    for (int i = CS_ROWS_HALO_STEPS; i < CS_ROWS_HALO_STEPS + CS_ROWS_RESULT_STEPS; i++)
        s_Data[threadIdx.y][threadIdx.x + i * CS_ROWS_BLOCKDIM_X] = d_Src[i * CS_ROWS_BLOCKDIM_X];
#pragma unroll
    for (int i = 0; i < CS_ROWS_HALO_STEPS; i++)
        s_Data[threadIdx.y][threadIdx.x + i * CS_ROWS_BLOCKDIM_X] =
            (baseX >= -i * CS_ROWS_BLOCKDIM_X) ? d_Src[i * CS_ROWS_BLOCKDIM_X] : 0;
#pragma unroll
    for (int i = CS_ROWS_HALO_STEPS + CS_ROWS_RESULT_STEPS;
         i < CS_ROWS_HALO_STEPS + CS_ROWS_RESULT_STEPS + CS_ROWS_HALO_STEPS; i++)
        s_Data[threadIdx.y][threadIdx.x + i * CS_ROWS_BLOCKDIM_X] =
            (imageW - baseX > i * CS_ROWS_BLOCKDIM_X) ? d_Src[i * CS_ROWS_BLOCKDIM_X] : 0;
    __syncthreads();
#pragma unroll
    for (int i = CS_ROWS_HALO_STEPS; i < CS_ROWS_HALO_STEPS + CS_ROWS_RESULT_STEPS; i++) {
        float sum = 0;
#pragma unroll
        for (int j = -CS_KERNEL_RADIUS; j <= CS_KERNEL_RADIUS; j++)
            sum += c_Kernel[CS_KERNEL_RADIUS - j] *
                   s_Data[threadIdx.y][threadIdx.x + i * CS_ROWS_BLOCKDIM_X + j];
        d_Dst[i * CS_ROWS_BLOCKDIM_X] = sum;
    }
}

extern "C" __global__ void convolutionColumnsKernel(float* d_Dst, const float* d_Src, int imageW,
                                                    int imageH, int pitch)
{
    __shared__ float s_Data[CS_COLUMNS_BLOCKDIM_X][(CS_COLUMNS_RESULT_STEPS +
                                                    2 * CS_COLUMNS_HALO_STEPS) *
                                                       CS_COLUMNS_BLOCKDIM_Y + 1];
    const int baseX = blockIdx.x * CS_COLUMNS_BLOCKDIM_X + threadIdx.x;
    const int baseY = (blockIdx.y * CS_COLUMNS_RESULT_STEPS - CS_COLUMNS_HALO_STEPS) *
                          CS_COLUMNS_BLOCKDIM_Y + threadIdx.y;
    d_Src += baseY * pitch + baseX;
    d_Dst += baseY * pitch + baseX;
#pragma unroll
    for (int i = CS_COLUMNS_HALO_STEPS; i < CS_COLUMNS_HALO_STEPS + CS_COLUMNS_RESULT_STEPS; i++)
        s_Data[threadIdx.x][threadIdx.y + i * CS_COLUMNS_BLOCKDIM_Y] =
            d_Src[i * CS_COLUMNS_BLOCKDIM_Y * pitch];
#pragma unroll
    for (int i = 0; i < CS_COLUMNS_HALO_STEPS; i++)
        s_Data[threadIdx.x][threadIdx.y + i * CS_COLUMNS_BLOCKDIM_Y] =
            (baseY >= -i * CS_COLUMNS_BLOCKDIM_Y) ? d_Src[i * CS_COLUMNS_BLOCKDIM_Y * pitch] : 0;
#pragma unroll
    for (int i = CS_COLUMNS_HALO_STEPS + CS_COLUMNS_RESULT_STEPS;
         i < CS_COLUMNS_HALO_STEPS + CS_COLUMNS_RESULT_STEPS + CS_COLUMNS_HALO_STEPS; i++)
        s_Data[threadIdx.x][threadIdx.y + i * CS_COLUMNS_BLOCKDIM_Y] =
            (imageH - baseY > i * CS_COLUMNS_BLOCKDIM_Y) ? d_Src[i * CS_COLUMNS_BLOCKDIM_Y * pitch] : 0;
    __syncthreads();
#pragma unroll
    for (int i = CS_COLUMNS_HALO_STEPS; i < CS_COLUMNS_HALO_STEPS + CS_COLUMNS_RESULT_STEPS; i++) {
        float sum = 0;
#pragma unroll
        for (int j = -CS_KERNEL_RADIUS; j <= CS_KERNEL_RADIUS; j++)
            sum += c_Kernel[CS_KERNEL_RADIUS - j] *
                   s_Data[threadIdx.x][threadIdx.y + i * CS_COLUMNS_BLOCKDIM_Y + j];
        d_Dst[i * CS_COLUMNS_BLOCKDIM_Y * pitch] = sum;
    }
}
