"""Bad input (DESIGN.md section 8): one rejected program per rule.

Every rejected module must give, on stderr,

    path:LINE:COL: error: <what> (<what to do instead>)
        <the source line>
        <a caret under COL>

(optionally followed by notes), exit code 2, no traceback and no output
files.  The table below lists, per rule, a small module, where the error
should point (the offending token, 1-based line and column) and a fragment
of the message.
"""

from __future__ import annotations

import ast
import math
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import adgen
from helpers import run_cli


def module(text: str) -> str:
    """A module's source: dedented, without the first newline."""
    return textwrap.dedent(text).lstrip("\n")


HEADER = "from adgen import Array, custom_vjp, f64, zeros, prange\n"
#: the first line of a case checked with --target cuda (line 2 is HEADER's)
CUDA = "# checked with --target cuda\n"


def _target(source: str) -> list[str]:
    return ["--target", "cuda"] if source.startswith(CUDA) else []


#: the first line of a case checked with one more mode besides forward and reverse
MODE = "# checked with --mode {}\n"


def _extra_modes(source: str) -> list[str]:
    m = re.match(r"# checked with --mode (\S+)\n", source)
    return [m.group(1)] if m else []
#: a function with a custom adjoint, for the cases of calls to one (lines 2 to 8, with HEADER)
CUSTOM_S = module("""
    def s_adj(a: Array[f64], ab: Array[f64], retb: float) -> None:
        ab[0] += retb

    @custom_vjp(s_adj)
    def s(a: Array[f64]) -> float:
        return a[0]

    """)

