// Leukocyte detection, as Rodinia leukocyte computes the GICOV score: one block per image row
// (offset by the maximum radius), one thread per column; for each of NCIRCLES circle radii the
// thread samples NPOINTS points on the circle (offsets from constant-memory tables) of the x and
// y gradients, and keeps the maximum mean^2/variance.
// Imitates: Rodinia 3.1 leukocyte, GICOV_kernel (cuda/leukocyte/CUDA/find_ellipse_kernel.cu;
// the gradients are read through the read-only cache instead of textures).

#define LK_NPOINTS 150
#define LK_NCIRCLES 7
#define LK_MAX_RAD 20

__constant__ float c_sin_angle[LK_NPOINTS];
__constant__ float c_cos_angle[LK_NPOINTS];
__constant__ int c_tX[LK_NCIRCLES * LK_NPOINTS];
__constant__ int c_tY[LK_NCIRCLES * LK_NPOINTS];

extern "C" __global__ void leukocyte_gicov(int grad_m, const float* __restrict__ grad_x,
                                           const float* __restrict__ grad_y, float* gicov)
{
    int i = blockIdx.x + LK_MAX_RAD + 2;
    int j = threadIdx.x + LK_MAX_RAD + 2;
    float max_GICOV = 0.0f;
    for (int k = 0; k < LK_NCIRCLES; k++) {
        float sum = 0.0f, M2 = 0.0f, mean = 0.0f;
        for (int n = 0; n < LK_NPOINTS; n++) {
            int y = j + c_tY[(k * LK_NPOINTS) + n];
            int x = i + c_tX[(k * LK_NPOINTS) + n];
            int addr = x * grad_m + y;
            float p = __ldg(&grad_x[addr]) * c_cos_angle[n] + __ldg(&grad_y[addr]) * c_sin_angle[n];
            sum += p;
            float delta = p - mean;
            mean = mean + (delta / (float)(n + 1));
            M2 = M2 + (delta * (p - mean));
        }
        float var = M2 / ((float)(LK_NPOINTS - 1));
        if (((mean * mean) / var) > max_GICOV)
            max_GICOV = (mean * mean) / var;
    }
    gicov[(i * grad_m) + j] = max_GICOV;
}
