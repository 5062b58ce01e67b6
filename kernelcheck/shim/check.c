/* LaunchCheck evaluation: the C twin of kernelcheck.launch.evaluate (see check.h).
 *
 * Values are sets of integers held as up to 8 closed ranges of 128-bit integers. Python's
 * evaluator uses unbounded integers and 2**256 for "unbounded"; here +-KC_INF is an absorbing
 * infinity and every computed bound is rounded outwards: an upper bound at or above KC_LIMIT
 * becomes +KC_INF, a lower bound at or below -KC_LIMIT becomes -KC_INF, and a lower bound
 * above KC_LIMIT (or an upper bound below -KC_LIMIT) is clamped to +-KC_LIMIT, which only
 * widens the set. Every slot therefore holds a superset of what the Python evaluator
 * computes, and the verdict is the same or more conservative (the two are compared on every
 * fixture instance by tests/shim/test_check.py). Products that overflow 128 bits become
 * infinite; the lattice test answers "may overlap" on any overflow. */
#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef __int128 i128;

#define KC_LIMIT ((i128)1 << 100)
#define KC_INF ((i128)1 << 110)
#define MAXP 8
#define LATTICE_BUDGET 4096

struct piece { i128 lo, hi; };
/* n < 0: invalid. exact: every wrap of a thread-dependent value below was the identity;
 * fixed: computed from parameters, dimensions and constants only (Python _run). */
struct slot { int n; int exact; int fixed; struct piece p[MAXP]; };

/* Format version 5 (kernelcheck.launch.check): access guards, residue bits, block
 * expansions and rebase slots; CMP, POW2, SHRV, GATE and PARAMX records. */
static const unsigned char MAGIC[8] = {'K', 'C', 'L', 'C', 'H', 'K', 0, 5};
#define ACCESS_BYTES 160
/* Python PARAMX_SPAN and EXPAND_MAX (kernelcheck.launch.evaluate). */
#define PARAMX_SPAN 1024
#define EXPAND_MAX 4096

/* ------------------------------------------------------------------ decoding */
static int ref_ok(int64_t ref, uint32_t k, int optional)
{
    return (optional && ref == -1) || (ref >= 0 && ref < (int64_t)k);
}

static int record_ok(const int64_t r[5], uint32_t k)
{
    int64_t op = r[0], a = r[1], b = r[2], c = r[3];
    switch (op) {
    case 0: case 4: return op != 4 || (a >= 0 && a <= 127);
    case 1: return a >= 0 && b >= 1 && b <= 8;
    case 2: return a >= 0 && a < 6;
    case 3: return a >= 0 && a < 7;
    case 7: return ref_ok(a, k, 0) && b >= 1 && b <= 64;
    case 13: return ref_ok(a, k, 0) && b >= 0;
    case 17: return ref_ok(a, k, 0) && ref_ok(b, k, 1) && ref_ok(c, k, 1);
    case 18: return ref_ok(a, k, 1);
    case 19: return ref_ok(a, k, 0) && ref_ok(b, k, 0) && ref_ok(c, k, 0) &&
                    (r[4] & 0xFF) >= 1 && (r[4] & 0xFF) <= 64 && (r[4] >> 9) >= 0 &&
                    (r[4] >> 9) <= 2;
    case 20: return ref_ok(a, k, 0) && ref_ok(b, k, 0);
    case 21: return ref_ok(a, k, 0) && ref_ok(b, k, 0) && c >= 0 && c <= 5;
    case 22: return ref_ok(a, k, 0) && b >= 1 && b <= 64;
    case 23: return ref_ok(a, k, 0) && ref_ok(b, k, 0) && c >= 1 && c <= 64;
    case 24: return ref_ok(a, k, 0) && ref_ok(b, k, 0);
    case 25: return ref_ok(a, k, 0) && b >= 1 && b <= 8;
    case 5: case 6: case 8: case 9: case 10: case 11: case 12: case 14: case 15: case 16:
        return ref_ok(a, k, 0) && ref_ok(b, k, 0);
    default: return 0;
    }
}

/* The slots a record reads (Python slot_refs); returns how many, at most 3. */
static int record_refs(const int64_t r[5], int64_t out[3])
{
    int64_t a = r[1], b = r[2], c = r[3];
    int n = 0;
    switch (r[0]) {
    case 0: case 1: case 2: case 3: case 4: return 0;
    case 7: case 13: case 18: case 22: case 25: out[n++] = a; break;
    case 17: case 19: out[n++] = a, out[n++] = b, out[n++] = c; break;
    default: out[n++] = a, out[n++] = b;
    }
    int m = 0;
    for (int j = 0; j < n; j++)
        if (out[j] >= 0)
            out[m++] = out[j];
    return m;
}

/* Register the expansion over the TVAR record in slot (once per slot): the slots after it
 * that are computed from it, in program order (Python _cone). 0 when out of memory. */
static int add_expansion(struct kc_check *c, int64_t slot)
{
    for (uint32_t k = 0; k < c->n_expand; k++)
        if (c->expand[k].slot == slot)
            return 1;
    struct kc_expand *grown = realloc(c->expand, (c->n_expand + 1) * sizeof *grown);
    if (!grown)
        return 0;
    c->expand = grown;
    struct kc_expand *e = &c->expand[c->n_expand];
    e->slot = slot, e->n_cone = 0;
    e->cone = malloc((size_t)c->n_program * sizeof *e->cone + 1);
    uint8_t *dep = calloc(c->n_program + 1, 1);
    if (!e->cone || !dep) {
        free(e->cone);
        free(dep);
        return 0;
    }
    c->n_expand++;
    dep[slot] = 1;
    for (uint32_t k = (uint32_t)slot + 1; k < c->n_program; k++) {
        int64_t refs[3];
        int n = record_refs(c->program[k], refs);
        for (int j = 0; j < n; j++)
            if (dep[refs[j]]) {
                dep[k] = 1;
                e->cone[e->n_cone++] = k;
                break;
            }
    }
    free(dep);
    return 1;
}

struct kc_check *kc_check_decode(const void *blob, size_t size)
{
    const unsigned char *p = blob;
    if (!p || size < 24 || memcmp(p, MAGIC, 8) != 0)
        return NULL;
    uint32_t hdr[4];
    memcpy(hdr, p + 8, 16);
    if (hdr[0] > 100000 || hdr[1] > 100000 || hdr[2] > 1000000)
        return NULL;
    size_t need = 24 + (size_t)hdr[0] * 40 + (size_t)hdr[1] * ACCESS_BYTES + (size_t)hdr[2] * 8;
    if (size < need)
        return NULL;
    struct kc_check *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n_program = hdr[0], c->n_accesses = hdr[1], c->n_pairs = hdr[2];
    c->not_proven = hdr[3] & 1;
    c->program = malloc((size_t)hdr[0] * 40 + 1);
    c->accesses = malloc((size_t)hdr[1] * sizeof *c->accesses + 1);
    c->pairs = malloc((size_t)hdr[2] * 8 + 1);
    if (!c->program || !c->accesses || !c->pairs)
        goto bad;
    memcpy(c->program, p + 24, (size_t)hdr[0] * 40);
    for (uint32_t k = 0; k < hdr[0]; k++)
        if (!record_ok(c->program[k], k))
            goto bad;
    const unsigned char *q = p + 24 + (size_t)hdr[0] * 40;
    for (uint32_t k = 0; k < hdr[1]; k++, q += ACCESS_BYTES) {
        int64_t f[20];
        memcpy(f, q, ACCESS_BYTES);
        struct kc_access *a = &c->accesses[k];
        a->kind = f[0], a->width = f[1], a->addr_slot = f[2], a->base_offset = f[3];
        a->base_size = f[4], a->indirect = f[5], a->const_slot = f[6], a->n_atoms = f[7];
        for (int j = 0; j < 4; j++)
            a->coef[j] = f[8 + 2 * j], a->atom[j] = f[9 + 2 * j];
        a->guard_slot = f[16], a->residue_bits = f[17], a->expand_slot = f[18];
        a->rebase_slot = f[19];
        if (a->expand_slot != -1 &&
            (!ref_ok(a->expand_slot, hdr[0], 0) || c->program[a->expand_slot][0] != 3 ||
             c->program[a->expand_slot][1] < 3 || c->program[a->expand_slot][1] > 5))
            goto bad; /* an expansion names the TVAR record of a block index */
        if (a->kind < 0 || a->kind > 3 || a->width < 1 || a->width > 1024 ||
            !ref_ok(a->guard_slot, hdr[0], 1) || a->residue_bits < 0 || a->residue_bits > 64 ||
            !ref_ok(a->addr_slot, hdr[0], 0) || !ref_ok(a->const_slot, hdr[0], 1) ||
            a->n_atoms < 0 || (a->base_offset >= 0 && (a->base_size < 1 || a->base_size > 8)) ||
            !ref_ok(a->rebase_slot, hdr[0], 1) || (a->rebase_slot >= 0 && a->base_offset < 0))
            goto bad;
        for (int j = 0; j < 4 && j < a->n_atoms; j++)
            if (!ref_ok(a->coef[j], hdr[0], 0) || !ref_ok(a->atom[j], hdr[0], 0))
                goto bad;
        if (a->indirect)
            c->has_indirect = 1;
        if (a->expand_slot >= 0 && !add_expansion(c, a->expand_slot))
            goto bad;
    }
    memcpy(c->pairs, q, (size_t)hdr[2] * 8);
    for (uint32_t k = 0; k < hdr[2]; k++)
        if (c->pairs[k][0] < 0 || (uint32_t)c->pairs[k][0] >= hdr[1] || c->pairs[k][1] < 0 ||
            (uint32_t)c->pairs[k][1] >= hdr[1])
            goto bad;
    c->fast = kc_fast_compile(c); /* NULL: no fast path, the general evaluator decides */
    return c;
bad:
    kc_check_free(c);
    return NULL;
}

