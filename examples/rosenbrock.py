"""The Rosenbrock function: a loop over a 1-D array."""

from adgen import Array, f64


def rosenbrock(x: Array[f64]) -> f64:
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s
