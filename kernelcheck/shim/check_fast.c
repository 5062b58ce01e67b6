/* The fast path of LaunchCheck evaluation: a check compiled once, when it is loaded, into a
 * short list of specialized instructions over single ranges of 64-bit integers.
 *
 * kc_fast_compile keeps only the slots a verdict reads (addresses and affine forms of the
 * accesses of a (write, read) pair, or the addresses of non-idempotent atomics), folds
 * slots computed from constants, reads each parameter at a fixed offset and size (a
 * parameter wrapped to its own width as signed becomes one sign-extending read), turns a
 * WRAP of a thread-dependent range into a range test fused into the instruction producing
 * it, and specializes each operation on whether its operands are launch constants (one
 * point per launch) or ranges. kc_fast_eval runs the list with direct-threaded dispatch.
 *
 * The fast path computes exactly what the general evaluator (check.c) computes as long as
 * every slot it reads is one non-empty range of integers below 2**63 in magnitude (then the
 * general evaluator's rounding at 2**100 never applies, every wrap it meets is the identity
 * or folds one point, and the formulas are the same). Whenever anything else would happen
 * (an arithmetic overflow, a wrap that moves a range, a JOIN of ranges that do not touch, a
 * NEQ that splits a range, an empty BOUND, a division by a range holding zero, a parameter
 * buffer shorter than the check reads) kc_fast_eval returns -1 and the caller runs the
 * general evaluator for that launch. Checks the fast path cannot express (indirect
 * accesses in a pair, unbounded loops, opaque values of 64 bits or more, more than
 * FAST_SLOTS slots, parameter-table reads and expanded accesses) get no compiled form.
 * Pairs are decided on the hulls of their byte ranges first; the exact lattice test
 * (check.c) runs only when the hulls overlap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define FAST_SLOTS 256

enum fop {
    F_END, F_PARAM4, F_PARAM8, F_PARAMU, F_PARAMS, F_DIM, F_TVAR, F_ADDPP, F_ADD, F_MULPP,
    F_MULKPOS, F_MULKNEG, F_MULPR, F_MUL, F_WRAPP, F_MIN, F_MAX, F_JOIN, F_DIV, F_REM,
    F_SHR, F_AND, F_OR, F_BOUND, F_TRIP, F_NEQ, F_CMP,
    /* forms made by specialize() after compiling, with a constant operand in imm */
    F_ADDK, F_ADDKP, F_MULKPP, F_DIVP, F_ADDBOUND, F_ADDKBOUND, F_COUNT
};

struct iv { int64_t lo, hi; };

struct fins {
    uint8_t op, dst, a, b, c, d; /* d: F_ADDBOUND's and F_ADDKBOUND's lower cap */
    int64_t imm;             /* offset and size, dimension, shift, bits, ... */
    int64_t cmin, cmax;      /* the result must lie in [cmin, cmax], else fall back */
};

struct fpair {
    uint8_t w, r;            /* compiled address slots */
    int gw, gr;              /* compiled guard slots, or -1: the access has no guard */
    int64_t ww, rw;          /* widths */
    int lattice;             /* index into lat, or -1: hulls overlapping means overlap */
};

struct flat {
    uint8_t cw, cr, n;       /* constant slots, number of terms */
    uint8_t coef[8], atom[8];
    int8_t sign[8];
    int64_t width_w, width_r;
};

#define FAST_ATOMIC_GUARDS 8

struct kc_fast {
    uint32_t n_ins, n_init, n_pairs;
    uint64_t param_end;
    int atomic;              /* a non-idempotent atomic is present: its address decides */
    int n_atomic_guards;     /* guards of those atomics: one false leaves it to check.c */
    uint8_t atomic_guard[FAST_ATOMIC_GUARDS];
    int no_pairs;
    struct fins *ins;
    struct iv init[FAST_SLOTS];
    struct fpair *pairs;
    struct flat *lat;
};

/* ------------------------------------------------------------------ operations */
/* Each returns 0 when the fast path must give up (the general evaluator decides). */
static inline int64_t mn(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t mx(int64_t a, int64_t b) { return a > b ? a : b; }

static inline int op_add(struct iv *r, struct iv x, struct iv y)
{
    return !__builtin_add_overflow(x.lo, y.lo, &r->lo) &&
           !__builtin_add_overflow(x.hi, y.hi, &r->hi);
}

static inline int op_mul(struct iv *r, struct iv x, struct iv y)
{
    int64_t p1, p2, p3, p4;
    if (__builtin_mul_overflow(x.lo, y.lo, &p1) || __builtin_mul_overflow(x.lo, y.hi, &p2) ||
        __builtin_mul_overflow(x.hi, y.lo, &p3) || __builtin_mul_overflow(x.hi, y.hi, &p4))
        return 0;
    r->lo = mn(mn(p1, p2), mn(p3, p4));
    r->hi = mx(mx(p1, p2), mx(p3, p4));
    return 1;
}

/* A point wrapped to bits (1..63) as signed or unsigned: exact (floor-mod by 2**bits). */
static inline int64_t wrap_point(int64_t x, int64_t imm)
{
    int bits = (int)(imm & 0xFF);
    int64_t lo_r = (imm >> 8) ? -((int64_t)1 << (bits - 1)) : 0;
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    return (int64_t)(((uint64_t)x - (uint64_t)lo_r) & mask) + lo_r;
}

static inline int64_t tdiv64(int64_t p, int64_t q, int *bad)
{
    if (q == -1 && p == INT64_MIN) {
        *bad = 1;
        return 0;
    }
    return p / q;
}

static inline int op_div(struct iv *r, struct iv x, struct iv y)
{
    if (!(y.lo > 0 || y.hi < 0))
        return 0;
    int bad = 0;
    int64_t q1 = tdiv64(x.lo, y.lo, &bad), q2 = tdiv64(x.lo, y.hi, &bad),
            q3 = tdiv64(x.hi, y.lo, &bad), q4 = tdiv64(x.hi, y.hi, &bad);
    r->lo = mn(mn(q1, q2), mn(q3, q4));
    r->hi = mx(mx(q1, q2), mx(q3, q4));
    return !bad;
}

static inline int op_rem(struct iv *r, struct iv x, struct iv y)
{
    if ((y.lo <= 0 && 0 <= y.hi) || y.lo == INT64_MIN)
        return 0;
    if (x.lo == x.hi && y.lo == y.hi && x.lo != INT64_MIN) {
        /* two points: the exact remainder, with the sign of the dividend (Python REM) */
        int64_t m = (x.lo < 0 ? -x.lo : x.lo) % (y.lo < 0 ? -y.lo : y.lo);
        r->lo = r->hi = x.lo < 0 ? -m : m;
        return 1;
    }
    int64_t m = mx(y.lo < 0 ? -y.lo : y.lo, y.hi < 0 ? -y.hi : y.hi) - 1;
    r->lo = x.lo >= 0 ? 0 : -m;
    r->hi = x.hi > 0 ? m : 0;
    return 1;
}

/* check.c's and_clearing_low_bits on int64 values: x & mask over [lo, hi] rounds x down to
 * a multiple when mask, on the bits of every such x >= 0, only clears those below its
 * lowest set bit. */
static inline int and_clearing_low_bits(struct iv *r, struct iv x, int64_t mask)
{
    if (x.lo < 0)
        return 0;
    int length = x.hi > 0 ? 64 - __builtin_clzll((uint64_t)x.hi) : 0;
    int low = mask ? __builtin_ctzll((uint64_t)mask) : length;
    if (low < length) {
        uint64_t run = length - low >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << (length - low)) - 1;
        if ((((uint64_t)mask >> low) & run) != run)
            return 0;
    }
    r->lo = x.lo & mask;
    r->hi = x.hi & mask;
    return 1;
}

