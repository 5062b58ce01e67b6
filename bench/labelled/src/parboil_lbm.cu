// Lattice-Boltzmann D3Q19 stream-and-collide, as Parboil lbm runs it: the grid is stored as
// 19 arrays of cells plus a flag array, with one margin of cells on both ends; each thread
// reads the 19 distributions and the flag of its own cell in the source grid, collides them
// (or bounces them back at obstacles) and streams each one to the neighbouring cell in its
// direction in the destination grid. The host swaps the grids every time step.
// Imitates: Parboil lbm, performStreamCollide_kernel (benchmarks/lbm/src/cuda/lbm_kernel.cu),
// with the same structure-of-arrays layout, margins and push streaming, on a small grid.

#define LB_SIZE_X 32
#define LB_SIZE_Y 8
#define LB_SIZE_Z 4
#define LB_CELLS (LB_SIZE_X * LB_SIZE_Y * LB_SIZE_Z)
#define LB_MARGIN (2 * LB_SIZE_X * LB_SIZE_Y)
#define LB_Q 19
#define LB_FIELD (LB_Q + 1)
#define LB_STRIDE (LB_CELLS + 2 * LB_MARGIN)
#define LB_OMEGA 1.95f

__constant__ int lb_cx[LB_Q] = {0, 0, 0, 1, -1, 0, 0, 1, -1, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1};
__constant__ int lb_cy[LB_Q] = {0, 1, -1, 0, 0, 0, 0, 1, 1, -1, -1, 1, 1, -1, -1, 0, 0, 0, 0};
__constant__ int lb_cz[LB_Q] = {0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, 1, -1, -1};
__constant__ int lb_opp[LB_Q] = {0, 2, 1, 4, 3, 6, 5, 10, 9, 8, 7, 14, 13, 12, 11, 18, 17, 16, 15};
__constant__ float lb_w[LB_Q] = {1.f / 3, 1.f / 18, 1.f / 18, 1.f / 18, 1.f / 18, 1.f / 18,
                                 1.f / 18, 1.f / 36, 1.f / 36, 1.f / 36, 1.f / 36, 1.f / 36,
                                 1.f / 36, 1.f / 36, 1.f / 36, 1.f / 36, 1.f / 36, 1.f / 36,
                                 1.f / 36};

// grid[e * LB_STRIDE + LB_MARGIN + cell]: distribution e of cell, e = 19 is the flag word
#define LB_AT(grid, e, cell) ((grid)[(e) * LB_STRIDE + LB_MARGIN + (cell)])

extern "C" __global__ void lbm_stream_collide(const float* srcGrid, float* dstGrid)
{
    int x = threadIdx.x;
    int y = blockIdx.x;
    int z = blockIdx.y;
    int cell = x + LB_SIZE_X * (y + LB_SIZE_Y * z);
    float f[LB_Q];
    for (int e = 0; e < LB_Q; e++)
        f[e] = LB_AT(srcGrid, e, cell);
    int flag = __float_as_int(LB_AT(srcGrid, LB_Q, cell));
    if (flag & 1) {
        // obstacle: bounce back
        for (int e = 0; e < LB_Q; e++) {
            int nb = cell + lb_cx[lb_opp[e]] + LB_SIZE_X * (lb_cy[lb_opp[e]] + LB_SIZE_Y * lb_cz[lb_opp[e]]);
            LB_AT(dstGrid, lb_opp[e], nb) = f[e];
        }
        return;
    }
    float rho = 0.0f, ux = 0.0f, uy = 0.0f, uz = 0.0f;
    for (int e = 0; e < LB_Q; e++) {
        rho += f[e];
        ux += lb_cx[e] * f[e];
        uy += lb_cy[e] * f[e];
        uz += lb_cz[e] * f[e];
    }
    ux /= rho;
    uy /= rho;
    uz /= rho;
    float u2 = 1.5f * (ux * ux + uy * uy + uz * uz);
    for (int e = 0; e < LB_Q; e++) {
        float cu = 3.0f * (lb_cx[e] * ux + lb_cy[e] * uy + lb_cz[e] * uz);
        float feq = lb_w[e] * rho * (1.0f + cu + 0.5f * cu * cu - u2);
        int nb = cell + lb_cx[e] + LB_SIZE_X * (lb_cy[e] + LB_SIZE_Y * lb_cz[e]);
        LB_AT(dstGrid, e, nb) = (1.0f - LB_OMEGA) * f[e] + LB_OMEGA * feq;
    }
}
