// Particle potential and relocation in a 3D box grid, as Rodinia lavaMD runs it: one block per
// home box; the block stages its particles and then each neighbour box's particles and charges
// in shared memory and accumulates the force on each home particle into the force array (the
// host zeroes it before the launch). Parameters arrive as structs by value; neighbour box
// numbers come from the box array.
// Imitates: Rodinia 3.1 lavaMD, kernel_gpu_cuda (cuda/lavaMD/kernel/kernel_gpu_cuda.cu), with
// 32 particles per box instead of 100.

#define LMD_PAR_PER_BOX 32
#define LMD_THREADS 32

typedef double fp;

struct par_str {
    fp alpha;
};

struct dim_str {
    int cur_arg;
    int arch_arg;
    int cores_arg;
    int boxes1d_arg;
    long number_boxes;
    long box_mem;
    long space_elem;
    long space_mem;
    long space_mem2;
};

struct nei_str {
    int x, y, z;
    int number;
    long offset;
};

struct box_str {
    int x, y, z;
    int number;
    long offset;
    int nn;
    nei_str nei[26];
};

struct FOUR_VECTOR {
    fp v, x, y, z;
};

extern "C" __global__ void lavamd_kernel(par_str d_par_gpu, dim_str d_dim_gpu,
                                         const box_str* d_box_gpu, const FOUR_VECTOR* d_rv_gpu,
                                         const fp* d_qv_gpu, FOUR_VECTOR* d_fv_gpu)
{
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    int wtx = tx;

    if (bx < d_dim_gpu.number_boxes) {
        fp a2 = 2.0 * d_par_gpu.alpha * d_par_gpu.alpha;
        __shared__ FOUR_VECTOR rA_shared[LMD_PAR_PER_BOX];
        __shared__ FOUR_VECTOR rB_shared[LMD_PAR_PER_BOX];
        __shared__ fp qB_shared[LMD_PAR_PER_BOX];

        long first_i = d_box_gpu[bx].offset;
        const FOUR_VECTOR* rA = &d_rv_gpu[first_i];
        FOUR_VECTOR* fA = &d_fv_gpu[first_i];
        while (wtx < LMD_PAR_PER_BOX) {
            rA_shared[wtx] = rA[wtx];
            wtx = wtx + LMD_THREADS;
        }
        wtx = tx;
        __syncthreads();

        for (int k = 0; k < (1 + d_box_gpu[bx].nn); k++) {
            int pointer = (k == 0) ? bx : d_box_gpu[bx].nei[k - 1].number;
            long first_j = d_box_gpu[pointer].offset;
            const FOUR_VECTOR* rB = &d_rv_gpu[first_j];
            const fp* qB = &d_qv_gpu[first_j];
            while (wtx < LMD_PAR_PER_BOX) {
                rB_shared[wtx] = rB[wtx];
                qB_shared[wtx] = qB[wtx];
                wtx = wtx + LMD_THREADS;
            }
            wtx = tx;
            __syncthreads();
            while (wtx < LMD_PAR_PER_BOX) {
                for (int j = 0; j < LMD_PAR_PER_BOX; j++) {
                    fp r2 = rA_shared[wtx].v + rB_shared[j].v -
                            (rA_shared[wtx].x * rB_shared[j].x + rA_shared[wtx].y * rB_shared[j].y +
                             rA_shared[wtx].z * rB_shared[j].z);
                    fp u2 = a2 * r2;
                    fp vij = exp(-u2);
                    fp fs = 2 * vij;
                    fp dx = rA_shared[wtx].x - rB_shared[j].x;
                    fp dy = rA_shared[wtx].y - rB_shared[j].y;
                    fp dz = rA_shared[wtx].z - rB_shared[j].z;
                    fA[wtx].v += qB_shared[j] * vij;
                    fA[wtx].x += qB_shared[j] * fs * dx;
                    fA[wtx].y += qB_shared[j] * fs * dy;
                    fA[wtx].z += qB_shared[j] * fs * dz;
                }
                wtx = wtx + LMD_THREADS;
            }
            wtx = tx;
            __syncthreads();
        }
    }
}