static inline int op_and(struct iv *r, struct iv x, struct iv y)
{
    if (x.lo == x.hi && y.lo == y.hi) {
        r->lo = r->hi = x.lo & y.lo;
        return 1;
    }
    if (y.lo == y.hi && and_clearing_low_bits(r, x, y.lo))
        return 1;
    if (x.lo == x.hi && and_clearing_low_bits(r, y, x.lo))
        return 1;
    r->lo = 0;
    if (x.lo >= 0 && y.lo >= 0)
        r->hi = mn(x.hi, y.hi);
    else if (x.lo >= 0)
        r->hi = x.hi;
    else if (y.lo >= 0)
        r->hi = y.hi;
    else
        return 0;
    return 1;
}

/* OR (xor == 0) or XOR (xor == 1) */
static inline int op_or(struct iv *r, struct iv x, struct iv y, int64_t xor)
{
    if (x.lo == x.hi && y.lo == y.hi) {
        r->lo = r->hi = xor ? (x.lo ^ y.lo) : (x.lo | y.lo);
        return 1;
    }
    if (x.lo < 0 || y.lo < 0)
        return 0;
    int64_t m = mx(x.hi, y.hi);
    int bl = m ? 64 - __builtin_clzll((uint64_t)m) : 0;
    r->lo = 0;
    r->hi = bl >= 63 ? INT64_MAX : ((int64_t)1 << bl) - 1;
    return 1;
}

static inline int op_join(struct iv *r, struct iv x, struct iv y)
{
    /* the general evaluator keeps two pieces unless they touch or overlap */
    if ((y.lo > x.hi && (uint64_t)y.lo - (uint64_t)x.hi > 1) ||
        (x.lo > y.hi && (uint64_t)x.lo - (uint64_t)y.hi > 1))
        return 0;
    r->lo = mn(x.lo, y.lo);
    r->hi = mx(x.hi, y.hi);
    return 1;
}

static inline int op_bound(struct iv *r, struct iv x, struct iv lo, struct iv hi)
{
    r->lo = mx(x.lo, lo.lo);
    r->hi = mn(x.hi, hi.hi);
    return r->lo <= r->hi; /* an empty set: the general evaluator decides */
}

static inline int op_neq(struct iv *r, struct iv x, struct iv y)
{
    *r = x;
    if (y.lo != y.hi)
        return 1;
    if (y.lo == INT64_MIN || y.lo == INT64_MAX)
        return 0;
    if (r->lo == y.lo)
        r->lo++;
    else if (r->hi == y.lo)
        r->hi--;
    else if (r->lo < y.lo && y.lo < r->hi)
        return 0; /* split in two */
    return r->lo <= r->hi;
}

/* check.c's cmp on single ranges: [1, 1] true for every value, [0, 0] for none. */
static inline void op_cmp(struct iv *r, struct iv x, struct iv y, int64_t op)
{
    int t, f;
    switch (op) {
    case 0: t = x.hi < y.lo, f = x.lo >= y.hi; break;
    case 1: t = x.hi <= y.lo, f = x.lo > y.hi; break;
    case 2: t = x.lo > y.hi, f = x.hi <= y.lo; break;
    case 3: t = x.lo >= y.hi, f = x.hi < y.lo; break;
    default: {
        int same = x.lo == x.hi && x.hi == y.lo && y.lo == y.hi;
        int apart = x.hi < y.lo || y.hi < x.lo;
        t = op == 4 ? same : apart, f = op == 4 ? apart : same;
    }
    }
    r->lo = t ? 1 : 0, r->hi = f ? 0 : 1;
}

static inline int64_t shr64(int64_t x, int64_t k) { return k >= 63 ? (x < 0 ? -1 : 0) : x >> k; }

static int floordiv_i128(__int128 a, __int128 b, __int128 *q) /* b > 0 */
{
    if (a >= INT64_MIN && a <= INT64_MAX && b <= INT64_MAX) {
        /* 64-bit division: several times cheaper than the 128-bit library call */
        int64_t x = (int64_t)a, y = (int64_t)b, z = x / y;
        *q = (x % y != 0 && x < 0) ? z - 1 : z;
        return 1;
    }
    *q = a / b;
    if (a % b != 0 && a < 0)
        --*q;
    return 1;
}

