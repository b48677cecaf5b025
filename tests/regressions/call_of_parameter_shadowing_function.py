"""A parameter named like a module function shadows it in Python, but adgen
compiles a call through that name as a call of the module function.

Found by tests/test_random_programs.py.  CPython raises "TypeError: 'float'
object is not callable" for ``f``; adgen accepts the module and the compiled
``f`` returns g(a) + a.  Outside the subset, so it should be rejected with a
diagnostic (using the parameter as a value, ``g * a``, works and must keep
working).
"""
# expect: rejected

from adgen import f64


def g(p: f64) -> float:
    return p * 2.0


def f(g: f64, a: f64) -> float:
    return g(a) + a