void kc_check_free(struct kc_check *c)
{
    if (!c)
        return;
    for (uint32_t k = 0; k < c->n_expand; k++)
        free(c->expand[k].cone);
    free(c->expand);
    free(c->program);
    free(c->accesses);
    free(c->pairs);
    kc_fast_free(c->fast);
    free(c);
}

/* ------------------------------------------------------------------ bound arithmetic */
static i128 nlo(i128 x) { return x <= -KC_LIMIT ? -KC_INF : x >= KC_LIMIT ? KC_LIMIT : x; }
static i128 nhi(i128 x) { return x >= KC_LIMIT ? KC_INF : x <= -KC_LIMIT ? -KC_LIMIT : x; }
static int is_inf(i128 x) { return x >= KC_INF || x <= -KC_INF; }
static i128 min2(i128 a, i128 b) { return a < b ? a : b; }
static i128 max2(i128 a, i128 b) { return a > b ? a : b; }
static i128 abs2(i128 a) { return a < 0 ? -a : a; }
static int64_t mn64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t mx64(int64_t a, int64_t b) { return a > b ? a : b; }

static i128 add_lo(i128 a, i128 b) { return (a == -KC_INF || b == -KC_INF) ? -KC_INF : nlo(a + b); }
static i128 add_hi(i128 a, i128 b) { return (a == KC_INF || b == KC_INF) ? KC_INF : nhi(a + b); }

static i128 mulx(i128 a, i128 b)
{
    if (a == 0 || b == 0)
        return 0;
    if (a > -((i128)1 << 62) && a < ((i128)1 << 62) && b > -((i128)1 << 62) &&
        b < ((i128)1 << 62))
        return a * b; /* cannot overflow: no overflow-checked 128-bit multiply needed */
    int neg = (a < 0) != (b < 0);
    i128 r;
    if (is_inf(a) || is_inf(b) || __builtin_mul_overflow(a, b, &r))
        return neg ? -KC_INF : KC_INF;
    return r;
}

