// Integer code as CUDA programs write it; nvcc turns it into mul.hi, shf, prmt, bfe, selp,
// carry chains, 64-bit and 128-bit arithmetic. Domains: "any" (every value), "nonzero_b"
// (b != 0), "sdiv" (b != 0 and not INT_MIN / -1), "shift" (b < 32).
#include "conformance.h"

HD uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
CASE1(hash32_k, uint32_t, uint32_t, hash32, "any")

HD uint32_t divmod7(uint32_t x) { return (x / 7u) * 16u + x % 7u; }
CASE1(divmod7_k, uint32_t, uint32_t, divmod7, "any")

HD int32_t sdiv_const(int32_t x) { return x / -13 + x % 10; }
CASE1(sdiv_const_k, int32_t, int32_t, sdiv_const, "any")

HD int32_t sdiv(int32_t a, int32_t b) { return a / b - a % b; }
CASE2(sdiv_k, int32_t, int32_t, int32_t, sdiv, "sdiv")

HD uint64_t udiv64(uint64_t a, uint64_t b) { return a / b + (a % b) * 3u; }
CASE2(udiv64_k, uint64_t, uint64_t, uint64_t, udiv64, "nonzero_b")

HD uint32_t rotl(uint32_t x, uint32_t s) { return (x << (s & 31u)) | (x >> ((32u - s) & 31u)); }
CASE2(rotl_k, uint32_t, uint32_t, uint32_t, rotl, "any")

HD uint32_t bswap(uint32_t x) {
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}
CASE1(bswap_k, uint32_t, uint32_t, bswap, "any")

HD uint32_t bitfield(uint32_t x) { return ((x >> 5) & 0x3ffu) | (((x >> 20) & 0x7u) << 27); }
CASE1(bitfield_k, uint32_t, uint32_t, bitfield, "any")

HD int32_t sign_extend(uint32_t x) {
    return (int32_t)(int8_t)(x & 0xffu) * 3 + (int32_t)(int16_t)(x >> 16);
}
CASE1(sign_extend_k, int32_t, uint32_t, sign_extend, "any")

HD uint32_t popcount(uint32_t x) {
    x = x - ((x >> 1) & 0x55555555u);
    x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0fu;
    return (x * 0x01010101u) >> 24;
}
CASE1(popcount_k, uint32_t, uint32_t, popcount, "any")

HD int32_t clamp_mix(int32_t a, int32_t b) {
    int32_t lo = a < b ? a : b, hi = a < b ? b : a;
    int32_t c = lo < -1000 ? -1000 : (lo > 1000 ? 1000 : lo);
    return c + (hi > 0 ? 1 : (hi < 0 ? -1 : 0));
}
CASE2(clamp_mix_k, int32_t, int32_t, int32_t, clamp_mix, "any")

HD uint64_t mulhi64(uint64_t a, uint64_t b) {
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}
CASE2(mulhi64_k, uint64_t, uint64_t, uint64_t, mulhi64, "any")

HD uint64_t add128_hi(uint64_t a, uint64_t b) {
    unsigned __int128 x = ((unsigned __int128)a << 64) | b;
    unsigned __int128 y = ((unsigned __int128)b << 64) | a;
    unsigned __int128 s = x + y * 3u;
    return (uint64_t)(s >> 64) ^ (uint64_t)s;
}
CASE2(add128_hi_k, uint64_t, uint64_t, uint64_t, add128_hi, "any")

HD uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}
CASE1(mix64_k, uint64_t, uint64_t, mix64, "any")

HD uint32_t classify(uint32_t x) {
    switch (x % 9u) {
    case 0: return x + 11u;
    case 1: return x ^ 0xabcdu;
    case 2: return x >> 3;
    case 3: return x * 5u;
    case 4: return ~x;
    case 5: return x - 77u;
    case 6: return x | 0x100u;
    case 7: return x & 0xf0f0u;
    default: return 42u;
    }
}
CASE1(classify_k, uint32_t, uint32_t, classify, "any")

HD uint32_t shifts(uint32_t a, uint32_t s) {
    int32_t sa = (int32_t)a;
    return (a << s) ^ (a >> s) ^ (uint32_t)(sa >> s);
}
CASE2(shifts_k, uint32_t, uint32_t, uint32_t, shifts, "shift")

HD uint32_t narrow(uint32_t x) {
    uint8_t b = (uint8_t)(x * 7u);
    uint16_t h = (uint16_t)(x >> 3);
    int8_t sb = (int8_t)(x >> 11);
    return (uint32_t)b * 1000u + (uint32_t)h + (uint32_t)(int32_t)sb;
}
CASE1(narrow_k, uint32_t, uint32_t, narrow, "any")

HD uint32_t loop_gcd(uint32_t a, uint32_t b) {
    a = a % 100000u + 1u;
    b = b % 100000u + 1u;
    while (b) { uint32_t t = a % b; a = b; b = t; }
    return a;
}
CASE2(loop_gcd_k, uint32_t, uint32_t, uint32_t, loop_gcd, "any")
