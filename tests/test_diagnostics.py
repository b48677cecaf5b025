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

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import run_cli


def module(text: str) -> str:
    """A module's source: dedented, without the first newline."""
    return textwrap.dedent(text).lstrip("\n")


HEADER = "from adgen import Array, f64, zeros, prange\n"

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
    ("function named like a C keyword", module("""
        def double(p: float) -> float:
            return p * 2.0
        """), 1, 5, "'double' is a keyword in C or C++", None),
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
    ("call of a variable that shadows a function", module("""
        def g(p: float) -> float:
            return p * 2.0

        def f(g: float, a: float) -> float:
            return g(a) + a
        """), 5, 12, "'g' is a variable here, not a function", (4, 7, "bound here")),
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
    # -- constructs outside the subset -------------------------------------------------------
    ("strings", module("""
        def f(x: float) -> float:
            s = "x"
            return x
        """), 2, 9, "strings are not supported", None),
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
    ("prange is not yet supported", HEADER + module("""
        def f(a: Array[f64], n: int) -> float:
            s = 0.0
            for i in prange(n):
                s += a[i]
            return s
        """), 4, 14, "prange is not yet supported", None),
    ("checkpoint directive is not yet supported", module("""
        def f(x: float, n: int) -> float:
            # adgen: checkpoint
            for i in range(n):
                x = x * 2.0
            return x
        """), 2, 5, "'# adgen: checkpoint' is not supported yet", None),
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
    ("array passed for a scalar parameter", HEADER + module("""
        def g(x: float) -> float:
            return x * x

        def f(a: Array[f64]) -> float:
            return g(a)
        """), 6, 14, "argument 'x' of 'g' is f64, got Array[f64]", (2, 7, "parameter declared here")),
    ("float returned from an int function", module("""
        def f(x: float) -> int:
            return x
        """), 2, 5, "return value: expected i64, got f64", None),
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
    ("zeros inside a loop", HEADER + module("""
        def f(x: float, n: int) -> float:
            for i in range(n):
                t = zeros(n)
                t[0] = x
            return x
        """), 4, 13, "zeros(...) is only supported at the top level", None),
]


def _run(tmp_path: Path, source: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    path = tmp_path / "model.py"
    path.write_text(source, encoding="utf-8")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "adgen.cli", str(path), "--mode", "forward", "-o", str(out)],
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


def test_no_warning_without_an_independent(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text(WARNED)
    r = run_cli(str(path), "--mode", "forward", "--wrt", "y", "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 0
    assert "int()" not in r.stderr and "equality" in r.stderr  # x is a constant now; y is not


def test_load_issues_python_warnings(tmp_path: Path) -> None:
    import adgen
    path = tmp_path / "model.py"
    path.write_text(WARNED)
    with pytest.warns(adgen.AdgenWarning, match="int\\(\\) of a value"):
        adgen.load(str(path), modes=("reverse",))
    with pytest.raises(adgen.LoadError, match="error: int\\(\\) of a value"):
        adgen.load(str(path), modes=("reverse",), werror=True)
