// Online clustering, as Rodinia streamcluster evaluates the gain of opening a new centre x:
// every point computes its weighted distance to x and either marks itself for switching and
// accumulates the saving into its row of the work memory, or accumulates the loss into the
// slot of its current centre (the host zeroes the work memory before each launch).
// Imitates: Rodinia 3.1 streamcluster, kernel_compute_cost (cuda/streamcluster/streamcluster_cuda.cu).

struct SCPoint {
    float weight;
    float* coord;
    long assign;
    float cost;
};

__device__ float sc_dist(int p1, int p2, int num, int dim, const float* coord_d)
{
    float retval = 0.0f;
    for (int i = 0; i < dim; i++) {
        float tmp = coord_d[(i * num) + p1] - coord_d[(i * num) + p2];
        retval += tmp * tmp;
    }
    return retval;
}

extern "C" __global__ void sc_compute_cost(int num, int dim, long x, const SCPoint* p, int K,
                                           int stride, const float* coord_d, float* work_mem_d,
                                           const int* center_table_d, bool* switch_membership_d)
{
    const int bid = blockIdx.x + gridDim.x * blockIdx.y;
    const int tid = blockDim.x * bid + threadIdx.x;
    if (tid < num) {
        float* lower = &work_mem_d[tid * stride];
        float x_cost = sc_dist(tid, x, num, dim, coord_d) * p[tid].weight;
        if (x_cost < p[tid].cost) {
            switch_membership_d[tid] = 1;
            lower[K] += x_cost - p[tid].cost;
        } else {
            lower[center_table_d[p[tid].assign]] += p[tid].cost - x_cost;
        }
    }
}
