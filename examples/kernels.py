"""GPU-style kernels: every array is indexed inside a prange, so this module also builds
for the CUDA target (`adgen kernels.py --target cuda`), where each prange is a kernel."""

import math

from adgen import Array, f64, prange


def hm_lstm(z: Array[f64, 2], c: Array[f64], flush: Array[f64], copy: Array[f64],
            c_new: Array[f64], h_new: Array[f64]) -> None:
    """An HM-LSTM cell update (seed 003), one unit per iteration: z[i] holds the forget,
    input and output gates and the candidate; the boundary flags choose between copying the
    cell, flushing it and the usual update (data-dependent branches)."""
    for i in prange(len(c)):
        f = 1.0 / (1.0 + math.exp(-z[i, 0]))
        ig = 1.0 / (1.0 + math.exp(-z[i, 1]))
        o = 1.0 / (1.0 + math.exp(-z[i, 2]))
        g = math.tanh(z[i, 3])
        if copy[i] > 0.5:
            c_new[i] = c[i]
        elif flush[i] > 0.5:
            c_new[i] = ig * g
        else:
            c_new[i] = f * c[i] + ig * g
        h_new[i] = o * math.tanh(c_new[i])


def xs_lookup(energy: Array[f64], grid: Array[f64], xs: Array[f64, 2], weight: Array[f64],
              sigma: Array[f64]) -> f64:
    """An XSBench-like lookup: for each particle, a binary search of its energy in the grid
    (a while loop of data-dependent length), then cross sections interpolated between the
    two grid points and weighted; returns their sum."""
    total = 0.0
    for p in prange(len(energy)):
        e = energy[p]
        lo = 0
        hi = len(grid) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if grid[mid] > e:
                hi = mid
            else:
                lo = mid
        t = (e - grid[lo]) / (grid[hi] - grid[lo])
        acc = 0.0
        for r in range(xs.shape[1]):
            acc += weight[r] * ((1.0 - t) * xs[lo, r] + t * xs[hi, r])
        sigma[p] = acc
        total += acc
    return total


def kmeans_cost(x: Array[f64, 2], centers: Array[f64, 2]) -> f64:
    """The dense k-means cost: each point's squared distance to its nearest center, summed.
    Its adjoint kernel finds each point's nearest center once, in the thread, and adds to
    that center's adjoint (a block copy in shared memory)."""
    total = 0.0
    for i in prange(x.shape[0]):
        best = math.inf
        for k in range(centers.shape[0]):
            d2 = 0.0
            for j in range(x.shape[1]):
                t = x[i, j] - centers[k, j]
                d2 += t * t
            best = min(best, d2)
        total += best
    return total
