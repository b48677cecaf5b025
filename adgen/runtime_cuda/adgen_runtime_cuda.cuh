/*
 * adgen_runtime_cuda.cuh: what adgen-generated CUDA files include besides adgen_runtime.h.
 *
 * Each prange loop of a host function is a kernel: ADGEN_KERNEL, a grid-stride loop
 * (ADGEN_GRID_LOOP), thread sums reduced by warp shuffles and one atomicAdd per warp
 * (adgen_warp_add_f64/_f32), launched by ADGEN_LAUNCH with ADGEN_BLOCK threads per block
 * and enough blocks to cover the range (at most ADGEN_MAX_BLOCKS; the loop strides over
 * the rest).  The warps add their sums into a device buffer the host thread keeps from
 * launch to launch (adgen_cuda_sums_f64/_f32), read back after the kernel
 * (adgen_cuda_fetch_f64/_f32).  Every CUDA call is checked (ADGEN_CUDA_CHECK) and a failure
 * names the line of the generated file.
 *
 * Adjoint kernels add to arrays other threads add to as well with ADGEN_ATOMIC_ADD: where
 * the lanes of a warp that get there together add to one address, they sum their values by
 * shuffles and one lane adds the sum (warp-aggregated atomics).  An array a kernel only adds
 * to (the adjoint of a parameter every thread reads) gets a zeroed copy per block in shared
 * memory, ADGEN_BLOCK_PRIVATE, added to the array once per block at the end
 * (ADGEN_BLOCK_PRIVATE_ADD), while the copies take at most ADGEN_BLOCK_PRIVATE_BYTES bytes
 * together (default 16384, in the order of the kernel) and the array has at most 4 elements
 * per thread; other arrays are added to directly.
 *
 * A kernel whose adjoint iteration saves values for itself (an inner loop, a call's split
 * adjoint) has a tape per thread, adgen_dtape: ADGEN_DEVICE_TAPE_BYTES bytes of local memory
 * (default 1024), pushed and popped within each iteration; a thread that would need more
 * stops the kernel with a message naming the macro to raise.
 *
 * Compiled with -DADGEN_CUDA_EMULATE, the same file runs on the CPU: a kernel is a plain
 * function that runs the whole range in one thread, "device" memory is host memory.  The
 * test suite checks the numerics of device code this way on machines without a GPU.
 */
#ifndef ADGEN_RUNTIME_CUDA_CUH
#define ADGEN_RUNTIME_CUDA_CUH

#include "adgen_runtime.h"

#ifndef ADGEN_BLOCK
#define ADGEN_BLOCK 256
#endif
#ifndef ADGEN_MAX_BLOCKS
#define ADGEN_MAX_BLOCKS 65535
#endif

#ifndef ADGEN_BLOCK_PRIVATE_BYTES
#define ADGEN_BLOCK_PRIVATE_BYTES 16384
#endif

#ifndef ADGEN_DEVICE_TAPE_BYTES
#define ADGEN_DEVICE_TAPE_BYTES 1024
#endif

/* The blocks that cover n iterations (at least one). */
static inline int adgen_grid(int64_t n)
{
    int64_t blocks = (n + ADGEN_BLOCK - 1) / ADGEN_BLOCK;
    return (int)(blocks < 1 ? 1 : blocks > ADGEN_MAX_BLOCKS ? ADGEN_MAX_BLOCKS : blocks);
}

#ifdef ADGEN_CUDA_EMULATE

#define ADGEN_KERNEL static void
#define ADGEN_GRID_LOOP(i, start, cond, step) for (int64_t i = (start); cond; i += (step))
#define ADGEN_LAUNCH(kernel, n, args) kernel args
#define ADGEN_LAUNCH_SHARED(kernel, n, bytes, args) (adgen_no_shared(bytes), kernel args)
static inline void adgen_no_shared(size_t bytes) { (void)bytes; }
#define ADGEN_ATOMIC_ADD(target, value) ((target) += (value))
/* one block: the threads add to the array itself */
static inline void *adgen_block_private(void *array, int64_t n, size_t size, size_t *used)
{
    (void)n, (void)size, (void)used;
    return array;
}
#define ADGEN_BLOCK_PRIVATE_ADD(array, copy, n) ((void)(copy))