#: (rule, source, line, col, message fragment, note or None); a note is (line, col, fragment)
CASES = [
    # -- syntax and signatures ---------------------------------------------------------------
    ("syntax error", module("""
        def f(x: float) -> float:
            return x +
        """), 2, 15, "invalid syntax", None),
    ("syntax error: missing colon", module("""
        def f(x: float) -> float
            return x
        """), 1, 25, "expected ':'", None),
    ("missing parameter annotation", module("""
        def f(x, y: float) -> float:
            return x * y
        """), 1, 7, "parameter 'x' needs a type annotation", None),
    ("missing return annotation", module("""
        def f(x: float):
            return x
        """), 1, 5, "function 'f' needs a return annotation", None),
    ("unsupported annotation", module("""
        def f(x: str) -> float:
            return 1.0
        """), 1, 10, "unsupported type annotation", None),
    ("default parameter value", module("""
        def f(x: float, y: float = 1.0) -> float:
            return x * y
        """), 1, 28, "default parameter values are not supported", None),
    ("*args", module("""
        def f(x: float, *rest: float) -> float:
            return x
        """), 1, 17, "*args is not supported", None),
    ("**kwargs", module("""
        def f(x: float, **options: float) -> float:
            return x
        """), 1, 17, "**kwargs is not supported", None),
    ("import of an unsupported module", module("""
        import os

        def f(x: float) -> float:
            return x
        """), 1, 8, "import of 'os' is not supported", None),
    ("from-import of an unsupported module", module("""
        from random import random

        def f(x: float) -> float:
            return x
        """), 1, 6, "import from 'random' is not supported", None),
    ("module constant assigned twice", module("""
        N = 3
        N = 4

        def f(x: float) -> float:
            return x * N
        """), 2, 1, "module constant 'N' is assigned twice", (1, 1, "'N' first assigned here")),
    ("keyword-only parameters", module("""
        def f(x: float, *, y: float) -> float:
            return x * y
        """), 1, 17, "keyword-only parameters are not supported", None),
    ("positional-only parameters", module("""
        def f(x: float, /, y: float) -> float:
            return x * y
        """), 1, 17, "positional-only parameters are not supported", None),
    ("async function", module("""
        async def f(x: float) -> float:
            return x
        """), 1, 1, "async functions are not supported", None),
    ("returning an array", HEADER + module("""
        def f(a: Array[f64]) -> Array[f64]:
            return a
        """), 2, 25, "returning an array is not supported", None),
    ("array of too many dimensions", HEADER + module("""
        def f(a: Array[f64, 5]) -> float:
            return 1.0
        """), 2, 21, "the number of dimensions must be 1, 2, 3 or 4", None),
    ("array in a tuple return", HEADER + module("""
        def f(x: float, a: Array[f64]) -> tuple[float, Array[f64]]:
            return x, a
        """), 2, 48, "tuple returns hold scalars only", None),
    ("unknown adgen name", module("""
        from adgen import Array, Tensor

        def f(x: float) -> float:
            return x
        """), 1, 26, "adgen has no name 'Tensor'", None),
    ("import of a name math does not have", module("""
        from math import exp, nosuch

        def f(x: float) -> float:
            return exp(x)
        """), 1, 23, "math has no name 'nosuch' (CPython raises ImportError here", None),
    ("code at module level", module("""
        def f(x: float) -> float:
            return x

        print(f(1.0))
        """), 4, 1, "not supported at module level", None),
    ("module constant computed by a call", module("""
        import math

        C = math.sqrt(2.0)

        def f(x: float) -> float:
            return C * x
        """), 3, 5, "module constants must be numeric literals or arithmetic on them", None),
    ("integer constant beyond 64 bits", module("""
        def f(x: float, n: int) -> float:
            k = n * 2 ** 70
            return x * k
        """), 2, 13, "does not fit in 64 bits", None),
    # (beyond a double too: the test for a select read its value as a float and crashed)
    ("integer constant beyond a double, a divisor in a conditional expression", module(f"""
        def f(x: float, c: bool) -> float:
            return 1.0 if c else x / 1{"0" * 320}
        """), 2, 30, "does not fit in 64 bits", None),
    ("function named like a C keyword", module("""
        def double(p: float) -> float:
            return p * 2.0
        """), 1, 5, "'double' is a keyword in C or C++", None),
    ("function named like a name C reserves", module("""
        def _Bool(p: float) -> float:
            return p * 2.0
        """), 1, 5, "C reserves names like '_Bool'", None),
    ("function named in other than ASCII", module("""
        def fα(p: float) -> float:
            return p * 2.0
        """), 1, 5, "the function name 'fα' is not ASCII", None),
    ("a name Python reads as another", module("""
        def f(x: float) -> float:
            return ｘ * 2.0
        """), 2, 12, "Python reads the name 'ｘ' as 'x' (write it as 'x')", None),
    ("function named main", module("""
        def main(p: float) -> float:
            return p * 2.0
        """), 1, 5, "'main' is the entry point of a C program", None),
    ("function named tape", module("""
        def tape(p: float) -> float:
            return p * 2.0
        """), 1, 5, "function name 'tape' cannot be used in the generated C: 'tape' names the "
                    "tape of the generated adjoints", None),
    ("function named like the tape counter", module("""
        def model_b_d_tape_bytes(p: float) -> float:
            return p * 2.0
        """), 1, 5, "'model_b_d_tape_bytes' is the function of model_b_d.c that tells the bytes "
                    "of the last adjoint's tape", None),
    ("function named like a GNU math function", module("""
        import math

        def sincos(x: float) -> float:
            return math.sin(math.cos(x))
        """), 3, 5, "'sincos' is defined by the C library headers the generated code includes",
     None),
    ("function named like a libm function", module("""
        def exp(p: float) -> float:
            return p * 2.0
        """), 1, 5, "'exp' is a function of the C math library", None),
    ("function named like a binding local", module("""
        def result(p: float, q: float) -> float:
            return p * 2.0 + q
        """), 1, 5, "'result' is used by the generated Python binding", None),
    ("function named like a C library function", module("""
        def remainder(p: float, q: float) -> float:
            return p * 2.0 + q
        """), 1, 5, "'remainder' is defined by the C library headers", None),
    ("function named like a function of the headers Python.h includes", module("""
        def read(p: float) -> float:
            return p * 2.0
        """), 1, 5, "'read' is defined by the C library headers the Python binding includes "
                    "(Python.h)", None),
    ("call of a variable that shadows a function", module("""
        def g(p: float) -> float:
            return p * 2.0

        def f(g: float, a: float) -> float:
            return g(a) + a
        """), 5, 12, "'g' is a variable here, not a function", (4, 7, "bound here")),
    # (CPython reads a name assigned anywhere in a function as its local in all of it)
    ("call of a name assigned later in the function", module("""
        def f(x: float) -> float:
            n = abs(x)
            abs = 3.0
            return n * abs
        """), 2, 9, "'abs' is assigned in this function, which makes it a local variable in "
                    "all of the function (as in Python), not a function (rename the variable)",
     None),
    ("a parameter named like a module", module("""
        import math

        def f(x: float, math: float) -> float:
            return math.sin(x)
        """), 4, 12, "'math' is a parameter, which makes it a local variable in all of the "
                     "function (as in Python), not the module math", None),
    ("an imported constant assigned later in the function", module("""
        from math import pi

        def f(x: float) -> float:
            y = pi * x
            pi = 3.0
            return y * pi
        """), 4, 9, "'pi' is assigned in this function, which makes it a local variable in "
                    "all of the function (as in Python), not the imported 'pi'", None),
    ("division by a constant zero", module("""
        ZERO = 0.0

        def f(x: float, n: int) -> float:
            y = x / ZERO
            y += n % 0
            return y
        """), 4, 13, "division by the constant zero (CPython raises ZeroDivisionError here)",
     None),
    ("call of a module constant named like a builtin", module("""
        abs = 2.0

        def f(x: float) -> float:
            return abs(x)
        """), 4, 12, "'abs' is a module constant, not a function (rename the constant)",
     (1, 1, "defined here")),
    ("module constant named like a function", module("""
        def f(x: float) -> float:
            return x

        f = 3.0
        """), 4, 1, "'f' is a function of this module and cannot be a module constant too",
     None),
    ("import of a module constant's name", module("""
        PI = 3.0
        from math import pi as PI

        def f(x: float) -> float:
            return x * PI
        """), 2, 18, "'PI' is a module constant and cannot be imported too", (1, 1, "defined here")),
    ("range assigned later in the function", module("""
        def f(x: float) -> float:
            t = 0.0
            for i in range(2):
                t += x
            range = 1.0
            return t * range
        """), 3, 14, "'range' is assigned in this function, which makes it a local variable",
     None),
    ("builtin called before a bare annotation of its name", module("""
        def f(x: float) -> float:
            y = abs(x)
            abs: float
            return y
        """), 2, 9, "'abs' is assigned in this function, which makes it a local variable",
     None),
    ("module constant named like an import", module("""
        import math
        math = 2.0

        def f(x: float) -> float:
            return x
        """), 2, 1, "'math' is imported and cannot be a module constant too", None),
    ("function named like a derivative", module("""
        def f(x: float) -> float:
            return x

        def f_d(x: float) -> float:
            return x
        """), 4, 5, "it is the name of a derivative of 'f'", None),
    ("function defined twice", module("""
        def f(x: float) -> float:
            return x

        def f(x: float) -> float:
            return 2.0 * x
        """), 4, 5, "function 'f' is defined twice", (1, 5, "first defined here")),
    ("assigning a module constant in a function", module("""
        N = 3

        def f(x: float) -> float:
            N = 4
            return x * N
        """), 4, 5, "'N' is a module constant and cannot be assigned", (1, 1, "defined here")),
    ("module nested too deeply for CPython", "def f(x: float) -> float:\n    return "
     + " + ".join(["x"] * 5000) + "\n", 2, 5, "this module is nested too deeply", None),
    ("expression nested too deeply for CPython's default recursion limit",
     "def f(x: float) -> float:\n    return " + "-" * 3000 + "x\n", 2, 5,
     "this module is nested too deeply", None),
    ("relative import", module("""
        from . import helpers

        def f(x: float) -> float:
            return x
        """), 1, 1, "relative imports are not supported", None),
    ("star import", module("""
        from math import *

        def f(x: float) -> float:
            return x
        """), 1, 1, "'from math import *' is not supported", None),
    ("renaming an adgen name", module("""
        from adgen import zeros as z

        def f(x: float) -> float:
            return x
        """), 1, 19, "renaming adgen names is not supported (write from adgen import zeros)", None),
    ("Array used without importing it", module("""
        def f(a: Array[float]) -> float:
            return a[0]
        """), 1, 10, "'Array' is not imported (add 'from adgen import Array'", None),
    ("f64 used without importing it", module("""
        def f(x: f64) -> float:
            return x
        """), 1, 10, "'f64' is not imported (add 'from adgen import f64'", None),
    ("zeros used without importing it", module("""
        from adgen import Array

        def f(x: float, n: int) -> float:
            a = zeros(n)
            return x * a[0]
        """), 4, 9, "'zeros' is not imported (add 'from adgen import zeros'", None),
    ("module constant beyond 64 bits", module("""
        N = 2 ** 70

        def f(x: float) -> float:
            return x * N
        """), 1, 5, "this integer constant does not fit in 64 bits", None),
    ("module constant too large to compute", module("""
        N = 2 ** 10 ** 10

        def f(x: float) -> float:
            return x * N
        """), 1, 5, "this integer constant does not fit in 64 bits", None),
    ("chained module-level assignment", module("""
        A = B = 1.0

        def f(x: float) -> float:
            return x * A
        """), 1, 1, "this module-level assignment is not supported", None),
    ("module-level annotation without a value", module("""
        N: int

        def f(x: float) -> float:
            return x
        """), 1, 1, "this module-level assignment is not supported", None),
    ("module constant that is not arithmetic", module("""
        N = 1 if True else 2

        def f(x: float) -> float:
            return x * N
        """), 1, 5, "this module constant is not supported", None),
    ("unknown name in a module constant", module("""
        N = M + 1

        def f(x: float) -> float:
            return x * N
        """), 1, 5, "unknown name 'M' in a module constant", None),
    ("module constant dividing by zero", module("""
        N = 1 / 0

        def f(x: float) -> float:
            return x * N
        """), 1, 5, "cannot evaluate this constant: division by zero", None),
    ("module constant overflowing", module("""
        N = 10.0 ** 400

        def f(x: float) -> float:
            return x * N
        """), 1, 5, "cannot evaluate this constant: the result is too large", None),
    ("function named with adgen's prefix", module("""
        def adgen_f(x: float) -> float:
            return x
        """), 1, 5, "names starting with adgen_ are adgen's own", None),
    ("Array annotation with three subscripts", HEADER + module("""
        def f(a: Array[f64, 2, 3]) -> float:
            return 1.0
        """), 2, 10, "this Array annotation is not supported", None),
    ("array of booleans", HEADER + module("""
        def f(a: Array[bool]) -> float:
            return 1.0
        """), 2, 16, "arrays of bool are not supported", None),
    ("array of arrays", HEADER + module("""
        def f(a: Array[Array[f64]]) -> float:
            return 1.0
        """), 2, 16, "arrays of arrays are not supported", None),
    ("decorator", module("""
        @staticmethod
        def f(x: float) -> float:
            return x
        """), 1, 1, "this decorator is not supported (only @custom_vjp(adjoint), "
        "@custom_jvp(tangent) and @external(...), from adgen)",
     None),
    ("custom adjoint defined after its function", module("""
        from adgen import custom_vjp

        @custom_vjp(g_adj)
        def g(x: float) -> float:
            return x * x

        def g_adj(x: float, retb: float) -> float:
            return 2.0 * x * retb
        """), 3, 13, "the adjoint 'g_adj' must be a function of this module defined before 'g'",
     None),
    ("custom adjoint with the wrong signature", module("""
        from adgen import custom_vjp

        def g_adj(x: float) -> float:
            return 2.0 * x

        @custom_vjp(g_adj)
        def g(x: float) -> float:
            return x * x
        """), 6, 13, "'g_adj' does not have the signature of an adjoint of 'g' (write "
                     "g_adj(x: f64, retb: f64) -> f64", (3, 5, "'g_adj' defined here")),
    ("custom_vjp without its import", module("""
        def g_adj(x: float, retb: float) -> float:
            return 2.0 * x * retb

        @custom_vjp(g_adj)
        def g(x: float) -> float:
            return x * x
        """), 4, 2, "'custom_vjp' is not imported (add 'from adgen import custom_vjp'", None),
    ("adgen.custom_vjp without import adgen", module("""
        def g_adj(x: float, retb: float) -> float:
            return 2.0 * x * retb

        @adgen.custom_vjp(g_adj)
        def g(x: float) -> float:
            return x * x
        """), 4, 2, "'adgen' is not imported (add 'import adgen'", None),
    ("array of a custom-adjoint call written later", HEADER + CUSTOM_S + module("""
        def f(a: Array[f64]) -> float:
            y = s(a)
            a[0] = 2.0 * a[0]
            return y + a[0]
        """), 10, 9, "'s' has a custom adjoint, which reads its array arguments again in the "
                     "reverse sweep, and 'a' is written after the call", None),
    ("local array of a split adjoint passed to a custom adjoint", HEADER + CUSTOM_S + module("""
        def h(x: float, n: int) -> float:
            z = zeros(2)
            z[0] = x
            if n <= 0:
                return s(z)
            return h(x * 0.5, n - 1) + s(z)
        """), 13, 16, "'z' is a local array, gone when h_bwd runs", None),
    ("custom-adjoint function writing an array", HEADER + module("""
        def s_adj(a: Array[f64], ab: Array[f64], retb: float) -> None:
            ab[0] += retb

        @custom_vjp(s_adj)
        def s(a: Array[f64]) -> float:
            a[1] = a[0]
            return a[0]
        """), 6, 5, "'s' has a custom adjoint and writes its array 'a'", None),
    # -- constructs outside the subset -------------------------------------------------------
    ("strings", module("""
        def f(x: float) -> float:
            s = "x"
            return x
        """), 2, 9, "strings are not supported", None),
    ("adgen's names through import adgen", module("""
        import adgen


        def f(x: adgen.f64) -> float:
            return x
        """), 4, 10, "adgen.f64 is not supported (import the name, from adgen import f64, and "
                     "write f64)", None),
    ("a call of adgen's names through import adgen", module("""
        import adgen


        def f(x: float, n: int) -> float:
            a = adgen.zeros(n)
            return x
        """), 5, 9, "adgen.zeros is not supported (import the name, from adgen import zeros, "
                    "and write zeros)", None),
    ("a loop over another of adgen's names through import adgen", module("""
        import adgen


        def f(x: float, n: int) -> float:
            for i in adgen.zeros(n):
                x = x * 2.0
            return x
        """), 5, 14, "this loop is not supported (write for i in range(...); for an array, "
                     "for i in range(len(a)))", None),
    ("a prange through import adgen", module("""
        import adgen
        from adgen import Array, f64


        def f(x: Array[f64], y: Array[f64]) -> None:
            for i in adgen.prange(len(x)):
                y[i] = x[i]
        """), 6, 14, "adgen.prange is not supported (import the name, from adgen import prange, "
                     "and write prange)", None),
    ("a type annotation in quotes", module("""
        def f(x: "float") -> float:
            return x
        """), 1, 10, "type annotations in quotes are not supported (write the type itself: "
                     "x: float, not x: \"float\")", None),
    ("lists", module("""
        def f(x: float) -> float:
            a = [x, x]
            return x
        """), 2, 9, "lists are not supported", None),
    ("dicts", module("""
        def f(x: float) -> float:
            d = {1: x}
            return x
        """), 2, 9, "dicts are not supported", None),
    ("list comprehension", module("""
        def f(x: float, n: int) -> float:
            a = [x * i for i in range(n)]
            return x
        """), 2, 9, "list comprehensions are not supported", None),
    ("classes", module("""
        class Model:
            pass

        def f(x: float) -> float:
            return x
        """), 1, 1, "classes are not supported", None),
    ("nested function (closure)", module("""
        def f(x: float) -> float:
            def g(y: float) -> float:
                return x * y
            return g(2.0)
        """), 2, 5, "nested functions are not supported", None),
    ("generator (yield)", module("""
        def f(x: float) -> float:
            yield x
        """), 2, 5, "yield is not supported", None),
    ("try/except", module("""
        def f(x: float) -> float:
            try:
                return 1.0 / x
            except ZeroDivisionError:
                return 0.0
        """), 2, 5, "try/except is not supported", None),
    ("with", module("""
        def f(x: float) -> float:
            with open(x) as fh:
                pass
            return x
        """), 2, 5, "with is not supported", None),
    ("lambda", module("""
        def f(x: float) -> float:
            g = lambda y: y * x
            return x
        """), 2, 9, "lambda is not supported", None),
    ("global", module("""
        N = 3

        def f(x: float) -> float:
            global N
            return x
        """), 4, 5, "global is not supported", None),
    ("raise", module("""
        def f(x: float) -> float:
            if x < 0.0:
                raise ValueError
            return x
        """), 3, 9, "raise is not supported", None),
    ("slicing", HEADER + module("""
        def f(a: Array[f64]) -> float:
            b = a[1:3]
            return b[0]
        """), 3, 11, "slicing is not supported", None),
    ("keyword arguments", module("""
        def g(x: float, y: float) -> float:
            return x * y

        def f(x: float) -> float:
            return g(x, y=2.0)
        """), 5, 17, "keyword arguments are not supported", None),
    ("for ... else", module("""
        def f(x: float, n: int) -> float:
            for i in range(n):
                x = x * 2.0
            else:
                x = 0.0
            return x
        """), 4, 5, "for/else is not supported", None),
    ("while ... else", module("""
        def f(x: float) -> float:
            while x < 10.0:
                x = x * 2.0
            else:
                x = 0.0
            return x
        """), 4, 5, "while/else is not supported", None),
    ("break in a prange", HEADER + module("""
        def f(a: Array[f64], n: int) -> float:
            s = 0.0
            for i in prange(n):
                if a[i] > 1.0:
                    break
                s += a[i]
            return s
        """), 6, 13, "break leaves a prange loop, whose iterations are independent", None),
    ("return in a prange", HEADER + module("""
        def f(a: Array[f64], n: int) -> float:
            for i in prange(n):
                for j in range(n):
                    if a[j] > 1.0:
                        return a[i]
            return 0.0
        """), 6, 17, "return inside a prange loop", None),
    ("prange sum updated by *=", HEADER + module("""
        def f(a: Array[f64]) -> float:
            p = 1.0
            for i in prange(len(a)):
                p *= a[i]
            return p
        """), 5, 9, "'p' is updated in this prange loop by an operation other than += or -=",
        (3, 5, "'p' bound here")),
    ("prange assigns a variable of the enclosing scope", HEADER + module("""
        def f(a: Array[f64]) -> float:
            t = 0.0
            for i in prange(len(a)):
                t = a[i]
            return t
        """), 5, 9, "'t' is defined before this prange loop and assigned in it",
        (3, 5, "'t' bound here")),
    ("prange reads its sum", HEADER + module("""
        def f(a: Array[f64]) -> float:
            s = 0.0
            for i in prange(len(a)):
                s += a[i] * s
            return s
        """), 5, 21, "'s' is read in the prange loop that sums it", (3, 5, "'s' bound here")),
    ("a negative constant to a fractional power", module("""
        def f(x: float) -> float:
            return (-8.0) ** 0.5 * x
        """), 2, 12, "a negative constant raised to a fractional power is a complex number, "
                     "which adgen does not compute", None),
    ("a variable assigned only in a branch a constant test skips", module("""
        DEBUG = False

        def f(x: float) -> float:
            if DEBUG:
                y = x
            return y
        """), 6, 12, "'y' may be undefined here (assign it on every path before this use)",
     (4, 5, "it is assigned only in the branch of this if that never runs (its test is known "
            "when compiling)")),
    ("a negative module constant to a fractional power", module("""
        NEG = -8.0
        HALF = 0.5


        def f(x: float) -> float:
            return x * NEG ** HALF
        """), 6, 16, "a negative constant raised to a fractional power is a complex number, "
                     "which adgen does not compute", None),
    ("int() of a constant beyond 64 bits", module("""
        def f(x: float) -> float:
            y = 1e30
            return float(int(y)) * x
        """), 3, 18, "int() of the constant 1e+30 does not fit in 64 bits", None),
    ("min of booleans", module("""
        def f(x: float, y: float) -> float:
            b = min(x > 0.0, y > 0.0)
            return x if b else y
        """), 2, 13, "min of a boolean is not supported", None),
    ("a literal beyond an i32 operand's range", "from adgen import i32\n" + module("""
        def f(x: float, n: i32) -> float:
            return x * (n + 3000000000)
        """), 3, 17, "the integer 3000000000 does not fit in 32 bits, the type (i32) it takes "
                     "here", None),
    ("a literal beyond 32 bits assigned to an i32 local", "from adgen import i32\n" + module("""
        def f(x: float, n: i32) -> float:
            m = n
            m = 3000000000
            return x * m
        """), 4, 5, "the integer 3000000000 does not fit in 32 bits, the type (i32) it takes "
                    "here", None),
    ("a literal beyond 32 bits returned as an i32", "from adgen import i32\n" + module("""
        def f(x: float) -> i32:
            return 3000000000
        """), 3, 12, "the integer 3000000000 does not fit in 32 bits, the type (i32) it takes "
                     "here", None),
    ("an integer expression of module constants beyond 64 bits", module("""
        N2 = 2**62

        def f(x: float) -> float:
            return x * (N2 * 2)
        """), 4, 17, "an integer computation of constant values here gives "
                     "9223372036854775808, which does not fit in 64 bits", None),
    ("CUDA: binomial checkpointing in a kernel", CUDA + HEADER + module("""
        def f(x: Array[f64], n: int) -> float:
            tot = 0.0
            for i in prange(len(x)):
                a = x[i]
                for t in range(n):  # adgen: binomial(2)
                    a = a * 0.5 + 0.1
                tot += a * a
            return tot
        """), 7, 9, "'# adgen: binomial(2)' on a loop that runs on the device: its adjoint keeps "
                    "the snapshots in local arrays", None),
    ("CUDA: an array indexed outside a prange", CUDA + HEADER + module("""
        def f(a: Array[f64]) -> float:
            s = 0.0
            for i in range(len(a)):
                s += a[i]
            return s
        """), 6, 14, "'f' indexes the array 'a' outside a prange", None),
    ("CUDA: a device function called on the host too", CUDA + HEADER + module("""
        def g(a: Array[f64], i: int) -> float:
            return a[i]

        def f(a: Array[f64]) -> float:
            s = 0.0
            for i in prange(len(a)):
                s += g(a, i)
            return s + g(a, 0)
        """), 10, 16, "'g' runs on the device (it is called inside a prange) and is called "
        "here on the host too", None),
    ("CUDA: a function whose gradient a kernel takes called on the host", CUDA + HEADER +
     "from adgen import grad\n" + module("""
        def e(x: float, w: Array[f64]) -> float:
            return x * w[0]

        def f(a: Array[f64]) -> float:
            s = 0.0
            for i in prange(len(a)):
                s += grad(e)(a[i], a)
            return s + e(1.0, a)
        """), 11, 16, "'e' runs on the device (grad(e) is taken inside a prange) and is called "
        "here on the host too", None),
    ("CUDA: a prange in a device function", CUDA + HEADER + module("""
        def g(a: Array[f64], i: int) -> float:
            s = 0.0
            for j in prange(i):
                s += a[j]
            return s

        def f(a: Array[f64]) -> float:
            s = 0.0
            for i in prange(len(a)):
                s += g(a, i)
            return s
        """), 5, 5, "a prange in 'g', which runs on the device", None),
    ("CUDA: a prange in the custom adjoint of a device function", CUDA + HEADER + module("""
        def g_adj(x: float, retb: float) -> float:
            a = 0.0
            for k in prange(2):
                a += retb
            return a

        @custom_vjp(g_adj)
        def g(x: float) -> float:
            return 2.0 * x

        def f(a: Array[f64]) -> float:
            s = 0.0
            for i in prange(len(a)):
                s += g(a[i])
            return s
        """), 5, 5, "a prange in 'g_adj', which runs on the device (the derivatives of 'g', "
        "which is called inside a prange, call it): kernels cannot launch kernels", None),
    ("CUDA: the custom adjoint of a device function called on the host", CUDA + HEADER + module("""
        def g_adj(x: float, retb: float) -> float:
            return 2.0 * retb

        @custom_vjp(g_adj)
        def g(x: float) -> float:
            return 2.0 * x

        def f(a: Array[f64]) -> float:
            s = 0.0
            for i in prange(len(a)):
                s += g(a[i])
            return s

        def h(x: float) -> float:
            return g_adj(x, x)
        """), 17, 12, "'g_adj' runs on the device (the derivatives of 'g', which is called "
        "inside a prange, call it) and is called here on the host too", None),
    ("CUDA: local arrays", CUDA + HEADER + module("""
        def f(a: Array[f64]) -> float:
            b = zeros(len(a))
            s = 0.0
            for i in prange(len(a)):
                b[i] = a[i]
                s += b[i]
            return s
        """), 4, 9, "local arrays (zeros) are not supported on the CUDA target yet", None),
    ("CUDA: a prange whose adjoint needs a tape across iterations", CUDA + HEADER + module("""
        import math

        def f(a: Array[f64], b: Array[f64]) -> float:
            s = 0.0
            for i in prange(len(a)):
                t = 0.0
                for j in range(len(b)):
                    t += math.sin(a[i] * b[j])
                s += t * t
            for i in prange(len(a)):
                a[i] = 0.0
            return s
        """), 7, 5, "this prange cannot be a CUDA kernel: its adjoint needs a tape across "
        "iterations", None),
    ("CUDA: an integer sum", CUDA + HEADER + module("""
        def f(a: Array[f64]) -> float:
            n = 0
            s = 0.0
            for i in prange(len(a)):
                if a[i] > 0.0:
                    n += 1
                s += a[i]
            return s / n
        """), 6, 5, "a prange summing an integer is not supported on the CUDA target yet", None),
    ("prange writes the same element in every iteration", HEADER + module("""
        def f(a: Array[f64], b: Array[f64]) -> None:
            for i in prange(len(a)):
                for j in range(len(b)):
                    b[j] = a[i]
        """), 5, 13, "every iteration of this prange writes the same element of 'b'", None),
    ("checkpoint directive on a while loop", module("""
        def f(x: float, n: int) -> float:
            # adgen: checkpoint
            while x < 10.0:
                x = x * 2.0
            return x
        """), 2, 5, "'# adgen: checkpoint' on a while loop is not supported yet", None),
    ("checkpoint directive on a loop with a break", module("""
        import math


        def f(x: float, n: int) -> float:
            for t in range(n):  # adgen: binomial(2)
                if x > 100.0:
                    break
                x = math.sin(x) * 1.1
            return x
        """), 5, 25, "'# adgen: binomial(2)' on a loop that can end early (a break or a "
                     "return in it) is not supported yet", None),
    ("checkpoint directive on a loop with a return", module("""
        def f(x: float, n: int) -> float:
            for t in range(n):  # adgen: checkpoint
                for j in range(3):
                    if x > 100.0:
                        return x
                x = x * 1.1
            return x
        """), 2, 25, "'# adgen: checkpoint' on a loop that can end early", None),
    ("binomial directive on a while loop", module("""
        def f(x: float, n: int) -> float:
            while x < 10.0:  # adgen: binomial(4)
                x = x * 2.0
            return x
        """), 2, 22, "'# adgen: binomial(4)' on a while loop is not supported", None),
    ("binomial directive without snapshots", module("""
        def f(x: float, n: int) -> float:
            for i in range(n):  # adgen: binomial(0)
                x = x * 2.0
            return x
        """), 2, 25, "'# adgen: binomial(0)' keeps no snapshot", None),
    ("two directives on one loop", module("""
        def f(x: float, n: int) -> float:
            # adgen: store
            for i in range(n):  # adgen: recompute
                x = x * 2.0
            return x
        """), 3, 25, "this loop has two directives, '# adgen: store' and '# adgen: recompute' "
                     "(keep one)", None),
    ("binomial directive with more snapshots than a program needs", module("""
        def f(x: float, n: int) -> float:
            for i in range(n):  # adgen: binomial(99999999999999999999999)
                x = x * 2.0
            return x
        """), 2, 25, "keeps too many snapshots (write binomial(k) with k <= 1,000,000", None),
    ("binomial directive off a loop", module("""
        def f(x: float, n: int) -> float:
            x = x * 2.0  # adgen: binomial(3)
            return x
        """), 2, 18, "'# adgen: binomial(3)' applies to a for loop", None),
    ("binomial directive on a loop with a computed step", module("""
        def f(x: float, n: int, k: int) -> float:
            for i in range(0, n, k):  # adgen: binomial(3)
                x = x * 2.0 + 1.0 / x
            return x
        """), 2, 5, "'# adgen: binomial(3)' needs a constant step", None),
    ("checkpointed loop whose body reads an array written later", HEADER + module("""
        def f(a: Array[f64], n: int) -> float:
            s = 1.0
            for i in range(n):  # adgen: checkpoint
                s = s * a[i % len(a)]
            a[0] = 0.0
            return s
        """), 4, 5, "this loop cannot be checkpointed: 'a' is written after it is read", None),
    ("forward-in-reverse with a read in an inner loop", HEADER + module("""
        def f(x: Array[f64], w: Array[f64], y: Array[f64]) -> None:
            for i in prange(len(x)):  # adgen: forward-in-reverse
                acc = 0.0
                for j in range(len(w)):
                    acc += w[j] * x[i]
                y[i] = acc
        """), 6, 20, "this prange cannot run forward-in-reverse: the iteration reads 'w' in an "
                     "inner loop, so the number of its inputs and outputs is not known", None),
    ("forward-in-reverse with a write in an inner loop", HEADER + module("""
        def f(x: Array[f64], y: Array[f64, 2]) -> None:
            for i in prange(len(x)):  # adgen: forward-in-reverse
                xi = x[i]
                for j in range(3):
                    y[i, j] = xi * j
        """), 6, 13, "the iteration writes 'y' in an inner loop", None),
    ("forward-in-reverse with an element read, then written again", HEADER + module("""
        def f(x: Array[f64], y: Array[f64]) -> None:
            for i in prange(len(x)):  # adgen: forward-in-reverse
                y[i] = x[i]
                y[i] = y[i] * y[i]
        """), 3, 5, "this prange cannot run forward-in-reverse: 'y' is written after it is read",
     None),
    ("forward-in-reverse with a call that needs a derivative", HEADER + module("""
        def g(a: float) -> float:
            return a * a

        def f(x: Array[f64], y: Array[f64]) -> None:
            for i in prange(len(x)):  # adgen: forward-in-reverse
                y[i] = g(x[i])
        """), 7, 16, "the call of 'g' needs a derivative, and forward-in-reverse "
                     "differentiates the loop body only", None),
    ("forward-in-reverse on a prange whose input is written later", HEADER + module("""
        def f(x: Array[f64], y: Array[f64]) -> None:
            for i in prange(len(x)):  # adgen: forward-in-reverse
                y[i] = x[i] * x[i]
            x[0] = 1.0
        """), 3, 5, "this prange cannot run forward-in-reverse: 'x' is written after it is "
                    "read, so its iterations cannot be computed again in the reverse sweep",
     None),
    ("forward-in-reverse with too many inputs", HEADER + module("""
        def f(x: Array[f64, 2], y: Array[f64]) -> None:
            for i in prange(len(y)):  # adgen: forward-in-reverse
                p = 1.0
        """) + "".join(f"        p = p * x[i, {k}]\n" for k in range(33)) + "        y[i] = p\n",
     3, 5, "an iteration has 33 inputs, and forward-in-reverse computes one tangent per input "
           "(at most 32)", None),
    ("forward-in-reverse on a range loop", HEADER + module("""
        def f(x: Array[f64], y: Array[f64]) -> None:
            for i in range(len(x)):  # adgen: forward-in-reverse
                y[i] = x[i] * x[i]
        """), 3, 30, "'# adgen: forward-in-reverse' applies to a prange, whose iterations are "
                     "independent", None),
    ("forward-in-reverse on a while loop", HEADER + module("""
        def f(x: Array[f64], k: int) -> float:
            s = 0.0
            n = 0
            while n < k:  # adgen: forward-in-reverse
                s += x[n]
                n += 1
            return s
        """), 5, 19, "'# adgen: forward-in-reverse' applies to a prange, whose iterations are "
                     "independent", None),
    ("forward-in-reverse off a loop", HEADER + module("""
        def f(x: Array[f64], y: Array[f64]) -> None:
            for i in prange(len(x)):
                y[i] = x[i] * x[i]  # adgen: forward-in-reverse
        """), 4, 29, "'# adgen: forward-in-reverse' applies to a prange (write it at the end of "
                     "the for line or on the line above it)", None),
    ("unknown directive", module("""
        def f(x: float, n: int) -> float:
            for i in range(n):  # adgen: bisection(4)
                x = x * 2.0
            return x
        """), 2, 25, "the directive '# adgen: bisection(4)' is not supported yet (supported: "
                     "store, recompute, checkpoint on a loop, binomial(k) on a for loop, "
                     "forward-in-reverse on a prange; checkpoint on a call)", None),
    ("checkpoint directive on a statement without a module call", module("""
        def f(x: float, n: int) -> float:
            y = x * 2.0  # adgen: checkpoint
            return y
        """), 2, 18, "'# adgen: checkpoint' applies to a call of a function of this module, "
                     "and this statement has none", None),
    ("checkpoint directive on a compound statement", module("""
        def f(x: float) -> float:
            if x > 0.0:  # adgen: checkpoint
                x = x * 2.0
            return x
        """), 2, 18, "'# adgen: checkpoint' applies to a for loop or to an assignment or "
        "expression statement that calls a module function, not to this statement", None),
    ("checkpointed call whose array is written after it", HEADER + module("""
        def g(a: Array[f64]) -> float:
            return a[0] * a[0]

        def f(a: Array[f64]) -> float:
            y = g(a)  # adgen: checkpoint
            a[1] = a[0]
            return y + a[1]
        """), 6, 9, "'g' is checkpointed, so it reads its array arguments again in the reverse "
                    "sweep, and 'a' is written after the call", None),
    ("checkpointed call of a function writing its array", HEADER + module("""
        def g(a: Array[f64]) -> float:
            a[1] = a[0]
            return a[0] * a[1]

        def f(a: Array[f64]) -> float:
            return g(a)  # adgen: checkpoint
        """), 7, 12, "'# adgen: checkpoint' runs 'g' again in the reverse sweep, and 'g' writes "
                     "its argument 'a'", None),
    ("checkpointed call in a split adjoint whose callers write the array", HEADER + module("""
        def g(a: Array[f64]) -> float:
            return a[0] * a[0]

        def h(a: Array[f64], n: int) -> float:
            if n <= 0:
                return g(a)  # adgen: checkpoint
            return h(a, n - 1) * 0.5

        def f(a: Array[f64]) -> float:
            y = h(a, 2)
            a[0] = 2.0 * a[0]
            return y + a[0]
        """), 7, 16, "and 'a' may be written by a caller of 'h' between h_fwd and h_bwd", None),
    ("store directive away from a loop", module("""
        def f(x: float, n: int) -> float:
            y = x * 2.0  # adgen: store
            return y
        """), 2, 18, "'# adgen: store' applies to a loop", None),
    ("bitwise operator", module("""
        def f(x: float, n: int) -> float:
            if n & 1 == 1:
                return x
            return -x
        """), 2, 10, "operator '&' is not supported", None),
    ("'is' comparison", module("""
        def f(x: float, y: float) -> float:
            if x is y:
                return x
            return y
        """), 2, 10, "'is' is not supported (compare numbers with <", None),
    ("'in' comparison", module("""
        def f(x: float, n: int) -> float:
            if n in range(3):
                return x
            return -x
        """), 2, 10, "'in' is not supported (compare numbers with <", None),
    ("unsupported intrinsic", module("""
        import math

        def f(x: float) -> float:
            return math.gamma(x)
        """), 4, 12, "'math.gamma' is not a supported intrinsic", None),
    ("del", module("""
        def f(x: float) -> float:
            y = x
            del y
            return x
        """), 3, 5, "del is not supported", None),
    ("assignment expression", module("""
        def f(x: float) -> float:
            if (y := 2.0 * x) > 1.0:
                return y
            return x
        """), 2, 9, "assignment expressions (:=) are not supported", None),
    ("match", module("""
        def f(x: float, n: int) -> float:
            match n:
                case 1:
                    return x
            return 0.0
        """), 2, 5, "match is not supported", None),
    ("import inside a function", module("""
        def f(x: float) -> float:
            import math
            return math.sin(x)
        """), 2, 5, "imports inside functions are not supported", None),
    ("loop over something other than range", module("""
        def f(x: float, n: int) -> float:
            for i in n:
                x = x * 2.0
            return x
        """), 2, 14, "this loop is not supported", None),
    ("range with a zero step", module("""
        def f(x: float, n: int) -> float:
            for i in range(0, n, 0):
                x = x * 2.0
            return x
        """), 2, 26, "range step must not be zero", None),
    ("bitwise augmented assignment", module("""
        def f(x: float, n: int) -> float:
            n |= 1
            return x * n
        """), 2, 7, "this augmented assignment operator is not supported", None),
    ("bitwise invert", module("""
        def f(x: float, n: int) -> float:
            return x * ~n
        """), 2, 16, "operator '~' is not supported", None),
    ("expression statement without effect", module("""
        def f(x: float) -> float:
            x + 1.0
            return x
        """), 2, 5, "this expression statement has no effect", None),
    ("None as a value", module("""
        def f(x: float) -> float:
            y = None
            return x
        """), 2, 9, "None is not a value", None),
    ("dict comprehension", module("""
        def f(x: float, n: int) -> float:
            d = {i: x for i in range(n)}
            return x
        """), 2, 9, "dict comprehensions are not supported", None),
    ("sets", module("""
        def f(x: float) -> float:
            s = {x, 2.0}
            return x
        """), 2, 9, "sets are not supported", None),
    ("set comprehension", module("""
        def f(x: float, n: int) -> float:
            s = {x * i for i in range(n)}
            return x
        """), 2, 9, "set comprehensions are not supported", None),
    ("generator expression", module("""
        def f(x: float, n: int) -> float:
            return sum(x * i for i in range(n))
        """), 2, 16, "generator expressions are not supported", None),
    ("starred assignment target", module("""
        def g(x: float) -> tuple[float, float]:
            return x, 2.0 * x

        def f(x: float) -> float:
            a, *b = g(x)
            return a
        """), 5, 8, "starred expressions are not supported", None),
    ("starred argument", module("""
        def g(x: float) -> float:
            return x

        def f(x: float) -> float:
            return g(*x)
        """), 5, 14, "starred arguments are not supported", None),
    ("ellipsis", module("""
        def f(x: float) -> float:
            ...
            return x
        """), 2, 5, "... is not supported (use pass)", None),
    ("complex number", module("""
        def f(x: float) -> float:
            return x * 1j
        """), 2, 16, "complex numbers are not supported", None),
    ("math.log with a base", module("""
        import math

        def f(x: float) -> float:
            return math.log(x, 2.0)
        """), 4, 12, "math.log with a base is not supported", None),
    ("range outside a for loop", module("""
        def f(x: float, n: int) -> float:
            r = range(n)
            return x
        """), 2, 9, "range(...) is only supported as the iterable of a for loop", None),
    ("attribute of a scalar", module("""
        def f(x: float) -> float:
            return x.real
        """), 2, 12, "attributes are not supported", None),
    ("a.shape without an axis", HEADER + module("""
        def f(a: Array[f64]) -> float:
            s = a.shape
            return 1.0
        """), 3, 9, "this use of .shape is not supported", None),
    ("unknown name in the math module", module("""
        import math

        def f(x: float) -> float:
            return x * math.tau2
        """), 4, 16, "'math.tau2' is not supported here", None),
    ("one-element tuple returned from a tuple function", module("""
        def f(x: float) -> tuple[float]:
            return x
        """), 2, 12, "'f' returns a tuple by its annotation, this return gives one value",
     (1, 5, "annotated here")),
    ("tuple returned from a one-value function", module("""
        def f(x: float) -> float:
            return x,
        """), 2, 12, "'f' returns one value by its annotation, this return gives a tuple",
     (1, 5, "annotated here")),
    ("a tuple-returning call assigned to one name", module("""
        def g(x: float) -> tuple[float, float]:
            return x, 2.0 * x

        def f(x: float) -> float:
            y = g(x)
            return y
        """), 5, 9, "this call returns a tuple; unpack it (a, b = g(...))", None),
    ("chained tuple assignment", module("""
        def g(x: float) -> tuple[float, float]:
            return x, 2.0 * x

        def f(x: float) -> float:
            a, b = c, d = g(x)
            return a
        """), 5, 5, "this tuple assignment is not supported", None),
    ("unpacking a scalar", module("""
        def f(x: float) -> float:
            a, b = x
            return a
        """), 2, 12, "this value cannot be unpacked", None),
    ("unpacking a call that returns one value", module("""
        def g(x: float) -> float:
            return x

        def f(x: float) -> float:
            a, b = g(x)
            return a
        """), 5, 12, "this call does not return a tuple", None),
    ("assigning to an attribute", module("""
        def f(x: float) -> float:
            x.real = 1.0
            return x
        """), 2, 5, "assigning to this is not supported", None),
    ("augmented assignment to an attribute", module("""
        def f(x: float) -> float:
            x.real += 1.0
            return x
        """), 2, 5, "assigning to this is not supported", None),
    ("annotating an array element", HEADER + module("""
        def f(a: Array[f64], x: float) -> float:
            a[0]: float = x
            return x
        """), 3, 5, "this annotation is not supported", None),
    # -- names, types and calls --------------------------------------------------------------
    ("unknown name", module("""
        def f(x: float) -> float:
            return y * 2.0
        """), 2, 12, "unknown name 'y'", None),
    ("type conflict of a local", module("""
        def f(x: float) -> float:
            t = x > 0.0
            t = x
            return x
        """), 3, 5, "'t' has type bool but is assigned a f64", (2, 5, "'t' first bound here")),
    ("float assigned to an int local", module("""
        def f(x: float, n: int) -> float:
            k = 0
            for i in range(n):
                k = x
            return x
        """), 4, 9, "'k' has type i64 but is assigned a f64", (2, 5, "'k' first bound here")),
    ("rebinding an array variable", HEADER + module("""
        def f(n: int) -> float:
            a = zeros(n)
            a = zeros(n)
            return a[0]
        """), 4, 5, "array variable 'a' cannot be rebound", (3, 5, "'a' first bound here")),
    ("wrong arity calling a module function", module("""
        def g(x: float) -> float:
            return x * x

        def f(x: float) -> float:
            return g(x, x)
        """), 5, 12, "'g' takes 1 argument(s), got 2", (1, 5, "defined here")),
    ("one array passed for two parameters, one written", HEADER + module("""
        def g(n: int, y: Array[f64], z: Array[f64]) -> None:
            for i in range(1, n):
                z[i] = 2.0 * y[i - 1]

        def f(x: Array[f64]) -> float:
            b = x
            g(len(x), b, x)
            return x[2]
        """), 8, 5, "the array 'x' is passed to 'g' as both 'y' and 'z', and 'g' writes 'z' "
        "(arrays passed to a function must not overlap when one of them is written: pass a copy)",
        (2, 5, "'g' defined here")),
    ("array passed for a scalar parameter", HEADER + module("""
        def g(x: float) -> float:
            return x * x

        def f(a: Array[f64]) -> float:
            return g(a)
        """), 6, 14, "argument 'x' of 'g' is f64, got Array[f64]", (2, 7, "parameter declared here")),
    ("float returned from an int function", module("""
        def f(x: float) -> int:
            return x
        """), 2, 12, "return value: expected i64, got f64", None),
    ("float in a tuple return of ints", module("""
        def f(x: float, n: int) -> tuple[float, int]:
            return x, x
        """), 2, 15, "return value: expected i64, got f64", None),
    ("float index", HEADER + module("""
        def f(a: Array[f64], x: float) -> float:
            return a[x]
        """), 3, 14, "an index must be an integer, got f64", None),
    ("indexing a scalar", module("""
        def f(x: float) -> float:
            return x[0]
        """), 2, 12, "only arrays can be indexed", None),
    ("arithmetic on booleans", module("""
        def f(x: float) -> float:
            b = x > 0.0
            return b + x
        """), 3, 12, "arithmetic on booleans is not supported", None),
    ("unpacking the wrong number of values", module("""
        def g(x: float) -> tuple[float, float]:
            return x, 2.0 * x

        def f(x: float) -> float:
            a, b, c = g(x)
            return a
        """), 5, 5, "cannot unpack 2 values into 3 names", None),
    ("using the value of a function returning nothing", HEADER + module("""
        def g(a: Array[f64]) -> None:
            a[0] = 1.0

        def f(a: Array[f64]) -> float:
            return 2.0 * g(a)
        """), 6, 18, "'g' returns nothing and has no value", None),
    ("a function used as a value", module("""
        def g(x: float) -> float:
            return x

        def f(x: float) -> float:
            h = g
            return h(x)
        """), 5, 9, "function 'g' can only be called, not used as a value", None),
    ("calling a method", module("""
        def f(x: float) -> float:
            return x.conjugate()
        """), 2, 12, "calling this is not supported", None),
    ("len of a scalar", module("""
        def f(x: float) -> float:
            return 1.0 * len(x)
        """), 2, 22, "len of a f64 is not supported", None),
    ("a.shape with a variable axis", HEADER + module("""
        def f(a: Array[f64, 2], k: int) -> float:
            return 1.0 * a.shape[k]
        """), 3, 26, "the axis in a.shape[k] must be a constant integer", None),
    ("calling an unknown function", module("""
        def f(x: float) -> float:
            return frobnicate(x)
        """), 2, 12, "unknown function 'frobnicate'", None),
    ("tuple-returning call in an expression", module("""
        def g(x: float) -> tuple[float, float]:
            return x, 2.0 * x

        def f(x: float) -> float:
            return g(x) + 1.0
        """), 5, 12, "'g' returns a tuple; unpack it", None),
    ("integer power with a variable exponent", module("""
        def f(x: float, n: int, m: int) -> float:
            k = n ** m
            return x * k
        """), 2, 14, "an integer raised to a power needs a constant exponent >= 0", None),
    ("integer power with a negative exponent", module("""
        def f(x: float, n: int) -> float:
            k = n ** -2
            return x * k
        """), 2, 14, "an integer raised to a power needs a constant exponent >= 0", None),
    ("integer literal beyond 64 bits", module("""
        def f(x: float) -> float:
            k = 99999999999999999999
            return x * k
        """), 2, 9, "the integer 99999999999999999999 does not fit in 64 bits", None),
    ("declared local read before it is assigned", module("""
        def f(x: float) -> float:
            y: float
            return x * y
        """), 3, 16, "'y' is declared but never assigned before this use", None),
    ("a tuple as a value", module("""
        def f(x: float) -> float:
            y = (x, x)
            return y
        """), 2, 10, "a tuple is not a value here", None),
    ("assigning to a function's name", module("""
        def g(x: float) -> float:
            return x

        def f(x: float) -> float:
            g = 2.0 * x
            return x
        """), 5, 5, "'g' is a function of this module and cannot be assigned", None),
    ("loop variable named like a module constant", module("""
        N = 3

        def f(x: float, n: int) -> float:
            for N in range(n):
                x = x * 2.0
            return x * N
        """), 4, 9, "'N' is a module constant and cannot be assigned", (1, 1, "defined here")),
    ("annotation contradicting the first binding", module("""
        def f(x: float) -> float:
            y = 2.0 * x
            y: int = 3
            return x
        """), 3, 8, "'y' is annotated i64 but was bound as f64", (2, 5, "first bound here")),
    ("float argument for an int parameter", module("""
        def g(n: int) -> float:
            return 1.0 * n

        def f(x: float) -> float:
            return g(x)
        """), 5, 14, "argument 'n' of 'g': expected i64, got f64 (use int(...) to convert)", None),
    ("float assigned to an annotated int local", module("""
        def f(x: float) -> float:
            k: int = x
            return x * k
        """), 2, 14, "'k': expected i64, got f64", None),
    ("array assigned to an annotated float local", HEADER + module("""
        def f(a: Array[f64]) -> float:
            t: float = a
            return t
        """), 3, 16, "'t': expected f64, got an array", None),
    ("boolean stored in a float array", HEADER + module("""
        def f(a: Array[f64], n: int) -> float:
            a[0] = n > 0
            return a[0]
        """), 3, 12, "array element: expected f64, got bool", None),
    ("array stored in an array element", HEADER + module("""
        def f(a: Array[f64], b: Array[f64]) -> float:
            a[0] = b
            return a[0]
        """), 3, 12, "array element: expected f64, got an array", None),
    ("array returned for a float", HEADER + module("""
        def f(a: Array[f64]) -> float:
            return a
        """), 3, 12, "return value: expected f64, got an array", None),
    ("float range bound", module("""
        def f(x: float) -> float:
            for i in range(x):
                x = x * 2.0
            return x
        """), 2, 20, "range argument must be an integer, got f64", None),
    ("division by zero in a constant expression", module("""
        def f(x: float) -> float:
            return x * (1.0 / 0)
        """), 2, 17, "division by zero in a constant expression", None),
    ("constant power that cannot be evaluated", module("""
        def f(x: float) -> float:
            return x * 0.0 ** -1
        """), 2, 16, "cannot evaluate this constant power", None),
    ("comparing a boolean with a number", module("""
        def f(x: float) -> float:
            if (x > 0.0) == 1.0:
                return x
            return -x
        """), 2, 18, "comparing a boolean with a number is not supported", None),
    ("'and' of a number", module("""
        def f(x: float, y: float) -> float:
            if x and y > 0.0:
                return x
            return y
        """), 2, 8, "'and' needs boolean operands", None),
    ("'or' with a number on the right", module("""
        def f(x: float, y: float) -> float:
            if x > 0.0 or y:
                return x
            return y
        """), 2, 19, "'or' needs boolean operands", None),
    ("an array as a condition", HEADER + module("""
        def f(a: Array[f64]) -> float:
            if a:
                return 1.0
            return 0.0
        """), 3, 8, "an array is not a condition", None),
    ("intrinsic of a boolean", module("""
        import math

        def f(x: float) -> float:
            return math.sin(x > 0.0)
        """), 4, 21, "sin of a boolean is not supported", None),
    ("intrinsic with the wrong number of arguments", module("""
        import math

        def f(x: float) -> float:
            return math.sin(x, x)
        """), 4, 12, "sin takes 1 argument(s), got 2", None),
    ("int() without an argument", module("""
        def f(x: float) -> float:
            return x * int()
        """), 2, 16, "int(...) takes one argument", None),
    ("int() of a boolean", module("""
        def f(x: float) -> float:
            return x * int(x > 0.0)
        """), 2, 16, "int() of a boolean is not supported", None),
    # -- control flow ------------------------------------------------------------------------
    ("variable assigned in only one branch", module("""
        def f(x: float) -> float:
            if x > 0.0:
                y = 2.0 * x
            return y
        """), 4, 12, "'y' may be undefined here", (2, 5, "assigned in only some branches")),
    ("loop variable used after its loop", module("""
        def f(x: float, n: int) -> float:
            for i in range(n):
                x = x * 2.0
            return x * i
        """), 4, 16, "'i' may be undefined here", (2, 9, "not available after its loop")),
    ("falling off the end without returning", module("""
        def f(x: float) -> float:
            if x > 0.0:
                return x
        """), 2, 5, "can reach its end without returning a value", None),
    ("falling off the end after a while True left by break", module("""
        def f(x: float) -> float:
            while True:
                x = x * 0.5
                if x < 1.0:
                    break
        """), 2, 5, "can reach its end without returning a value", None),
    ("a while True that nothing leaves", module("""
        def f(x: float) -> float:
            while True:
                x = x * 2.0
                for i in range(3):
                    if x > 1.0:
                        break
        """), 2, 5, "this loop never ends: its condition is always true and no break or return "
                    "leaves it (add a break or a return)", None),
    ("returning the wrong number of values", module("""
        def f(x: float) -> float:
            return x, x
        """), 2, 5, "returns 1 value(s) by its annotation, this return gives 2", (1, 5, "annotated here")),
    ("break outside a loop", module("""
        def f(x: float) -> float:
            if x > 0.0:
                break
            return x
        """), 3, 9, "'break' outside", None),
    ("tuple as the loop variable", module("""
        def f(x: float, n: int) -> float:
            for i, j in range(n):
                x = x * 2.0
            return x
        """), 2, 9, "the loop variable must be a single name", None),
    ("range with a keyword argument", module("""
        def f(x: float, n: int) -> float:
            for i in range(stop=n):
                x = x * 2.0
            return x
        """), 2, 14, "range takes 1 to 3 positional integer arguments", None),
    ("loop variable reusing a local", module("""
        def f(x: float, n: int) -> float:
            i = 0
            for i in range(n):
                x = x * 2.0
            return x
        """), 3, 9, "loop variable 'i' reuses a variable defined before the loop",
     (2, 5, "'i' bound here")),
    ("reverse mode: a while condition calling a function that writes an array", HEADER + module("""
        def g(a: Array[f64], x: float) -> bool:
            a[0] = a[0] * x
            return a[0] < 10.0

        def f(a: Array[f64], x: float) -> float:
            while g(a, x):
                x = x + 1.0
            return a[0]
        """), 7, 11, "reverse mode does not support a call in a while condition", None),
    # -- arrays ------------------------------------------------------------------------------
    ("arithmetic on whole arrays", HEADER + module("""
        def f(a: Array[f64], x: float) -> float:
            b = x * a
            return b[0]
        """), 3, 13, "arithmetic on whole arrays is not supported", None),
    ("wrong number of indices", HEADER + module("""
        def f(a: Array[f64], i: int, j: int) -> float:
            return a[i, j]
        """), 3, 12, "a 1-d array needs 1 index(es), got 2", None),
    ("a constant index past the end of a local array", HEADER + module("""
        N = 3


        def f(x: float) -> float:
            b = zeros(N)
            b[N] = x
            return b[0]
        """), 7, 7, "index 3 is out of range of 'b', which has 3 element(s)", (6, 9, "created here")),
    ("a constant negative index before the start of a local array", HEADER + module("""
        def f(x: float) -> float:
            c = zeros((2, 4))
            c[1, 0] = x
            return c[1, -5]
        """), 5, 17, "index -5 is out of range on axis 1 of 'c', which has 4 element(s)", None),
    ("zeros inside a loop", HEADER + module("""
        def f(x: float, n: int) -> float:
            for i in range(n):
                t = zeros(n)
                t[0] = x
            return x
        """), 4, 13, "zeros(...) is only supported at the top level", None),
    ("array variable rebound to a scalar", HEADER + module("""
        def f(a: Array[f64], x: float) -> float:
            a = x
            return x
        """), 3, 5, "array variable 'a' cannot be rebound to a f64", (2, 7, "'a' first bound here")),
    ("array bound in only one branch", HEADER + module("""
        def f(a: Array[f64], x: float) -> float:
            if x > 0.0:
                c = a
            else:
                return x
            return c[0]
        """), 3, 5, "array variable 'c' is bound in a branch of this if", (4, 9, "bound here")),
    ("a.shape of a scalar", module("""
        def f(x: float) -> float:
            return 1.0 * x.shape[0]
        """), 2, 18, "a f64 has no shape", None),
    ("a.shape axis out of range", HEADER + module("""
        def f(a: Array[f64, 2]) -> float:
            return 1.0 * a.shape[2]
        """), 3, 26, "axis 2 is out of range for a 2-d array (use 0 to 1)", None),
    ("len with two arguments", HEADER + module("""
        def f(a: Array[f64]) -> float:
            return 1.0 * len(a, a)
        """), 3, 18, "len takes one array", None),
    ("zeros with two arguments", HEADER + module("""
        def f(x: float, n: int) -> float:
            a = zeros(n, n)
            return x * a[0]
        """), 3, 9, "zeros takes one argument", None),
    ("zeros of five dimensions", HEADER + module("""
        def f(x: float, n: int) -> float:
            a = zeros((n, n, n, n, n))
            return x
        """), 3, 16, "a local array of 5 dimensions is not supported", None),
    ("float extent for zeros", HEADER + module("""
        def f(x: float) -> float:
            a = zeros(x)
            return a[0]
        """), 3, 15, "an extent must be an integer, got f64", None),
    # -- derivatives inside the module (grad, jvp) ------------------------------------------
    ('nested: grad of something else', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return grad(g)(x)\n',
     5, 17, "grad of 'g' is not supported", None),
    ('nested: argnums out of range', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    return grad(f, argnums=1)(x)\n',
     9, 28, 'argnums 1 is out of range', None),
    ('nested: grad with respect to an integer', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float, n: int) -> float:\n    return x * n\n\n\ndef g(x: float) -> float:\n    return grad(f, argnums=1)(x, 2)\n',
     9, 28, "grad with respect to 'n' (i64) is not supported", (4, 17, 'parameter declared here')),
    ('nested: grad of a tuple result', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> tuple[float, float]:\n    return x, x\n\n\ndef g(x: float) -> float:\n    return grad(f)(x)\n',
     9, 17, 'needs a function returning one float', (4, 5, 'defined here')),
    ('nested: grad(f) not called', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    h = grad(f)\n    return x\n',
     9, 9, 'grad(f) is a function: call it', None),
    ('nested: a tuple of partials not unpacked', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float, y: float) -> float:\n    return x * y\n\n\ndef g(x: float) -> float:\n    return grad(f, argnums=(0, 1))(x, x) * 2.0\n',
     9, 12, 'returns a tuple; unpack it', None),
    ('nested: other options of grad', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    return grad(f, has_aux=True)(x)\n',
     9, 20, 'grad takes the function and argnums only', None),
    ('nested: argnums not a literal', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float, k: int) -> float:\n    return grad(f, argnums=k)(x)\n',
     9, 28, 'argnums must be an integer or a tuple of integers', None),
    ('nested: argnums repeated', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float, y: float) -> float:\n    return x * y\n\n\ndef g(x: float) -> tuple[float, float]:\n    return grad(f, argnums=(0, 0))(x, x)\n',
     9, 29, 'argnums names a parameter twice', None),
    ('nested: jvp with None for a float', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    y, t = jvp(f, (x,), (None,))\n    return t\n',
     9, 26, "the tangent of 'x' is a float", None),
    ('nested: jvp with a tangent for an integer', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float, n: int) -> float:\n    return x * n\n\n\ndef g(x: float) -> float:\n    y, t = jvp(f, (x, 2), (1.0, 0))\n    return t\n',
     9, 33, "'n' (i64) has no tangent (write None)", None),
    ('nested: jvp with too few tangents', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float, n: int) -> float:\n    return x * n\n\n\ndef g(x: float) -> float:\n    y, t = jvp(f, (x, 2), (1.0,))\n    return t\n',
     9, 28, "jvp of 'f' needs 2 tangent(s), got 1", None),
    ("nested: a function's own gradient inside it", 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return grad(f)(x) + x\n',
     5, 12, "grad(f) is taken inside 'f' itself", None),
    ('nested: grad of a function that writes an array', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float, a: Array[f64]) -> float:\n    a[0] = x\n    return x * a[0]\n\n\ndef g(x: float, a: Array[f64]) -> float:\n    return grad(f)(x, a)\n',
     10, 12, "of a function that writes its array 'a' is not supported", None),
    ('nested: the name of the gradient is taken', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef f_grad(x: float) -> float:\n    return 2.0 * x\n\n\ndef g(x: float) -> float:\n    return grad(f)(x)\n',
     13, 12, "is computed by a function named 'f_grad'", None),
    ('nested: an array as a tangent', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float, a: Array[f64]) -> float:\n    y, t = jvp(f, (x,), (a,))\n    return t\n',
     9, 26, "tangent of 'x': expected f64, got an array", None),
    ('nested: a boolean as a tangent', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    y, t = jvp(f, (x,), (True,))\n    return t\n',
     9, 26, "tangent of 'x': expected f64, got bool", None),
    ('nested: grad without a function', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    return grad()(x)\n',
     9, 12, 'grad takes the function to differentiate first', None),
    ('nested: jvp without a function', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    y, t = jvp(2.0, (x,), (1.0,))\n    return t\n',
     9, 12, 'jvp takes the function to differentiate first', None),
    ('nested: jvp of something else', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef g(x: float) -> float:\n    y, t = jvp(h, (x,), (1.0,))\n    return t\n',
     5, 16, "jvp of 'h' is not supported", None),
    ('nested: jvp of a tuple result', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> tuple[float, float]:\n    return x, x\n\n\ndef g(x: float) -> float:\n    y, t = jvp(f, (x,), (1.0,))\n    return t\n',
     9, 16, "jvp of 'f' needs a function returning one float", (4, 5, 'defined here')),
    ("nested: calling a call's result", 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    return f(x)(x)\n',
     9, 12, 'calling this is not supported', None),
    ('nested: jvp without tuples', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    y, t = jvp(f, x, 1.0)\n    return t\n',
     9, 12, 'jvp takes the function, a tuple of arguments and a tuple of tangents', None),
    ("nested: jvp's pair in an expression", 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float) -> float:\n    return x * x\n\n\ndef g(x: float) -> float:\n    return jvp(f, (x,), (1.0,)) * 2.0\n',
     9, 12, 'jvp returns the value and its tangent; unpack them', None),
    ('nested: vector reverse through a taped gradient', '# checked with --mode vector-reverse\nimport math\nfrom adgen import Array, f64, grad, jvp\n\ndef f(x: float, n: int) -> float:\n    s = x\n    for i in range(n):\n        s = s * math.sin(s)\n    return s\n\n\ndef g(x: float, n: int) -> float:\n    return grad(f)(x, n)\n',
     13, 12, 'vector reverse mode through grad(f) is not supported', None),
    ('nested: reverse through jvp of a function taking a taped gradient', 'import math\nfrom adgen import f64, grad, jvp\n\n\ndef helper(a: f64) -> f64:\n    return math.exp(a)\n\n\ndef energy(x: f64, n: int) -> f64:\n    s = helper(x)\n    for i in range(n):\n        s += 0.0\n    return s\n\n\ndef r(x: f64, n: int) -> f64:\n    return grad(energy)(x, n)\n\n\ndef top(x: f64, n: int) -> f64:\n    p, dp = jvp(r, (x, n), (1.0, None))\n    return dp\n',
     21, 13, 'reverse mode through jvp(r, ...) is not supported: its tangent keeps the tape', None),
    # -- custom tangents (@custom_jvp) ------------------------------------------------------
    ('custom tangent with the wrong signature', 'import math\nfrom adgen import Array, custom_jvp, f64\n\ndef t(x: float) -> tuple[float, float]:\n    return x, 1.0\n\n\n@custom_jvp(t)\ndef f(x: float) -> float:\n    return x\n',
     8, 13, "'t' does not have the signature of a tangent of 'f'", (4, 5, "'t' defined here")),
    ('custom tangent of a function without a float result', 'import math\nfrom adgen import Array, custom_jvp, f64\n\ndef t(n: int) -> tuple[int]:\n    return (n,)\n\n\n@custom_jvp(t)\ndef f(n: int) -> int:\n    return n\n',
     8, 13, "'f' returns no float, so it has no tangent to give", None),
    ('custom tangent of a function writing an array', 'import math\nfrom adgen import Array, custom_jvp, f64\n\ndef t(a: Array[f64], ad: Array[f64], x: float, xd: float) -> tuple[float, float]:\n    return x, xd\n\n\n@custom_jvp(t)\ndef f(a: Array[f64], x: float) -> float:\n    a[0] = x\n    return x\n',
     9, 5, "'f' has a custom tangent and writes its array 'a'", None),
    ('custom tangent defined after its function', 'import math\nfrom adgen import Array, custom_jvp, f64\n\n@custom_jvp(t)\ndef f(x: float) -> float:\n    return x\n\n\ndef t(x: float, xd: float) -> tuple[float, float]:\n    return x, xd\n',
     4, 13, "the tangent 't' must be a function of this module defined before 'f'", None),
    ('nested: an array written after a taped gradient read it', 'import math\nfrom adgen import Array, f64, grad, jvp\n\ndef e(x: float, c: Array[f64]) -> float:\n    s = x\n    for i in range(len(c)):\n        s = s * math.sin(s * c[i])\n    return s\n\n\ndef g(x: float, c: Array[f64]) -> float:\n    y = grad(e)(x, c)\n    c[0] = 0.5 * c[0]\n    return y * c[0]\n',
     12, 9, "grad(e) has a custom adjoint, which reads its array arguments again in the reverse sweep, and 'c' is written after the call", None),
]