/* check.c's tripmax on single ranges; 0 when it is invalid (or its result does not fit). */
static int op_trip(struct iv *r, struct iv x, struct iv s, struct iv b, int64_t d)
{
    typedef __int128 i128;
    int bits = (int)(d & 0xFF), is_signed = (int)(d >> 8) & 1, mode = (int)(d >> 9);
    i128 lo_r = is_signed ? -((i128)1 << (bits - 1)) : 0;
    i128 hi_r = lo_r + ((i128)1 << bits) - 1, kmax, prod;
    if (x.lo < lo_r || x.hi > hi_r)
        return 0;
    if (mode == 0) {
        if (s.lo <= 0)
            return 0;
        floordiv_i128((i128)b.hi - 1 - x.lo, s.lo, &kmax);
        kmax = kmax + 1 > 0 ? kmax + 1 : 0;
        if (__builtin_mul_overflow(kmax, (i128)s.hi, &prod) || x.hi + prod > hi_r)
            return 0;
    } else if (mode == 1) {
        if (s.hi >= 0)
            return 0;
        floordiv_i128((i128)x.hi - b.lo - 1, -(i128)s.hi, &kmax);
        kmax = kmax + 1 > 0 ? kmax + 1 : 0;
        if (__builtin_mul_overflow(kmax, (i128)s.lo, &prod) || x.lo + prod < lo_r)
            return 0;
    } else if (mode == 2 && s.lo == -1 && s.hi == -1 && x.lo >= b.hi) {
        kmax = (i128)x.hi - b.lo;
    } else if (mode == 2 && s.lo == 1 && s.hi == 1 && x.hi <= b.lo) {
        kmax = (i128)b.hi - x.lo;
    } else if (mode == 2 && s.lo == s.hi && s.lo != 0 && x.lo == x.hi && b.lo == b.hi &&
               ((i128)b.lo - x.lo) % s.lo == 0 &&
               (b.lo == x.lo || ((i128)b.lo - x.lo > 0) == (s.lo > 0))) {
        kmax = ((i128)b.lo - x.lo) / s.lo;
    } else {
        return 0;
    }
    if (kmax > INT64_MAX)
        return 0;
    r->lo = 0;
    r->hi = (int64_t)kmax;
    return 1;
}

static inline uint64_t read_le(const unsigned char *p, int64_t size)
{
    uint64_t x = 0;
    for (int64_t j = size - 1; j >= 0; j--)
        x = x << 8 | p[j];
    return x;
}

/* ------------------------------------------------------------------ one instruction */
/* Used at compile time to fold constants; the evaluation loop below inlines the same
 * operations. */
static int step(const struct fins *in, struct iv *v, const unsigned char *params,
                const uint32_t dims[6])
{
    struct iv *r = &v[in->dst], x = v[in->a], y = v[in->b];
    int ok = 1;
    switch (in->op) {
    case F_PARAM4: case F_PARAM8: case F_PARAMU: {
        uint64_t u = read_le(params + (in->imm >> 8), in->imm & 0xFF);
        if (u > INT64_MAX)
            return 0;
        r->lo = r->hi = (int64_t)u;
        break;
    }
    case F_PARAMS: {
        int64_t size = in->imm & 0xFF;
        uint64_t u = read_le(params + (in->imm >> 8), size);
        int sh = 64 - 8 * (int)size;
        r->lo = r->hi = sh ? (int64_t)(u << sh) >> sh : (int64_t)u;
        break;
    }
    case F_DIM: r->lo = r->hi = dims[in->imm]; break;
    case F_TVAR: r->lo = 0, r->hi = (int64_t)dims[in->imm] - 1; break;
    case F_ADDPP: case F_ADD: ok = op_add(r, x, y); break;
    case F_MULPP: case F_MULKPOS: case F_MULKNEG: case F_MULPR: case F_MUL:
        ok = op_mul(r, x, y);
        break;
    case F_WRAPP: r->lo = r->hi = wrap_point(x.lo, in->imm); break;
    case F_MIN: r->lo = mn(x.lo, y.lo), r->hi = mn(x.hi, y.hi); break;
    case F_MAX: r->lo = mx(x.lo, y.lo), r->hi = mx(x.hi, y.hi); break;
    case F_JOIN: ok = op_join(r, x, y); break;
    case F_DIV: ok = op_div(r, x, y); break;
    case F_REM: ok = op_rem(r, x, y); break;
    case F_SHR: r->lo = shr64(x.lo, in->imm), r->hi = shr64(x.hi, in->imm); break;
    case F_AND: ok = op_and(r, x, y); break;
    case F_OR: ok = op_or(r, x, y, in->imm); break;
    case F_BOUND: ok = op_bound(r, x, y, v[in->c]); break;
    case F_TRIP: ok = op_trip(r, x, y, v[in->c], in->imm); break;
    case F_NEQ: ok = op_neq(r, x, y); break;
    case F_CMP: op_cmp(r, x, y, in->imm); break;
    default: return 0;
    }
    return ok && r->lo >= in->cmin && r->hi <= in->cmax;
}

/* ------------------------------------------------------------------ compiling */
enum { C_NONE = 0, C_CONST = 1, C_POINT = 2, C_RANGE = 3 }; /* C_CONST: known now */

struct builder {
    const struct kc_check *c;
    struct kc_fast *f;
    int16_t map[FAST_SLOTS * 4];   /* record -> compiled slot (records beyond: none) */
    uint8_t cls[FAST_SLOTS];       /* per compiled slot */
    int16_t producer[FAST_SLOTS];  /* instruction producing a slot, -1: initial value */
    uint32_t n_slots, cap_ins;
    int failed;
};

static int new_slot(struct builder *B, int cls)
{
    if (B->n_slots >= FAST_SLOTS) {
        B->failed = 1;
        return 0;
    }
    B->cls[B->n_slots] = (uint8_t)cls;
    B->producer[B->n_slots] = -1;
    return (int)B->n_slots++;
}

static int const_slot(struct builder *B, int64_t lo, int64_t hi)
{
    int s = new_slot(B, lo == hi ? C_CONST : C_RANGE);
    B->f->init[s].lo = lo, B->f->init[s].hi = hi;
    return s;
}

/* Add a range test [lo, hi] to compiled slot s; a slot known now is tested now. */
static void require(struct builder *B, int s, __int128 lo, __int128 hi)
{
    int64_t l = lo < INT64_MIN ? INT64_MIN : (int64_t)lo;
    int64_t h = hi > INT64_MAX ? INT64_MAX : (int64_t)hi;
    if (B->producer[s] < 0) {
        if (B->f->init[s].lo < l || B->f->init[s].hi > h)
            B->failed = 1; /* would fall back on every launch */
        return;
    }
    struct fins *in = &B->f->ins[B->producer[s]];
    in->cmin = mx(in->cmin, l);
    in->cmax = mn(in->cmax, h);
}

