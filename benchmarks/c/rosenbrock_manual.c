/*
 * rosenbrock_manual.c: a hand-written Rosenbrock function and gradient, the
 * reference the generated adjoint is compared with (value and timing).
 *
 * The gradient follows the same contract as the generated rosenbrock_b with
 * retb = 1: it returns the value and adds the gradient to g (the caller zeroes
 * g). It is the usual fused loop a person would write: one pass over x that
 * accumulates the value and both partial derivatives of each term.
 */
#include <stdint.h>

#include "rosenbrock_manual.h"

double rosenbrock_manual(const double *x, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n - 1; ++i) {
        double t1 = x[i + 1] - x[i] * x[i];
        double t2 = 1.0 - x[i];
        s += 100.0 * t1 * t1 + t2 * t2;
    }
    return s;
}

double rosenbrock_manual_grad(const double *x, double *g, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n - 1; ++i) {
        double xi = x[i];
        double t1 = x[i + 1] - xi * xi;
        double t2 = 1.0 - xi;
        s += 100.0 * t1 * t1 + t2 * t2;
        g[i] += -400.0 * xi * t1 - 2.0 * t2;
        g[i + 1] += 200.0 * t1;
    }
    return s;
}
