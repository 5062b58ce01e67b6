// 7-point 3D Jacobi stencil, as Parboil stencil runs it: 2D blocks coarsened twice along x,
// each thread marches along z keeping the planes below and above in registers and the current
// plane in dynamic shared memory; reads A0, writes Anext (the host swaps them per iteration).
// Imitates: Parboil stencil, block2D_hybrid_coarsen_x (benchmarks/stencil/src/cuda/kernels.cu).

#define ST_INDEX3D(nx, ny, i, j, k) ((i) + (nx) * ((j) + (ny) * (k)))

extern "C" __global__ void stencil_block2d(float c0, float c1, const float* A0, float* Anext,
                                           int nx, int ny, int nz)
{
    const int i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    const int i2 = blockIdx.x * blockDim.x * 2 + threadIdx.x + blockDim.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int sh_id = threadIdx.x + threadIdx.y * blockDim.x * 2;
    const int sh_id2 = threadIdx.x + blockDim.x + threadIdx.y * blockDim.x * 2;
    extern __shared__ float sh_A0[];

    sh_A0[sh_id] = 0.0f;
    sh_A0[sh_id2] = 0.0f;
    __syncthreads();

    const bool w_region = i > 0 && j > 0 && (i < (nx - 1)) && (j < (ny - 1));
    const bool w_region2 = j > 0 && (i2 < nx - 1) && (j < ny - 1);
    const bool x_l_bound = (threadIdx.x == 0);
    const bool x_h_bound = ((threadIdx.x + blockDim.x) == (blockDim.x * 2 - 1));
    const bool y_l_bound = (threadIdx.y == 0);
    const bool y_h_bound = (threadIdx.y == (blockDim.y - 1));

    float bottom = 0.0f, bottom2 = 0.0f, top = 0.0f, top2 = 0.0f;
    if ((i < nx) && (j < ny)) {
        bottom = A0[ST_INDEX3D(nx, ny, i, j, 0)];
        sh_A0[sh_id] = A0[ST_INDEX3D(nx, ny, i, j, 1)];
    }
    if ((i2 < nx) && (j < ny)) {
        bottom2 = A0[ST_INDEX3D(nx, ny, i2, j, 0)];
        sh_A0[sh_id2] = A0[ST_INDEX3D(nx, ny, i2, j, 1)];
    }
    __syncthreads();

    for (int k = 1; k < nz - 1; k++) {
        float a_left_right, a_up, a_down;
        if ((i < nx) && (j < ny))
            top = A0[ST_INDEX3D(nx, ny, i, j, k + 1)];
        if ((i2 < nx) && (j < ny))
            top2 = A0[ST_INDEX3D(nx, ny, i2, j, k + 1)];
        if (w_region) {
            a_up = y_h_bound ? A0[ST_INDEX3D(nx, ny, i, j + 1, k)] : sh_A0[sh_id + 2 * blockDim.x];
            a_down = y_l_bound ? A0[ST_INDEX3D(nx, ny, i, j - 1, k)] : sh_A0[sh_id - 2 * blockDim.x];
            a_left_right = x_l_bound ? A0[ST_INDEX3D(nx, ny, i - 1, j, k)] : sh_A0[sh_id - 1];
            Anext[ST_INDEX3D(nx, ny, i, j, k)] =
                (top + bottom + a_up + a_down + sh_A0[sh_id + 1] + a_left_right) * c1 -
                sh_A0[sh_id] * c0;
        }
        if (w_region2) {
            a_up = y_h_bound ? A0[ST_INDEX3D(nx, ny, i2, j + 1, k)] : sh_A0[sh_id2 + 2 * blockDim.x];
            a_down = y_l_bound ? A0[ST_INDEX3D(nx, ny, i2, j - 1, k)] : sh_A0[sh_id2 - 2 * blockDim.x];
            a_left_right = x_h_bound ? A0[ST_INDEX3D(nx, ny, i2 + 1, j, k)] : sh_A0[sh_id2 + 1];
            Anext[ST_INDEX3D(nx, ny, i2, j, k)] =
                (top2 + bottom2 + a_up + a_down + a_left_right + sh_A0[sh_id2 - 1]) * c1 -
                sh_A0[sh_id2] * c0;
        }
        __syncthreads();
        bottom = sh_A0[sh_id];
        sh_A0[sh_id] = top;
        bottom2 = sh_A0[sh_id2];
        sh_A0[sh_id2] = top2;
        __syncthreads();
    }
}