/* Emit one instruction; folded at once when its operands are all known now. */
static int emit(struct builder *B, int op, int cls, int a, int b, int c, int64_t imm)
{
    if (B->failed)
        return 0;
    struct kc_fast *f = B->f;
    int known = op != F_PARAM4 && op != F_PARAM8 && op != F_PARAMU && op != F_PARAMS &&
                op != F_DIM && op != F_TVAR && B->producer[a] < 0 && B->producer[b] < 0 &&
                B->producer[c] < 0 && B->cls[a] != C_NONE;
    int dst = new_slot(B, cls);
    if (B->failed)
        return 0;
    struct fins in = {.op = (uint8_t)op, .dst = (uint8_t)dst, .a = (uint8_t)a,
                      .b = (uint8_t)b, .c = (uint8_t)c, .imm = imm, .cmin = INT64_MIN,
                      .cmax = INT64_MAX};
    if (known && step(&in, f->init, NULL, NULL)) {
        B->cls[dst] = f->init[dst].lo == f->init[dst].hi ? C_CONST : C_RANGE;
        return dst;
    }
    if (f->n_ins + 1 >= B->cap_ins) {
        uint32_t cap = B->cap_ins * 2 + 16;
        struct fins *grown = realloc(f->ins, cap * sizeof *grown);
        if (!grown) {
            B->failed = 1;
            return 0;
        }
        f->ins = grown, B->cap_ins = cap;
    }
    B->producer[dst] = (int16_t)f->n_ins;
    f->ins[f->n_ins++] = in;
    return dst;
}

static int is_point(const struct builder *B, int s) { return B->cls[s] == C_CONST || B->cls[s] == C_POINT; }

static int refs_of(const int64_t r[5], int64_t out[3])
{
    switch (r[0]) {
    case 0: case 1: case 2: case 3: case 4: return 0;
    case 7: case 13: case 18: case 22: out[0] = r[1]; return r[1] >= 0;
    case 17: case 19: out[0] = r[1], out[1] = r[2], out[2] = r[3]; return 3;
    default: out[0] = r[1], out[1] = r[2]; return 2;
    }
}

static void compile_record(struct builder *B, uint32_t k, int unbounded)
{
    const int64_t *r = B->c->program[k];
    int64_t op = r[0], a = r[1], b = r[2], cc = r[3], d = r[4];
    int sa = a >= 0 && (uint64_t)a < k ? B->map[a] : unbounded;
    int sb = b >= 0 && (uint64_t)b < k ? B->map[b] : unbounded;
    int sc = cc >= 0 && (uint64_t)cc < k ? B->map[cc] : unbounded;
    int s = 0;
    switch (op) {
    case 0: s = const_slot(B, cc, cc); break;
    case 1:
        s = emit(B, b == 4 ? F_PARAM4 : b == 8 ? F_PARAM8 : F_PARAMU, C_POINT, 0, 0, 0,
                 a << 8 | b);
        break;
    case 2: s = emit(B, F_DIM, C_POINT, 0, 0, 0, a); break;
    case 3: s = a == 6 ? const_slot(B, 0, 31) : emit(B, F_TVAR, C_RANGE, 0, 0, 0, a); break;
    case 4:
        if (a >= 63)
            B->failed = 1;
        else
            s = const_slot(B, 0, ((int64_t)1 << a) - 1);
        break;
    case 5: s = emit(B, is_point(B, sa) && is_point(B, sb) ? F_ADDPP : F_ADD,
                     is_point(B, sa) && is_point(B, sb) ? C_POINT : C_RANGE, sa, sb, 0, 0);
        break;
    case 6: {
        int pa = is_point(B, sa), pb = is_point(B, sb);
        if (pa && pb) {
            s = emit(B, F_MULPP, C_POINT, sa, sb, 0, 0);
        } else if (pa || pb) {
            int p = pa ? sa : sb, x = pa ? sb : sa;
            int fop = B->cls[p] != C_CONST ? F_MULPR : B->f->init[p].lo >= 0 ? F_MULKPOS
                                                                               : F_MULKNEG;
            s = emit(B, fop, C_RANGE, p, x, 0, 0);
        } else {
            s = emit(B, F_MUL, C_RANGE, sa, sb, 0, 0);
        }
        break;
    }
    case 7: {
        __int128 lo_r = cc ? -((__int128)1 << (b - 1)) : 0, hi_r = lo_r + ((__int128)1 << b) - 1;
        const int64_t *src = B->c->program[a];
        if (src[0] == 1 && B->producer[sa] >= 0 && cc && b == 8 * src[2] && b < 64) {
            s = emit(B, F_PARAMS, C_POINT, 0, 0, 0, src[1] << 8 | src[2]);
        } else if (src[0] == 1 && B->producer[sa] >= 0 && b >= 8 * src[2] + (cc ? 1 : 0)) {
            s = sa; /* a parameter already of a narrower width: the identity */
        } else if (is_point(B, sa) && b < 64) {
            s = emit(B, F_WRAPP, C_POINT, sa, 0, 0, b | cc << 8);
        } else {
            /* a range (or a 64-bit wrap) must already lie in range: the identity */
            require(B, sa, lo_r, hi_r);
            s = sa;
        }
        break;
    }
    case 8: case 9:
        s = emit(B, op == 8 ? F_MIN : F_MAX,
                 is_point(B, sa) && is_point(B, sb) ? C_POINT : C_RANGE, sa, sb, 0, 0);
        break;
    case 10: s = emit(B, F_JOIN, C_RANGE, sa, sb, 0, 0); break;
    case 11: s = emit(B, F_DIV, C_RANGE, sa, sb, 0, 0); break;
    case 12: s = emit(B, F_REM, C_RANGE, sa, sb, 0, 0); break;
    case 13: s = emit(B, F_SHR, is_point(B, sa) ? C_POINT : C_RANGE, sa, sa, 0, b); break;
    case 14: s = emit(B, F_AND, C_RANGE, sa, sb, 0, 0); break;
    case 15: case 16: s = emit(B, F_OR, C_RANGE, sa, sb, 0, op == 16); break;
    case 17: s = emit(B, F_BOUND, C_RANGE, sa, sb, sc, 0); break;
    case 18:
        if (a < 0)
            B->failed = 1; /* an unbounded iteration count */
        else
            s = sa;
        break;
    case 19: s = emit(B, F_TRIP, C_RANGE, sa, sb, sc, d); break;
    case 20: s = emit(B, F_NEQ, C_RANGE, sa, sb, 0, 0); break;
    case 21:
        s = emit(B, F_CMP, is_point(B, sa) && is_point(B, sb) ? C_POINT : C_RANGE, sa, sb, 0,
                 cc);
        break;
    default: B->failed = 1;
    }
    B->map[k] = (int16_t)s;
}

