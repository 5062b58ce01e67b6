// 8x8 DCT of an image, as the cuda-samples dct8x8 sample runs its second kernel family: a
// 32x16 pixel tile per block staged in shared memory, the 1D DCT applied to rows and then to
// columns in place in shared memory, the result written to the destination image; then the
// coefficients are quantised in place, one thread per coefficient.
// Imitates: NVIDIA cuda-samples dct8x8, CUDAkernel2DCT (dct8x8_kernel2.cuh) and
// CUDAkernelQuantizationFloat (dct8x8_kernel_quantization.cuh).

#define DC_BLOCK_SIZE 8
#define DC_KER2_BLOCK_WIDTH 32
#define DC_KER2_BLOCK_HEIGHT 16
#define DC_KER2_SMEMBLOCK_STRIDE (DC_KER2_BLOCK_WIDTH + 1)

__constant__ float c_DCTcoef[DC_BLOCK_SIZE * DC_BLOCK_SIZE];
__constant__ short c_Q[DC_BLOCK_SIZE * DC_BLOCK_SIZE];

__device__ void dc_inplace_dct_vector(float* vec, int step)
{
    float in[DC_BLOCK_SIZE];
    for (int k = 0; k < DC_BLOCK_SIZE; k++)
        in[k] = vec[k * step];
    for (int u = 0; u < DC_BLOCK_SIZE; u++) {
        float s = 0.0f;
        for (int k = 0; k < DC_BLOCK_SIZE; k++)
            s += c_DCTcoef[u * DC_BLOCK_SIZE + k] * in[k];
        vec[u * step] = s;
    }
}

extern "C" __global__ void CUDAkernel2DCT(float* dst, const float* src, int ImgStride)
{
    __shared__ float block[DC_KER2_BLOCK_HEIGHT * DC_KER2_SMEMBLOCK_STRIDE];
    int OffsThreadInRow = threadIdx.y * DC_BLOCK_SIZE + threadIdx.x;
    int OffsThreadInCol = threadIdx.z * DC_BLOCK_SIZE;
    src += __mul24(blockIdx.y * DC_KER2_BLOCK_HEIGHT + OffsThreadInCol, ImgStride) +
           blockIdx.x * DC_KER2_BLOCK_WIDTH + OffsThreadInRow;
    dst += __mul24(blockIdx.y * DC_KER2_BLOCK_HEIGHT + OffsThreadInCol, ImgStride) +
           blockIdx.x * DC_KER2_BLOCK_WIDTH + OffsThreadInRow;
    float* bl_ptr = block + OffsThreadInCol * DC_KER2_SMEMBLOCK_STRIDE + OffsThreadInRow;
#pragma unroll
    for (unsigned int i = 0; i < DC_BLOCK_SIZE; i++)
        bl_ptr[i * DC_KER2_SMEMBLOCK_STRIDE] = src[i * ImgStride];
    __syncthreads();
    dc_inplace_dct_vector(block + (OffsThreadInCol + threadIdx.x) * DC_KER2_SMEMBLOCK_STRIDE +
                              OffsThreadInRow - threadIdx.x, 1);
    __syncthreads();
    dc_inplace_dct_vector(bl_ptr, DC_KER2_SMEMBLOCK_STRIDE);
    __syncthreads();
#pragma unroll
    for (unsigned int i = 0; i < DC_BLOCK_SIZE; i++)
        dst[i * ImgStride] = bl_ptr[i * DC_KER2_SMEMBLOCK_STRIDE];
}

extern "C" __global__ void CUDAkernelQuantizationFloat(float* SrcDst, int Stride)
{
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    float curCoef = SrcDst[(by * DC_BLOCK_SIZE + ty) * Stride + (bx * DC_BLOCK_SIZE + tx)];
    float curQuant = (float)c_Q[ty * DC_BLOCK_SIZE + tx];
    float quantized = roundf(curCoef / curQuant);
    curCoef = quantized * curQuant;
    SrcDst[(by * DC_BLOCK_SIZE + ty) * Stride + (bx * DC_BLOCK_SIZE + tx)] = curCoef;
}
