"""The generated C under AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer.

For a module, all seven modes (primal, forward, vector-forward, reverse,
vector-reverse, hvp, vector-hvp) are generated and compiled, with a C driver, into one
executable with

    gcc -g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

and run.  The driver (:func:`driver`) is generated from the C signatures of
the IR functions (``Transpiled.outputs[mode].signatures``): it calls every
exported function of every mode once (vector modes with ``nbdirs`` 1 and 3)
on fixed inputs, every array (values, tangents, adjoints) and every
out-pointer in its own heap block of exactly the right size, freed after
the call.  So an access past an array or a result, a read of freed memory,
a local array or a tape that the generated code does not free (LeakSanitizer
runs at exit), and undefined behaviour (signed overflow, shifts, division by
zero, misaligned or null accesses, ``__builtin_unreachable`` reached, a float
converted to an integer it does not fit...) all stop the program with a
report, and the test fails showing it.  The copy of ``adgen_runtime.h`` the
programs are compiled with also checks that an adjoint's tape is empty when
it is freed (every push popped: ``TAPE_CHECK``).

Inputs: for the examples those of ``adgen.check`` (floats in [0.5, 1.5],
arrays of extent 4 per axis, integers 3, booleans True, seed 0); for random
programs from ``programs.programs()`` the arguments generated with them.
Tangents, adjoints and output adjoints are fixed values in [-1, 1].

``test_harness_detects`` checks the harness itself: the same driver with an
array extent one too large, a read of freed memory, the generated code's
frees or the tape's free turned into no-ops, every tape push doubled, a
signed overflow or an out-of-range float-to-integer conversion must each be
reported.

Nothing here uses Python at run time, so LeakSanitizer sees only the
generated code and the driver.  The tests are skipped when gcc cannot build
and run a sanitized program.

Environment: ``ADGEN_SANITIZER_EXAMPLES`` sets the number of random programs
(default 15); ``CI`` set derandomizes them.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import subprocess
import tempfile
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from programs import Program, programs

from adgen.transpile.emit.signature import root_param
from adgen.transpile.ir.types import ArrayType, VecType

EXAMPLES = int(os.environ.get("ADGEN_SANITIZER_EXAMPLES", "15"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE_PATHS = sorted(os.path.join(ROOT, "examples", f)
                       for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".py"))
MODES = ("primal", "forward", "vector-forward", "reverse", "vector-reverse", "hvp", "vector-hvp")
SANITIZE = ["-g", "-O1", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
            "-fno-sanitize-recover=all",
            # not part of gcc's -fsanitize=undefined: a float converted to an integer it
            # does not fit (int(x) of a huge x or a NaN)
            "-fsanitize=float-cast-overflow"]
#: added to the copy of adgen_runtime.h the programs are compiled with: an adjoint must pop
#: everything it pushed before it frees its tape
TAPE_CHECK = """
static inline size_t san_tape_free(adgen_tape *t)
{
    if (t->top != 0) {
        fprintf(stderr, "sanitizer harness: tape not empty when freed (%zu bytes left)\\n", t->top);
        abort();
    }
    return adgen_tape_free(t);
}
#define adgen_tape_free(t) san_tape_free(t)
"""
ENV = {"ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1",
       "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
       "LSAN_OPTIONS": "exitcode=23"}
NBDIRS = (1, 3)
TIMEOUT = 120.0  # seconds: transpiling in the child, compiling, running
REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
           "sanitizer harness:")


# -- the driver -----------------------------------------------------------------------------------

def _literal(value: Any, ctype: str) -> str:
    if ctype == "bool":
        return "true" if value else "false"
    if ctype in ("int64_t", "int32_t"):
        return f"INT64_C({int(value)})" if ctype == "int64_t" else f"((int32_t){int(value)})"
    f = float(value)
    if math.isnan(f):
        text = "NAN"
    elif math.isinf(f):
        text = "INFINITY" if f > 0 else "(-INFINITY)"
    else:
        text = repr(f)
    return text + ("f" if ctype == "float" and text[0].isdigit() else "")


def _seeded(n: int, salt: int) -> list[float]:
    """n fixed values in [-1, 1] (tangents and adjoints)."""
    return [((k * 7 + salt * 5) % 17) / 8.0 - 1.0 for k in range(n)]


class _Calls:
    """C text of the driver's calls, one function each."""

    def __init__(self, extent_delta: int) -> None:
        self.extent_delta = extent_delta
        self.data: list[str] = []  # static const arrays
        self.functions: list[str] = []  # one void call_k(void) per call
        self.names: list[str] = []

    def constant(self, ctype: str, values: Sequence[Any]) -> str:
        name = f"data_{len(self.data)}"
        items = ", ".join(_literal(v, ctype) for v in values) or "0"
        self.data.append(f"static const {ctype} {name}[] = {{{items}}};")
        return name

    def call(self, fn: Any, sig: Any, primal: Any, args: Sequence[Any], nbdirs: int | None) -> None:
        """One call of ``sig`` (of IR function ``fn``, derived from ``primal``) at ``args``."""
        values = dict(zip(primal.param_names, args, strict=True))
        body: list[str] = []
        arrays: list[str] = []  # heap blocks to free after the call
        shapes: dict[int, tuple[int, ...]] = {}
        outs: list[tuple[str, int]] = []
        salt = 0
        for p in sig.params:
            kind = p.source[0]
            elem = p.ctype.replace("const ", "").replace("*", "").strip()
            var = f"p{len(body)}"
            if kind == "value":
                i = p.source[1]
                name, t = fn.param_names[i], fn.params[i].type
                if name == fn.nbdirs:
                    assert nbdirs is not None
                    body.append(f"int64_t {var} = {nbdirs};")
                    continue
                # a tangent or adjoint (or, in hvp, the tangent of an adjoint): of an input
                # (its shape), or of a result
                tangent_of = fn.tangent_of.get(name) or fn.adjoint_of.get(name)
                if tangent_of is None:
                    value = values[name]
                else:
                    value = values.get(root_param(fn, name), 0.0)
                if p.ctype.endswith("*"):
                    shape = tuple(np.shape(value))
                    directions = isinstance(t, VecType) or (isinstance(t, ArrayType) and t.vector)
                    count = math.prod(shape) * (nbdirs if directions and nbdirs else 1)
                    if tangent_of is None:
                        flat = list(np.asarray(value).ravel())
                    else:
                        salt += 1
                        flat = _seeded(count, salt)
                    src = self.constant(elem, flat)
                    body.append(f"{elem} *{var} = san_copy({src}, sizeof({elem}) * {count});")
                    arrays.append(var)
                    shapes[i] = shape
                else:
                    if tangent_of is not None:
                        salt += 1
                        value = _seeded(1, salt)[0]
                    body.append(f"{p.ctype} {var} = {_literal(value, p.ctype)};")
            elif kind == "shape":
                i, axis = p.source[1], p.source[2]
                body.append(f"int64_t {var} = {shapes[i][axis] + self.extent_delta};")
            elif kind == "result":
                r = fn.results[p.source[1]]
                count = nbdirs if isinstance(r.type, VecType) and nbdirs else 1
                body.append(f"{elem} *{var} = san_zeros(sizeof({elem}) * {count});")
                arrays.append(var)
                outs.append((var, count))
            else:
                raise AssertionError(f"unexpected parameter {p} of the exported function {sig.name}")
        params = ", ".join(f"p{k}" for k in range(len(body)))
        call = f"{sig.name}({params})"
        if sig.return_ctype != "void":
            call = f"san_sink += (double)({call})"
        body.append(f"{call};")
        body += [f"for (int k = 0; k < {n}; ++k) san_sink += (double){v}[k];" for v, n in outs]
        body += [f"free({v});" for v in arrays]
        label = sig.name + ("" if nbdirs is None else f" (nbdirs = {nbdirs})")
        k = len(self.functions)
        self.names.append(label)
        self.functions.append(f"static void call_{k}(void)\n{{\n    "
                              + "\n    ".join(body) + "\n}\n")


