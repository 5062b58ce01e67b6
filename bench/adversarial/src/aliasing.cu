// Adversarial kernels: aliasing that hides behind pointer arithmetic, pointers loaded from
// memory, pointers selected at run time, and pointers passed inside structs.
// Written for kernelcheck's adversarial set; each kernel states the trap it sets.

// out[i + (in - out) + 1] is in[i + 1]: the write lands in `in` whatever the two pointers
// are, so thread i writes what thread i + 1 reads. Trap: a base-pointer analysis that takes
// `out` as the base of the store and finds `out` and `in` in different allocations.
extern "C" __global__ void ptrdiff_alias(float* out, const float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i + (in - out) + 1] = in[i] * 2.0f;
}

// The destination is picked from the arguments at run time: in place when n > 100.
// Trap: taking the store's base to be `out` only.
extern "C" __global__ void select_alias(float* out, float* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float* dst = (n > 100) ? in : out;
    if (i < n)
        dst[i] = in[i] * 2.0f;
}

// Both pointers come from a table in global memory; the table may hold the same pointer
// twice. Trap: assuming two loaded pointers are distinct.
extern "C" __global__ void pointer_table(float* const* table, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* src = table[0];
    float* dst = table[1];
    if (i < n)
        dst[i] = src[i] + 1.0f;
}

struct Pair {
    const float* in;
    float* out;
    int shift;
};

// Pointers passed by value inside a struct, the output shifted by a struct field.
// Trap: struct fields read as one opaque parameter, or `out` assumed apart from `in`.
extern "C" __global__ void struct_pointers(Pair p, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p.out[i + p.shift] = p.in[i] + 1.0f;
}

// The destination pointer goes through shared memory before the store.
// Trap: losing track of a pointer's base when it is stored and reloaded.
extern "C" __global__ void pointer_via_shared(float* a, float* b, int use_a, int n)
{
    __shared__ float* sp;
    if (threadIdx.x == 0)
        sp = use_a ? a : b;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        sp[i] = a[i] + 1.0f;
}