static i128 floordiv(i128 a, i128 b) /* b > 0 */
{
    i128 q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int bit_length(i128 x)
{
    int n = 0;
    while (x > 0)
        x >>= 1, n++;
    return n;
}

/* Python and_clearing_low_bits (kernelcheck.launch.check): the exact range of x & mask over
 * lo <= x <= hi when lo >= 0 and mask, on the bits of any such x, only clears those below
 * its lowest set bit (x & ~7): the AND rounds x down to a multiple, keeping the order. */
static int and_clearing_low_bits(i128 lo, i128 hi, i128 mask, i128 *rlo, i128 *rhi)
{
    if (lo < 0 || is_inf(hi) || is_inf(mask))
        return 0;
    int length = bit_length(hi), low = 0;
    if (mask == 0)
        low = length;
    else
        while (!((mask >> low) & 1))
            low++;
    if (low < length) {
        i128 run = ((i128)1 << (length - low)) - 1;
        if (((mask >> low) & run) != run)
            return 0;
    }
    *rlo = lo & mask;
    *rhi = hi & mask;
    return 1;
}

static inline void copy_slot(struct slot *dst, const struct slot *src)
{
    dst->n = src->n;
    dst->exact = src->exact;
    dst->fixed = src->fixed;
    for (int k = 0; k < src->n; k++)
        dst->p[k] = src->p[k];
}

static inline void set1(struct slot *s, i128 lo, i128 hi)
{
    s->n = 1;
    s->p[0].lo = lo;
    s->p[0].hi = hi;
}

/* Sort and merge n pieces of tmp into s (Python _norm: more than 8 become their hull). */
static void norm(struct slot *s, struct piece *tmp, int n)
{
    if (n == 1) {
        set1(s, tmp[0].lo, tmp[0].hi);
        return;
    }
    for (int i = 1; i < n; i++) { /* insertion sort: n is small */
        struct piece x = tmp[i];
        int j = i - 1;
        while (j >= 0 && tmp[j].lo > x.lo) {
            tmp[j + 1] = tmp[j];
            j--;
        }
        tmp[j + 1] = x;
    }
    int m = 0;
    struct piece out[64];
    for (int k = 0; k < n; k++) {
        if (m && (out[m - 1].hi == KC_INF || tmp[k].lo <= out[m - 1].hi + 1)) {
            if (tmp[k].hi > out[m - 1].hi)
                out[m - 1].hi = tmp[k].hi;
        } else {
            out[m++] = tmp[k];
        }
    }
    if (m > MAXP) {
        i128 hi = out[0].hi;
        for (int k = 1; k < m; k++)
            hi = max2(hi, out[k].hi);
        out[0].hi = hi;
        m = 1;
    }
    s->n = m;
    memcpy(s->p, out, (size_t)m * sizeof out[0]);
}

static void hull(const struct slot *s, i128 *lo, i128 *hi)
{
    *lo = s->p[0].lo;
    *hi = s->p[0].hi;
    for (int k = 1; k < s->n; k++)
        *hi = max2(*hi, s->p[k].hi);
}

static i128 tdiv(i128 p, i128 q, int *bad)
{
    if (is_inf(q)) {
        if (is_inf(p))
            *bad = 1;
        return 0;
    }
    if (is_inf(p))
        return ((p < 0) != (q < 0)) ? -KC_INF : KC_INF;
    return p / q; /* C division truncates, as Python's _tdiv */
}

static void binary(struct slot *r, int op, const struct slot *x, const struct slot *y)
{
    struct piece tmp[64];
    if (x->n < 0 || y->n < 0) {
        r->n = -1;
        return;
    }
    if (op == 10) { /* JOIN */
        int n = 0;
        for (int k = 0; k < x->n; k++) tmp[n++] = x->p[k];
        for (int k = 0; k < y->n; k++) tmp[n++] = y->p[k];
        norm(r, tmp, n);
        return;
    }
    if (x->n == 0 || y->n == 0) {
        r->n = 0;
        return;
    }
    if (op == 5) { /* ADD */
        if (x->n == 1 && y->n == 1) {
            set1(r, add_lo(x->p[0].lo, y->p[0].lo), add_hi(x->p[0].hi, y->p[0].hi));
            return;
        }
        int n = 0;
        for (int i = 0; i < x->n; i++)
            for (int j = 0; j < y->n; j++)
                tmp[n].lo = add_lo(x->p[i].lo, y->p[j].lo),
                tmp[n++].hi = add_hi(x->p[i].hi, y->p[j].hi);
        norm(r, tmp, n);
        return;
    }
    if (op == 6) { /* MUL */
        if (x->n == 1 && y->n == 1) {
            i128 a = x->p[0].lo, b = x->p[0].hi, c = y->p[0].lo, d = y->p[0].hi;
            if (a == b && c == d && !is_inf(a) && !is_inf(c)) {
                i128 p = mulx(a, c);
                set1(r, nlo(p), nhi(p));
                return;
            }
            i128 p1 = mulx(a, c), p2 = mulx(a, d), p3 = mulx(b, c), p4 = mulx(b, d);
            set1(r, nlo(min2(min2(p1, p2), min2(p3, p4))), nhi(max2(max2(p1, p2), max2(p3, p4))));
            return;
        }
        int n = 0;
        for (int i = 0; i < x->n; i++)
            for (int j = 0; j < y->n; j++) {
                i128 a = x->p[i].lo, b = x->p[i].hi, c = y->p[j].lo, d = y->p[j].hi;
                i128 p1 = mulx(a, c), p2 = mulx(a, d), p3 = mulx(b, c), p4 = mulx(b, d);
                tmp[n].lo = nlo(min2(min2(p1, p2), min2(p3, p4)));
                tmp[n++].hi = nhi(max2(max2(p1, p2), max2(p3, p4)));
            }
        norm(r, tmp, n);
        return;
    }
    i128 a, b, c, d, lo, hi;
    hull(x, &a, &b);
    hull(y, &c, &d);
    switch (op) {
    case 8: set1(r, min2(a, c), min2(b, d)); return;
    case 9: set1(r, max2(a, c), max2(b, d)); return;
    case 11: /* DIV, truncating */
        if (c > 0 || d < 0) {
            int bad = 0;
            i128 q[4] = {tdiv(a, c, &bad), tdiv(a, d, &bad), tdiv(b, c, &bad),
                         tdiv(b, d, &bad)};
            if (bad) {
                r->n = -1;
                return;
            }
            set1(r, nlo(min2(min2(q[0], q[1]), min2(q[2], q[3]))),
                 nhi(max2(max2(q[0], q[1]), max2(q[2], q[3]))));
            return;
        }
        r->n = -1;
        return;
    case 12: { /* REM, sign of the dividend */
        if (a == b && c == d && c != 0 && !is_inf(a) && !is_inf(c)) {
            i128 m = abs2(a) % abs2(c);
            set1(r, a >= 0 ? m : -m, a >= 0 ? m : -m);
            return;
        }
        if (c <= 0 && 0 <= d) {
            r->n = -1;
            return;
        }
        i128 m = max2(abs2(c), abs2(d));
        m = is_inf(m) ? KC_INF : m - 1;
        set1(r, a >= 0 ? 0 : -m, b > 0 ? m : 0);
        return;
    }
    case 14: /* AND */
        if (a == b && c == d && !is_inf(a) && !is_inf(c)) set1(r, a & c, a & c);
        else if (c == d && and_clearing_low_bits(a, b, c, &lo, &hi)) set1(r, lo, hi);
        else if (a == b && and_clearing_low_bits(c, d, a, &lo, &hi)) set1(r, lo, hi);
        else if (a >= 0 && c >= 0) set1(r, 0, min2(b, d));
        else if (a >= 0) set1(r, 0, b);
        else if (c >= 0) set1(r, 0, d);
        else r->n = -1;
        return;
    case 15: case 16: /* OR, XOR */
        if (a == b && c == d && !is_inf(a) && !is_inf(c)) {
            i128 v = op == 15 ? (a | c) : (a ^ c);
            set1(r, v, v);
        } else if (a >= 0 && c >= 0) {
            i128 m = max2(b, d);
            set1(r, 0, is_inf(m) || bit_length(m) >= 100 ? KC_INF
                                                          : ((i128)1 << bit_length(m)) - 1);
        } else {
            r->n = -1;
        }
        return;
    default:
        r->n = -1;
    }
}

static void wrap(struct slot *r, const struct slot *v, int bits, int is_signed)
{
    if (v->n <= 0) {
        copy_slot(r, v);
        r->exact = 1;
        return;
    }
    i128 mod = (i128)1 << bits;
    i128 lo_r = is_signed ? -((i128)1 << (bits - 1)) : 0, hi_r = lo_r + mod - 1, lo, hi;
    hull(v, &lo, &hi);
    if (lo >= lo_r && hi <= hi_r) {
        copy_slot(r, v);
        r->exact = 1;
        return;
    }
    if (lo == hi && !is_inf(lo)) { /* one value: wrapping it is exact, not the identity */
        i128 x = ((lo - lo_r) & (mod - 1)) + lo_r; /* floor-mod by a power of two */
        set1(r, x, x);
        r->exact = 0;
        return;
    }
    r->exact = 0;
    if (is_inf(lo) || is_inf(hi) || hi - lo >= mod) {
        /* every residue is possible: the whole range of the width */
        set1(r, lo_r, hi_r);
        return;
    }
    struct piece tmp[2 * MAXP];
    int n = 0;
    for (int k = 0; k < v->n; k++) {
        i128 shift = ((v->p[k].lo - lo_r) >> bits) << bits; /* floor to a multiple of mod */
        i128 qlo = v->p[k].lo - shift, qhi = v->p[k].hi - shift;
        if (qhi <= hi_r) {
            tmp[n].lo = qlo, tmp[n++].hi = qhi;
        } else {
            tmp[n].lo = qlo, tmp[n++].hi = hi_r;
            tmp[n].lo = lo_r, tmp[n++].hi = qhi - mod;
        }
    }
    norm(r, tmp, n);
}

/* Python _tripmax: [(0, kmax)] bounds the iteration count of a loop whose test is x < b
 * (mode 0), x > b (mode 1) or x != b (mode 2: step +-1, or single values and a step that
 * divides the distance); invalid when a tested value may wrap. */
static void tripmax(struct slot *r, const struct slot *x0, const struct slot *st,
                    const struct slot *bd, int bits, int is_signed, int mode)
{
    if (x0->n < 0 || st->n < 0 || bd->n < 0) {
        r->n = -1;
        return;
    }
    if (!x0->n || !st->n || !bd->n) {
        r->n = 0; /* no value reaches the test: the loop does not run */
        return;
    }
    i128 x_lo, x_hi, s_lo, s_hi, b_lo, b_hi, prod;
    hull(x0, &x_lo, &x_hi);
    hull(st, &s_lo, &s_hi);
    hull(bd, &b_lo, &b_hi);
    i128 m = max2(max2(abs2(x_lo), abs2(x_hi)), max2(max2(abs2(b_lo), abs2(b_hi)),
                                                    max2(abs2(s_lo), abs2(s_hi))));
    i128 lo_r = is_signed ? -((i128)1 << (bits - 1)) : 0;
    i128 hi_r = lo_r + ((i128)1 << bits) - 1;
    r->n = -1;
    if (m >= KC_LIMIT || x_lo < lo_r || x_hi > hi_r)
        return;
    if (mode == 0) {
        if (s_lo <= 0)
            return;
        i128 kmax = max2(0, floordiv(b_hi - 1 - x_lo, s_lo) + 1);
        if (__builtin_mul_overflow(kmax, s_hi, &prod) || x_hi + prod > hi_r)
            return;
        set1(r, 0, kmax);
    } else if (mode == 1) {
        if (s_hi >= 0)
            return;
        i128 kmax = max2(0, floordiv(x_hi - b_lo - 1, -s_hi) + 1);
        if (__builtin_mul_overflow(kmax, s_lo, &prod) || x_lo + prod < lo_r)
            return;
        set1(r, 0, kmax);
    } else if (mode == 2 && s_lo == -1 && s_hi == -1 && x_lo >= b_hi) {
        set1(r, 0, x_hi - b_lo);
    } else if (mode == 2 && s_lo == 1 && s_hi == 1 && x_hi <= b_lo) {
        set1(r, 0, b_hi - x_lo);
    } else if (mode == 2 && s_lo == s_hi && s_lo != 0 && x_lo == x_hi && b_lo == b_hi) {
        /* a count by s toward the bound: it fails at iteration (b - x0) / s when s
         * divides the distance in its direction; otherwise it wraps (not modelled) */
        i128 distance = b_lo - x_lo;
        if (distance % s_lo == 0 && (distance == 0 || (distance > 0) == (s_lo > 0)))
            set1(r, 0, distance / s_lo);
    }
}

/* Python _neq: v without the single value of other (a != guard) when other is a point. A
 * split that would exceed MAXP ranges keeps v (a superset). */
static void neq(struct slot *r, const struct slot *v, const struct slot *other)
{
    copy_slot(r, v);
    if (v->n <= 0 || other->n != 1 || other->p[0].lo != other->p[0].hi ||
        is_inf(other->p[0].lo))
        return;
    i128 c = other->p[0].lo;
    struct slot out = {.n = 0};
    for (int k = 0; k < v->n; k++) {
        i128 lo = v->p[k].lo, hi = v->p[k].hi;
        if (out.n + 2 > MAXP)
            return;
        if (lo <= c && c <= hi) {
            if (lo < c) out.p[out.n].lo = lo, out.p[out.n++].hi = c - 1;
            if (c < hi) out.p[out.n].lo = c + 1, out.p[out.n++].hi = hi;
        } else {
            out.p[out.n++] = v->p[k];
        }
    }
    r->n = out.n;
    memcpy(r->p, out.p, (size_t)out.n * sizeof out.p[0]);
}

/* Python _cmp: {0} when no values of x and y satisfy comparison op (CMP_NAMES: lt le gt
 * ge eq ne), {1} when all do, else [0, 1]; empty when an operand is, invalid when one is. */
static void cmp(struct slot *r, const struct slot *x, const struct slot *y, int op)
{
    if (x->n < 0 || y->n < 0) {
        r->n = -1;
        return;
    }
    if (!x->n || !y->n) {
        r->n = 0;
        return;
    }
    i128 a, b, c, d;
    hull(x, &a, &b);
    hull(y, &c, &d);
    int t, f;
    switch (op) {
    case 0: t = b < c, f = a >= d; break;
    case 1: t = b <= c, f = a > d; break;
    case 2: t = a > d, f = b <= c; break;
    case 3: t = a >= d, f = b < c; break;
    default: {
        int same = a == b && b == c && c == d && !is_inf(a), apart = 1;
        for (int i = 0; i < x->n && apart; i++)
            for (int j = 0; j < y->n && apart; j++)
                if (x->p[i].lo <= y->p[j].hi && y->p[j].lo <= x->p[i].hi)
                    apart = 0;
        t = op == 4 ? same : apart, f = op == 4 ? apart : same;
    }
    }
    set1(r, t ? 1 : 0, f ? 0 : 1);
}

/* Python _pow2: 2**min(s, width) for unsigned shift amounts s. */
static void pow2(struct slot *r, const struct slot *v, int width)
{
    if (v->n <= 0) {
        copy_slot(r, v);
        return;
    }
    i128 lo, hi;
    hull(v, &lo, &hi);
    if (lo < 0) {
        r->n = -1;
        return;
    }
    set1(r, (i128)1 << (lo < width ? (int)lo : width), (i128)1 << (hi < width ? (int)hi : width));
}

/* Python _shrv: floor(x / 2**min(s, width)); the extremes are at the corners. */
static void shrv(struct slot *r, const struct slot *v, const struct slot *amount, int width)
{
    if (v->n < 0 || amount->n < 0) {
        r->n = -1;
        return;
    }
    if (!v->n || !amount->n) {
        r->n = 0;
        return;
    }
    i128 slo, shi, lo, hi;
    hull(amount, &slo, &shi);
    hull(v, &lo, &hi);
    if (slo < 0) {
        r->n = -1;
        return;
    }
    int k1 = slo < width ? (int)slo : width, k2 = shi < width ? (int)shi : width;
    /* an arithmetic shift of a finite value is floor division by 2**k; infinities stay */
    i128 q[4] = {is_inf(lo) ? lo : lo >> k1, is_inf(lo) ? lo : lo >> k2,
                 is_inf(hi) ? hi : hi >> k1, is_inf(hi) ? hi : hi >> k2};
    set1(r, min2(min2(q[0], q[1]), min2(q[2], q[3])), max2(max2(q[0], q[1]), max2(q[2], q[3])));
}

static void bound(struct slot *r, const struct slot *v, const struct slot *lv,
                  const struct slot *hv)
{
    if (v->n <= 0) {
        copy_slot(r, v);
        return;
    }
    i128 lo_cap = -KC_INF, hi_cap = KC_INF, ignore;
    if (lv) {
        if (!lv->n) { r->n = 0; return; }
        if (lv->n > 0) lo_cap = lv->p[0].lo;
    }
    if (hv) {
        if (!hv->n) { r->n = 0; return; }
        if (hv->n > 0) hull(hv, &ignore, &hi_cap);
    }
    int n = 0;
    for (int k = 0; k < v->n; k++) {
        i128 lo = max2(v->p[k].lo, lo_cap), hi = min2(v->p[k].hi, hi_cap);
        if (lo <= hi)
            r->p[n].lo = lo, r->p[n++].hi = hi;
    }
    r->n = n;
}

/* ------------------------------------------------------------------ per-thread scratch */
/* The byte set of an expanded access: sorted, disjoint half-open ranges, grown as needed. */
struct bigset {
    int n;          /* ranges held; -1 unknown */
    int cap;
    struct piece *p;
};

struct scratch {
    uint32_t cap_slots, cap_acc;
    struct slot *slots;
    struct slot *sets;   /* byte set per access: n < 0 unknown; -2 not computed */
    struct slot *pinned; /* slots of one block index of an expansion (cap_slots) */
    struct bigset *big;  /* byte sets of expanded accesses (cap_acc) */
    uint8_t *is_big;     /* per access: its byte set is big[k] */
    uint8_t *want;       /* per access: its byte set is needed (expand_sets) */
    uint64_t *tmp;       /* PARAMX_SPAN values read by a PARAMX record */
};

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static __thread struct scratch *tls_scratch;

static void scratch_free(void *p)
{
    struct scratch *s = p;
    if (s) {
        free(s->slots);
        free(s->sets);
        free(s->pinned);
        for (uint32_t k = 0; s->big && k < s->cap_acc; k++)
            free(s->big[k].p);
        free(s->big);
        free(s->is_big);
        free(s->want);
        free(s->tmp);
        free(s);
    }
}

static void scratch_init(void) { pthread_key_create(&scratch_key, scratch_free); }

static struct scratch *scratch_for(uint32_t slots, uint32_t acc)
{
    struct scratch *s = tls_scratch;
    if (s && s->cap_slots >= slots && s->cap_acc >= acc)
        return s;
    pthread_once(&scratch_once, scratch_init);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return NULL;
        s->tmp = malloc(PARAMX_SPAN * sizeof *s->tmp);
        if (!s->tmp) {
            free(s);
            return NULL;
        }
        tls_scratch = s;
        pthread_setspecific(scratch_key, s);
    }
    if (s->cap_slots < slots) {
        struct slot *n = realloc(s->slots, (size_t)slots * sizeof *n);
        if (!n)
            return NULL;
        s->slots = n;
        n = realloc(s->pinned, (size_t)slots * sizeof *n);
        if (!n)
            return NULL;
        s->pinned = n, s->cap_slots = slots;
    }
    if (s->cap_acc < acc) {
        struct slot *n = realloc(s->sets, (size_t)acc * sizeof *n);
        if (!n)
            return NULL;
        s->sets = n;
        struct bigset *b = realloc(s->big, (size_t)acc * sizeof *b);
        if (!b)
            return NULL;
        memset(b + s->cap_acc, 0, (size_t)(acc - s->cap_acc) * sizeof *b);
        s->big = b;
        uint8_t *f = realloc(s->is_big, acc);
        if (!f)
            return NULL;
        s->is_big = f;
        f = realloc(s->want, acc);
        if (!f)
            return NULL;
        s->want = f, s->cap_acc = acc;
    }
    return s;
}

