"""x to the power n by repeated squaring, with a while loop."""


def power(x: float, n: int) -> float:
    result = 1.0
    base = x
    k = n
    while k > 0:
        if k % 2 == 1:
            result = result * base
        base = base * base
        k = k // 2
    return result
