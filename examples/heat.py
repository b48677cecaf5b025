"""In-place updates: explicit time steps of the heat equation on a rod."""

from adgen import Array, f64, zeros


def heat(u: Array[f64], alpha: float, steps: int) -> f64:
    n = len(u)
    new = zeros(n)
    for _ in range(steps):
        for i in range(1, n - 1):
            new[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = new[i]
    energy = 0.0
    for i in range(n):
        energy += u[i] * u[i]
    return energy