/* Python _cannot_run: the guard in slot is false for every value (or has none). */
static int cannot_run(const struct slot *v, int64_t slot)
{
    if (slot < 0)
        return 0;
    const struct slot *g = &v[slot];
    if (g->n < 0)
        return 0;
    if (g->n == 0)
        return 1;
    i128 lo, hi;
    hull(g, &lo, &hi);
    return hi <= 0;
}

/* ------------------------------------------------------------------ evaluation */
static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

/* Python _paramx: the values of size bytes of the buffer at every offset of o that is a
 * multiple of size (a misaligned load faults); invalid when an offset lies outside the
 * buffer, every value of the width past PARAMX_SPAN offsets. tmp holds PARAMX_SPAN
 * values. */
static void paramx(struct slot *r, const struct slot *o, int64_t size,
                   const unsigned char *params, size_t psize, uint64_t *tmp)
{
    if (o->n <= 0) {
        copy_slot(r, o);
        return;
    }
    i128 lo, hi, count = 0;
    hull(o, &lo, &hi);
    if (lo < 0 || hi + size > (i128)psize) {
        r->n = -1;
        return;
    }
    for (int k = 0; k < o->n; k++)
        count += o->p[k].hi - o->p[k].lo + 1;
    if (count > PARAMX_SPAN) {
        set1(r, 0, ((i128)1 << (8 * size)) - 1);
        return;
    }
    int n = 0;
    for (int k = 0; k < o->n; k++)
        for (i128 off = o->p[k].lo; off <= o->p[k].hi; off++) {
            if (off % size)
                continue;
            uint64_t x = 0;
            for (int64_t j = size - 1; j >= 0; j--)
                x = x << 8 | params[(size_t)off + (size_t)j];
            tmp[n++] = x;
        }
    qsort(tmp, (size_t)n, sizeof tmp[0], cmp_u64);
    /* merge touching points into ranges; more than MAXP ranges become their hull */
    int m = 0;
    struct piece out[MAXP];
    for (int k = 0; k < n; k++) {
        if (m && (i128)tmp[k] <= out[m - 1].hi + 1) {
            if ((i128)tmp[k] > out[m - 1].hi)
                out[m - 1].hi = (i128)tmp[k];
        } else if (m < MAXP) {
            out[m].lo = out[m].hi = (i128)tmp[k];
            m++;
        } else {
            set1(r, (i128)tmp[0], (i128)tmp[n - 1]);
            return;
        }
    }
    r->n = m;
    memcpy(r->p, out, (size_t)m * sizeof out[0]);
}

/* Evaluate record k into v[k] from the slots before it (Python _step); 0 when a parameter
 * read lies past the buffer (no layout). */
