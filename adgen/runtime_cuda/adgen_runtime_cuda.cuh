/*
 * adgen_runtime_cuda.cuh: what adgen-generated CUDA files include besides adgen_runtime.h.
 *
 * Each prange loop of a host function is a kernel: ADGEN_KERNEL, a grid-stride loop
 * (ADGEN_GRID_LOOP), thread sums reduced by warp shuffles and one atomicAdd per warp
 * (adgen_warp_add_f64/_f32), launched by ADGEN_LAUNCH with ADGEN_BLOCK threads per block
 * and enough blocks to cover the range (at most ADGEN_MAX_BLOCKS; the loop strides over
 * the rest).  Every CUDA call is checked (ADGEN_CUDA_CHECK) and a failure names the line
 * of the generated file.
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

#define ADGEN_STR2(x) #x
#define ADGEN_STR(x) ADGEN_STR2(x)

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
#define ADGEN_ATOMIC_ADD(target, value) ((target) += (value))

static inline double *adgen_cuda_zeros_f64(int64_t n)
{
    return (double *)adgen_calloc((size_t)n, sizeof(double));
}
static inline float *adgen_cuda_zeros_f32(int64_t n)
{
    return (float *)adgen_calloc((size_t)n, sizeof(float));
}
#define ADGEN_FETCH(T, S)                                                      \
    static inline void adgen_cuda_fetch_##S(T *host, T *dev, int64_t n)        \
    {                                                                          \
        for (int64_t e = 0; e < n; ++e)                                        \
            host[e] = dev[e];                                                  \
        free(dev);                                                             \
    }
#define ADGEN_WARP_ADD(T, S)                                                   \
    static inline void adgen_warp_add_##S(T *target, T value)                  \
    {                                                                          \
        *target += value;                                                      \
    }

#else /* a GPU */

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
#define ADGEN_ATOMIC_ADD(target, value) atomicAdd(&(target), (value))

#define ADGEN_ZEROS(T, S)                                                      \
    static inline T *adgen_cuda_zeros_##S(int64_t n)                           \
    {                                                                          \
        T *p = NULL;                                                           \
        ADGEN_CUDA_CHECK(cudaMalloc((void **)&p, (size_t)n * sizeof(T)));      \
        ADGEN_CUDA_CHECK(cudaMemset(p, 0, (size_t)n * sizeof(T)));             \
        return p;                                                              \
    }
ADGEN_ZEROS(double, f64)
ADGEN_ZEROS(float, f32)
#define ADGEN_FETCH(T, S)                                                      \
    static inline void adgen_cuda_fetch_##S(T *host, T *dev, int64_t n)        \
    {                                                                          \
        ADGEN_CUDA_CHECK(cudaMemcpy(host, dev, (size_t)n * sizeof(T),           \
                                    cudaMemcpyDeviceToHost));                  \
        ADGEN_CUDA_CHECK(cudaFree(dev));                                       \
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

#endif

ADGEN_FETCH(double, f64)
ADGEN_FETCH(float, f32)
ADGEN_WARP_ADD(double, f64)
ADGEN_WARP_ADD(float, f32)

#endif /* ADGEN_RUNTIME_CUDA_CUH */
