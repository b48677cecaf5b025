"""A function that returns an int and writes a float array parameter crashes the
tangent check.

Found by tests/test_random_programs.py.  ``adgen.check`` raises
"ValueError: zip() argument 2 is longer than argument 1" in
adgen/validate.py ``tangent_outputs``: the tangent of the int result is
dropped before the results are zipped with their types.  (An int-returning
function that writes nothing is checked fine.)
"""

from adgen import Array, f64


def g(p: f64, z: Array[f64]) -> int:
    z[0] = p * z[1]
    return 1