static int eval_record(const struct kc_check *c, uint32_t k, struct slot *v,
                       const unsigned char *params, size_t psize, const uint32_t dims[6],
                       uint64_t *tmp)
{
    const int64_t *r = c->program[k];
    struct slot *s = &v[k];
    int64_t a = r[1], b = r[2], cc = r[3];
    int fixed;
    switch (r[0]) {
    case 0: case 1: case 2: fixed = 1; break;
    case 3: case 4: case 10: case 18: fixed = 0; break;
    case 7: case 13: case 22: case 25: fixed = v[a].fixed; break;
    /* a bound counts its bounds' terms, as the affine forms do (Python _step) */
    case 17: fixed = v[a].fixed && (b < 0 || v[b].fixed) && (cc < 0 || v[cc].fixed); break;
    case 19: fixed = v[a].fixed && v[b].fixed && v[cc].fixed; break;
    default: fixed = v[a].fixed && v[b].fixed;
    }
    s->exact = 1;
    switch (r[0]) {
    case 0: set1(s, cc, cc); break;
    case 1: {
        if ((uint64_t)a + (uint64_t)b > psize)
            return 0;
        uint64_t x = 0;
        for (int64_t j = b - 1; j >= 0; j--)
            x = x << 8 | params[a + j];
        set1(s, (i128)x, (i128)x);
        break;
    }
    case 2: set1(s, dims[a], dims[a]); break;
    case 3: {
        i128 top = a == 6 ? 31 : (i128)dims[a] - 1;
        if (top >= 0) set1(s, 0, top); else s->n = 0;
        break;
    }
    case 4: set1(s, 0, a >= 100 ? KC_INF : ((i128)1 << a) - 1); break;
    case 7:
        wrap(s, &v[a], (int)b, (int)cc);
        s->exact = (s->exact || v[a].fixed) && v[a].exact;
        break;
    case 17:
        bound(s, &v[a], b >= 0 ? &v[b] : NULL, cc >= 0 ? &v[cc] : NULL);
        s->exact = v[a].exact;
        break;
    case 13:
        copy_slot(s, &v[a]);
        for (int j = 0; j < s->n; j++) {
            if (!is_inf(s->p[j].lo)) s->p[j].lo = b >= 127 ? (s->p[j].lo < 0 ? -1 : 0) : s->p[j].lo >> b;
            if (!is_inf(s->p[j].hi)) s->p[j].hi = b >= 127 ? (s->p[j].hi < 0 ? -1 : 0) : s->p[j].hi >> b;
        }
        s->exact = v[a].exact;
        break;
    case 18:
        if (a < 0) set1(s, 0, KC_INF); else { copy_slot(s, &v[a]); s->exact = 1; }
        break;
    case 19:
        tripmax(s, &v[a], &v[b], &v[cc], (int)(r[4] & 0xFF), (int)(r[4] >> 8) & 1,
                (int)(r[4] >> 9));
        s->exact = 1;
        break;
    case 20:
        neq(s, &v[a], &v[b]);
        s->exact = v[a].exact;
        break;
    case 21: cmp(s, &v[a], &v[b], (int)cc); break;
    case 22: pow2(s, &v[a], (int)b); s->exact = v[a].exact; break;
    case 23:
        shrv(s, &v[a], &v[b], (int)cc);
        s->exact = v[a].exact && v[b].exact;
        break;
    case 24:
        if (cannot_run(v, b))
            s->n = 0;
        else
            copy_slot(s, &v[a]);
        s->exact = v[a].exact;
        break;
    case 25:
        paramx(s, &v[a], b, params, psize, tmp);
        s->exact = v[a].exact;
        break;
    default:
        binary(s, (int)r[0], &v[a], &v[b]);
        s->exact = v[a].exact && v[b].exact;
    }
    s->fixed = fixed;
    return 1;
}

static int run_program(const struct kc_check *c, struct slot *v, const unsigned char *params,
                       size_t psize, const uint32_t grid[3], const uint32_t block[3],
                       uint64_t *tmp)
{
    const uint32_t dims[6] = {block[0], block[1], block[2], grid[0], grid[1], grid[2]};
    for (uint32_t k = 0; k < c->n_program; k++)
        if (!eval_record(c, k, v, params, psize, dims, tmp))
            return 0;
    return 1;
}

/* The bytes access k may touch, as half-open ranges in out; n = -1 when unknown. */
static void byte_set(const struct kc_check *c, uint32_t k, const struct slot *v,
                     const unsigned char *params, size_t psize, kc_alloc_lookup_fn lookup,
                     struct slot *out)
{
    const struct kc_access *a = &c->accesses[k];
    const struct slot *s = &v[a->addr_slot];
    if (cannot_run(v, a->guard_slot)) {
        out->n = 0;
        return;
    }
    if (a->indirect == 2) { /* inside a module variable: bytes unknown */
        out->n = s->n == 0 ? 0 : -1;
        return;
    }
    if (a->indirect || s->n < 0) {
        out->n = -1;
        if (!lookup || a->base_offset < 0 ||
            (uint64_t)a->base_offset + (uint64_t)a->base_size > psize)
            return;
        uint64_t base = 0, start, size;
        for (int64_t j = a->base_size - 1; j >= 0; j--)
            base = base << 8 | params[a->base_offset + j];
        if (s->n == 0) {
            out->n = 0;
            return;
        }
        if (!lookup(base, &start, &size))
            return;
        /* Python _rebase_inside: the other pointer-wide parameters in the offset must keep
         * the base inside its allocation (end included) for the allocation to bound it. */
        if (a->rebase_slot >= 0) {
            const struct slot *t = &v[a->rebase_slot];
            if (t->n < 0)
                return;
            for (int j = 0; j < t->n; j++)
                if ((i128)base + t->p[j].lo < (i128)start ||
                    (i128)base + t->p[j].hi > (i128)start + (i128)size)
                    return;
        }
        if (s->n < 0) {
            set1(out, (i128)start, (i128)start + (i128)size);
            return;
        }
        /* Both bound the access: the allocation of its base and the ranges of its
         * (guard-bounded) address. */
        i128 alo = (i128)start, ahi = (i128)start + (i128)size;
        out->n = 0;
        for (int j = 0; j < s->n; j++) {
            i128 lo = s->p[j].lo, hi = s->p[j].hi == KC_INF ? ahi : s->p[j].hi + a->width;
            if (lo < alo)
                lo = alo;
            if (hi > ahi)
                hi = ahi;
            if (lo < hi) {
                out->p[out->n].lo = lo;
                out->p[out->n].hi = hi;
                out->n++;
            }
        }
        /* s is a non-empty superset of the addresses the access takes when it runs: none
         * in the allocation means the launch contradicts the in-bounds assumption, and
         * the bytes are unknown (never an empty set). */
        if (out->n == 0)
            out->n = -1;
        return;
    }
    out->n = s->n;
    for (int j = 0; j < s->n; j++) {
        out->p[j].lo = s->p[j].lo;
        out->p[j].hi = s->p[j].hi == KC_INF ? KC_INF : s->p[j].hi + a->width;
    }
}

/* A byte set as the pair test reads it: n ranges (n < 0 unknown) of an access's slot set,
 * or of its expanded set. */
struct view { int n; const struct piece *p; };

static struct view view_of(const struct scratch *sc, uint32_t k)
{
    struct view out;
    if (sc->is_big[k])
        out.n = sc->big[k].n, out.p = sc->big[k].p;
    else
        out.n = sc->sets[k].n, out.p = sc->sets[k].p;
    return out;
}

static int intersects(struct view x, struct view y)
{
    int i = 0, j = 0;
    while (i < x.n && j < y.n) {
        if (max2(x.p[i].lo, y.p[j].lo) < min2(x.p[i].hi, y.p[j].hi))
            return 1;
        if (x.p[i].hi < y.p[j].hi) i++; else j++;
    }
    return 0;
}

/* ------------------------------------------------------------------ expansions */
static int big_add(struct bigset *b, i128 lo, i128 hi)
{
    if (b->n > 0 && lo >= b->p[b->n - 1].lo && lo <= b->p[b->n - 1].hi) {
        if (hi > b->p[b->n - 1].hi)
            b->p[b->n - 1].hi = hi;
        return 1;
    }
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        struct piece *p = realloc(b->p, (size_t)cap * sizeof *p);
        if (!p)
            return 0;
        b->p = p, b->cap = cap;
    }
    b->p[b->n].lo = lo, b->p[b->n].hi = hi;
    b->n++;
    return 1;
}

static int cmp_piece(const void *x, const void *y)
{
    i128 a = ((const struct piece *)x)->lo, b = ((const struct piece *)y)->lo;
    return a < b ? -1 : a > b;
}

/* Sort and merge overlapping or touching half-open ranges (Python IntervalSet). */
static void big_norm(struct bigset *b)
{
    int sorted = 1;
    for (int k = 1; k < b->n && sorted; k++)
        sorted = b->p[k].lo >= b->p[k - 1].lo;
    if (!sorted)
        qsort(b->p, (size_t)b->n, sizeof b->p[0], cmp_piece);
    int m = 0;
    for (int k = 0; k < b->n; k++) {
        if (m && b->p[k].lo <= b->p[m - 1].hi) {
            if (b->p[k].hi > b->p[m - 1].hi)
                b->p[m - 1].hi = b->p[k].hi;
        } else {
            b->p[m++] = b->p[k];
        }
    }
    b->n = m;
}

static void byte_set(const struct kc_check *c, uint32_t k, const struct slot *v,
                     const unsigned char *params, size_t psize, kc_alloc_lookup_fn lookup,
                     struct slot *out);

/* Python expanded_byte_sets: the byte set of every wanted access with an expansion, block
 * index by block index along its dimension, with the slots computed from that index
 * re-evaluated in sc->pinned (the others keep their values over the whole launch). The
 * union of the per-block sets is the access's set (is_big). An expansion over more than
 * EXPAND_MAX blocks is not made: those accesses keep their whole-launch sets. 0 when out
 * of memory. */