/* the sums' "device" buffer: host memory of the thread, kept as on a GPU */
#define ADGEN_SUMS(T, S)                                                       \
    static inline T *adgen_cuda_sums_##S(int64_t n)                            \
    {                                                                          \
        static ADGEN_THREAD_LOCAL T *kept;                                     \
        static ADGEN_THREAD_LOCAL int64_t capacity;                            \
        if (n > capacity) {                                                    \
            free(kept);                                                        \
            capacity = n < 32 ? 32 : n;                                        \
            kept = (T *)adgen_calloc((size_t)capacity, sizeof(T));             \
        }                                                                      \
        for (int64_t e = 0; e < n; ++e)                                        \
            kept[e] = 0;                                                       \
        return kept;                                                           \
    }                                                                          \
    static inline void adgen_cuda_fetch_##S(T *host, const T *dev, int64_t n)  \
    {                                                                          \
        for (int64_t e = 0; e < n; ++e)                                        \
            host[e] = dev[e];                                                  \
    }
#define ADGEN_WARP_ADD(T, S)                                                   \
    static inline void adgen_warp_add_##S(T *target, T value)                  \
    {                                                                          \
        *target += value;                                                      \
    }

/* a thread's tape: the growable host tape */
typedef adgen_tape adgen_dtape;
#define ADGEN_DTAPE(name) adgen_dtape name = ADGEN_TAPE_INIT
#define ADGEN_DTAPE_FREE(name) adgen_tape_free(&name)
#define ADGEN_DTAPE_TYPE(T, S)                                                 \
    static inline void adgen_dpush_##S(adgen_dtape *t, T v) { adgen_push_##S(t, v); } \
    static inline T adgen_dpop_##S(adgen_dtape *t) { return adgen_pop_##S(t); }

#else /* a GPU */

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#define ADGEN_KERNEL static __global__ void
#define ADGEN_GRID_LOOP(i, start, cond, step)                                   \
    for (int64_t i = (start) + (step) * ((int64_t)blockIdx.x * blockDim.x + threadIdx.x); \
         cond; i += (step) * ((int64_t)gridDim.x * blockDim.x))
#define ADGEN_CUDA_CHECK(call)                                                  \
    do {                                                                        \
        cudaError_t adgen_err_ = (call);                                        \
        if (adgen_err_ != cudaSuccess) {                                        \
            fprintf(stderr, "adgen: %s:%d: %s\n", __FILE__, __LINE__,           \
                    cudaGetErrorString(adgen_err_));                            \
            abort();                                                            \
        }                                                                       \
    } while (0)
#define ADGEN_LAUNCH(kernel, n, args)                                           \
    do {                                                                        \
        kernel<<<adgen_grid(n), ADGEN_BLOCK>>> args;                            \
        ADGEN_CUDA_CHECK(cudaGetLastError());                                   \
    } while (0)
/* A launch whose kernel keeps block copies of arrays (ADGEN_BLOCK_PRIVATE) of `bytes`
 * together in shared memory: the copies that fit in ADGEN_BLOCK_PRIVATE_BYTES (over 48 KiB,
 * the kernel is first allowed that much, where the GPU has it). */
#define ADGEN_LAUNCH_SHARED(kernel, n, bytes, args)                             \
    do {                                                                        \
        size_t adgen_bytes_ = (bytes);                                          \
        if (adgen_bytes_ > ADGEN_BLOCK_PRIVATE_BYTES)                           \
            adgen_bytes_ = ADGEN_BLOCK_PRIVATE_BYTES;                           \
        if (adgen_bytes_ > 48 * 1024)                                           \
            ADGEN_CUDA_CHECK(cudaFuncSetAttribute(                              \
                kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)adgen_bytes_)); \
        kernel<<<adgen_grid(n), ADGEN_BLOCK, adgen_bytes_>>> args;              \
        ADGEN_CUDA_CHECK(cudaGetLastError());                                   \
    } while (0)
/* the device pass of an ADGEN_HD function (an adjoint called in a kernel) adds atomically;
 * its host pass, which no thread shares, adds plainly */
#ifdef __CUDA_ARCH__
#define ADGEN_ATOMIC_ADD(target, value) adgen_atomic_add(&(target), (value))
#else
#define ADGEN_ATOMIC_ADD(target, value) ((target) += (value))
#endif
#define ADGEN_BLOCK_PRIVATE_ADD(array, copy, n) adgen_block_private_add(array, copy, n)

