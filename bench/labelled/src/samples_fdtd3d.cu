// 3D finite-difference time-domain stencil of radius 4, as the cuda-samples FDTD3d sample runs
// it: a 2D grid of threads marches along z keeping the values in front and behind in
// registers, the current xy plane with its halo staged in shared memory, coefficients in
// constant memory; the volume is padded by RADIUS on every side and the output is written only
// for inner points.
// Imitates: NVIDIA cuda-samples FDTD3d, FiniteDifferencesKernel
// (Samples/5_Domain_Specific/FDTD3d/inc/FDTD3dGPUKernel.cuh).

#define FD_RADIUS 4
#define FD_BLOCKDIMX 32
#define FD_BLOCKDIMY_MAX 16

__constant__ float stencil[FD_RADIUS + 1];

extern "C" __global__ void FiniteDifferencesKernel(float* output, const float* input,
                                                   const int dimx, const int dimy,
                                                   const int dimz)
{
    bool validr = true, validw = true;
    const int gtidx = blockIdx.x * blockDim.x + threadIdx.x;
    const int gtidy = blockIdx.y * blockDim.y + threadIdx.y;
    const int ltidx = threadIdx.x, ltidy = threadIdx.y;
    const int workx = blockDim.x, worky = blockDim.y;
    __shared__ float tile[FD_BLOCKDIMY_MAX + 2 * FD_RADIUS][FD_BLOCKDIMX + 2 * FD_RADIUS];
    const int stride_y = dimx + 2 * FD_RADIUS;
    const int stride_z = stride_y * (dimy + 2 * FD_RADIUS);
    int inputIndex = FD_RADIUS * stride_y + FD_RADIUS;
    int outputIndex = 0;
    inputIndex += gtidy * stride_y + gtidx;
    float infront[FD_RADIUS];
    float behind[FD_RADIUS];
    float current = 0.0f;
    const int tx = ltidx + FD_RADIUS;
    const int ty = ltidy + FD_RADIUS;
    if ((gtidx >= dimx + FD_RADIUS) || (gtidy >= dimy + FD_RADIUS))
        validr = false;
    if ((gtidx >= dimx) || (gtidy >= dimy))
        validw = false;
    for (int i = FD_RADIUS - 2; i >= 0; i--) {
        if (validr)
            behind[i] = input[inputIndex];
        inputIndex += stride_z;
    }
    if (validr)
        current = input[inputIndex];
    outputIndex = inputIndex;
    inputIndex += stride_z;
    for (int i = 0; i < FD_RADIUS; i++) {
        if (validr)
            infront[i] = input[inputIndex];
        inputIndex += stride_z;
    }
    for (int iz = 0; iz < dimz; iz++) {
        for (int i = FD_RADIUS - 1; i > 0; i--)
            behind[i] = behind[i - 1];
        behind[0] = current;
        current = infront[0];
#pragma unroll
        for (int i = 0; i < FD_RADIUS - 1; i++)
            infront[i] = infront[i + 1];
        if (validr)
            infront[FD_RADIUS - 1] = input[inputIndex];
        inputIndex += stride_z;
        outputIndex += stride_z;
        __syncthreads();
        if (ltidy < FD_RADIUS) {
            tile[ltidy][tx] = input[outputIndex - FD_RADIUS * stride_y];
            tile[ltidy + worky + FD_RADIUS][tx] = input[outputIndex + worky * stride_y];
        }
        if (ltidx < FD_RADIUS) {
            tile[ty][ltidx] = input[outputIndex - FD_RADIUS];
            tile[ty][ltidx + workx + FD_RADIUS] = input[outputIndex + workx];
        }
        tile[ty][tx] = current;
        __syncthreads();
        float value = stencil[0] * current;
#pragma unroll
        for (int i = 1; i <= FD_RADIUS; i++)
            value += stencil[i] * (infront[i - 1] + behind[i - 1] + tile[ty - i][tx] +
                                   tile[ty + i][tx] + tile[ty][tx - i] + tile[ty][tx + i]);
        if (validw)
            output[outputIndex] = value;
    }
}