static int expand_sets(const struct kc_check *c, struct scratch *sc, const struct slot *v,
                       const unsigned char *params, size_t psize, const uint32_t dims[6],
                       kc_alloc_lookup_fn lookup, const uint8_t *want)
{
    for (uint32_t e = 0; e < c->n_expand; e++) {
        const struct kc_expand *x = &c->expand[e];
        uint32_t count = dims[c->program[x->slot][1]];
        if (count > EXPAND_MAX)
            continue;
        int any = 0;
        for (uint32_t k = 0; k < c->n_accesses; k++)
            if (want[k] && c->accesses[k].expand_slot == x->slot)
                sc->big[k].n = 0, sc->is_big[k] = 1, any = 1;
        if (!any)
            continue;
        struct slot *pv = sc->pinned;
        memcpy(pv, v, (size_t)c->n_program * sizeof *pv);
        for (uint32_t b = 0; b < count; b++) {
            set1(&pv[x->slot], b, b);
            for (uint32_t j = 0; j < x->n_cone; j++)
                eval_record(c, x->cone[j], pv, params, psize, dims, sc->tmp);
            for (uint32_t k = 0; k < c->n_accesses; k++) {
                if (!want[k] || c->accesses[k].expand_slot != x->slot || sc->big[k].n < 0)
                    continue;
                struct slot one;
                byte_set(c, k, pv, params, psize, lookup, &one);
                if (one.n < 0) {
                    sc->big[k].n = -1;
                    continue;
                }
                for (int j = 0; j < one.n; j++)
                    if (!big_add(&sc->big[k], one.p[j].lo, one.p[j].hi))
                        return 0;
            }
        }
        for (uint32_t k = 0; k < c->n_accesses; k++)
            if (want[k] && c->accesses[k].expand_slot == x->slot && sc->big[k].n > 0)
                big_norm(&sc->big[k]);
    }
    return 1;
}

static int point(const struct slot *v, const struct slot *s, int64_t slot, i128 *out)
{
    (void)v;
    s = &s[slot];
    if (s->n != 1 || s->p[0].lo != s->p[0].hi || is_inf(s->p[0].lo))
        return 0;
    *out = s->p[0].lo;
    return 1;
}

struct term { i128 s, lo, hi; };

static i128 gcd128(i128 a, i128 b)
{
    a = abs2(a), b = abs2(b);
    while (b) { i128 t = a % b; a = b; b = t; }
    return a;
}

static i128 ceildiv_neg(i128 a, i128 g) { return -floordiv(-a, g); } /* ceil(a / g) */

/* Python _two_nested: lo <= d + S*z + s*c <= hi with S = k*s, exact in closed form. */
static int two_nested(i128 d, const struct term *t, i128 lo, i128 hi)
{
    i128 s = t[1].s, k = t[0].s / t[1].s;
    i128 u_lo = ceildiv_neg(lo - d, s), u_hi = floordiv(hi - d, s);
    if (u_lo > u_hi)
        return 0;
    return max2(t[0].lo, ceildiv_neg(u_lo - t[1].hi, k)) <=
           min2(t[0].hi, floordiv(u_hi - t[1].lo, k));
}

/* Python _solve: 1 = may overlap (or undecided), 0 = no assignment exists. */
static int solve(i128 d, const struct term *t, int n, i128 lo, i128 hi, long *budget)
{
    if (n == 0)
        return lo <= d && d <= hi;
    i128 g = 0;
    for (int k = 0; k < n; k++)
        g = gcd128(g, t[k].s);
    if (ceildiv_neg(lo - d, g) > floordiv(hi - d, g))
        return 0;
    if (n == 2 && t[0].s % t[1].s == 0)
        return two_nested(d, t, lo, hi);
    i128 s = t[0].s, r_lo = 0, r_hi = 0, x;
    for (int k = 1; k < n; k++) {
        if (__builtin_mul_overflow(t[k].s, t[k].lo, &x) || __builtin_add_overflow(r_lo, x, &r_lo))
            return 1;
        if (__builtin_mul_overflow(t[k].s, t[k].hi, &x) || __builtin_add_overflow(r_hi, x, &r_hi))
            return 1;
    }
    i128 z_from = max2(t[0].lo, ceildiv_neg(lo - d - r_hi, s));
    i128 z_to = min2(t[0].hi, floordiv(hi - r_lo - d, s));
    if (z_from > z_to)
        return 0;
    if (n == 1)
        return 1;
    if (z_to - z_from + 1 > *budget)
        return 1;
    for (i128 z = z_from; z <= z_to; z++) {
        if (--*budget < 0)
            return 1;
        if (__builtin_mul_overflow(s, z, &x))
            return 1;
        if (solve(d + x, t + 1, n - 1, lo, hi, budget))
            return 1;
    }
    return 0;
}

/* solve and terms_disjoint in 64-bit arithmetic: the same steps, the same budget, and -1
 * as soon as any intermediate value does not fit (the caller then redoes the test with
 * 128-bit integers, so the answer is always the one of the 128-bit test). 64-bit division
 * is several times cheaper than the 128-bit library division, and the fixture instances'
 * values all fit. */
struct term64 { int64_t s, lo, hi; };

static int64_t gcd64(int64_t a, int64_t b) /* a, b >= 0 */
{
    uint64_t x = (uint64_t)a, y = (uint64_t)b;
    if (!x || !y)
        return (int64_t)(x | y);
    int k = __builtin_ctzll(x | y);
    x >>= __builtin_ctzll(x);
    do {
        y >>= __builtin_ctzll(y);
        if (x > y) {
            uint64_t t = x;
            x = y, y = t;
        }
        y -= x;
    } while (y);
    return (int64_t)(x << k);
}

static int64_t floordiv64(int64_t a, int64_t b) /* b > 0 */
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int64_t ceildiv64(int64_t a, int64_t b) /* b > 0, a > INT64_MIN */
{
    int64_t q = a / b;
    return (a % b != 0 && a > 0) ? q + 1 : q;
}

#define OV64(x) (__builtin_expect((x), 0))

static int solve64(int64_t d, const struct term64 *t, int n, int64_t lo, int64_t hi,
                   long *budget)
{
    if (n == 0)
        return lo <= d && d <= hi;
    int64_t g = 0, x, e1, e2, r_lo = 0, r_hi = 0;
    for (int k = 0; k < n; k++)
        g = gcd64(g, t[k].s); /* coefficients are positive */
    if (OV64(__builtin_sub_overflow(lo, d, &e1) || __builtin_sub_overflow(hi, d, &e2) ||
             e1 == INT64_MIN))
        return -1;
    if (ceildiv64(e1, g) > floordiv64(e2, g))
        return 0;
    if (n == 2 && t[0].s % t[1].s == 0)
        return -1; /* the closed form of two nested terms: in 128-bit arithmetic */
    int64_t s = t[0].s;
    for (int k = 1; k < n; k++) {
        if (__builtin_mul_overflow(t[k].s, t[k].lo, &x) || __builtin_add_overflow(r_lo, x, &r_lo))
            return -1;
        if (__builtin_mul_overflow(t[k].s, t[k].hi, &x) || __builtin_add_overflow(r_hi, x, &r_hi))
            return -1;
    }
    if (OV64(__builtin_sub_overflow(e1, r_hi, &e1) || __builtin_sub_overflow(e2, r_lo, &e2) ||
             e1 == INT64_MIN))
        return -1;
    int64_t z_from = mx64(t[0].lo, ceildiv64(e1, s));
    int64_t z_to = mn64(t[0].hi, floordiv64(e2, s));
    if (z_from > z_to)
        return 0;
    if (n == 1)
        return 1;
    if ((uint64_t)z_to - (uint64_t)z_from >= (uint64_t)*budget)
        return 1; /* z_to - z_from + 1 > budget */
    for (int64_t z = z_from; z <= z_to; z++) {
        if (--*budget < 0)
            return 1;
        if (__builtin_mul_overflow(s, z, &x) || __builtin_add_overflow(d, x, &x))
            return -1;
        int got = solve64(x, t + 1, n - 1, lo, hi, budget);
        if (got)
            return got;
    }
    return 0;
}

/* 1 disjoint, 0 may overlap, -1 some value does not fit in 64 bits. */
static int terms_disjoint64(int64_t cw, int64_t cr, const struct term64 *raw, int n,
                            int64_t width_w, int64_t width_r)
{
    struct term64 merged[8];
    int m = 0;
    for (int k = 0; k < n; k++) {
        int64_t s = raw[k].s, lo = raw[k].lo, hi = raw[k].hi;
        if (lo > hi)
            return 1;
        if (s == 0)
            continue;
        if (s < 0) {
            if (s == INT64_MIN || lo == INT64_MIN || hi == INT64_MIN)
                return -1;
            int64_t t = lo;
            s = -s, lo = -hi, hi = -t;
        }
        int j = 0;
        while (j < m && merged[j].s != s) j++;
        if (j < m) {
            if (__builtin_add_overflow(merged[j].lo, lo, &merged[j].lo) ||
                __builtin_add_overflow(merged[j].hi, hi, &merged[j].hi))
                return -1;
        } else {
            merged[m].s = s, merged[m].lo = lo, merged[m++].hi = hi;
        }
    }
    for (int i = 1; i < m; i++) {
        struct term64 x = merged[i];
        int j = i - 1;
        while (j >= 0 && merged[j].s < x.s) {
            merged[j + 1] = merged[j];
            j--;
        }
        merged[j + 1] = x;
    }
    int64_t d, lo, hi;
    if (__builtin_sub_overflow(cw, cr, &d) || width_w < 1 || width_r < 1 ||
        width_w > ((int64_t)1 << 40) || width_r > ((int64_t)1 << 40))
        return -1;
    lo = -(width_w - 1), hi = width_r - 1;
    long budget = LATTICE_BUDGET;
    int got = solve64(d, merged, m, lo, hi, &budget);
    return got < 0 ? -1 : !got;
}

