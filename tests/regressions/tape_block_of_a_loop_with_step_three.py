"""The block of a reversed loop with step -3 had the wrong size (NaN adjoints).

Found by the random programs (tests/programs.py), the first run with tape blocks
(``FunctionEmitter.tape_block``).  The reversed loop runs while ``i > stop`` with ``stop``
an expression (``tmp - 3``); the count of its iterations, ``(start - stop + 2) / 3``, was
written ``(start - tmp - 3 + 2) / 3`` without parentheses, so the block popped fewer bytes
than the loop pushed and the reads landed outside the values (NaN in the dot-product test).
Fixed: the bounds are parenthesized where they are not a name or a number.
"""
from adgen import Array, f64


def f(x: Array[f64], k: int) -> float:
    s = 1.0
    for i in range(k - len(x), 2, 3):
        s = s * x[(i + 3 * len(x)) % len(x)] + 0.25
    return s
