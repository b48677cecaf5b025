/*
 * adgen_runtime.h: the small runtime every adgen-generated C file includes.
 *
 * Python semantics where C differs (floor division and modulo take the sign
 * of the divisor, min/max return the first argument on ties), allocation of
 * local arrays, and checks that exist only in debug builds (-DADGEN_DEBUG).
 * The tape of reverse mode: a stack of bytes owned by one call of an adjoint
 * (f_b creates it, passes it to the split halves g_fwd/g_bwd of the functions
 * it calls, and frees it before returning), so adjoints are reentrant and
 * thread-safe.  prange loops become OpenMP loops when built with -fopenmp
 * (ADGEN_OMP).  Everything is static inline: no library to link, nothing
 * global except a thread-local record of the tape size of the last call.
 */
#ifndef ADGEN_adgen_runtime_H
#define ADGEN_adgen_runtime_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Helpers generated code may call in CUDA kernels too (nvcc); nothing in C, nor in the
 * emulation of the CUDA target, whose kernels run on the host (and call host helpers, such
 * as the per-thread tapes). */
#if defined(__CUDACC__) && !defined(ADGEN_CUDA_EMULATE)
#define ADGEN_HD __host__ __device__
#else
#define ADGEN_HD
#endif

/* -- Python's // and % ------------------------------------------------------ */
#define ADGEN_INT_DIVMOD(T, S)                                   \
    ADGEN_HD static inline T adgen_floordiv_##S(T a, T b)                 \
    {                                                            \
        T q = a / b;                                             \
        if ((a % b != 0) && ((a < 0) != (b < 0)))                \
            q -= 1;                                              \
        return q;                                                \
    }                                                            \
    ADGEN_HD static inline T adgen_mod_##S(T a, T b)                      \
    {                                                            \
        T r = a % b;                                             \
        if (r != 0 && ((r < 0) != (b < 0)))                      \
            r += b;                                              \
        return r;                                                \
    }
ADGEN_INT_DIVMOD(int64_t, i64)
ADGEN_INT_DIVMOD(int32_t, i32)

/* CPython's float_divmod, so that results agree bit for bit. */
#define ADGEN_FLOAT_DIVMOD(T, S, FMOD, FLOOR, COPYSIGN)          \
    ADGEN_HD static inline T adgen_mod_##S(T a, T b)                      \
    {                                                            \
        T mod = FMOD(a, b);                                      \
        if (mod != 0) {                                          \
            if ((b < 0) != (mod < 0))                            \
                mod += b;                                        \
        } else {                                                 \
            mod = COPYSIGN((T)0, b);                             \
        }                                                        \
        return mod;                                              \
    }                                                            \
    ADGEN_HD static inline T adgen_floordiv_##S(T a, T b)                 \
    {                                                            \
        T mod = FMOD(a, b);                                      \
        T div = (a - mod) / b;                                   \
        T floordiv;                                              \
        if (mod != 0 && ((b < 0) != (mod < 0)))                  \
            div -= 1;                                            \
        if (div != 0) {                                          \
            floordiv = FLOOR(div);                               \
            if (div - floordiv > (T)0.5)                         \
                floordiv += 1;                                   \
        } else {                                                 \
            floordiv = COPYSIGN((T)0, a / b);                    \
        }                                                        \
        return floordiv;                                         \
    }
ADGEN_FLOAT_DIVMOD(double, f64, fmod, floor, copysign)
ADGEN_FLOAT_DIVMOD(float, f32, fmodf, floorf, copysignf)

/* -- math.floor / math.ceil return integers ---------------------------------- */
ADGEN_HD static inline int64_t adgen_ifloor_f64(double x) { return (int64_t)floor(x); }
ADGEN_HD static inline int64_t adgen_ifloor_f32(float x) { return (int64_t)floorf(x); }
ADGEN_HD static inline int64_t adgen_iceil_f64(double x) { return (int64_t)ceil(x); }
ADGEN_HD static inline int64_t adgen_iceil_f32(float x) { return (int64_t)ceilf(x); }

/* -- abs, min, max as Python's builtins ------------------------------------------ */
ADGEN_HD static inline int64_t adgen_abs_i64(int64_t x) { return x < 0 ? -x : x; }
ADGEN_HD static inline int32_t adgen_abs_i32(int32_t x) { return x < 0 ? -x : x; }
#define ADGEN_MINMAX(T, S)                                                  \
    ADGEN_HD static inline T adgen_min_##S(T a, T b) { return b < a ? b : a; }       \
    ADGEN_HD static inline T adgen_max_##S(T a, T b) { return b > a ? b : a; }