static int fits64(i128 x) { return x >= INT64_MIN && x <= INT64_MAX; }

static int terms_disjoint128(i128 cw, i128 cr, const struct term *raw, int n,
                             int64_t width_w, int64_t width_r);

/* The exact lattice test on terms already read off the slots: 1 when the two accesses'
 * affine forms cannot meet over their atoms' ranges (Python lattice_may_overlap is False).
 * Run in 64-bit arithmetic when it fits, else (or on any overflow there) in 128-bit. */
static int terms_disjoint(i128 cw, i128 cr, const struct term *raw, int n, int64_t width_w,
                          int64_t width_r)
{
    int ok = fits64(cw) && fits64(cr);
    struct term64 r64[8];
    for (int k = 0; ok && k < n; k++) {
        ok = fits64(raw[k].s) && fits64(raw[k].lo) && fits64(raw[k].hi);
        r64[k].s = (int64_t)raw[k].s, r64[k].lo = (int64_t)raw[k].lo,
        r64[k].hi = (int64_t)raw[k].hi;
    }
    if (ok) {
        int got = terms_disjoint64((int64_t)cw, (int64_t)cr, r64, n, width_w, width_r);
        if (got >= 0)
            return got;
    }
    return terms_disjoint128(cw, cr, raw, n, width_w, width_r);
}

static int terms_disjoint128(i128 cw, i128 cr, const struct term *raw, int n,
                             int64_t width_w, int64_t width_r)
{
    struct term merged[8];
    int m = 0;
    for (int k = 0; k < n; k++) {
        i128 s = raw[k].s, lo = raw[k].lo, hi = raw[k].hi;
        if (lo > hi)
            return 1; /* an empty atom range: no assignment exists */
        if (s == 0)
            continue;
        if (s < 0) {
            i128 t = lo;
            s = -s, lo = -hi, hi = -t;
        }
        int j = 0;
        while (j < m && merged[j].s != s) j++;
        if (j < m) {
            merged[j].lo += lo;
            merged[j].hi += hi;
        } else {
            merged[m].s = s, merged[m].lo = lo, merged[m++].hi = hi;
        }
    }
    for (int i = 1; i < m; i++) { /* by decreasing coefficient (they are distinct) */
        struct term x = merged[i];
        int j = i - 1;
        while (j >= 0 && merged[j].s < x.s) {
            merged[j + 1] = merged[j];
            j--;
        }
        merged[j + 1] = x;
    }
    long budget = LATTICE_BUDGET;
    return !solve(cw - cr, merged, m, -(width_w - 1), width_r - 1, &budget);
}

int kc_lattice_disjoint(int64_t cw, int64_t cr, int n, const int8_t *sign,
                        const int64_t *coef, const int64_t *lo, const int64_t *hi,
                        int64_t width_w, int64_t width_r)
{
    struct term raw[8];
    struct term64 r64[8];
    int ok = 1;
    n = n < 8 ? n : 8;
    for (int k = 0; k < n; k++) {
        raw[k].s = (i128)sign[k] * coef[k], raw[k].lo = lo[k], raw[k].hi = hi[k];
        ok = ok && coef[k] != INT64_MIN;
        r64[k].s = sign[k] < 0 ? -coef[k] : coef[k], r64[k].lo = lo[k], r64[k].hi = hi[k];
    }
    if (ok) {
        int got = terms_disjoint64(cw, cr, r64, n, width_w, width_r);
        if (got >= 0)
            return got;
    }
    return terms_disjoint128(cw, cr, raw, n, width_w, width_r);
}

/* Python residue_disjoint_at_launch: d plus any combination of the coefficients, modulo
 * g = gcd(2**bits, coefficients), never lands in [lo, hi]. */
static int residue_mod_disjoint(int64_t d, int n, const int64_t *coef, int bits, int64_t lo,
                                int64_t hi)
{
    if (bits <= 0)
        return 0;
    uint64_t g = bits >= 64 ? 0 : (uint64_t)1 << bits; /* 0 stands for 2**64 */
    for (int k = 0; k < n; k++) {
        uint64_t s = coef[k] < 0 ? -(uint64_t)coef[k] : (uint64_t)coef[k];
        if (s == 0)
            continue;
        uint64_t low = s & -s; /* gcd with a power of two: the lowest set bit, capped */
        if (g == 0 || low < g)
            g = low;
    }
    if (g == 1 || (g != 0 && (uint64_t)(hi - lo) + 1 >= g))
        return 0;
    if (g == 0) /* modulo 2**64: the difference itself must miss [lo, hi] */
        return !((uint64_t)d - (uint64_t)lo <= (uint64_t)(hi - lo));
    uint64_t first = (uint64_t)lo + (((uint64_t)d - (uint64_t)lo) & (g - 1));
    return (int64_t)(first - (uint64_t)lo) > hi - lo;
}

static int residue_disjoint(const struct kc_check *c, int32_t w, int32_t rd,
                            const struct slot *v)
{
    const struct kc_access *aw = &c->accesses[w], *ar = &c->accesses[rd];
    int64_t bits = aw->residue_bits < ar->residue_bits ? aw->residue_bits : ar->residue_bits;
    if (bits <= 0 || aw->const_slot < 0 || ar->const_slot < 0 || aw->n_atoms > 4 ||
        ar->n_atoms > 4)
        return 0;
    i128 cw, cr, s;
    if (!point(NULL, v, aw->const_slot, &cw) || !point(NULL, v, ar->const_slot, &cr))
        return 0;
    int64_t coef[8];
    int n = 0;
    const struct kc_access *acc[2] = {aw, ar};
    for (int side = 0; side < 2; side++)
        for (int j = 0; j < acc[side]->n_atoms; j++) {
            if (!point(NULL, v, acc[side]->coef[j], &s))
                return 0;
            /* only the power of two dividing it matters: keep the low 62 bits' worth */
            int64_t low = (int64_t)(s & (((i128)1 << 62) - 1));
            coef[n++] = s == 0 ? 0 : low ? low : ((int64_t)1 << 62);
        }
    /* the difference modulo 2**64 decides (every modulus here divides 2**64) */
    int64_t d = (int64_t)(uint64_t)(cw - cr);
    return residue_mod_disjoint(d, n, coef, (int)bits, -(aw->width - 1), ar->width - 1);
}

/* Python _module_disjoint: one access inside a module variable, the other's bytes all
 * inside allocations of the table. */
static int module_disjoint(const struct kc_check *c, int32_t w, int32_t rd,
                           const struct scratch *sc, kc_alloc_lookup_fn lookup)
{
    if (!lookup)
        return 0;
    struct view known, vw = view_of(sc, (uint32_t)w), vr = view_of(sc, (uint32_t)rd);
    if (c->accesses[w].indirect == 2 && vr.n >= 0)
        known = vr;
    else if (c->accesses[rd].indirect == 2 && vw.n >= 0)
        known = vw;
    else
        return 0;
    for (int k = 0; k < known.n; k++) {
        i128 x = known.p[k].lo, hi = known.p[k].hi;
        while (x < hi) {
            uint64_t base, size;
            if (x < 0 || x >= ((i128)1 << 64) || !lookup((uint64_t)x, &base, &size))
                return 0;
            x = (i128)base + (i128)size;
        }
    }
    return 1;
}

static int lattice_disjoint(const struct kc_check *c, int32_t w, int32_t rd,
                            const struct slot *v)
{
    if (residue_disjoint(c, w, rd, v))
        return 1;
    const struct kc_access *aw = &c->accesses[w], *ar = &c->accesses[rd];
    if (aw->indirect || ar->indirect || aw->const_slot < 0 || ar->const_slot < 0 ||
        aw->n_atoms > 4 || ar->n_atoms > 4)
        return 0;
    if (!v[aw->addr_slot].exact || !v[ar->addr_slot].exact)
        return 0;
    i128 cw, cr;
    if (!point(NULL, v, aw->const_slot, &cw) || !point(NULL, v, ar->const_slot, &cr))
        return 0;
    struct term raw[8];
    int n = 0;
    const struct kc_access *acc[2] = {aw, ar};
    for (int side = 0; side < 2; side++)
        for (int j = 0; j < acc[side]->n_atoms; j++) {
            i128 s, lo, hi;
            const struct slot *at = &v[acc[side]->atom[j]];
            if (!point(NULL, v, acc[side]->coef[j], &s) || at->n <= 0)
                return 0;
            hull(at, &lo, &hi);
            if (is_inf(lo) || is_inf(hi) || abs2(lo) >= KC_LIMIT || abs2(hi) >= KC_LIMIT)
                return 0;
            raw[n].s = side ? -s : s, raw[n].lo = lo, raw[n++].hi = hi;
        }
    return terms_disjoint(cw, cr, raw, n, aw->width, ar->width);
}

enum kc_verdict kc_check_eval(const struct kc_check *c, const unsigned char *params,
                              size_t psize, const uint32_t grid[3], const uint32_t block[3],
                              kc_alloc_lookup_fn lookup, enum kc_rule *rule)
{
    if (c->fast && grid[0] && grid[1] && grid[2] && block[0] && block[1] && block[2]) {
        int v = kc_fast_eval(c->fast, params, psize, grid, block, rule);
        if (v >= 0)
            return (enum kc_verdict)v;
    }
    return kc_check_eval_general(c, params, psize, grid, block, lookup, rule);
}

