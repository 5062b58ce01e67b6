// Single-precision GEMM C = alpha * A * B^T + beta * C, as Parboil sgemm runs it: register
// tiling, each 16x8 block computes a 128x16 tile of C, a 8x16 tile of B staged in shared
// memory per step of k, and C read and written in place at the end.
// Imitates: Parboil sgemm, mysgemmNT (benchmarks/sgemm/src/cuda/sgemm_kernel.cu).

#define SG_TILE_N 16
#define SG_TILE_TB_HEIGHT 8
#define SG_TILE_M (SG_TILE_N * SG_TILE_TB_HEIGHT)

extern "C" __global__ void sgemm_nt(const float* A, int lda, const float* B, int ldb, float* C,
                                    int ldc, int k, float alpha, float beta)
{
    float c[SG_TILE_N];
    for (int i = 0; i < SG_TILE_N; i++)
        c[i] = 0.0f;
    int mid = threadIdx.y * blockDim.x + threadIdx.x;
    int m = blockIdx.x * SG_TILE_M + mid;
    int n = blockIdx.y * SG_TILE_N + threadIdx.x;
    __shared__ float b_s[SG_TILE_TB_HEIGHT][SG_TILE_N];
    for (int i = 0; i < k; i += SG_TILE_TB_HEIGHT) {
        b_s[threadIdx.y][threadIdx.x] = B[n + (i + threadIdx.y) * ldb];
        __syncthreads();
        for (int j = 0; j < SG_TILE_TB_HEIGHT; j++) {
            float a = A[m + (i + j) * lda];
            for (int kk = 0; kk < SG_TILE_N; kk++)
                c[kk] += a * b_s[j][kk];
        }
        __syncthreads();
    }
    int t = ldc * blockIdx.y * SG_TILE_N + m;
    for (int i = 0; i < SG_TILE_N; i++)
        C[t + i * ldc] = C[t + i * ldc] * beta + alpha * c[i];
}
