"""A local variable named nbdirs took the C variable of the vector modes' nbdirs parameter.

Found by the random programs (tests/programs.py).  In ``f_dv`` the parameter ``nbdirs`` is
read by every loop over directions, which the IR does not show, so the variable allocator
took it for dead after its last IR use and gave its C variable to the local ``nbdirs``:
``nbdirs = 0`` then ended the loops over directions early (vector tangent vs scalar
tangents: error 0.89).  Fixed: the nbdirs parameter lives to the end of the function.
"""
import math

from adgen import Array, f64


def g(p: f64, z: Array[f64]) -> None:
    nbdirs = 0
    while nbdirs < 3:
        z[nbdirs % len(z)] = z[nbdirs % len(z)] * math.cos(p)
        nbdirs += 1
    z[0] *= 0.5
