"""-(-p) is emitted as the C text --p: a pre-decrement, not a double negation.

Found by tests/test_random_programs.py.  For a scalar the generated C
compiles and silently returns p - 1 ("primal vs CPython" fails, relative
error ~1); for an rvalue such as -(-(2.0 * p)) or -(-z[1]) gcc rejects the
generated C ("lvalue required as decrement operand" / "decrement of
read-only location").
"""

from adgen import f64


def g(p: f64) -> float:
    return -(-p)