#: an existing C file for the cases of @external (nothing compiles it)
EXTERNAL_C = str(Path(__file__).resolve().parent.parent / "examples" / "external" / "special.c")
EXTERNAL_HEADER = "from adgen import Array, custom_vjp, external, f64\n\n"
FULL = 'name="f_c", tangent="f_c_d", adjoint="f_c_b"'
SCALAR = "def f(x: f64) -> f64:\n    return x\n"


def _external_case(rule: str, decorators: str, fragment: str, at: str, skip: int = 0,
                   body: str = SCALAR, first: str = "", header: str = EXTERNAL_HEADER
                   ) -> tuple[str, str, int, int, str, None]:
    """A case of @external: ``decorators`` (``@external(C, ...)`` with ``C`` the C file) over
    ``body``; the error is at the first ``at`` of the source, ``skip`` characters in."""
    source = first + header + decorators.replace("external(C", f'external("{EXTERNAL_C}"') + "\n" + body
    k = source.index(at) + skip
    line = source.count("\n", 0, k) + 1
    return (f"external: {rule}", source, line, k - source.rfind("\n", 0, k), fragment, None)


CASES += [
    _external_case("CUDA", f"@external(C, {FULL})", "external C functions are not supported on "
                   "the CUDA target yet ('f' calls f_c from ", "@", first=CUDA),
    _external_case("no tangent in forward mode", '@external(C, name="f_c", adjoint="f_c_b")',
                   "forward mode needs the tangent of the external function 'f'", "@"),
    _external_case("vector mode", f"@external(C, {FULL})", "vector-forward mode is not "
                   "supported for the external function 'f'", "@",
                   first=MODE.format("vector-forward")),
    _external_case("vector reverse mode", f"@external(C, {FULL})", "vector-reverse mode is not "
                   "supported for the external function 'f'", "@",
                   first=MODE.format("vector-reverse")),
    _external_case("hvp", f"@external(C, {FULL})", "hvp mode is not supported for the external "
                   "function 'f'", "@", first=MODE.format("hvp")),
    _external_case("no adjoint in reverse mode", '@external(C, name="f_c", tangent="f_c_d")',
                   "reverse mode needs the adjoint of the external function 'f'", "@"),
    _external_case("no C file", '@external("nothere.c", name="f_c")',
                   "cannot find the C file 'nothere.c' (looked for ", '"nothere.c"'),
    _external_case("no name", "@external(C)", "@external needs the name of the C function",
                   "external("),
    _external_case("no C file given", '@external(name="f_c")',
                   "@external takes the C file as its one positional argument", "external("),
    _external_case("C file not a string", '@external(1, name="f_c")',
                   "the C file must be a string literal", "1,"),
    _external_case("name not a string", "@external(C, name=f_c)", "name= must be a string "
                   "literal", "=f_c", 1),
    _external_case("unknown keyword", '@external(C, name="f_c", tangnt="f_c_d")',
                   "@external has no argument 'tangnt'", "tangnt"),
    _external_case("another decorator", f"@external(C, {FULL})\n@custom_vjp(f)",
                   "'f' is an external C function and has another decorator", "@custom_vjp"),
    _external_case("not imported", f"@external(C, {FULL})", "'external' is not imported (add "
                   "'from adgen import external'", "external(", header="from adgen import f64\n"),
    _external_case("not a C identifier", '@external(C, name="f-c")',
                   "'f-c' is not a C identifier", '"f-c"'),
    _external_case("a C keyword", '@external(C, name="double")',
                   "the C function name 'double' cannot be used: 'double' is a keyword in C or "
                   "C++", '"double"'),
    _external_case("a name C reserves", '@external(C, name="__f")',
                   "the C function name '__f' cannot be used: C reserves names like '__f'",
                   '"__f"'),
    _external_case("a function of the headers Python.h includes", '@external(C, name="read")',
                   "the C function name 'read' cannot be used: 'read' is defined by the C "
                   "library headers the Python binding includes (Python.h)", '"read"'),
    _external_case("a libm function", '@external(C, name="sin")',
                   "'sin' is a function of the C math library", '"sin"'),
    _external_case("main", '@external(C, name="main")', "'main' is the entry point of a C "
                   "program", '"main"'),
    _external_case("a C library name", '@external(C, name="malloc")', "'malloc' is defined by "
                   "the C library headers the generated code includes", '"malloc"'),
    _external_case("a C function named like a nested gradient", '@external(C, name="f_c", '
                   'adjoint="f_grad")', "grad(f) is computed by a function named 'f_grad', and "
                   "'f_grad' is a C function of the external function 'f'", "grad(",
                   header="from adgen import external, f64, grad\n\n",
                   body=SCALAR + "\n\ndef g(x: f64) -> f64:\n    return grad(f)(x)\n"),
    _external_case("the tape counter's name", '@external(C, name="model_b_tape_bytes")',
                   "the C function name 'model_b_tape_bytes' cannot be used: "
                   "'model_b_tape_bytes' is the function of model_b.c that tells the bytes of "
                   "the last adjoint's tape", '"model_b_tape_bytes"'),
    _external_case("the tape's name", '@external(C, name="tape")', "the C function name "
                   "'tape' cannot be used: 'tape' names the tape of the generated adjoints",
                   '"tape"'),
    _external_case("adgen's prefix", '@external(C, name="adgen_f")',
                   "names starting with adgen_ are adgen's own", '"adgen_f"'),
    _external_case("a binding name", '@external(C, name="result")',
                   "'result' is used by the generated Python binding", '"result"'),
    _external_case("a derivative's name", '@external(C, name="f_c", tangent="f_d")',
                   "the C function name 'f_d' cannot be used: it is the name of a derivative "
                   "of 'f'", '"f_d"'),
    _external_case("the module function's name", '@external(C, name="f")',
                   "the C function name 'f' cannot be used: 'f' is a function of this module "
                   "(the generated function that calls it)", '"f"'),
    _external_case("one name twice", '@external(C, name="f_c", adjoint="f_c")',
                   "the C function name 'f_c' cannot be used: it is also given as name=",
                   'adjoint="f_c"', 8),
    _external_case("the name of a half of an adjoint", '@external(C, name="f_c", '
                   'tangent="f_c_fwd")', "adgen names the halves of the adjoint of f_c "
                   "f_c_fwd and f_c_bwd", '"f_c_fwd"'),
    _external_case("a C function of another external", '@external(C, name="g_c")\n'
                   'def g(x: f64) -> f64:\n    return x\n\n\n@external(C, name="g_c")',
                   "the C function 'g_c' is already the external of 'g'", '"g_c")\ndef f'),
    _external_case("the name of a half of another external's adjoint",
                   '@external(C, name="g_c")\ndef g(x: f64) -> f64:\n    return x\n\n\n'
                   '@external(C, name="g_c_fwd")', "the C function name 'g_c_fwd' cannot be "
                   "used: adgen names the halves of the adjoint of g_c (the external of 'g') "
                   "g_c_fwd and g_c_bwd", '"g_c_fwd")\ndef f'),
    _external_case("a C keyword after another external", '@external(C, name="g_c")\n'
                   'def g(x: f64) -> f64:\n    return x\n\n\n@external(C, name="int")',
                   "the C function name 'int' cannot be used: 'int' is a keyword in C or C++",
                   '"int"'),
    _external_case("halves of its adjoint named like another external's C function",
                   '@external(C, name="f_c_fwd")\ndef g(x: f64) -> f64:\n    return x\n\n\n'
                   '@external(C, name="f_c")', "the C function name 'f_c' cannot be used: adgen "
                   "names the halves of its adjoint f_c_fwd and f_c_bwd, and 'f_c_fwd' is a C "
                   "function of 'g'", '"f_c")\ndef f'),
    _external_case("a module function named like a derivative", '@external(C, name="f_c")',
                   "the module function 'f_c_d' has the name of one of its derivatives",
                   '"f_c"', body=SCALAR + "\n\ndef f_c_d(x: f64) -> f64:\n    return x\n"),
    _external_case("writes an array", f"@external(C, {FULL})", "the external function 'f' "
                   "writes its array parameter 'a' (external C functions only read their arrays",
                   "a[0]", body="def f(a: Array[f64]) -> f64:\n    a[0] += 1.0\n    return 1.0\n"),
    _external_case("a derivative of its gradient", f"@external(C, {FULL})",
                   "a derivative of grad(f) would need a second derivative of the external C "
                   "function 'f_c'", "grad(f)",
                   header="from adgen import Array, external, f64, grad\n\n",
                   body=SCALAR + "\n\ndef g(x: f64) -> f64:\n    return grad(f)(x) * x\n"),
    _external_case("its array written after the call", f"@external(C, {FULL})",
                   "'f' is an external C function, whose C adjoint reads its array arguments "
                   "again in the reverse sweep, and 'a' is written after the call", "f(a)",
                   body="def f(a: Array[f64]) -> f64:\n    return a[0]\n\n\n"
                        "def g(a: Array[f64]) -> f64:\n    y = f(a)\n    a[0] = 2.0\n"
                        "    return y * a[0]\n"),
    _external_case("returns nothing", f"@external(C, {FULL})", "the external function 'f' "
                   "returns nothing", "None", body="def f(x: f64) -> None:\n    pass\n"),
]


