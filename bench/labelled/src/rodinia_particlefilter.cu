// Particle filter tracking, as Rodinia particlefilter (float version, double arithmetic)
// runs its resampling step: find_index picks, for each particle, the first CDF entry at or
// above its uniform sample and copies that particle's position; sum_kernel folds the per-block
// partial sums of the weights into partial_sums[0]; normalize_weights divides the weights by
// that sum in place and draws the next uniform samples, advancing the per-particle seeds.
// Imitates: Rodinia 3.1 particlefilter, find_index_kernel / sum_kernel /
// normalize_weights_kernel (cuda/particlefilter/ex_particle_CUDA_float_seq.cu).

#define PF_THREADS_PER_BLOCK 128
#define PF_M 2147483647
#define PF_A 1103515245
#define PF_C 12345

__device__ double pf_randu(int* seed, int index)
{
    int num = PF_A * seed[index] + PF_C;
    seed[index] = num % PF_M;
    return fabs(seed[index] / ((double)PF_M));
}

extern "C" __global__ void pf_find_index(const double* arrayX, const double* arrayY,
                                         const double* CDF, const double* u, double* xj,
                                         double* yj, double* weights, int Nparticles)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < Nparticles) {
        int index = -1;
        for (int x = 0; x < Nparticles; x++) {
            if (CDF[x] >= u[i]) {
                index = x;
                break;
            }
        }
        if (index == -1)
            index = Nparticles - 1;
        xj[i] = arrayX[index];
        yj[i] = arrayY[index];
    }
    __syncthreads();
}

extern "C" __global__ void pf_sum(double* partial_sums, int Nparticles)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i == 0) {
        double sum = 0.0;
        int num_blocks = (int)ceil((double)Nparticles / (double)PF_THREADS_PER_BLOCK);
        for (int x = 0; x < num_blocks; x++)
            sum += partial_sums[x];
        partial_sums[0] = sum;
    }
}

extern "C" __global__ void pf_normalize_weights(double* weights, int Nparticles,
                                                const double* partial_sums, double* CDF,
                                                double* u, int* seed)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    __shared__ double u1, sumWeights;
    if (threadIdx.x == 0)
        sumWeights = partial_sums[0];
    __syncthreads();
    if (i < Nparticles)
        weights[i] = weights[i] / sumWeights;
    __syncthreads();
    if (i == 0) {
        CDF[0] = weights[0];
        for (int x = 1; x < Nparticles; x++)
            CDF[x] = weights[x] + CDF[x - 1];
        u[0] = (1 / ((double)(Nparticles))) * pf_randu(seed, i);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        u1 = u[0];
    __syncthreads();
    if (i < Nparticles)
        u[i] = u1 + i / ((double)(Nparticles));
}
