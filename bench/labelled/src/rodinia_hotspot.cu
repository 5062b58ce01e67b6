// Thermal simulation on a 2D grid, as Rodinia hotspot runs it: each 16x16 block loads a tile
// of temperature and power with a halo, advances `iteration` time steps in shared memory
// (the valid region shrinks by one cell per step), and writes the inner part of its tile to
// the destination grid. The host swaps source and destination between launches.
// Imitates: Rodinia 3.1 hotspot, calculate_temp (cuda/hotspot/hotspot.cu), and hotspot3D's
// hotspotOpt1 (cuda/hotspot3D/opt1.cu).

#define HS_BLOCK 16
#define HS_IN_RANGE(x, lo, hi) (((x) >= (lo)) && ((x) <= (hi)))

extern "C" __global__ void hotspot_calculate_temp(int iteration, const float* power,
                                                  const float* temp_src, float* temp_dst,
                                                  int grid_cols, int grid_rows,
                                                  int border_cols, int border_rows, float Cap,
                                                  float Rx, float Ry, float Rz, float step)
{
    __shared__ float temp_on_cuda[HS_BLOCK][HS_BLOCK];
    __shared__ float power_on_cuda[HS_BLOCK][HS_BLOCK];
    __shared__ float temp_t[HS_BLOCK][HS_BLOCK];

    const float amb_temp = 80.0f;
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    float step_div_Cap = step / Cap;
    float Rx_1 = 1.0f / Rx, Ry_1 = 1.0f / Ry, Rz_1 = 1.0f / Rz;

    int small_block_rows = HS_BLOCK - iteration * 2;
    int small_block_cols = HS_BLOCK - iteration * 2;
    int blkY = small_block_rows * by - border_rows;
    int blkX = small_block_cols * bx - border_cols;
    int blkYmax = blkY + HS_BLOCK - 1;
    int blkXmax = blkX + HS_BLOCK - 1;
    int yidx = blkY + ty;
    int xidx = blkX + tx;
    int index = grid_cols * yidx + xidx;

    if (HS_IN_RANGE(yidx, 0, grid_rows - 1) && HS_IN_RANGE(xidx, 0, grid_cols - 1)) {
        temp_on_cuda[ty][tx] = temp_src[index];
        power_on_cuda[ty][tx] = power[index];
    }
    __syncthreads();

    int validYmin = (blkY < 0) ? -blkY : 0;
    int validYmax = (blkYmax > grid_rows - 1) ? HS_BLOCK - 1 - (blkYmax - grid_rows + 1)
                                              : HS_BLOCK - 1;
    int validXmin = (blkX < 0) ? -blkX : 0;
    int validXmax = (blkXmax > grid_cols - 1) ? HS_BLOCK - 1 - (blkXmax - grid_cols + 1)
                                              : HS_BLOCK - 1;
    int N = ty - 1, S = ty + 1, W = tx - 1, E = tx + 1;
    N = (N < validYmin) ? validYmin : N;
    S = (S > validYmax) ? validYmax : S;
    W = (W < validXmin) ? validXmin : W;
    E = (E > validXmax) ? validXmax : E;

    bool computed = false;
    for (int i = 0; i < iteration; i++) {
        computed = false;
        if (HS_IN_RANGE(tx, i + 1, HS_BLOCK - i - 2) && HS_IN_RANGE(ty, i + 1, HS_BLOCK - i - 2) &&
            HS_IN_RANGE(tx, validXmin, validXmax) && HS_IN_RANGE(ty, validYmin, validYmax)) {
            computed = true;
            float c = temp_on_cuda[ty][tx];
            temp_t[ty][tx] = c + step_div_Cap * (power_on_cuda[ty][tx] +
                (temp_on_cuda[S][tx] + temp_on_cuda[N][tx] - 2.0f * c) * Ry_1 +
                (temp_on_cuda[ty][E] + temp_on_cuda[ty][W] - 2.0f * c) * Rx_1 +
                (amb_temp - c) * Rz_1);
        }
        __syncthreads();
        if (i == iteration - 1)
            break;
        if (computed)
            temp_on_cuda[ty][tx] = temp_t[ty][tx];
        __syncthreads();
    }
    if (computed)
        temp_dst[index] = temp_t[ty][tx];
}

// 3D variant: a 2D grid of threads walks the z axis keeping the column below, at and above
// in registers; reads tIn and pIn, writes tOut.
extern "C" __global__ void hotspot3d_opt1(const float* p, const float* tIn, float* tOut,
                                          float sdc, int nx, int ny, int nz, float ce, float cw,
                                          float cn, float cs, float ct, float cb, float cc)
{
    const float amb_temp = 80.0f;
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    int j = blockDim.y * blockIdx.y + threadIdx.y;
    int c = i + j * nx;
    int xy = nx * ny;
    int W = (i == 0) ? c : c - 1;
    int E = (i == nx - 1) ? c : c + 1;
    int N = (j == 0) ? c : c - nx;
    int S = (j == ny - 1) ? c : c + nx;

    float temp1, temp2, temp3;
    temp1 = temp2 = tIn[c];
    temp3 = tIn[c + xy];
    tOut[c] = cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] +
              cb * temp1 + ct * temp3 + sdc * p[c] + ct * amb_temp;
    c += xy; W += xy; E += xy; N += xy; S += xy;
    for (int k = 1; k < nz - 1; ++k) {
        temp1 = temp2;
        temp2 = temp3;
        temp3 = tIn[c + xy];
        tOut[c] = cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] +
                  cb * temp1 + ct * temp3 + sdc * p[c] + ct * amb_temp;
        c += xy; W += xy; E += xy; N += xy; S += xy;
    }
    temp1 = temp2;
    temp2 = temp3;
    tOut[c] = cc * temp2 + cw * tIn[W] + ce * tIn[E] + cs * tIn[S] + cn * tIn[N] +
              cb * temp1 + ct * temp3 + sdc * p[c] + ct * amb_temp;
}