def _run(tmp_path: Path, source: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    path = tmp_path / "model.py"
    path.write_text(source, encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "adgen.cli", str(path), "--mode", "forward", "--mode", "reverse",
         "-o", str(out), *_target(source),
         *[a for m in _extra_modes(source) for a in ("--mode", m)]],
        capture_output=True, text=True, timeout=120)
    return proc, path, out


def _assert_caret(stderr: str, source_line: str, col: int) -> None:
    """The excerpt: the offending source line, then a caret under column ``col``."""
    lines = stderr.splitlines()
    text = source_line.rstrip()
    for i, line in enumerate(lines[:-1]):
        if text and line.endswith(text):
            prefix = len(line) - len(text)
            caret = lines[i + 1]
            assert caret.rstrip() == " " * (prefix + col - 1) + "^", \
                f"caret line does not point at column {col}:\n{stderr}"
            return
    raise AssertionError(f"source line {text!r} not shown in:\n{stderr}")


@pytest.mark.parametrize(("source", "line", "col", "message", "note"),
                         [pytest.param(*c[1:], id=c[0]) for c in CASES])
def test_rejected(tmp_path: Path, source: str, line: int, col: int, message: str,
                  note: tuple[int, int, str] | None) -> None:
    proc, path, out = _run(tmp_path, source)
    err = proc.stderr
    assert proc.returncode == 2, f"exit {proc.returncode}, stderr:\n{err}"
    assert "Traceback" not in err, err
    assert "internal error" not in err, err
    head = f"{path}:{line}:{col}: error: "
    assert err.startswith(head), f"expected {head!r}, got:\n{err}"
    first = err.splitlines()[0]
    assert message in first, f"expected {message!r} in the message, got:\n{err}"
    # what is wrong, then in parentheses what is supported instead
    assert first.endswith(")") and " (" in first[len(head):], f"no hint in:\n{first}"
    _assert_caret(err, source.splitlines()[line - 1], col)
    if note is not None:
        note_line, note_col, fragment = note
        note_head = f"{path}:{note_line}:{note_col}: note: "
        notes = [ln for ln in err.splitlines() if ln.startswith(note_head)]
        assert notes and fragment in notes[0], f"expected {note_head}...{fragment}, got:\n{err}"
        after = err[err.index(notes[0]):]
        _assert_caret(after, source.splitlines()[note_line - 1], note_col)
    assert not out.exists() or not any(out.iterdir()), f"output written: {list(out.iterdir())}"


