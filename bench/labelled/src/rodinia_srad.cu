// Speckle-reducing anisotropic diffusion, as Rodinia srad runs it.
// srad_v2: two 16x16-block kernels per iteration; the first reads the image J (with a
// one-pixel halo, through shared memory, including the row above the first block row and
// below the last one, which lie outside the image) and writes the diffusion coefficient C
// and the four directional derivatives; the second reads them and updates J in place.
// srad_v1: one thread per pixel; extract takes exp() of the image in place, prepare copies it
// and its square into the reduction buffers, reduce sums those buffers in place.
// Imitates: Rodinia 3.1 srad_v2 srad_cuda_1 / srad_cuda_2 (cuda/srad/srad_v2/srad_kernel.cu)
// and srad_v1 extract, prepare, reduce (cuda/srad/srad_v1/*_kernel.cu).

#define SRAD_BLOCK 16

extern "C" __global__ void srad_cuda_1(float* E_C, float* W_C, float* N_C, float* S_C,
                                       const float* J_cuda, float* C_cuda, int cols, int rows,
                                       float q0sqr)
{
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int index = cols * SRAD_BLOCK * by + SRAD_BLOCK * bx + cols * ty + tx;
    int index_n = cols * SRAD_BLOCK * by + SRAD_BLOCK * bx + tx - cols;
    int index_s = cols * SRAD_BLOCK * by + SRAD_BLOCK * bx + cols * SRAD_BLOCK + tx;
    int index_w = cols * SRAD_BLOCK * by + SRAD_BLOCK * bx + cols * ty - 1;
    int index_e = cols * SRAD_BLOCK * by + SRAD_BLOCK * bx + cols * ty + SRAD_BLOCK;

    __shared__ float temp[SRAD_BLOCK][SRAD_BLOCK];
    __shared__ float north[SRAD_BLOCK][SRAD_BLOCK];
    __shared__ float south[SRAD_BLOCK][SRAD_BLOCK];
    __shared__ float east[SRAD_BLOCK][SRAD_BLOCK];
    __shared__ float west[SRAD_BLOCK][SRAD_BLOCK];

    north[ty][tx] = J_cuda[index_n];
    south[ty][tx] = J_cuda[index_s];
    if (by == 0)
        north[ty][tx] = J_cuda[SRAD_BLOCK * bx + tx];
    else if (by == gridDim.y - 1)
        south[ty][tx] = J_cuda[cols * SRAD_BLOCK * (gridDim.y - 1) + SRAD_BLOCK * bx +
                               cols * (SRAD_BLOCK - 1) + tx];
    __syncthreads();
    west[ty][tx] = J_cuda[index_w];
    east[ty][tx] = J_cuda[index_e];
    if (bx == 0)
        west[ty][tx] = J_cuda[cols * SRAD_BLOCK * by + cols * ty];
    else if (bx == gridDim.x - 1)
        east[ty][tx] = J_cuda[cols * SRAD_BLOCK * by + SRAD_BLOCK * (gridDim.x - 1) +
                              cols * ty + SRAD_BLOCK - 1];
    __syncthreads();
    temp[ty][tx] = J_cuda[index];
    __syncthreads();

    float jc = temp[ty][tx];
    float n = (ty == 0 ? north[ty][tx] : temp[ty - 1][tx]) - jc;
    float s = (ty == SRAD_BLOCK - 1 ? south[ty][tx] : temp[ty + 1][tx]) - jc;
    float w = (tx == 0 ? west[ty][tx] : temp[ty][tx - 1]) - jc;
    float e = (tx == SRAD_BLOCK - 1 ? east[ty][tx] : temp[ty][tx + 1]) - jc;

    float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
    float l = (n + s + w + e) / jc;
    float num = (0.5f * g2) - ((1.0f / 16.0f) * (l * l));
    float den = 1 + (.25f * l);
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1 + q0sqr));
    float c = 1.0f / (1.0f + den);
    if (c < 0) c = 0;
    else if (c > 1) c = 1;

    C_cuda[index] = c;
    E_C[index] = e;
    W_C[index] = w;
    S_C[index] = s;
    N_C[index] = n;
}