ADGEN_MINMAX(double, f64)
ADGEN_MINMAX(float, f32)
ADGEN_MINMAX(int64_t, i64)
ADGEN_MINMAX(int32_t, i32)

/* -- binomial checkpointing ------------------------------------------------------- */
/* With l loop steps left to reverse from a snapshot and s snapshots (that one included),
 * how many steps to advance before storing the next snapshot (1 <= d < l): revolve's
 * binomial rule (see revolve_split in adgen/transpile/ir/prims.py). */
ADGEN_HD static inline int64_t adgen_revolve_split(int64_t l, int64_t s)
{
    int64_t r = 0, beta = 1, right, d;
    if (s <= 1 || l <= 1)
        return l > 1 ? l - 1 : 1;
    while (beta < l) {
        r += 1;
        beta = beta * (s + r) / r;
    }
    right = beta * s / (s + r);
    d = l - right;
    if (d < 1)
        d = 1;
    if (d > l - 1)
        d = l - 1;
    return d;
}

/* -- local arrays ---------------------------------------------------------------- */
static inline void *adgen_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    if (p == NULL) {
        fprintf(stderr, "adgen: out of memory allocating %zu elements\n", count);
        abort();
    }
    return p;
}

/* The tape bytes of the last adjoint call on this thread (one per generated file). */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define ADGEN_THREAD_LOCAL _Thread_local
#elif defined(__GNUC__)
#define ADGEN_THREAD_LOCAL __thread
#elif defined(_MSC_VER)
#define ADGEN_THREAD_LOCAL __declspec(thread)
#else
#define ADGEN_THREAD_LOCAL
#endif

/* -- the tape of reverse mode ---------------------------------------------------- */
typedef struct {
    unsigned char *data;
    size_t top;  /* bytes in use */
    size_t cap;  /* bytes allocated */
    size_t peak; /* most bytes in use at once */
} adgen_tape;

/* A freed tape's buffer is kept for the next tape (one buffer per generated file, the last
 * one freed, up to ADGEN_TAPE_KEEP bytes; -DADGEN_TAPE_KEEP=0 frees every buffer): a large
 * tape is then not mapped again, page fault by page fault, at every call.  Threads take and
 * give it back with an atomic exchange (one that finds none allocates its own); its
 * capacity is kept in its first bytes while it waits. */
#ifndef ADGEN_TAPE_KEEP
#define ADGEN_TAPE_KEEP ((size_t)1 << 30)
#endif
#if defined(__GNUC__) || defined(__clang__)
#define ADGEN_TAPE_EXCHANGE(p) __atomic_exchange_n(&adgen_tape_spare, (p), __ATOMIC_ACQ_REL)
#else /* no atomic exchange known: nothing is kept */
#define ADGEN_TAPE_EXCHANGE(p) ((void)(p), (unsigned char *)NULL)
#endif
static unsigned char *adgen_tape_spare;

static inline adgen_tape adgen_tape_take(void)
{
    adgen_tape t = {NULL, 0, 0, 0};
    if (ADGEN_TAPE_KEEP > 0) {
        t.data = ADGEN_TAPE_EXCHANGE(NULL);
        if (t.data != NULL)
            memcpy(&t.cap, t.data, sizeof t.cap);
    }
    return t;
}

#define ADGEN_TAPE_INIT adgen_tape_take()

static inline void adgen_tape_grow(adgen_tape *t, size_t need)
{
    size_t cap = t->cap ? t->cap : 4096;
    unsigned char *p;
    while (cap < t->top + need)
        cap *= 2;
    p = (unsigned char *)realloc(t->data, cap);
    if (p == NULL) {
        fprintf(stderr, "adgen: out of memory growing the tape to %zu bytes\n", cap);
        abort();
    }
    t->data = p;
    t->cap = cap;
}

/* Frees the tape (keeps its buffer, see ADGEN_TAPE_KEEP); returns the most bytes it held. */
static inline size_t adgen_tape_free(adgen_tape *t)
{
    size_t peak = t->peak > t->top ? t->peak : t->top;
    unsigned char *old = t->data;
    if (t->data != NULL && t->cap <= (size_t)ADGEN_TAPE_KEEP) {
        memcpy(t->data, &t->cap, sizeof t->cap);
        old = ADGEN_TAPE_EXCHANGE(t->data);
    }
    free(old);
    t->data = NULL;
    t->top = t->cap = t->peak = 0;
    return peak;
}

/* The bytes the tape holds now. */
static inline size_t adgen_tape_size(const adgen_tape *t)
{
    return t->top;
}

/* The larger of two sizes: an adjoint that calls another whole adjoint (g_b, called in its
 * forward sweep, with a tape of its own) reports the most bytes their tapes held at once. */
