"""A helper returning a tuple, unpacked by its caller."""

import math

from adgen import Array, f64


def to_polar(x: float, y: float) -> tuple[float, float]:
    r = math.hypot(x, y)
    theta = math.atan2(y, x)
    return r, theta


def spiral_length(xs: Array[f64], ys: Array[f64]) -> f64:
    total = 0.0
    for i in range(len(xs)):
        r, theta = to_polar(xs[i], ys[i])
        total += r * math.cos(theta) + 0.5 * r * r * theta
    return total