/* atomicAdd of each type an array may hold (int64_t through the unsigned 64-bit add: the
 * same bits in two's complement) */
static __device__ inline void adgen_atomic_add1(double *t, double v) { atomicAdd(t, v); }
static __device__ inline void adgen_atomic_add1(float *t, float v) { atomicAdd(t, v); }
static __device__ inline void adgen_atomic_add1(int32_t *t, int32_t v) { atomicAdd((int *)t, (int)v); }
static __device__ inline void adgen_atomic_add1(int64_t *t, int64_t v)
{
    atomicAdd((unsigned long long *)t, (unsigned long long)v);
}
/* *target += value from every thread that calls it: the lanes of a warp that call it together
 * with the same target sum their values and one adds the sum; others add their own. */
#define ADGEN_ATOMIC(T)                                                        \
    static __device__ inline void adgen_atomic_add(T *target, T value)         \
    {                                                                          \
        namespace cg = cooperative_groups;                                     \
        cg::coalesced_group lanes = cg::coalesced_threads();                   \
        unsigned long long first = lanes.shfl((unsigned long long)target, 0);  \
        if (lanes.size() > 1 && lanes.all(first == (unsigned long long)target)) { \
            value = cg::reduce(lanes, value, cg::plus<T>());                   \
            if (lanes.thread_rank() == 0)                                      \
                adgen_atomic_add1(target, value);                              \
        } else {                                                               \
            adgen_atomic_add1(target, value);                                  \
        }                                                                      \
    }
ADGEN_ATOMIC(double)
ADGEN_ATOMIC(float)
ADGEN_ATOMIC(int32_t)
ADGEN_ATOMIC(int64_t)

/* The block's zeroed copy of the n elements (of `size` bytes) of `array`, in its shared
 * memory after the `*used` bytes of the copies before it, when they fit together in
 * ADGEN_BLOCK_PRIVATE_BYTES and the array has at most 4 elements per thread of the block
 * (zeroing the copy and adding it to the array cost less than the atomics it saves); else
 * the array itself.  Called by every thread of the block. */
static __device__ inline void *adgen_block_private(void *array, int64_t n, size_t size,
                                                   size_t *used)
{
    extern __shared__ double adgen_shared[];
    size_t bytes = (size_t)n * size;
    if (*used + bytes > ADGEN_BLOCK_PRIVATE_BYTES || n > 4 * (int64_t)blockDim.x)
        return array;
    unsigned char *copy = (unsigned char *)adgen_shared + *used;
    *used += bytes;
    for (size_t e = threadIdx.x; e < bytes; e += blockDim.x)
        copy[e] = 0;
    __syncthreads();
    return copy;
}
/* Adds the block's copy to the array (nothing when the copy is the array). */
#define ADGEN_BLOCK_PRIVATE_ADD_TYPE(T)                                        \
    static __device__ inline void adgen_block_private_add(T *array, T *copy, int64_t n) \
    {                                                                          \
        if (copy == array)                                                     \
            return;                                                            \
        __syncthreads();                                                       \
        for (int64_t e = threadIdx.x; e < n; e += blockDim.x)                  \
            if (copy[e] != 0)                                                  \
                atomicAdd(&array[e], copy[e]);                                 \
    }
ADGEN_BLOCK_PRIVATE_ADD_TYPE(double)
ADGEN_BLOCK_PRIVATE_ADD_TYPE(float)

/* The device buffer a kernel adds its sums to: one per type and host thread, kept from
 * launch to launch on the device it was made on (a cudaMalloc and a cudaFree, which waits
 * for the device, at every launch cost more than many a kernel) and made again only when a
 * kernel needs more sums or the thread has changed devices.  Zeroed in the stream of the
 * launch that follows.  The buffer lives as long as the process (a few hundred bytes per
 * host thread that launched a kernel with sums); after cudaDeviceReset it is stale, and the
 * next launch with sums stops with the error of its cudaMemsetAsync. */