enum kc_verdict kc_check_eval_general(const struct kc_check *c, const unsigned char *params,
                                      size_t psize, const uint32_t grid[3],
                                      const uint32_t block[3], kc_alloc_lookup_fn lookup,
                                      enum kc_rule *rule)
{
    if (c->not_proven) {
        *rule = KC_RULE_UNMODELLED;
        return KC_NOT_PROVEN;
    }
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2]) {
        *rule = KC_RULE_NO_THREADS;
        return KC_IDEMPOTENT;
    }
    struct scratch *sc = scratch_for(c->n_program, c->n_accesses);
    if (!sc) {
        *rule = KC_RULE_INTERNAL;
        return KC_NOT_PROVEN;
    }
    struct slot *v = sc->slots, *sets = sc->sets;
    if (!run_program(c, v, params, psize, grid, block, sc->tmp)) {
        *rule = KC_RULE_NO_LAYOUT;
        return KC_NOT_PROVEN;
    }
    memset(sc->is_big, 0, c->n_accesses);
    for (uint32_t k = 0; k < c->n_accesses; k++) {
        sets[k].n = -2;
        if (c->accesses[k].kind == 3 && v[c->accesses[k].addr_slot].n != 0 &&
            !cannot_run(v, c->accesses[k].guard_slot)) {
            *rule = KC_RULE_ATOMIC;
            return KC_NOT_IDEMPOTENT;
        }
    }
    if (c->n_expand) {
        const uint32_t dims[6] = {block[0], block[1], block[2], grid[0], grid[1], grid[2]};
        uint8_t *want = sc->want; /* the accesses of pairs */
        memset(want, 0, c->n_accesses);
        for (uint32_t k = 0; k < c->n_pairs; k++)
            want[c->pairs[k][0]] = want[c->pairs[k][1]] = 1;
        if (!expand_sets(c, sc, v, params, psize, dims, lookup, want)) {
            *rule = KC_RULE_INTERNAL;
            return KC_NOT_PROVEN;
        }
    }
    int unknown = 0;
    for (uint32_t k = 0; k < c->n_pairs; k++) {
        int32_t w = c->pairs[k][0], r = c->pairs[k][1];
        if (!sc->is_big[w] && sets[w].n == -2)
            byte_set(c, (uint32_t)w, v, params, psize, lookup, &sets[w]);
        if (!sc->is_big[r] && sets[r].n == -2)
            byte_set(c, (uint32_t)r, v, params, psize, lookup, &sets[r]);
        struct view vw = view_of(sc, (uint32_t)w), vr = view_of(sc, (uint32_t)r);
        if (vw.n == 0 || vr.n == 0)
            continue;
        if (vw.n < 0 || vr.n < 0) {
            if (!residue_disjoint(c, w, r, v) && !module_disjoint(c, w, r, sc, lookup))
                unknown = 1;
            continue;
        }
        if (!intersects(vw, vr))
            continue;
        if (lattice_disjoint(c, w, r, v))
            continue;
        *rule = KC_RULE_OVERLAP;
        return KC_NOT_IDEMPOTENT;
    }
    if (unknown) {
        *rule = KC_RULE_UNKNOWN_RANGE;
        return KC_NOT_PROVEN;
    }
    *rule = c->n_pairs ? KC_RULE_DISJOINT : KC_RULE_NO_CLOBBER;
    return KC_IDEMPOTENT;
}

/* ------------------------------------------------------------------ byte ranges */
void kc_ranges_add(uint64_t (*out)[2], int *n, int max, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return;
    if (*n == max) {
        int best = 0;
        for (int k = 1; k + 1 < *n; k++)
            if (out[k + 1][0] - out[k][1] < out[best + 1][0] - out[best][1])
                best = k;
        out[best][1] = out[best + 1][1];
        memmove(out + best + 1, out + best + 2, (size_t)(*n - best - 2) * sizeof out[0]);
        (*n)--;
    }
    int at = 0;
    while (at < *n && out[at][0] < lo)
        at++;
    memmove(out + at + 1, out + at, (size_t)(*n - at) * sizeof out[0]);
    out[at][0] = lo, out[at][1] = hi;
    (*n)++;
    int m = 0; /* merge touching or overlapping neighbours */
    for (int k = 1; k < *n; k++) {
        if (out[k][0] <= out[m][1]) {
            if (out[k][1] > out[m][1])
                out[m][1] = out[k][1];
        } else {
            m++;
            out[m][0] = out[k][0], out[m][1] = out[k][1];
        }
    }
    *n = m + 1;
}

/* Add every piece of s (or of s intersected with t, when t is given); 0 when a piece lies
 * outside [0, 2**64) (an unbounded or wrapped range: unknown). Both are sorted. */
static int add_piece(uint64_t (*out)[2], int *n, int max, i128 lo, i128 hi)
{
    if (lo >= hi)
        return 1;
    if (lo < 0 || hi > ((i128)1 << 64))
        return 0;
    kc_ranges_add(out, n, max, (uint64_t)lo, (uint64_t)hi);
    return 1;
}

static int add_pieces(uint64_t (*out)[2], int *n, int max, struct view s, const struct view *t)
{
    if (!t) {
        for (int i = 0; i < s.n; i++)
            if (!add_piece(out, n, max, s.p[i].lo, s.p[i].hi))
                return 0;
        return 1;
    }
    int i = 0, j = 0;
    while (i < s.n && j < t->n) {
        if (!add_piece(out, n, max, max2(s.p[i].lo, t->p[j].lo), min2(s.p[i].hi, t->p[j].hi)))
            return 0;
        if (s.p[i].hi < t->p[j].hi) i++; else j++;
    }
    return 1;
}

static int kind_in(int64_t kind, enum kc_range_set which)
{
    if (which == KC_RANGES_READS)
        return kind != 1;  /* loads and atomics (which read) */
    return kind != 0;      /* KC_RANGES_WRITES: stores and atomics */
}

int kc_check_ranges(const struct kc_check *c, const unsigned char *params, size_t psize,
                    const uint32_t grid[3], const uint32_t block[3],
                    kc_alloc_lookup_fn lookup, enum kc_range_set which,
                    uint64_t (*out)[2], int max)
{
    if (c->not_proven || max < 2)
        return -1;
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2])
        return 0;
    struct scratch *sc = scratch_for(c->n_program, c->n_accesses);
    if (!sc)
        return -1;
    struct slot *v = sc->slots, *sets = sc->sets;
    if (!run_program(c, v, params, psize, grid, block, sc->tmp))
        return -1;
    memset(sc->is_big, 0, c->n_accesses);
    memset(sc->want, 0, c->n_accesses);
    for (uint32_t k = 0; k < c->n_accesses; k++) {
        sets[k].n = -2;
        const struct kc_access *a = &c->accesses[k];
        int wanted = which == KC_RANGES_CLOBBERED ? a->kind == 3 : kind_in(a->kind, which);
        if (wanted && v[a->addr_slot].n != 0 && !cannot_run(v, a->guard_slot))
            sc->want[k] = 1;
    }
    if (which == KC_RANGES_CLOBBERED)
        for (uint32_t k = 0; k < c->n_pairs; k++)
            sc->want[c->pairs[k][0]] = sc->want[c->pairs[k][1]] = 1;
    if (c->n_expand) {
        const uint32_t dims[6] = {block[0], block[1], block[2], grid[0], grid[1], grid[2]};
        if (!expand_sets(c, sc, v, params, psize, dims, lookup, sc->want))
            return -1;
    }
    int n = 0;
    for (uint32_t k = 0; k < c->n_accesses; k++) {
        const struct kc_access *a = &c->accesses[k];
        int wanted = which == KC_RANGES_CLOBBERED ? a->kind == 3 : kind_in(a->kind, which);
        if (!wanted || v[a->addr_slot].n == 0 || cannot_run(v, a->guard_slot))
            continue;
        if (!sc->is_big[k])
            byte_set(c, k, v, params, psize, lookup, &sets[k]);
        struct view s1 = view_of(sc, k);
        if (s1.n < 0 || !add_pieces(out, &n, max, s1, NULL))
            return -1;
    }
    if (which != KC_RANGES_CLOBBERED)
        return n;
    for (uint32_t k = 0; k < c->n_pairs; k++) {
        int32_t w = c->pairs[k][0], r = c->pairs[k][1];
        if (!sc->is_big[w] && sets[w].n == -2)
            byte_set(c, (uint32_t)w, v, params, psize, lookup, &sets[w]);
        if (!sc->is_big[r] && sets[r].n == -2)
            byte_set(c, (uint32_t)r, v, params, psize, lookup, &sets[r]);
        struct view vw = view_of(sc, (uint32_t)w), vr = view_of(sc, (uint32_t)r);
        if (vw.n == 0 || vr.n == 0)
            continue;
        if (vw.n < 0 || vr.n < 0)
            return -1;
        if (!intersects(vw, vr) || lattice_disjoint(c, w, r, v))
            continue;
        if (!add_pieces(out, &n, max, vw, &vr))
            return -1;
    }
    return n;
}
