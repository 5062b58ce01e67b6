// Small kernels for the binary reader tests: parameter layouts of mixed sizes and
// alignments, a template, a namespace, a struct by value, __launch_bounds__ and
// __syncthreads (barriers), and a kernel with two exits.
#include <cstdint>

struct Pair {
    float x;
    double y;
};

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

__global__ void __launch_bounds__(128) mixed(char c, short s, long long q, Pair p, double *out)
{
    __shared__ double tile[128];
    tile[threadIdx.x] = p.y + c + s + q;
    __syncthreads();
    out[threadIdx.x] = tile[127 - threadIdx.x] + p.x;
}

namespace ns {
template <typename T>
__global__ void scale(T *data, T factor, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    data[i] *= factor;
}
template __global__ void scale<float>(float *, float, unsigned);
template __global__ void scale<int>(int *, int, unsigned);
}  // namespace ns

extern "C" __global__ void counter(unsigned long long *total)
{
    atomicAdd(total, 1ULL);
}
