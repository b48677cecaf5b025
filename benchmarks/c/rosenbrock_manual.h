#ifndef ROSENBROCK_MANUAL_H
#define ROSENBROCK_MANUAL_H

#include <stdint.h>

/* The Rosenbrock function of x[0..n-1]. */
double rosenbrock_manual(const double *x, int64_t n);

/* Returns the value and adds the gradient to g[0..n-1] (zero it first). */
double rosenbrock_manual_grad(const double *x, double *g, int64_t n);

#endif /* ROSENBROCK_MANUAL_H */
