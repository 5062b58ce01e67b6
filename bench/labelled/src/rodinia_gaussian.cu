// Gaussian elimination, as Rodinia gaussian runs it: for pivot row t, Fan1 computes the
// multipliers of the rows below it into m, Fan2 subtracts the scaled pivot row from every
// row below it in a (row, column) grid, updating a and b in place.
// Imitates: Rodinia 3.1 gaussian, Fan1 / Fan2 (cuda/gaussian/gaussian.cu).

extern "C" __global__ void gaussian_fan1(float* m_cuda, const float* a_cuda, int Size, int t)
{
    if (threadIdx.x + blockIdx.x * blockDim.x >= Size - 1 - t)
        return;
    *(m_cuda + Size * (blockDim.x * blockIdx.x + threadIdx.x + t + 1) + t) =
        *(a_cuda + Size * (blockDim.x * blockIdx.x + threadIdx.x + t + 1) + t) /
        *(a_cuda + Size * t + t);
}

extern "C" __global__ void gaussian_fan2(const float* m_cuda, float* a_cuda, float* b_cuda,
                                         int Size, int j1, int t)
{
    if (threadIdx.x + blockIdx.x * blockDim.x >= Size - 1 - t)
        return;
    if (threadIdx.y + blockIdx.y * blockDim.y >= Size - t)
        return;
    int xidx = blockIdx.x * blockDim.x + threadIdx.x;
    int yidx = blockIdx.y * blockDim.y + threadIdx.y;
    a_cuda[Size * (xidx + 1 + t) + (yidx + t)] -=
        m_cuda[Size * (xidx + 1 + t) + t] * a_cuda[Size * t + (yidx + t)];
    if (yidx == 0)
        b_cuda[xidx + 1 + t] -= m_cuda[Size * (xidx + 1 + t) + (yidx + t)] * b_cuda[t];
}
