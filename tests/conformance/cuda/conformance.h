// The cases of the conformance suite written in CUDA C (see tests/conformance/README.md).
//
// A case is a __host__ __device__ function and one CASE line naming it. nvcc compiles each
// file to PTX, where the CASE line becomes a kernel `out[i] = fn(a[i] [, b[i]])`; g++ compiles
// the same file for the host, where the CASE line registers the function in a table that
// scripts/build_conformance.py runs to compute the expected outputs. The C compiler's
// semantics judge the emulator's run of nvcc's PTX, so every case must be defined C: no
// signed overflow, no out-of-range float-to-integer conversion, no division by zero (the
// generator's inputs respect each case's `domain`).
#pragma once
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define HD __host__ __device__
#define CASE1(name, T, A, fn, domain)                                                   \
    extern "C" __global__ void name(T *out, const A *a, unsigned n) {                  \
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x;                            \
        if (i < n) out[i] = fn(a[i]);                                                   \
    }
#define CASE2(name, T, A, B, fn, domain)                                                \
    extern "C" __global__ void name(T *out, const A *a, const B *b, unsigned n) {      \
        unsigned i = blockIdx.x * blockDim.x + threadIdx.x;                            \
        if (i < n) out[i] = fn(a[i], b[i]);                                             \
    }
#else
#define HD
struct ConformanceCase {
    const char *name, *out_type, *a_type, *b_type, *domain;
    unsigned out_size, a_size, b_size;
    void (*run)(void *out, const void *a, const void *b, unsigned n);
    ConformanceCase *next;
};
extern ConformanceCase *conformance_cases;
struct ConformanceRegistrar {
    ConformanceRegistrar(ConformanceCase *c) { c->next = conformance_cases; conformance_cases = c; }
};
#define CASE1(name, T, A, fn, domain)                                                   \
    static void run_##name(void *o, const void *a, const void *, unsigned n) {         \
        for (unsigned i = 0; i < n; i++) ((T *)o)[i] = fn(((const A *)a)[i]);           \
    }                                                                                   \
    static ConformanceCase case_##name = {#name, #T, #A, "", domain, sizeof(T),        \
                                          sizeof(A), 0, run_##name, 0};                 \
    static ConformanceRegistrar registrar_##name(&case_##name);
#define CASE2(name, T, A, B, fn, domain)                                                \
    static void run_##name(void *o, const void *a, const void *b, unsigned n) {        \
        for (unsigned i = 0; i < n; i++)                                                \
            ((T *)o)[i] = fn(((const A *)a)[i], ((const B *)b)[i]);                     \
    }                                                                                   \
    static ConformanceCase case_##name = {#name, #T, #A, #B, domain, sizeof(T),         \
                                          sizeof(A), sizeof(B), run_##name, 0};         \
    static ConformanceRegistrar registrar_##name(&case_##name);
#endif