static inline size_t adgen_size_max(size_t a, size_t b)
{
    return a > b ? a : b;
}

#define ADGEN_TAPE_TYPE(T, S)                                                  \
    static inline void adgen_push_##S(adgen_tape *t, T v)                      \
    {                                                                          \
        if (t->top + sizeof v > t->cap)                                        \
            adgen_tape_grow(t, sizeof v);                                      \
        memcpy(t->data + t->top, &v, sizeof v);                                \
        t->top += sizeof v;                                                    \
    }                                                                          \
    static inline T adgen_pop_##S(adgen_tape *t)                               \
    {                                                                          \
        T v;                                                                   \
        if (t->top > t->peak)                                                  \
            t->peak = t->top;                                                  \
        t->top -= sizeof v;                                                    \
        memcpy(&v, t->data + t->top, sizeof v);                                \
        return v;                                                              \
    }
ADGEN_TAPE_TYPE(double, f64)
ADGEN_TAPE_TYPE(float, f32)
ADGEN_TAPE_TYPE(int64_t, i64)
ADGEN_TAPE_TYPE(int32_t, i32)
ADGEN_TAPE_TYPE(bool, bool)

/* A loop that pushes the same values in every iteration takes its bytes as one block:
 * adgen_push_block before the loop, adgen_put_* of each value at its offset in the block
 * (iteration t at t times the bytes of one iteration), and the reversed loop pops the block
 * with adgen_pop_block and reads it with adgen_get_*.  The bytes are those the pushes one
 * by one would leave, so either side may be written either way; the loops have no call
 * and may be vectorised. */
static inline unsigned char *adgen_push_block(adgen_tape *t, int64_t bytes)
{
    unsigned char *block;
    if (bytes <= 0)
        return t->data;
    if (t->top + (size_t)bytes > t->cap)
        adgen_tape_grow(t, (size_t)bytes);
    block = t->data + t->top;
    t->top += (size_t)bytes;
    return block;
}

static inline const unsigned char *adgen_pop_block(adgen_tape *t, int64_t bytes)
{
    if (bytes <= 0)
        return t->data;
    if (t->top > t->peak)
        t->peak = t->top;
    t->top -= (size_t)bytes;
    return t->data + t->top;
}

#define ADGEN_BLOCK_TYPE(T, S)                                                 \
    static inline void adgen_put_##S(unsigned char *block, int64_t at, T v)    \
    {                                                                          \
        memcpy(block + at, &v, sizeof v);                                      \
    }                                                                          \
    static inline T adgen_get_##S(const unsigned char *block, int64_t at)      \
    {                                                                          \
        T v;                                                                   \
        memcpy(&v, block + at, sizeof v);                                      \
        return v;                                                              \
    }
ADGEN_BLOCK_TYPE(double, f64)
ADGEN_BLOCK_TYPE(float, f32)
ADGEN_BLOCK_TYPE(int64_t, i64)
ADGEN_BLOCK_TYPE(int32_t, i32)
ADGEN_BLOCK_TYPE(bool, bool)

/* -- prange loops -------------------------------------------------------------------- */
/* ADGEN_OMP(omp parallel for ...) before a prange loop, ADGEN_OMP(omp atomic) before an
 * increment other iterations may make too: OpenMP pragmas when the file is compiled with
 * -fopenmp (adgen --openmp), nothing otherwise, so one generated file serves both builds. */
#ifdef _OPENMP
#define ADGEN_OMP(...) _Pragma(#__VA_ARGS__)
#else
#define ADGEN_OMP(...)
#endif

/* -- vectorised loops ---------------------------------------------------------------- */
/* ADGEN_SIMD(omp simd ...) before a loop whose iterations are independent apart from the
 * sums and running minima/maxima its clause names (every array it writes is read and written
 * at the loop index only): `#pragma omp simd` when the file is compiled with -fopenmp, or with
 * -fopenmp-simd -DADGEN_VECTORIZE (adgen's default flags), nothing otherwise.  The clause
 * lets the compiler reorder those sums, so results may differ from the sequential loop in the
 * last bits.  With glibc on x86-64, libm's exp, log, sin, cos and pow are then declared to
 * have vector versions (libmvec, linked with -lm; as glibc does itself under -ffast-math). */
#if defined(_OPENMP) || defined(ADGEN_VECTORIZE)
#define ADGEN_SIMD(...) _Pragma(#__VA_ARGS__)
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__x86_64__) \
    && defined(__GLIBC__) && !defined(__FAST_MATH__)