DRIVER_HEAD = """\
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

%(includes)s

static volatile double san_sink;

static void *san_copy(const void *src, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL) abort();
    memcpy(p, src, bytes);
    return p;
}

static void *san_zeros(size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    if (p == NULL) abort();
    return p;
}
"""


def driver(t: Any, args: dict[str, Sequence[Any]], extent_delta: int = 0, inject: str = "") -> str:
    """C source of a program calling every exported function of every mode of ``t`` (a
    ``Transpiled``) at ``args`` (function name -> arguments of the primal).  ``extent_delta``
    and ``inject`` (C statements run first) break it on purpose, to test the harness."""
    from adgen.validate import random_value

    primals = {fn.name: fn for fn in t.ir["primal"].functions}
    rng = np.random.default_rng(0)
    calls = _Calls(extent_delta)
    headers = []
    for mode, emitted in t.outputs.items():
        headers.append(emitted.header.name)
        for fn in t.ir[mode].functions:
            if fn.is_static:
                continue
            primal = primals[fn.primal]
            if fn.primal not in args:  # as adgen.check chooses them
                args = {**args, fn.primal: [random_value(v.type, rng) for v in primal.params]}
            for nbdirs in (NBDIRS if mode.startswith("vector") else (None,)):
                calls.call(fn, emitted.signatures[fn.name], primal, args[fn.primal], nbdirs)
    includes = "\n".join(f'#include "{h}"' for h in headers)
    main = ["int main(void)", "{", inject]
    for k, name in enumerate(calls.names):
        main.append(f'    fprintf(stderr, "calling {name}\\n");')
        main.append(f"    call_{k}();")
    main += ['    fprintf(stderr, "done\\n");', "    return 0;", "}"]
    return (DRIVER_HEAD % {"includes": includes} + "\n" + "\n".join(calls.data) + "\n\n"
            + "\n".join(calls.functions) + "\n" + "\n".join(main) + "\n")


