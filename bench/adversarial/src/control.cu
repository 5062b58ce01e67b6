// Adversarial kernels: guards that read memory, atomics whose result is used, generic stores
// and inline PTX with its own register scopes.
// Written for kernelcheck's adversarial set; each kernel states the trap it sets.

// The guard reads memory: mode[0] == 7 selects an in-place update. Trap: a guard treated as
// a launch constant (or as false) because it does not depend on the thread.
extern "C" __global__ void guard_from_memory(float* a, const int* mode, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        if (mode[0] == 7)
            a[i] = a[i] * 2.0f;
        else
            a[i] = 1.0f;
    }
}

// The guard is a flag the kernel itself sets: every launch reads and writes flag[0].
// Trap: a read used only in a branch condition not counted as a read.
extern "C" __global__ void guard_self_written(int* flag, float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (flag[0] == 0 && i < n)
        a[i] = 1.0f;
    if (i == 0)
        flag[0] = 1;
}

// atomicOr(.., 0) changes nothing, but its old value is the write offset. Trap: an
// "idempotent in effect" atomic whose result is used (the old value is a read).
extern "C" __global__ void atomic_result_address(int* flags, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = atomicOr(&flags[0], 0);
    if (i < n)
        out[i + k] = 1.0f;
}

// atomicMax with a value read from the location it updates, through a second pointer.
// Trap: max "idempotent in effect" while its operand comes from memory the launch changes.
extern "C" __global__ void atomic_max_own_input(int* m, const int* in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicMax(&m[i], in[i + 1]);
}

// A store through a generic pointer that points to shared memory when use_shared is set and
// to a[i + 1] otherwise. Trap: a generic store taken to be a shared-memory store.
extern "C" __global__ void generic_select_store(float* a, int use_shared, int n)
{
    __shared__ float sh[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float* p = use_shared ? &sh[threadIdx.x] : &a[i + 1];
    if (i < n) {
        float v = a[i];
        *p = v + 1.0f;
    }
    __syncthreads();
    if (use_shared && i < n && sh[threadIdx.x] > 1e30f)
        a[0] = 0.0f;  // never taken with finite data; keeps the shared store alive
}

// The address goes global -> generic with cvta in inline PTX and is stored through the
// generic address. Trap: a generic st after cvta not tied back to its global pointer.
extern "C" __global__ void cvta_generic_store(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i];
        asm volatile("{\n\t.reg .u64 %%g, %%h;\n\t"
                     "cvta.to.global.u64 %%g, %0;\n\t"
                     "cvta.global.u64 %%h, %%g;\n\t"
                     "st.f32 [%%h], %1;\n\t}"
                     :: "l"(a + i + 1), "f"(v) : "memory");
    }
}

// Inline PTX declares registers in a nested scope with names nvcc also gives its own
// registers in this kernel (%rd4, %rd5, %r6; see the PTX): inside the braces they are new
// registers, and the outer %rd4 (the global address of a) is used again after the block.
// The block computes p = a + 4*(i+1) bytes. Trap: an analysis that confuses the inner
// registers with the outer ones of the same name.
extern "C" __global__ void asm_shadowed_regs(float* a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float* p;
        asm("{\n\t.reg .u64 %%rd4, %%rd5;\n\t.reg .u32 %%r6;\n\t"
            "add.u32 %%r6, %2, 1;\n\t"
            "mul.wide.u32 %%rd4, %%r6, 4;\n\t"
            "add.u64 %%rd5, %1, %%rd4;\n\t"
            "mov.u64 %0, %%rd5;\n\t}"
            : "=l"(p) : "l"(a), "r"(i));
        float v = a[i];
        *p = v * 3.0f;
    }
}
