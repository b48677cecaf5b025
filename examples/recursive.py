"""Recursion: a continued fraction evaluated by a recursive function."""


def continued_fraction(x: float, depth: int) -> float:
    if depth == 0:
        return x
    return x + 1.0 / (1.0 + continued_fraction(x * 0.5, depth - 1))


def series(x: float, n: int) -> float:
    total = 0.0
    for k in range(1, n + 1):
        total += continued_fraction(x / k, k) / k
    return total