/* Drop instructions whose result nothing reads (e.g. a raw parameter read replaced by a
 * sign-extending one), keeping their range tests' effect: a dropped instruction's test
 * could only make the fast path give up more often. */
static void drop_dead(struct builder *B, const uint8_t *root)
{
    struct kc_fast *f = B->f;
    uint8_t live[FAST_SLOTS];
    memcpy(live, root, sizeof live);
    for (uint32_t k = f->n_ins; k-- > 0;) {
        struct fins *in = &f->ins[k];
        if (!live[in->dst] && in->cmin == INT64_MIN && in->cmax == INT64_MAX) {
            in->op = F_COUNT; /* marked dead */
            continue;
        }
        live[in->a] = live[in->b] = live[in->c] = 1;
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < f->n_ins; k++)
        if (f->ins[k].op != F_COUNT)
            f->ins[n++] = f->ins[k];
    f->n_ins = n;
}

static int known_point(const struct builder *B, int s)
{
    return B->producer[s] < 0 && B->f->init[s].lo == B->f->init[s].hi;
}

/* Give instructions with an operand known now that operand as an immediate constant (the
 * slot then need not be copied per launch), and divisions by one point per launch their
 * monotone form. Same results, same range tests. */
static void specialize(struct builder *B)
{
    struct kc_fast *f = B->f;
    for (uint32_t k = 0; k < f->n_ins; k++) {
        struct fins *in = &f->ins[k];
        switch (in->op) {
        case F_ADD: case F_ADDPP:
            if (known_point(B, in->a) || known_point(B, in->b)) {
                int kslot = known_point(B, in->a) ? in->a : in->b;
                int other = kslot == in->a ? in->b : in->a;
                in->imm = f->init[kslot].lo;
                in->op = in->op == F_ADDPP ? F_ADDKP : F_ADDK;
                in->a = in->b = (uint8_t)other;
            }
            break;
        case F_MULPP:
            if (known_point(B, in->a) || known_point(B, in->b)) {
                int kslot = known_point(B, in->a) ? in->a : in->b;
                int other = kslot == in->a ? in->b : in->a;
                in->imm = f->init[kslot].lo;
                in->op = F_MULKPP;
                in->a = in->b = (uint8_t)other;
            }
            break;
        case F_MULKPOS: case F_MULKNEG:
            in->imm = f->init[in->a].lo; /* the constant factor */
            in->a = in->b;
            break;
        case F_DIV:
            if (is_point(B, in->b))
                in->op = F_DIVP;
            break;
        default:
            break;
        }
    }
}

static int reads_of(const struct fins *in);

/* Fuse a BOUND into the ADD (of two ranges, or of a range and an immediate) before it when
 * nothing else reads the sum and the sum has no range test of its own: a, b (or imm) the
 * summands, c the upper cap, d the lower cap; the BOUND's range test stays. */
static void fuse_bounds(struct builder *B, const uint8_t *root)
{
    struct kc_fast *f = B->f;
    uint8_t readers[FAST_SLOTS] = {0};
    for (uint32_t k = 0; k < f->n_ins; k++) {
        const struct fins *in = &f->ins[k];
        int nr = reads_of(in);
        const uint8_t ops[3] = {in->a, in->b, in->c};
        for (int j = 0; j < nr; j++)
            readers[ops[j]] += readers[ops[j]] < 255;
    }
    int16_t producer[FAST_SLOTS];
    memset(producer, 0xFF, sizeof producer);
    for (uint32_t k = 0; k < f->n_ins; k++) {
        struct fins *next = &f->ins[k];
        producer[next->dst] = (int16_t)k;
        if (next->op != F_BOUND || producer[next->a] < 0)
            continue;
        /* slots are written once, so the sum's operands still hold at the BOUND */
        struct fins *in = &f->ins[producer[next->a]];
        if ((in->op == F_ADD || in->op == F_ADDK) && next->b != in->dst &&
            next->c != in->dst && readers[in->dst] == 1 && !root[in->dst] &&
            in->cmin == INT64_MIN && in->cmax == INT64_MAX) {
            struct fins fused = *next;
            fused.op = in->op == F_ADD ? F_ADDBOUND : F_ADDKBOUND;
            fused.a = in->a, fused.b = in->b, fused.d = next->b, fused.imm = in->imm;
            *next = fused;
            in->op = F_COUNT; /* dropped below */
        }
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < f->n_ins; k++)
        if (f->ins[k].op != F_COUNT)
            f->ins[n++] = f->ins[k];
    f->n_ins = n;
}

/* The operand slots an instruction reads (0 to 3, in *a, *b, *c order; F_ADDBOUND and
 * F_ADDKBOUND also read d). */
static int reads_of(const struct fins *in)
{
    switch (in->op) {
    case F_END: case F_PARAM4: case F_PARAM8: case F_PARAMU: case F_PARAMS: case F_DIM:
    case F_TVAR:
        return 0;
    case F_WRAPP: case F_SHR: case F_ADDK: case F_ADDKP: case F_MULKPOS: case F_MULKNEG:
    case F_MULKPP:
        return 1;
    case F_BOUND: case F_TRIP: case F_ADDBOUND: case F_ADDKBOUND:
        return 3;
    default:
        return 2;
    }
}

/* Number the slots known before the launch first, so that a launch copies only those,
 * and of those only the ones something reads. */
