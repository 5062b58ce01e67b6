// Nearest neighbour, as Rodinia nn runs it: one thread per record computes the Euclidean
// distance of its (lat, lng) record to the query point; a 2D grid of 1D blocks.
// Imitates: Rodinia 3.1 nn, euclid (cuda/nn/nn_cuda.cu).

struct LatLong {
    float lat;
    float lng;
};

extern "C" __global__ void nn_euclid(const LatLong* d_locations, float* d_distances,
                                     int numRecords, float lat, float lng)
{
    int globalId = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    const LatLong* latLong = d_locations + globalId;
    if (globalId < numRecords) {
        float* dist = d_distances + globalId;
        *dist = (float)sqrt((lat - latLong->lat) * (lat - latLong->lat) +
                            (lng - latLong->lng) * (lng - latLong->lng));
    }
}
