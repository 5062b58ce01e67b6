// Adversarial kernels: indices through division and modulo, self-overlapping strides,
// mixed access widths, vector stores, warp shuffles and non-coherent loads.
// Written for kernelcheck's adversarial set; each kernel states the trap it sets.

// C's % keeps the sign of the dividend: r = (i - 5) % 8 is in [-7, 7], not [0, 8). Reads
// a[r], writes a[r + 8]: a[3..7] is both read and written. Trap: taking x % 8 to be in [0, 8).
extern "C" __global__ void signed_modulo(float* a, const float* b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int r = (i - 5) % 8;
        a[r + 8] = b[i] + a[r];
    }
}

// Reads the even elements a[2i], writes a[(2i + 1) % m]: odd unless 2i + 1 wraps, which
// happens for an odd m smaller than 2n. Trap: parity of a modulo without knowing m.
extern "C" __global__ void wrap_parity(float* a, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[(2 * i + 1) % m] = a[2 * i] * 0.5f;
}

// Thread i reads a[i] and writes a[2 * (i / 2) + 1]: even threads write their right
// neighbour, odd threads themselves. Trap: simplifying (i / 2) * 2 to i.
extern "C" __global__ void div_pairs(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i];
        a[2 * (i / 2) + 1] = v + 1.0f;
    }
}

// a[i * stride + 1] = a[i * stride]: disjoint for |stride| >= 2, overlapping for stride 1 or
// -1. Trap: a stride assumed positive or larger than the access.
extern "C" __global__ void self_stride(float* a, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i * stride + 1] = a[i * stride] * 2.0f;
}

// Reads the word a[i], writes the top byte of the next word. Trap: element-granular
// reasoning that sees the write at "element i" (byte 4i + 7 is in element i + 1).
extern "C" __global__ void byte_into_next_word(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i];
        reinterpret_cast<unsigned char*>(a)[4 * i + 7] = (v > 0.0f) ? 1 : 0;
    }
}

// Reads a[4i + 3], then stores a float4 over a[4i .. 4i + 3]: the vector store covers the
// element read. Trap: a vector store taken as one element wide.
extern "C" __global__ void vector_store_covers(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[4 * i + 3];
        reinterpret_cast<float4*>(a)[i] = make_float4(v, v, v, v);
    }
}

// The write index comes from the next lane through a shuffle: lanes 0..30 write a[i + 1],
// which the next lane reads. Trap: a shuffled value treated as the thread's own index.
extern "C" __global__ void shuffle_index(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = __shfl_down_sync(0xffffffffu, i, 1);
    float v = (i < n) ? a[i] : 0.0f;
    if (i < n && j < n)
        a[j] = v + 1.0f;
}

// Reads a[i + 1] through the read-only (non-coherent) path, writes a[i].
// Trap: ld.global.nc not counted as a read of memory the kernel writes.
extern "C" __global__ void ldg_then_store(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = __ldg(&a[i + 1]) * 0.5f;
}

// The store index is i + off with off a parameter; off puts the write into the buffer that
// `in` points to even though `out` is a different allocation. Trap: with allocation tables,
// assuming an affine access stays inside the allocation of its base pointer.
extern "C" __global__ void offset_out_of_allocation(float* out, const float* in, long long off,
                                                    int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i + off] = in[i] + 1.0f;
}

// Scatter through an index array: the indices may point anywhere inside out's allocation.
// Trap: assuming indices below n, or that the scatter lands in [out, out + n).
extern "C" __global__ void scatter_anywhere(float* out, const float* in, const int* idx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[idx[i]] = in[i];
}

// out[(32*n + off) mod 2**32] = in[0] + 1 for the threads below n: a 32-bit index that
// wraps, built from n, which the tail check bounds by the thread's index. Trap: an affine
// form that looks through the wrap (32*n taken as a 64-bit product) puts the store 2**32
// elements away from where it lands.
extern "C" __global__ void wrapped_bounded_index(unsigned short* out, unsigned long long off,
                                                 int n, const unsigned short* in)
{
    if ((int)threadIdx.x < n) {
        unsigned idx = 32u * (unsigned)n + (unsigned)off;
        out[idx] = (unsigned short)(in[0] + 1);
    }
}
