"""A parameter named like a macro of the C headers the generated code includes
(``M_E``) is emitted unchanged, so the generated C does not compile.

Found by tests/test_random_programs.py.  gcc: "expected ';', ',' or ')'
before numeric constant" (``double M_E`` expands to ``double 2.718...``).
The same happens for parameters named M_PI, HUGE_VAL, EOF, INT64_MAX,
SIZE_MAX, and the predefined ``unix`` / ``linux`` (gcc in GNU mode);
``offsetof`` fails inside cffi's parser.  Locals with these names are
renamed correctly.
"""

from adgen import f64


def h(M_E: f64, q: f64) -> float:
    return M_E * 2.0 + q