typedef struct {
    void *data;
    size_t bytes;
    int device;
} adgen_cuda_kept;
static inline void *adgen_cuda_keep(adgen_cuda_kept *kept, size_t bytes)
{
    int device;
    ADGEN_CUDA_CHECK(cudaGetDevice(&device));
    if (kept->data == NULL || kept->bytes < bytes || kept->device != device) {
        if (kept->data != NULL) {
            ADGEN_CUDA_CHECK(cudaSetDevice(kept->device));
            ADGEN_CUDA_CHECK(cudaFree(kept->data));
            ADGEN_CUDA_CHECK(cudaSetDevice(device));
        }
        kept->bytes = bytes < 256 ? 256 : bytes;
        kept->device = device;
        ADGEN_CUDA_CHECK(cudaMalloc(&kept->data, kept->bytes));
    }
    ADGEN_CUDA_CHECK(cudaMemsetAsync(kept->data, 0, bytes));
    return kept->data;
}
#define ADGEN_SUMS(T, S)                                                       \
    static inline T *adgen_cuda_sums_##S(int64_t n)                            \
    {                                                                          \
        static ADGEN_THREAD_LOCAL adgen_cuda_kept kept;                        \
        return (T *)adgen_cuda_keep(&kept, (size_t)n * sizeof(T));             \
    }                                                                          \
    static inline void adgen_cuda_fetch_##S(T *host, const T *dev, int64_t n)  \
    {                                                                          \
        ADGEN_CUDA_CHECK(cudaMemcpy(host, dev, (size_t)n * sizeof(T),           \
                                    cudaMemcpyDeviceToHost));                  \
    }
/* Adds value to *target, called by every thread of the kernel at its end (blocks are
 * whole warps): the lanes of a warp sum theirs by shuffles, and lane 0 adds the sum. */
#define ADGEN_WARP_ADD(T, S)                                                   \
    static __device__ inline void adgen_warp_add_##S(T *target, T value)       \
    {                                                                          \
        for (int offset = 16; offset > 0; offset /= 2)                         \
            value += __shfl_down_sync(0xffffffffu, value, offset);             \
        if ((threadIdx.x & 31) == 0)                                           \
            atomicAdd(target, value);                                          \
    }

/* a thread's tape: a fixed stack in local memory */
typedef struct {
    unsigned char data[ADGEN_DEVICE_TAPE_BYTES];
    size_t top;
} adgen_dtape;
#define ADGEN_DTAPE(name) adgen_dtape name; name.top = 0
#define ADGEN_DTAPE_FREE(name) ((void)name.top)
ADGEN_HD static inline void adgen_dtape_full(void)
{
    printf("adgen: a thread's tape is full (%d bytes): compile with "
           "-DADGEN_DEVICE_TAPE_BYTES=<more>\n", (int)ADGEN_DEVICE_TAPE_BYTES);
#ifdef __CUDA_ARCH__
    __trap();
#else
    abort();
#endif
}
#define ADGEN_DTAPE_TYPE(T, S)                                                 \
    ADGEN_HD static inline void adgen_dpush_##S(adgen_dtape *t, T v)           \
    {                                                                          \
        if (t->top + sizeof v > ADGEN_DEVICE_TAPE_BYTES)                       \
            adgen_dtape_full();                                                \
        memcpy(t->data + t->top, &v, sizeof v);                                \
        t->top += sizeof v;                                                    \
    }                                                                          \
    ADGEN_HD static inline T adgen_dpop_##S(adgen_dtape *t)                    \
    {                                                                          \
        T v;                                                                   \
        t->top -= sizeof v;                                                    \
        memcpy(&v, t->data + t->top, sizeof v);                                \
        return v;                                                              \
    }

#endif

/* The block's copy of an array its threads only add to (or the array itself). */
#define ADGEN_BLOCK_PRIVATE(T, array, n, used)                                  \
    ((T *)adgen_block_private((array), (n), sizeof(T), &(used)))

ADGEN_SUMS(double, f64)
ADGEN_SUMS(float, f32)
ADGEN_WARP_ADD(double, f64)
ADGEN_WARP_ADD(float, f32)
ADGEN_DTAPE_TYPE(double, f64)
ADGEN_DTAPE_TYPE(float, f32)
ADGEN_DTAPE_TYPE(int64_t, i64)
ADGEN_DTAPE_TYPE(int32_t, i32)
ADGEN_DTAPE_TYPE(bool, bool)

#endif /* ADGEN_RUNTIME_CUDA_CUH */