static void renumber(struct builder *B)
{
    struct kc_fast *f = B->f;
    uint8_t to[FAST_SLOTS], used[FAST_SLOTS] = {0};
    struct iv init[FAST_SLOTS];
    uint32_t n = 0;
    for (uint32_t k = 0; k < f->n_ins; k++) {
        const struct fins *in = &f->ins[k];
        int nr = reads_of(in);
        used[in->a] |= nr >= 1, used[in->b] |= nr >= 2, used[in->c] |= nr >= 3;
        if (in->op == F_ADDBOUND || in->op == F_ADDKBOUND)
            used[in->d] = 1;
    }
    for (int k = 0; k < f->n_atomic_guards; k++)
        used[f->atomic_guard[k]] = 1;
    for (uint32_t k = 0; k < f->n_pairs; k++) {
        const struct fpair *p = &f->pairs[k];
        const struct flat *l = &f->lat[k];
        used[p->w] = used[p->r] = 1;
        if (p->gw >= 0)
            used[p->gw] = 1;
        if (p->gr >= 0)
            used[p->gr] = 1;
        if (p->lattice >= 0) {
            used[l->cw] = used[l->cr] = 1;
            for (int j = 0; j < l->n; j++)
                used[l->coef[j]] = used[l->atom[j]] = 1;
        }
    }
    for (uint32_t s = 0; s < B->n_slots; s++)
        to[s] = 0;
    for (uint32_t s = 0; s < B->n_slots; s++)
        if (B->producer[s] < 0 && used[s])
            init[n] = f->init[s], to[s] = (uint8_t)n++;
    f->n_init = n;
    for (uint32_t s = 0; s < B->n_slots; s++)
        if (B->producer[s] >= 0)
            to[s] = (uint8_t)n++;
    memcpy(f->init, init, f->n_init * sizeof init[0]);
    for (uint32_t k = 0; k < f->n_ins; k++) {
        struct fins *in = &f->ins[k];
        in->dst = to[in->dst], in->a = to[in->a], in->b = to[in->b], in->c = to[in->c];
        in->d = to[in->d];
    }
    for (int k = 0; k < f->n_atomic_guards; k++)
        f->atomic_guard[k] = to[f->atomic_guard[k]];
    for (uint32_t k = 0; k < f->n_pairs; k++) {
        struct fpair *p = &f->pairs[k];
        struct flat *l = &f->lat[k];
        p->w = to[p->w], p->r = to[p->r];
        if (p->gw >= 0)
            p->gw = to[p->gw];
        if (p->gr >= 0)
            p->gr = to[p->gr];
        l->cw = to[l->cw], l->cr = to[l->cr];
        for (int j = 0; j < l->n; j++)
            l->coef[j] = to[l->coef[j]], l->atom[j] = to[l->atom[j]];
    }
}

uint32_t kc_fast_size(const struct kc_fast *f, uint32_t *n_init)
{
    *n_init = f->n_init;
    return f->n_ins;
}

static const char *const OP_NAMES[F_COUNT] = {
    "end", "param4", "param8", "paramu", "params", "dim", "tvar", "addpp", "add", "mulpp",
    "mulkpos", "mulkneg", "mulpr", "mul", "wrapp", "min", "max", "join", "div", "rem",
    "shr", "and", "or", "bound", "trip", "neq", "cmp", "addk", "addkp", "mulkpp", "divp",
    "addbound", "addkbound"};

size_t kc_fast_describe(const struct kc_fast *f, char *out, size_t size)
{
    size_t n = 0;
    for (uint32_t k = 0; k < f->n_ins; k++) {
        const char *name = f->ins[k].op < F_COUNT ? OP_NAMES[f->ins[k].op] : "?";
        int w = snprintf(out + n, n < size ? size - n : 0, "%s%s", k ? " " : "", name);
        n += w > 0 ? (size_t)w : 0;
    }
    if (size)
        out[n < size ? n : size - 1] = 0;
    return n;
}

void kc_fast_free(struct kc_fast *f)
{
    if (!f)
        return;
    free(f->ins);
    free(f->pairs);
    free(f->lat);
    free(f);
}

struct kc_fast *kc_fast_compile(const struct kc_check *c)
{
    if (c->not_proven || c->n_program > FAST_SLOTS * 4 || c->n_expand)
        return NULL; /* expanded accesses: sets of block ranges, the general evaluator */
    for (uint32_t k = 0; k < c->n_program; k++)
        if (c->program[k][0] == 25)
            return NULL; /* PARAMX: values read at offsets known only at launch */
    struct builder *B = calloc(1, sizeof *B);
    struct kc_fast *f = calloc(1, sizeof *f);
    uint8_t *need = calloc(c->n_program + 1, 1);
    uint8_t root[FAST_SLOTS] = {0};
    if (!B || !f || !need)
        goto fail;
    B->c = c, B->f = f;
    /* Roots: the addresses of non-idempotent atomics when there are any (the first that
     * may run decides), else the addresses and affine forms of paired accesses. */
    for (uint32_t k = 0; k < c->n_accesses; k++)
        if (c->accesses[k].kind == 3) {
            f->atomic = 1, need[c->accesses[k].addr_slot] = 1;
            if (c->accesses[k].guard_slot >= 0)
                need[c->accesses[k].guard_slot] = 1;
        }
    for (uint32_t k = 0; !f->atomic && k < c->n_pairs; k++)
        for (int side = 0; side < 2; side++) {
            const struct kc_access *a = &c->accesses[c->pairs[k][side]];
            if (a->indirect)
                goto fail;
            need[a->addr_slot] = 1;
            if (a->guard_slot >= 0)
                need[a->guard_slot] = 1;
            if (a->const_slot >= 0 && a->n_atoms <= 4) {
                need[a->const_slot] = 1;
                for (int j = 0; j < a->n_atoms; j++)
                    need[a->coef[j]] = need[a->atom[j]] = 1;
            }
        }
    for (uint32_t k = c->n_program; k-- > 0;) {
        const int64_t *r = c->program[k];
        if (r[0] == 1 && (uint64_t)r[1] + (uint64_t)r[2] > f->param_end)
            f->param_end = (uint64_t)r[1] + (uint64_t)r[2]; /* every read, as in check.c */
        if (!need[k])
            continue;
        int64_t refs[3];
        int n = refs_of(r, refs);
        for (int j = 0; j < n; j++)
            if (refs[j] >= 0)
                need[refs[j]] = 1;
    }
    /* Slot 0: "no bound" for BOUND's missing caps. */
    int unbounded = const_slot(B, INT64_MIN, INT64_MAX);
    for (uint32_t k = 0; k < c->n_program && !B->failed; k++)
        if (need[k])
            compile_record(B, k, unbounded);
    if (B->failed)
        goto fail;
    if (!f->atomic) {
        f->n_pairs = c->n_pairs;
        f->no_pairs = c->n_pairs == 0;
        f->pairs = calloc(c->n_pairs + 1, sizeof *f->pairs);
        f->lat = calloc(c->n_pairs + 1, sizeof *f->lat);
        if (!f->pairs || !f->lat)
            goto fail;
        for (uint32_t k = 0; k < c->n_pairs; k++) {
            const struct kc_access *w = &c->accesses[c->pairs[k][0]],
                                   *r = &c->accesses[c->pairs[k][1]];
            struct fpair *p = &f->pairs[k];
            p->w = (uint8_t)B->map[w->addr_slot], p->r = (uint8_t)B->map[r->addr_slot];
            p->ww = w->width, p->rw = r->width, p->lattice = -1;
            p->gw = w->guard_slot >= 0 ? B->map[w->guard_slot] : -1;
            p->gr = r->guard_slot >= 0 ? B->map[r->guard_slot] : -1;
            if (p->gw >= 0)
                root[p->gw] = 1;
            if (p->gr >= 0)
                root[p->gr] = 1;
            require(B, p->w, INT64_MIN, INT64_MAX - 1024); /* hi + width fits */
            require(B, p->r, INT64_MIN, INT64_MAX - 1024);
            root[p->w] = root[p->r] = 1;
            if (w->const_slot < 0 || r->const_slot < 0 || w->n_atoms > 4 || r->n_atoms > 4)
                continue;
            struct flat *l = &f->lat[k];
            p->lattice = (int)k;
            l->cw = (uint8_t)B->map[w->const_slot], l->cr = (uint8_t)B->map[r->const_slot];
            l->width_w = w->width, l->width_r = r->width;
            root[l->cw] = root[l->cr] = 1;
            const struct kc_access *acc[2] = {w, r};
            for (int side = 0; side < 2; side++)
                for (int j = 0; j < acc[side]->n_atoms; j++) {
                    l->coef[l->n] = (uint8_t)B->map[acc[side]->coef[j]];
                    l->atom[l->n] = (uint8_t)B->map[acc[side]->atom[j]];
                    l->sign[l->n] = side ? -1 : 1;
                    root[l->coef[l->n]] = root[l->atom[l->n]] = 1;
                    l->n++;
                }
        }
    } else {
        for (uint32_t k = 0; k < c->n_accesses; k++)
            if (c->accesses[k].kind == 3) {
                root[B->map[c->accesses[k].addr_slot]] = 1;
                if (c->accesses[k].guard_slot < 0)
                    continue;
                if (f->n_atomic_guards == FAST_ATOMIC_GUARDS)
                    goto fail;
                int g = B->map[c->accesses[k].guard_slot];
                f->atomic_guard[f->n_atomic_guards++] = (uint8_t)g;
                root[g] = 1;
            }
    }
    if (B->failed)
        goto fail;
    drop_dead(B, root);
    specialize(B);
    fuse_bounds(B, root);
    renumber(B);
    struct fins *grown = realloc(f->ins, (f->n_ins + 1) * sizeof *grown);
    if (!grown)
        goto fail;
    f->ins = grown;
    memset(&f->ins[f->n_ins], 0, sizeof *f->ins); /* F_END */
    free(B);
    free(need);
    return f;
fail:
    free(B);
    free(need);
    kc_fast_free(f);
    return NULL;
}

