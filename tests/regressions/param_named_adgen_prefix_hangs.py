"""A parameter whose name starts with ``adgen_`` (or ``ADGEN_``) hangs the transpiler.

Found by tests/test_random_programs.py.  ``adgen.check`` never returns:
adgen/transpile/emit/names.py ``c_safe`` appends ``_`` until the name is no
longer reserved, but ``reserved`` treats every name starting with ``adgen_``
as reserved, so the loop never ends.  (A local variable with such a name is
fine.)
"""

from adgen import f64


def f(adgen_x: f64) -> float:
    return adgen_x * 2.0
