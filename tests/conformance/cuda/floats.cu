// Floating-point code as CUDA programs write it, compiled with -fmad=false so that nvcc keeps
// separate multiplies and adds, as C semantics (and g++ -ffp-contract=off) have them. Division
// and square root are IEEE (nvcc's defaults -prec-div=true -prec-sqrt=true, -ftz=false), fmaf
// and fma are fused in both. Domains: "finite" (no NaN or infinity), "any", "int32"/"uint32"/
// "int64" (values that convert to that integer type), "positive".
#include "conformance.h"
#include <math.h>

HD float horner(float x) { return fmaf(fmaf(fmaf(0.25f, x, -1.5f), x, 2.0f), x, -0.75f); }
CASE1(horner_k, float, float, horner, "any")

HD float mul_add(float a, float b) { return a * b + (a - b) * 0.5f; }
CASE2(mul_add_k, float, float, float, mul_add, "any")

HD float div_sqrt(float a, float b) { return a / b + sqrtf(fabsf(a)); }
CASE2(div_sqrt_k, float, float, float, div_sqrt, "any")

HD double dpoly(double x) { return fma(fma(x, x, -2.0), x, 1.0 / 3.0) / (x * x + 1.0); }
CASE1(dpoly_k, double, double, dpoly, "any")

HD double dsqrt(double a, double b) { return sqrt(fabs(a)) * b - a / (b + 0.5); }
CASE2(dsqrt_k, double, double, double, dsqrt, "any")

HD float minmax(float a, float b) { return fminf(a, b) * 2.0f + fmaxf(a, b); }
CASE2(minmax_k, float, float, float, minmax, "nonzero")

HD float signs(float a, float b) { return copysignf(fabsf(a) + 1.0f, b) - (-a); }
CASE2(signs_k, float, float, float, signs, "any")

HD float rounding(float x) { return rintf(x) * 1000.0f + truncf(x) * 100.0f + floorf(x) * 10.0f + ceilf(x); }
CASE1(rounding_k, float, float, rounding, "small")

HD int32_t f2i(float x) { return (int32_t)x + (int32_t)(x * 0.5f); }
CASE1(f2i_k, int32_t, float, f2i, "int32")

HD uint32_t f2u(float x) { return (uint32_t)x; }
CASE1(f2u_k, uint32_t, float, f2u, "uint32")

HD float i2f(int32_t a, uint32_t b) { return (float)a + (float)b; }
CASE2(i2f_k, float, int32_t, uint32_t, i2f, "any")

HD double i64_to_d(int64_t a) { return (double)a * 0.5; }
CASE1(i64_to_d_k, double, int64_t, i64_to_d, "any")

HD float i64_to_f(int64_t a) { return (float)a; }
CASE1(i64_to_f_k, float, int64_t, i64_to_f, "any")

HD int64_t d2i64(double x) { return (int64_t)x; }
CASE1(d2i64_k, int64_t, double, d2i64, "int64")

HD float d2f(double x) { return (float)x; }
CASE1(d2f_k, float, double, d2f, "any")

HD double f2d(float x) { return (double)x * 3.0; }
CASE1(f2d_k, double, float, f2d, "any")

HD uint32_t compare(float a, float b) {
    return (a < b) | (a <= b) << 1 | (a == b) << 2 | (a != b) << 3 | (a > b) << 4 |
           (a >= b) << 5 | (!(a < b)) << 6 | (isnan(a)) << 7;
}
CASE2(compare_k, uint32_t, float, float, compare, "any")

HD float select(float a, float b) { return a > b ? a - b : (a == b ? 0.5f : b * 2.0f); }
CASE2(select_k, float, float, float, select, "any")

HD uint32_t float_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return (u >> 23) & 0xffu;
}
CASE1(float_bits_k, uint32_t, float, float_bits, "any")

HD float sum_loop(float x) {
    float s = 0.0f;
    for (int i = 1; i <= 17; i++) s = s + x / (float)i;
    return s;
}
CASE1(sum_loop_k, float, float, sum_loop, "finite")