extern "C" __global__ void srad_cuda_2(const float* E_C, const float* W_C, const float* N_C,
                                       const float* S_C, float* J_cuda, const float* C_cuda,
                                       int cols, int rows, float lambda, float q0sqr)
{
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int index = cols * SRAD_BLOCK * by + SRAD_BLOCK * bx + cols * ty + tx;
    int index_s = cols * SRAD_BLOCK * by + SRAD_BLOCK * bx + cols * SRAD_BLOCK + tx;
    int index_e = cols * SRAD_BLOCK * by + SRAD_BLOCK * bx + cols * ty + SRAD_BLOCK;

    __shared__ float south_c[SRAD_BLOCK][SRAD_BLOCK];
    __shared__ float east_c[SRAD_BLOCK][SRAD_BLOCK];
    __shared__ float c_cuda_temp[SRAD_BLOCK][SRAD_BLOCK];
    __shared__ float temp[SRAD_BLOCK][SRAD_BLOCK];

    temp[ty][tx] = J_cuda[index];
    __syncthreads();
    south_c[ty][tx] = C_cuda[index_s];
    if (by == gridDim.y - 1)
        south_c[ty][tx] = C_cuda[cols * SRAD_BLOCK * (gridDim.y - 1) + SRAD_BLOCK * bx +
                                 cols * (SRAD_BLOCK - 1) + tx];
    __syncthreads();
    east_c[ty][tx] = C_cuda[index_e];
    if (bx == gridDim.x - 1)
        east_c[ty][tx] = C_cuda[cols * SRAD_BLOCK * by + SRAD_BLOCK * (gridDim.x - 1) +
                                cols * ty + SRAD_BLOCK - 1];
    __syncthreads();
    c_cuda_temp[ty][tx] = C_cuda[index];
    __syncthreads();

    float cc = c_cuda_temp[ty][tx];
    float cs = (ty == SRAD_BLOCK - 1) ? south_c[ty][tx] : c_cuda_temp[ty + 1][tx];
    float ce = (tx == SRAD_BLOCK - 1) ? east_c[ty][tx] : c_cuda_temp[ty][tx + 1];
    float d_sum = cc * N_C[index] + cs * S_C[index] + cc * W_C[index] + ce * E_C[index];
    J_cuda[index] = temp[ty][tx] + 0.25f * lambda * d_sum;
}

extern "C" __global__ void srad_extract(long d_Ne, float* d_I)
{
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int ei = (bx * blockDim.x) + tx;
    if (ei < d_Ne)
        d_I[ei] = expf(d_I[ei] / 255);
}

extern "C" __global__ void srad_prepare(long d_Ne, const float* d_I, float* d_sums,
                                        float* d_sums2)
{
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int ei = (bx * blockDim.x) + tx;
    if (ei < d_Ne) {
        d_sums[ei] = d_I[ei];
        d_sums2[ei] = d_I[ei] * d_I[ei];
    }
}

#define SRAD_NUMBER_THREADS 512

// One step of the tree reduction of d_sums/d_sums2: each block reduces its slice (of `mul`
// spaced elements) in shared memory and its thread 0 writes the block's sum back into the
// first element of the slice; the host relaunches with mul *= NUMBER_THREADS.
extern "C" __global__ void srad_reduce(long d_Ne, int d_no, int d_mul, float* d_sums,
                                       float* d_sums2)
{
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int ei = (bx * SRAD_NUMBER_THREADS) + tx;
    int nf = SRAD_NUMBER_THREADS - (gridDim.x * SRAD_NUMBER_THREADS - d_no);
    int df = 0;

    __shared__ float d_psum[SRAD_NUMBER_THREADS];
    __shared__ float d_psum2[SRAD_NUMBER_THREADS];

    if (ei < d_no) {
        d_psum[tx] = d_sums[ei * d_mul];
        d_psum2[tx] = d_sums2[ei * d_mul];
    }
    __syncthreads();
    if (nf == SRAD_NUMBER_THREADS) {
        for (int i = 2; i <= SRAD_NUMBER_THREADS; i = 2 * i) {
            if ((tx + 1) % i == 0) {
                d_psum[tx] = d_psum[tx] + d_psum[tx - i / 2];
                d_psum2[tx] = d_psum2[tx] + d_psum2[tx - i / 2];
            }
            __syncthreads();
        }
        if (tx == (SRAD_NUMBER_THREADS - 1)) {
            d_sums[bx * d_mul * SRAD_NUMBER_THREADS] = d_psum[tx];
            d_sums2[bx * d_mul * SRAD_NUMBER_THREADS] = d_psum2[tx];
        }
    } else {
        if (bx != (gridDim.x - 1)) {
            for (int i = 2; i <= SRAD_NUMBER_THREADS; i = 2 * i) {
                if ((tx + 1) % i == 0) {
                    d_psum[tx] = d_psum[tx] + d_psum[tx - i / 2];
                    d_psum2[tx] = d_psum2[tx] + d_psum2[tx - i / 2];
                }
                __syncthreads();
            }
            if (tx == (SRAD_NUMBER_THREADS - 1)) {
                d_sums[bx * d_mul * SRAD_NUMBER_THREADS] = d_psum[tx];
                d_sums2[bx * d_mul * SRAD_NUMBER_THREADS] = d_psum2[tx];
            }
        } else {
            for (int i = 2; i <= SRAD_NUMBER_THREADS; i = 2 * i) {
                if (nf >= i) df = i;
            }
            for (int i = 2; i <= df; i = 2 * i) {
                if ((tx + 1) % i == 0 && tx < df) {
                    d_psum[tx] = d_psum[tx] + d_psum[tx - i / 2];
                    d_psum2[tx] = d_psum2[tx] + d_psum2[tx - i / 2];
                }
                __syncthreads();
            }
            if (tx == (df - 1)) {
                for (int i = (bx * SRAD_NUMBER_THREADS) + df; i < (bx * SRAD_NUMBER_THREADS) + nf;
                     i++) {
                    d_psum[tx] = d_psum[tx] + d_sums[i];
                    d_psum2[tx] = d_psum2[tx] + d_sums2[i];
                }
                d_sums[bx * d_mul * SRAD_NUMBER_THREADS] = d_psum[tx];
                d_sums2[bx * d_mul * SRAD_NUMBER_THREADS] = d_psum2[tx];
            }
        }
    }
}