#if __GLIBC_PREREQ(2, 22)
#define ADGEN_VECTOR_MATH(T, F) __attribute__((__simd__("notinbranch"))) extern T F
ADGEN_VECTOR_MATH(double, exp)(double);
ADGEN_VECTOR_MATH(double, log)(double);
ADGEN_VECTOR_MATH(double, sin)(double);
ADGEN_VECTOR_MATH(double, cos)(double);
ADGEN_VECTOR_MATH(double, pow)(double, double);
ADGEN_VECTOR_MATH(float, expf)(float);
ADGEN_VECTOR_MATH(float, logf)(float);
ADGEN_VECTOR_MATH(float, sinf)(float);
ADGEN_VECTOR_MATH(float, cosf)(float);
ADGEN_VECTOR_MATH(float, powf)(float, float);
#undef ADGEN_VECTOR_MATH
#endif
#endif
#else
#define ADGEN_SIMD(...)
#endif

/* An array every iteration of a parallel loop adds to at the same elements (the adjoint of
 * a parameter): each thread adds to a zeroed copy, ADGEN_PRIVATE, and adds its copy to the
 * array at the end, ADGEN_PRIVATE_ADD.  Without OpenMP the copy is the array itself. */
#ifdef _OPENMP
#define ADGEN_PRIVATE(T, a, n) ((T *)adgen_calloc((size_t)(n), sizeof(T)))
#define ADGEN_PRIVATE_ADD(S, a, p, n) adgen_private_add_##S(a, p, n)
#define ADGEN_PRIVATE_ADD_TYPE(T, S)                                           \
    static inline void adgen_private_add_##S(T *a, T *p, int64_t n)           \
    {                                                                          \
        for (int64_t e = 0; e < n; ++e) {                                      \
            _Pragma("omp atomic")                                              \
            a[e] += p[e];                                                      \
        }                                                                      \
        free(p);                                                               \
    }
#else
#define ADGEN_PRIVATE(T, a, n) ((void)(n), (a))
#define ADGEN_PRIVATE_ADD(S, a, p, n) ((void)(p))
#define ADGEN_PRIVATE_ADD_TYPE(T, S)
#endif
ADGEN_PRIVATE_ADD_TYPE(double, f64)
ADGEN_PRIVATE_ADD_TYPE(float, f32)

/* -- debug checks ------------------------------------------------------------------ */
/* A fact the compiler may rely on; checked in debug builds. */
#if defined(ADGEN_DEBUG)
#define ADGEN_ASSUME(cond) ADGEN_ASSERT(cond, "adgen: assumption failed: " #cond)
#elif defined(__GNUC__)
#define ADGEN_ASSUME(cond) do { if (!(cond)) __builtin_unreachable(); } while (0)
#else
#define ADGEN_ASSUME(cond) ((void)0)
#endif

/* The number of directions of a vector mode's function: at least 1, or exactly
   ADGEN_NBDIRS when the build fixes it (-DADGEN_NBDIRS=15), which gives every loop over
   the directions a constant trip count that the compiler unrolls and vectorises. */
#ifdef ADGEN_NBDIRS
#define ADGEN_ASSUME_NBDIRS(n) ADGEN_ASSUME((n) == (ADGEN_NBDIRS))
#else
#define ADGEN_ASSUME_NBDIRS(n) ADGEN_ASSUME((n) > 0)
#endif

/* The length of a function's local arrays of directions (a scalar's tangents or
   adjoints, double xd[ADGEN_DIRS(nbdirs)]): ADGEN_NBDIRS where the build fixes it, so
   they are arrays of constant size, which the compiler keeps in registers across the
   loops that update them (a variable-length array stays in memory: GradBench's ht
   Jacobian took 0.34 ms with them and 0.27 ms with constant ones); nbdirs otherwise. */
#ifdef ADGEN_NBDIRS
#define ADGEN_DIRS(n) (ADGEN_NBDIRS)
#else
#define ADGEN_DIRS(n) (n)
#endif

#ifdef ADGEN_DEBUG
#define ADGEN_ASSERT(cond, where)                                     \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stderr, "%s\n", where);                           \
            abort();                                                  \
        }                                                             \
    } while (0)
static inline int64_t adgen_check_index(int64_t i, int64_t n, const char *where)
{
    if (i < 0 || i >= n) {
        fprintf(stderr, "%s: index %lld out of range for extent %lld\n", where, (long long)i,
                (long long)n);
        abort();
    }
    return i;
}
#define ADGEN_INDEX(i, n, where) adgen_check_index((i), (n), (where))
#else
#define ADGEN_ASSERT(cond, where) ((void)sizeof((cond) ? 1 : 0))
#define ADGEN_INDEX(i, n, where) ((void)(n), (i)) /* n read: an extent used only here is used */
#endif

#endif /* ADGEN_adgen_runtime_H */