/* ------------------------------------------------------------------ evaluation */
int kc_fast_eval(const struct kc_fast *f, const unsigned char *params, size_t psize,
                 const uint32_t grid[3], const uint32_t block[3], enum kc_rule *rule)
{
    if (psize < f->param_end)
        return -1; /* the general evaluator says no_layout */
    const uint32_t dims[6] = {block[0], block[1], block[2], grid[0], grid[1], grid[2]};
    struct iv v[FAST_SLOTS];
    memcpy(v, f->init, f->n_init * sizeof v[0]);
    static const void *const L[F_COUNT] = {
        [F_END] = &&end, [F_PARAM4] = &&param4, [F_PARAM8] = &&param8,
        [F_PARAMU] = &&paramu, [F_PARAMS] = &&params_s, [F_DIM] = &&dim, [F_TVAR] = &&tvar,
        [F_ADDPP] = &&addpp, [F_ADD] = &&add, [F_MULPP] = &&mulpp, [F_MULKPOS] = &&mulkpos,
        [F_MULKNEG] = &&mulkneg, [F_MULPR] = &&mulpr, [F_MUL] = &&mul, [F_WRAPP] = &&wrapp,
        [F_MIN] = &&min, [F_MAX] = &&max, [F_JOIN] = &&join, [F_DIV] = &&div,
        [F_REM] = &&rem, [F_SHR] = &&shr, [F_AND] = &&and, [F_OR] = &&or,
        [F_BOUND] = &&bound, [F_TRIP] = &&trip, [F_NEQ] = &&neq, [F_CMP] = &&cmp,
        [F_ADDK] = &&addk,
        [F_ADDKP] = &&addkp, [F_MULKPP] = &&mulkpp, [F_DIVP] = &&divp,
        [F_ADDBOUND] = &&addbound, [F_ADDKBOUND] = &&addkbound};
    const struct fins *in = f->ins;
    struct iv *r;
#define DISPATCH() do { r = &v[in->dst]; goto *L[in->op]; } while (0)
#define NEXT() do { if (r->lo < in->cmin || r->hi > in->cmax) return -1; in++; DISPATCH(); } while (0)
#define GIVE_UP_UNLESS(x) do { if (!(x)) return -1; } while (0)
    DISPATCH();
param4: {
        uint32_t u;
        memcpy(&u, params + (in->imm >> 8), 4);
        r->lo = r->hi = u;
        NEXT();
    }
param8: {
        uint64_t u;
        memcpy(&u, params + (in->imm >> 8), 8);
        GIVE_UP_UNLESS(u <= INT64_MAX);
        r->lo = r->hi = (int64_t)u;
        NEXT();
    }
paramu: {
        uint64_t u = read_le(params + (in->imm >> 8), in->imm & 0xFF);
        GIVE_UP_UNLESS(u <= INT64_MAX);
        r->lo = r->hi = (int64_t)u;
        NEXT();
    }
params_s: {
        int sh = 64 - 8 * (int)(in->imm & 0xFF);
        uint64_t u = read_le(params + (in->imm >> 8), in->imm & 0xFF);
        r->lo = r->hi = (int64_t)(u << sh) >> sh;
        NEXT();
    }
dim:
    r->lo = r->hi = dims[in->imm];
    NEXT();
tvar:
    r->lo = 0, r->hi = (int64_t)dims[in->imm] - 1;
    NEXT();
addpp:
    GIVE_UP_UNLESS(!__builtin_add_overflow(v[in->a].lo, v[in->b].lo, &r->lo));
    r->hi = r->lo;
    NEXT();
add:
    GIVE_UP_UNLESS(op_add(r, v[in->a], v[in->b]));
    NEXT();
mulpp:
    GIVE_UP_UNLESS(!__builtin_mul_overflow(v[in->a].lo, v[in->b].lo, &r->lo));
    r->hi = r->lo;
    NEXT();
mulkpos: {
        int64_t k = in->imm;
        GIVE_UP_UNLESS(!__builtin_mul_overflow(k, v[in->a].lo, &r->lo) &&
                       !__builtin_mul_overflow(k, v[in->a].hi, &r->hi));
        NEXT();
    }
mulkneg: {
        int64_t k = in->imm, lo;
        GIVE_UP_UNLESS(!__builtin_mul_overflow(k, v[in->a].hi, &lo) &&
                       !__builtin_mul_overflow(k, v[in->a].lo, &r->hi));
        r->lo = lo;
        NEXT();
    }
addk: {
        int64_t lo, hi;
        GIVE_UP_UNLESS(!__builtin_add_overflow(v[in->a].lo, in->imm, &lo) &&
                       !__builtin_add_overflow(v[in->a].hi, in->imm, &hi));
        r->lo = lo, r->hi = hi;
        NEXT();
    }
addkp:
    GIVE_UP_UNLESS(!__builtin_add_overflow(v[in->a].lo, in->imm, &r->lo));
    r->hi = r->lo;
    NEXT();
addbound: {
        struct iv sum;
        GIVE_UP_UNLESS(op_add(&sum, v[in->a], v[in->b]) &&
                       op_bound(r, sum, v[in->d], v[in->c]));
        NEXT();
    }
addkbound: {
        struct iv sum;
        GIVE_UP_UNLESS(!__builtin_add_overflow(v[in->a].lo, in->imm, &sum.lo) &&
                       !__builtin_add_overflow(v[in->a].hi, in->imm, &sum.hi) &&
                       op_bound(r, sum, v[in->d], v[in->c]));
        NEXT();
    }
mulkpp:
    GIVE_UP_UNLESS(!__builtin_mul_overflow(v[in->a].lo, in->imm, &r->lo));
    r->hi = r->lo;
    NEXT();
divp: {
        /* truncating division by one value y != 0 is monotone in x */
        int64_t y = v[in->b].lo, xl = v[in->a].lo, xh = v[in->a].hi;
        GIVE_UP_UNLESS(y != 0 && !(y == -1 && xl == INT64_MIN));
        int64_t q1 = xl / y, q2 = xh / y;
        r->lo = y > 0 ? q1 : q2, r->hi = y > 0 ? q2 : q1;
        NEXT();
    }
mulpr: {
        int64_t k = v[in->a].lo, x = v[in->b].lo, y = v[in->b].hi, p, q;
        GIVE_UP_UNLESS(!__builtin_mul_overflow(k, x, &p) && !__builtin_mul_overflow(k, y, &q));
        r->lo = k >= 0 ? p : q, r->hi = k >= 0 ? q : p;
        NEXT();
    }
mul:
    GIVE_UP_UNLESS(op_mul(r, v[in->a], v[in->b]));
    NEXT();
wrapp:
    r->lo = r->hi = wrap_point(v[in->a].lo, in->imm);
    NEXT();
min:
    r->lo = mn(v[in->a].lo, v[in->b].lo), r->hi = mn(v[in->a].hi, v[in->b].hi);
    NEXT();
max:
    r->lo = mx(v[in->a].lo, v[in->b].lo), r->hi = mx(v[in->a].hi, v[in->b].hi);
    NEXT();
join:
    GIVE_UP_UNLESS(op_join(r, v[in->a], v[in->b]));
    NEXT();
div:
    GIVE_UP_UNLESS(op_div(r, v[in->a], v[in->b]));
    NEXT();
rem:
    GIVE_UP_UNLESS(op_rem(r, v[in->a], v[in->b]));
    NEXT();
shr:
    r->lo = shr64(v[in->a].lo, in->imm), r->hi = shr64(v[in->a].hi, in->imm);
    NEXT();
and:
    GIVE_UP_UNLESS(op_and(r, v[in->a], v[in->b]));
    NEXT();
or:
    GIVE_UP_UNLESS(op_or(r, v[in->a], v[in->b], in->imm));
    NEXT();
bound:
    GIVE_UP_UNLESS(op_bound(r, v[in->a], v[in->b], v[in->c]));
    NEXT();
trip:
    GIVE_UP_UNLESS(op_trip(r, v[in->a], v[in->b], v[in->c], in->imm));
    NEXT();
neq:
    GIVE_UP_UNLESS(op_neq(r, v[in->a], v[in->b]));
    NEXT();
cmp:
    op_cmp(r, v[in->a], v[in->b], in->imm);
    NEXT();
end:
#undef DISPATCH
#undef NEXT
#undef GIVE_UP_UNLESS
    if (f->atomic) {
        for (int k = 0; k < f->n_atomic_guards; k++)
            if (v[f->atomic_guard[k]].hi <= 0)
                return -1; /* an atomic that cannot run: check.c weighs the others */
        *rule = KC_RULE_ATOMIC;
        return KC_NOT_IDEMPOTENT;
    }
    for (uint32_t k = 0; k < f->n_pairs; k++) {
        const struct fpair *p = &f->pairs[k];
        if ((p->gw >= 0 && v[p->gw].hi <= 0) || (p->gr >= 0 && v[p->gr].hi <= 0))
            continue; /* one of the two cannot run in this launch */
        struct iv w = v[p->w], rd = v[p->r];
        if (mx(w.lo, rd.lo) >= mn(w.hi + p->ww, rd.hi + p->rw))
            continue; /* hulls disjoint */
        if (p->lattice >= 0) {
            const struct flat *l = &f->lat[p->lattice];
            struct iv cw = v[l->cw], cr = v[l->cr];
            int64_t coef[8], lo[8], hi[8];
            int ok = cw.lo == cw.hi && cr.lo == cr.hi;
            for (int j = 0; ok && j < l->n; j++) {
                struct iv s = v[l->coef[j]], at = v[l->atom[j]];
                ok = s.lo == s.hi;
                coef[j] = s.lo, lo[j] = at.lo, hi[j] = at.hi;
            }
            if (ok) {
                int8_t sign[8];
                memcpy(sign, l->sign, sizeof sign);
                if (kc_lattice_disjoint(cw.lo, cr.lo, l->n, sign, coef, lo, hi, l->width_w,
                                        l->width_r))
                    continue;
            }
        }
        *rule = KC_RULE_OVERLAP;
        return KC_NOT_IDEMPOTENT;
    }
    *rule = f->no_pairs ? KC_RULE_NO_CLOBBER : KC_RULE_DISJOINT;
    return KC_IDEMPOTENT;
}