def generate(path: str, args: dict[str, Sequence[Any]], extent_delta: int = 0,
             inject: str = "", modes: Sequence[str] = MODES) -> dict[str, str]:
    """The files of ``modes`` (all of them by default) of ``path`` plus ``driver.c``: file
    name -> text."""
    from adgen.api import transpile
    from adgen.build import runtime_header

    t = transpile(path, list(modes))
    files = {"adgen_runtime.h": runtime_header()}
    for emitted in t.outputs.values():
        files[emitted.source.name] = emitted.source.text
        files[emitted.header.name] = emitted.header.text
    files["driver.c"] = driver(t, args, extent_delta, inject)
    return files


# -- running ------------------------------------------------------------------------------------

def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        conn.send(("ok", fn(*args)))
    except BaseException:  # noqa: BLE001 - reported to the parent
        conn.send(("error", traceback.format_exc()))
    conn.close()


def forked(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a forked child (a hang or a crash of adgen fails one test, not all)."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args), daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(TIMEOUT):
            raise AssertionError(f"{fn.__name__} did not finish within {TIMEOUT:.0f} s")
        try:
            status, value = parent.recv()
        except EOFError:
            raise AssertionError(f"{fn.__name__} crashed the child process") from None
        if status != "ok":
            raise AssertionError(f"{fn.__name__} raised:\n{value}")
        return value
    finally:
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join()
        parent.close()


def build_and_run(files: dict[str, str], directory: str) -> tuple[int, str]:
    """Compile the C files with the sanitizers and run the program: (exit code, output)."""
    for name, text in files.items():
        with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
            f.write(text)
    exe = os.path.join(directory, "driver")
    sources = [os.path.join(directory, n) for n in sorted(files) if n.endswith(".c")]
    cc = subprocess.run(["gcc", *SANITIZE, "-I", directory, *sources, "-o", exe, "-lm"],
                        capture_output=True, text=True, check=False, timeout=TIMEOUT)
    if cc.returncode != 0:
        return -1, f"gcc failed:\n{cc.stderr}"
    env = {**os.environ, **ENV}
    try:
        r = subprocess.run([exe], capture_output=True, text=True, check=False, timeout=TIMEOUT,
                           env=env)
    except subprocess.TimeoutExpired:
        return -1, f"the program did not finish within {TIMEOUT:.0f} s"
    return r.returncode, r.stdout + r.stderr


def sanitize(path: str, args: dict[str, Sequence[Any]], extent_delta: int = 0, inject: str = "",
             runtime: Callable[[str], str] | None = None,
             modes: Sequence[str] = MODES) -> tuple[int, str]:
    files = forked(generate, path, args, extent_delta, inject, modes)
    files["adgen_runtime.h"] = _before_endif(files["adgen_runtime.h"], TAPE_CHECK)
    if runtime is not None:
        files["adgen_runtime.h"] = runtime(files["adgen_runtime.h"])
    with tempfile.TemporaryDirectory(prefix="adgen-sanitize-") as d:
        return build_and_run(files, d)


def assert_clean(code: int, output: str, what: str) -> None:
    reports = [r for r in REPORTS if r in output]
    assert code == 0 and not reports and output.rstrip().endswith("done"), \
        f"{what}: exit {code}, {reports or 'no sanitizer report'}:\n{output[-6000:]}"


@pytest.fixture(scope="module", autouse=True)
def sanitizers_work() -> None:
    """Skip unless gcc builds and runs an ASan + UBSan program (and LeakSanitizer runs)."""
    files = {"probe.c": "#include <stdlib.h>\nint main(void) { void *p = malloc(8); free(p); "
                        "return 0; }\n"}
    with tempfile.TemporaryDirectory(prefix="adgen-sanitize-") as d:
        try:
            code, out = build_and_run(files, d)
        except (OSError, subprocess.SubprocessError) as exc:
            pytest.skip(f"no usable gcc: {exc}")
    if code != 0:
        pytest.skip(f"gcc cannot build and run sanitized programs here:\n{out}")


# -- the tests ----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", EXAMPLE_PATHS, ids=[os.path.basename(p) for p in EXAMPLE_PATHS])
def test_example(path: str) -> None:
    code, out = sanitize(path, {})
    assert_clean(code, out, os.path.basename(path))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
          phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much, HealthCheck.large_base_example])
