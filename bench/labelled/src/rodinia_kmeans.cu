// K-means clustering, as Rodinia kmeans runs it: the features are transposed once to a
// feature-major layout, then every iteration assigns each point to its nearest cluster
// centre (the centres in constant memory, the features read through the read-only cache).
// Imitates: Rodinia 3.1 kmeans, invert_mapping and kmeansPoint (cuda/kmeans/kmeans_cuda_kernel.cu;
// the original reads the features through a texture reference).

#include <float.h>

#define KM_MAX_CENTRES 512

__constant__ float c_clusters[KM_MAX_CENTRES];

extern "C" __global__ void kmeans_invert_mapping(const float* input, float* output, int npoints,
                                                 int nfeatures)
{
    int point_id = threadIdx.x + blockDim.x * blockIdx.x;
    if (point_id < npoints) {
        for (int i = 0; i < nfeatures; i++)
            output[point_id + npoints * i] = input[point_id * nfeatures + i];
    }
}

extern "C" __global__ void kmeans_point(const float* __restrict__ features, int nfeatures,
                                        int npoints, int nclusters, int* membership,
                                        const float* clusters, float* block_clusters,
                                        int* block_deltas)
{
    const unsigned int block_id = gridDim.x * blockIdx.y + blockIdx.x;
    const unsigned int point_id = block_id * blockDim.x * blockDim.y + threadIdx.x;
    int index = -1;
    if (point_id < npoints) {
        float min_dist = FLT_MAX;
        for (int i = 0; i < nclusters; i++) {
            int cluster_base_index = i * nfeatures;
            float ans = 0.0f;
            for (int j = 0; j < nfeatures; j++) {
                int addr = point_id + j * npoints;
                float diff = __ldg(&features[addr]) - c_clusters[cluster_base_index + j];
                ans += diff * diff;
            }
            if (ans < min_dist) {
                min_dist = ans;
                index = i;
            }
        }
    }
    if (point_id < npoints)
        membership[point_id] = index;
}
