"""A piecewise function: if/elif/else on the input, smooth inside each piece."""

import math


def piecewise(x: float, a: float) -> float:
    if x < 0.7:
        y = a * x * x
    elif x < 1.2:
        y = a * math.sin(x) + math.exp(-x)
    else:
        y = math.log(x) / a
    return y * y + math.sqrt(1.0 + abs(y))