@given(program=programs())
def test_random_program(program: Program) -> None:
    with tempfile.TemporaryDirectory(prefix="adgen-sanitize-") as d:
        path = program.write(d)
        # (a program whose modes leave out vector reverse mode, which refuses it)
        modes = ("primal", *program.modes) if program.modes else MODES
        code, out = sanitize(path, program.all_args, modes=modes)
    if code != 0:  # pytest shows this output with the failure
        print(program.source)
        print(f"arguments: {program.all_args!r}")
    assert_clean(code, out, "random program (printed above)")


def _before_endif(runtime: str, text: str) -> str:
    """``text`` added at the end of adgen_runtime.h, inside its include guard."""
    head, sep, tail = runtime.rpartition("#endif")
    assert sep and "adgen_tape_free" in runtime, "adgen_runtime.h changed: update the harness"
    return head + text + "\n" + sep + tail


def _no_tape_free(runtime: str) -> str:
    return _before_endif(runtime, "#undef adgen_tape_free\n"
                                  "#define adgen_tape_free(t) ((void)(t), (size_t)0)")


def _no_free(runtime: str) -> str:
    return _before_endif(runtime, "#define free(p) ((void)(p))")


def _push_twice(runtime: str) -> str:
    return _before_endif(runtime, "#define adgen_push_f64(t, v) (adgen_push_f64(t, v), "
                                  "adgen_push_f64(t, v))")


HARNESS_CASES = {
    # name: (example, extent_delta, injected C, runtime edit, what must be reported)
    "array extent one too large": ("rosenbrock.py", 1, "", None,
                                   "ERROR: AddressSanitizer: heap-buffer-overflow"),
    "use after free": ("rosenbrock.py", 0,
                       "    double *q = malloc(8); free(q); san_sink += q[0];", None,
                       "ERROR: AddressSanitizer: heap-use-after-free"),
    "local arrays not freed": ("heat.py", 0, "", _no_free, "ERROR: LeakSanitizer"),
    "tape not freed": ("heat.py", 0, "", _no_tape_free, "ERROR: LeakSanitizer"),
    "tape pushed more than popped": ("heat.py", 0, "", _push_twice,
                                     "sanitizer harness: tape not empty"),
    "float cast overflow": ("polar.py", 0,
                            "    volatile double huge = 1e300; san_sink += (double)(int64_t)huge;",
                            None, "runtime error:"),
    "signed overflow": ("polar.py", 0,
                        "    volatile int64_t big = INT64_MAX; san_sink += (double)(big + 1);",
                        None, "runtime error: signed integer overflow"),
}


@pytest.mark.parametrize("case", list(HARNESS_CASES))
def test_harness_detects(case: str) -> None:
    example, delta, inject, runtime, report = HARNESS_CASES[case]
    code, out = sanitize(os.path.join(ROOT, "examples", example), {}, delta, inject, runtime)
    assert code != 0 and report in out, f"{case}: exit {code}, expected {report!r} in:\n{out[-6000:]}"