def test_cases_cover_distinct_rules() -> None:
    names = [c[0] for c in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 30


def test_load_raises_located_error(tmp_path: Path) -> None:
    import adgen
    from adgen.api import LoadError

    path = tmp_path / "model.py"
    path.write_text(module("""
        def f(x: float) -> float:
            return y * 2.0
        """), encoding="utf-8")
    with pytest.raises(LoadError) as info:
        adgen.load(str(path), modes=("forward",))
    text = str(info.value)
    assert text.startswith(f"{path}:2:12: error: unknown name 'y'")
    assert "    return y * 2.0" in text
    _assert_caret(text, "    return y * 2.0", 12)


# -- warnings: legal code whose derivative is probably not what was meant ---------------------

WARNED = '''import math


def f(x: float, y: float) -> float:
    k = int(x * 4.0)
    z = math.floor(y) * x
    if x == y:
        return z
    return z * k
'''


def test_warnings_are_located_and_werror_makes_them_errors(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text(WARNED)
    r = run_cli(str(path), "--mode", "reverse", "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    heads = [ln for ln in lines if ": warning: " in ln]
    assert [h.split(": warning: ")[0] for h in heads] == [f"{path}:5:9", f"{path}:6:9", f"{path}:7:8"]
    assert "int() of a value that depends on an independent input" in heads[0]
    assert "'math.floor' of a value" in heads[1]
    assert "floats compared for equality" in heads[2]
    assert lines[1].strip() == "k = int(x * 4.0)" and lines[2].strip() == "^"
    r = run_cli(str(path), "--mode", "reverse", "-o", str(tmp_path / "out2"), "--werror")
    assert r.returncode == 2
    assert r.stderr.count(": error: ") == 3 and "Traceback" not in r.stderr
    assert not (tmp_path / "out2").exists()


def test_a_constant_single_precision_cannot_hold_is_warned_of(tmp_path: Path) -> None:
    """With --precision f32, 1e39 was written INFINITY and 1e-50 0.0f without a word (gcc's
    own warning never fires on them); a subnormal (1e-40) and 3.4e38 are held; in double
    precision none is warned of."""
    path = tmp_path / "lits.py"
    path.write_text("HUGE = 1e39\n\n\ndef f(x: float) -> float:\n"
                    "    y = x * 1e39 + 1e-50 * x\n"
                    "    return y + HUGE + 3.4e38 + 1e-40\n")
    r = run_cli(str(path), "--precision", "f32", "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 0, r.stderr
    heads = [ln for ln in r.stderr.splitlines() if ": warning: " in ln]
    assert heads == [
        f"{path}:5:13: warning: the constant 1e+39 is inf in single precision (f32): beyond "
        "its range (write math.inf if that is meant)",
        f"{path}:5:20: warning: the constant 1e-50 is 0 in single precision (f32): below its "
        "smallest value (write 0.0 if that is meant)",
        f"{path}:6:16: warning: the constant 1e+39 is inf in single precision (f32): beyond "
        "its range (write math.inf if that is meant)"]
    r = run_cli(str(path), "--precision", "f32", "-o", str(tmp_path / "out2"), "--werror")
    assert r.returncode == 2 and r.stderr.count(": error: ") == 3, r.stderr
    r = run_cli(str(path), "-o", str(tmp_path / "out3"), "--werror")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr


def test_no_warning_without_an_independent(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text(WARNED)
    r = run_cli(str(path), "--mode", "forward", "--wrt", "y", "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 0
    assert "int()" not in r.stderr and "equality" in r.stderr  # x is a constant now; y is not


def test_no_warning_on_what_adgen_adds(tmp_path: Path) -> None:
    """The search for a running max's index compares floats for equality; it is adgen's,
    so no warning names it, also in the copy a gradient taken inside the module makes of
    the adjoint (it warned at <generated>:0:0 there, and --werror refused the module)."""
    path = tmp_path / "model.py"
    path.write_text(HEADER.replace("zeros", "grad, zeros") + module("""
        def pot(x: f64, w: Array[f64]) -> f64:
            m = -1e300
            for i in range(len(w)):
                m = max(m, w[i] * x)
            return m


        def step(x: f64, w: Array[f64]) -> f64:
            g = grad(pot)(x, w)
            return g * x
        """))
    r = run_cli(str(path), "--mode", "forward", "-o", str(tmp_path / "out"), "--werror")
    assert r.returncode == 0 and "warning" not in r.stderr and "error" not in r.stderr, r.stderr


def test_load_issues_python_warnings(tmp_path: Path) -> None:
    import adgen
    path = tmp_path / "model.py"
    path.write_text(WARNED)
    with pytest.warns(adgen.AdgenWarning, match="int\\(\\) of a value"):
        adgen.load(str(path), modes=("reverse",))
    with pytest.raises(adgen.LoadError, match="error: int\\(\\) of a value"):
        adgen.load(str(path), modes=("reverse",), werror=True)


# -- valid Python that once was rejected or crashed ---------------------------------------------

ACCEPTED = {
    "byte order mark": "\ufeffdef f(x: float) -> float:\n    return 2.0 * x\n",
    "one-line function body": "def f(x: float) -> float: return 2.0 * x\n",
    "hexadecimal number of dimensions": HEADER + module("""
        def f(a: Array[f64, 0x2]) -> float:
            return a[0, 0] * a[0, 1]
        """),
    "names C cannot have, renamed (non-ASCII, C23 and GNU keywords, reserved)": HEADER + module("""
        def f(α: float, σ2: Array[f64], _Bool: float, typeof: float, __x: float) -> float:
            β = α * 2.0 + _Bool * typeof + __x
            for é in range(len(σ2)):
                β += σ2[é] * α
            return β

        def g(x: Array[f64], tape: float) -> float:
            s = 0.0
            for k in range(len(x)):
                s = s * tape + x[k]
            return s

        def h(EAGAIN: float, st_atime: float) -> float:
            return EAGAIN * st_atime
        """),
    "parameter named like a module constant, assigned": module("""
        N = 3

        def f(N: float) -> float:
            N = N * 2.0
            return N
        """),
}


@pytest.mark.parametrize("source", list(ACCEPTED.values()), ids=list(ACCEPTED))
def test_accepted(tmp_path: Path, source: str) -> None:
    from adgen.api import transpile

    path = tmp_path / "model.py"
    path.write_text(source, encoding="utf-8")
    t = transpile(str(path), ("forward", "reverse"))
    assert set(t.outputs) == {"forward", "reverse"}


def test_names_c_cannot_have_are_renamed(tmp_path: Path) -> None:
    """Parameters and locals named in other than ASCII, or like C23's and GNU C's keywords
    or C's reserved names, get C names (Python's names stay the binding's), and the module
    builds and passes the three-way check; a module whose file name is not an identifier is
    refused before anything is written."""
    path = tmp_path / "model.py"
    path.write_text(ACCEPTED["names C cannot have, renamed (non-ASCII, C23 and GNU keywords, "
                             "reserved)"], encoding="utf-8")
    out = tmp_path / "out"
    r = run_cli(str(path), "--mode", "forward", "--mode", "reverse", "--mode", "vector-forward",
                "--check", "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    header = (out / "model_b.h").read_text()
    assert "double alpha, double *alphab, const double *sigma2" in header
    assert "double v__Bool" in header and "double typeof_" in header and "v___x" in header
    # g_b's own tape is named tape: the parameter is not (it was: exit 0, code that did not
    # compile)
    assert "double g_b(const double *x, double *xb, int64_t x_shape0, double tape_, " \
        "double *tapeb, double retb)" in header
    # macros of the headers Python.h includes (errno.h, sys/stat.h): the binding's build
    # compiles the prototypes after them
    assert "double h_b(double EAGAIN_, double *EAGAINb, double st_atime_, " in header
    bad = tmp_path / "my-model.py"
    bad.write_text("def f(x: float) -> float:\n    return x\n")
    r = run_cli(str(bad), "-o", str(tmp_path / "bad"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "the module name 'my-model' cannot name C functions and files (rename the file to " \
           "a Python identifier, e.g. my_model.py)" in r.stderr
    assert not (tmp_path / "bad").exists()
    # a module named like the runtime: its primal header was overwritten by the runtime's
    # (exit code 0, the prototypes of the module lost)
    runtime = tmp_path / "adgen_runtime.py"
    runtime.write_text("def f(x: float) -> float:\n    return x\n")
    r = run_cli(str(runtime), "--mode", "primal", "--mode", "forward", "-o", str(tmp_path / "rt"))
    assert r.returncode == 2 and "the module name 'adgen_runtime' is the name of adgen's " \
        "runtime header (adgen_runtime.h)" in r.stderr, r.stderr
    assert not (tmp_path / "rt").exists()
    # a module named like a system header: with -I for the generated files, its math.h was
    # read for <math.h> (exit 0, then fmod, floor ... undeclared)
    (tmp_path / "sys").mkdir()
    shadow = tmp_path / "sys" / "math.py"
    shadow.write_text("def f(x: float) -> float:\n    return x\n")
    r = run_cli(str(shadow), "-o", str(tmp_path / "sys" / "out"))
    assert r.returncode == 2 and "the module name 'math' is the name of a system header " \
        "(math.h)" in r.stderr, r.stderr
    assert not (tmp_path / "sys" / "out").exists()
    # in another case too (file systems that ignore case), and Python.h, which the binding's
    # build includes (every build failed: unknown type name 'PyObject')
    for name, header in (("Math", "math.h"), ("Python", "Python.h")):
        other = tmp_path / "sys" / f"{name}.py"
        other.write_text("def f(x: float) -> float:\n    return x\n")
        r = run_cli(str(other), "-o", str(tmp_path / "sys" / "out"))
        assert r.returncode == 2 and f"the module name '{name}' is the name of a system " \
            f"header ({header})" in r.stderr, r.stderr


def test_include_guards_are_those_of_the_files(tmp_path: Path) -> None:
    """The guard is the header's name as it is: runtime.h's was the runtime's own guard (its
    prototypes lost), Model.h's and model.h's were one."""
    from adgen.api import transpile

    guards = []
    for name in ("runtime", "Model", "model"):
        path = tmp_path / f"{name}.py"
        path.write_text("def f(x: float) -> float:\n    return x\n")
        header = transpile(str(path), ["primal"]).outputs["primal"].header.text
        guards.append(re.search(r"#ifndef (\w+)", header).group(1))
    runtime = (Path(adgen.__file__).parent / "runtime_c" / "adgen_runtime.h").read_text()
    guards.append(re.search(r"#ifndef (\w+)", runtime).group(1))
    assert guards == ["ADGEN_runtime_H", "ADGEN_Model_H", "ADGEN_model_H", "ADGEN_adgen_runtime_H"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_locals_named_like_cpp_keywords_are_renamed_for_cuda(tmp_path: Path) -> None:
    """nvcc compiles the CUDA target as C++: a local named `new` or `this` is renamed."""
    path = tmp_path / "model.py"
    path.write_text(HEADER + module("""
        def f(x: Array[f64], y: Array[f64]) -> None:
            for i in prange(len(x)):
                new = x[i] * 2.0
                this = new + 1.0
                y[i] = this * new
        """))
    out = tmp_path / "out"
    r = run_cli(str(path), "--target", "cuda", "--emulate", "--mode", "reverse", "--check",
                "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "double new_ = x[i] * 2.0;" in (out / "model_b.cu").read_text()


def test_a_sum_of_a_thousand_terms_transpiles(tmp_path: Path) -> None:
    """Code generators write long expressions: a sum of 1,000 products (as deep as CPython
    runs it) transpiles, where CPython's default recursion limit once stopped at 300."""
    from adgen.api import transpile

    path = tmp_path / "long.py"
    path.write_text("def f(x: float) -> float:\n    return " + " + ".join(["1.5 * x"] * 1000)
                    + "\n")
    t = transpile(str(path), ("reverse",))
    assert "1.5" in t.outputs["reverse"].source.text


# -- completeness: every rejection message in adgen's source has a case above ---------------------
#
# The messages are read from the source with `ast`: the message argument of every
# `AdgenError(loc, message)`, `self.error(node, message)`, `error(message)` (a callback) and
# `warn(loc, message)` call, and the values of a module-level message table such as
# fence.UNSUPPORTED.  An f-string becomes a template whose {placeholders} match anything; a
# placeholder that is a parameter of a helper (`what` in `convert(node, v, to, what)`) is
# expanded with the words each caller passes, and one that holds a helper's result (`problem`
# from `function_name_problem`) with the strings that helper returns.  Every case's actual
# message is attributed to the most specific template it matches; a template no case reaches
# fails the test unless UNREACHABLE names it.

#: message templates (placeholders written {}) that no module CPython compiles can reach: prefix
#: -> why.  Keep it short; a template a case does reach must not be listed.
UNREACHABLE = {
    "'break' outside a loop": "CPython's compiler rejects it first (see the case 'break outside "
                              "a loop'); lowering keeps the check as a guard",
    "'continue' outside a loop": "as for break",
    "async for is not supported": "outside an async def CPython rejects it; an async def is "
                                  "rejected before its body is visited",
    "await is not supported": "as for async for",
    "nonlocal is not supported": "only valid inside a nested function or a class, which are "
                                 "rejected before their bodies are visited",
    "keyword-only and positional-only parameters are not supported":
        "such parameters come with a bare * or a /, which are rejected first with a more "
        "specific message",
    "argument '{}' of '{}': expected {}, got an array":
        "a call of a module function checks array arguments first ('argument 'x' of 'g' is "
        "f64, got Array[f64]')",
    "this statement is not supported ({})": "fallback: the fence rejects every other statement "
                                            "of Python 3.11 first",
    "this expression is not supported ({})": "fallback: the fence rejects every other "
                                             "expression of Python 3.11 first",
}

Template = tuple[str | None, ...]  # literal text, and None for a placeholder


def _callee(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _message_arg(call: ast.Call) -> ast.expr | None:
    """The message argument of an error or warning call, or None for other calls."""
    name, args = _callee(call), call.args
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
            and call.func.value.id == "warnings":
        return None  # warnings.warn: Python's, not a diagnostic
    if name in ("AdgenError", "warn") and len(args) >= 2:
        return args[1]
    if name == "error" and args:  # self.error(node, message, notes) or a callback error(message)
        return args[1] if isinstance(call.func, ast.Attribute) and len(args) >= 2 else args[0]
    return None


def _templates_of(node: ast.expr | None, subst: dict[str, list[Template]]) -> list[Template]:
    """The templates an expression can evaluate to (one per alternative)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [(node.value,)]
    if isinstance(node, ast.Name) and node.id in subst:
        return subst[node.id]
    if isinstance(node, ast.JoinedStr):
        out: list[Template] = [()]
        for part in node.values:
            if isinstance(part, ast.Constant):
                alts: list[Template] = [(part.value,)]
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) \
                    and part.value.id in subst:
                alts = subst[part.value.id]
            else:
                alts = [(None,)]
            out = [a + b for a in out for b in alts]
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [a + b for a in _templates_of(node.left, subst)
                for b in _templates_of(node.right, subst)]
    return [(None,)]


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a function (or module) body, without those of nested functions."""
    out, todo = [], list(ast.iter_child_nodes(scope))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if isinstance(n, ast.ClassDef):
                todo.extend(ast.iter_child_nodes(n))
            continue
        out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def render(t: Template) -> str:
    return "".join("{}" if p is None else p for p in t)


class _Source:
    """What the collector needs to know about adgen's source as a whole."""

    def __init__(self, trees: dict[Path, ast.Module]) -> None:
        #: callee name -> its calls (to expand a helper's parameters with its callers' words)
        self.calls: dict[str, list[ast.Call]] = {}
        #: function name -> what it returns (to expand a local holding a helper's words)
        self.returns: dict[str, list[ast.expr]] = {}
        #: module-level dicts (message tables such as fence.UNSUPPORTED)
        self.tables: dict[str, ast.Dict] = {}
        #: module-level strings (a message raised in several places)
        self.strings: dict[str, ast.expr] = {}
        for tree in trees.values():
            for n in ast.walk(tree):
                if isinstance(n, ast.Call) and _callee(n):
                    self.calls.setdefault(_callee(n), []).append(n)  # type: ignore[arg-type]
                elif isinstance(n, ast.FunctionDef):
                    self.returns[n.name] = [
                        r.value for r in ast.walk(n) if isinstance(r, ast.Return) and r.value
                        is not None and not (isinstance(r.value, ast.Constant) and r.value.value is None)]
            for n in tree.body:
                if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) \
                        and isinstance(n.value, ast.Dict):
                    self.tables[n.targets[0].id] = n.value
                elif isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) \
                        and _templates_of(n.value, {}) != [(None,)]:
                    self.strings[n.targets[0].id] = n.value
                elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) \
                        and isinstance(n.value, ast.Dict):
                    self.tables[n.target.id] = n.value


def _scope_templates(scope: ast.Module | ast.FunctionDef, src: _Source, rel: Path
                     ) -> list[tuple[int, Template]]:
    """(line, template) of the messages one function (or module body) raises or warns with."""
    nodes = _own_nodes(scope)
    params = [a.arg for a in scope.args.args] if isinstance(scope, ast.FunctionDef) else []
    params = params[1:] if params[:1] == ["self"] else params
    lambda_params = {a.arg for n in nodes if isinstance(n, ast.Lambda) for a in n.args.args}
    assigned = {n.targets[0].id: n.value for n in nodes
                if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)}
    local: dict[str, list[Template]] = {}  # `problem = function_name_problem(...)`
    for name, value in assigned.items():
        rets = src.returns.get(_callee(value) or "", []) if isinstance(value, ast.Call) else []
        if rets and all(isinstance(r, (ast.Constant, ast.JoinedStr)) for r in rets):
            local[name] = [t for r in rets for t in _templates_of(r, {})]
    out: list[tuple[int, Template]] = []
    for call in (n for n in nodes if isinstance(n, ast.Call)):
        msg = _message_arg(call)
        if msg is None:
            continue
        if isinstance(msg, ast.Name) and (msg.id in params or msg.id in lambda_params):
            continue  # a helper passing its caller's message on
        if isinstance(msg, ast.Name) and msg.id not in assigned and msg.id in src.strings:
            msg = src.strings[msg.id]  # a module-level message
        if isinstance(msg, ast.Name):  # `message = UNSUPPORTED.get(type(node))`: the table's values
            value = assigned.get(msg.id)
            table = value.func.value.id if isinstance(value, ast.Call) and isinstance(
                value.func, ast.Attribute) and isinstance(value.func.value, ast.Name) else ""
            assert table in src.tables, f"{rel}:{call.lineno}: cannot read this message"
            out += [(v.lineno, t) for v in src.tables[table].values for t in _templates_of(v, {})]
            continue
        used = {n.id for n in ast.walk(msg) if isinstance(n, ast.Name)} & set(params)
        substs = [local]
        if used and isinstance(scope, ast.FunctionDef):  # expand with each caller's words
            substs = []
            for c in src.calls.get(scope.name, []):
                subst = dict(local)
                for p in used:
                    k = params.index(p)
                    arg = c.args[k] if k < len(c.args) else \
                        next((kw.value for kw in c.keywords if kw.arg == p), None)
                    subst[p] = _templates_of(arg, {})
                substs.append(subst)
        templates = [t for subst in substs for t in _templates_of(msg, subst)]
        assert templates and all(any(part for part in t) for t in templates), \
            f"{rel}:{call.lineno}: cannot read this message (write it as a string or an f-string)"
        out += [(call.lineno, t) for t in templates]
    return out


def message_templates() -> dict[str, str]:
    """Every rejection (and warning) message template in adgen: rendered text -> where."""
    import adgen

    root = Path(adgen.__file__).resolve().parent
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.py"))}
    src = _Source(trees)
    found: dict[str, str] = {}
    for path, tree in trees.items():
        rel = path.relative_to(root.parent)
        for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]:
            for line, t in _scope_templates(scope, src, rel):
                found.setdefault(render(t), f"{rel}:{line}")
    return found


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(".*?".join(re.escape(part) for part in text.split("{}")), re.DOTALL)


def _actual_messages(tmp_path: Path) -> list[tuple[str, str]]:
    """(case, message) for every case, and the warnings of WARNED, compiled in-process."""
    from adgen.api import transpile
    from adgen.transpile.frontend.diagnostics import AdgenError

    out = []
    for i, (rule, source, _line, _col, fragment, _note) in enumerate(CASES):
        path = tmp_path / f"case{i}" / "model.py"
        path.parent.mkdir()
        path.write_text(source, encoding="utf-8")
        with pytest.raises(AdgenError) as info:
            transpile(str(path), ("forward", "reverse", *_extra_modes(source)),
                      target="cuda" if _target(source) else "c")
        assert fragment in info.value.message, rule
        out.append((rule, info.value.message))
    path = tmp_path / "warned.py"
    path.write_text(WARNED, encoding="utf-8")
    out += [("WARNED", w.message) for w in transpile(str(path), ("forward", "reverse")).warnings]
    return out


def test_every_rejection_message_has_a_case(tmp_path: Path) -> None:
    templates = message_templates()
    assert len(templates) > 100, "the collector lost the messages: check message_templates()"
    patterns = {text: _pattern(text) for text in templates}
    reached: dict[str, str] = {}
    for rule, message in _actual_messages(tmp_path):
        matching = [t for t, p in patterns.items() if p.fullmatch(message)]
        assert matching, f"case {rule!r}: its message matches no template in adgen:\n{message}"
        best = max(matching, key=lambda t: len(t.replace("{}", "")))
        reached.setdefault(best, rule)
    stale = [k for k in UNREACHABLE if not any(t.startswith(k) for t in templates)]
    assert not stale, f"UNREACHABLE names messages adgen no longer has: {stale}"
    reachable = {t: r for t, r in reached.items() if any(t.startswith(k) for k in UNREACHABLE)}
    assert not reachable, f"cases reach messages listed in UNREACHABLE: {reachable}"
    missing = sorted(f"{where}: {t}" for t, where in templates.items()
                     if t not in reached and not any(t.startswith(k) for k in UNREACHABLE))
    assert not missing, "rejection messages without a case in CASES (add one, or an UNREACHABLE " \
                        "entry for an internal guard):\n" + "\n".join(missing)


def test_the_tape_counters_named_are_those_emitted() -> None:
    """names.TAPE_COUNTER_SUFFIXES (the refused NAME_b_tape_bytes) are the files that have a
    tape counter."""
    from adgen.transpile.emit.c import TAPE_MODES
    from adgen.transpile.emit.module import MODES
    from adgen.transpile.emit.names import TAPE_COUNTER_SUFFIXES
    assert {MODES[m][0] for m in TAPE_MODES} == set(TAPE_COUNTER_SUFFIXES)


def test_a_negative_module_constant_to_an_infinite_power_is_no_error(tmp_path: Path) -> None:
    """-8.0 ** math.inf is inf in CPython (not complex, as -8.0 ** 0.5 is): no error."""
    path = tmp_path / "model.py"
    path.write_text("import math\n\nNEG = -8.0\nBIG = math.inf\n\n\n"
                    "def f(x: float) -> float:\n    return x * NEG ** BIG\n")
    m = adgen.load(str(path), modes=())
    assert m.f(2.0) == 2.0 * (-8.0) ** math.inf == math.inf


def test_the_caret_is_under_the_column_after_wide_characters(tmp_path: Path) -> None:
    """A wide character (漢) takes two columns on a terminal, a combining mark none: the
    caret stood two columns left of 'yy' after 漢字."""
    from adgen.transpile.frontend.diagnostics import format_message
    from adgen.transpile.ir.core import Loc
    for line, col, pad in (("    漢字 = x * yy", 14, 4 + 13 + 2),
                           ("    e\u0301 = x * yy", 14, 4 + 13 - 1),
                           ("\tz = x * yy", 10, 4 + 9)):
        text = format_message("error", Loc("m.py", 1, col), "unknown name 'yy'", [line + "\n"])
        caret = text.splitlines()[2]
        assert caret == " " * pad + "^", (line, text)


def test_a_null_byte_is_located(tmp_path: Path) -> None:
    """CPython names no line for a null byte: it was reported at 1:1 wherever it was."""
    proc, path, _ = _run(tmp_path, "def f(x: float) -> float:\n    return x\0 * 2.0\n")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"{path}:2:13: error: invalid syntax: source code string "
                                  "cannot contain null bytes"), proc.stderr
