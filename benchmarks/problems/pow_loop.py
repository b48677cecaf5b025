"""x**n by repeated multiplication: a scalar loop (seed 000's "loop" benchmark)."""


def pow_loop(x: float, n: int) -> float:
    r = 1.0
    for i in range(n):
        r = r * x
    return r
