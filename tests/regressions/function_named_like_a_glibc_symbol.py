"""A module function named like a symbol glibc still exports.

glibc exports `step` and `advance` (from the old <regexp.h>), which no header
the generated C includes declares, so the name check accepts them.  The cffi
wrapper's call of `step` then bound to glibc's `step` (the extension module is
loaded after libc, and calls between shared objects go through the dynamic
linker), and the call crashed.  Fixed: generated libraries are linked with
-Bsymbolic, so their own definitions win.
"""


def step(x: float, v: float) -> float:
    return x + 0.1 * v * v


def advance(x: float, v: float) -> float:
    return step(x, v) * step(v, x)
