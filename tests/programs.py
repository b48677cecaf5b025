"""Hypothesis strategies for random, well-typed, terminating adgen programs.

The top-level strategy is :func:`programs`; each example is a :class:`Program`
holding the module source, the name of its entry function and the arguments
to call every function of the module with::

    from programs import programs

    @given(programs())
    def test(program):
        path = program.write(tmpdir)
        assert adgen.check(path, args=program.all_args).ok

What is generated (DESIGN.md section 1): an entry function ``f`` and up to
two helpers ``g0``, ``g1`` (``g1`` may call ``g0``; ``f`` may call both; a
helper may call itself on ``m - 1``) over ``float``/``f64``, ``int``/``i64``/
``i32`` and ``bool`` scalars and ``Array[f64]`` (1-D to 3-D) / ``Array[i64]``
parameters, returning a float, a tuple of floats, a (float, int) tuple, an
int or nothing.  Bodies mix straight-line float arithmetic (``+ - * /``, unary
``-``/``+``, ``**``, float ``%``) and intrinsics (``math.*``, ``np.*``,
``abs min max pow``), integer arithmetic with ``//``, ``%``, ``**`` and
``int()``, ``if/elif/else`` on float comparisons and comparison chains
(``0.6 < e < 1.3``, ``lo < v < hi`` with bounds read from variables, ``a <
x[i] <= g0(...)`` with array elements and helper calls as later operands, which
run only where the comparisons before them hold: :func:`chain`), ``a if c
else b``, guarded conditional expressions whose taken arm is finite only under
its guard, a test of a variable's value (``(a / b if abs(b) > 0.25 else a)``,
``(v ** 0.5 if v > 0.25 else w)``, ``pow(v, 1.5)``, ``math.sqrt(v)``,
``math.log(v)`` under ``v > 0.1``, sometimes written with the guard negated:
:func:`guarded_expr`), ``for`` loops over ``range`` with dynamic bounds and
steps 1, 2, negative or computed, counter-bounded ``while`` loops (``while k <
n and ...``, ``while True`` tested at the head, do-while ``while True:`` tested
at the end of the body, ``...; k += 1; if k >= n: break``, counting down),
``while True:`` loops that only ``return`` leaves (:func:`return_loop`: no
``break`` of their own, ending the function body or a branch of an ``if``,
with nothing after them in that block), ``break`` / ``continue``, early
``return`` (also from loops), array reads and writes (local ``zeros`` arrays and array parameters
written in place, through helpers too), calls to helpers (tuple results
unpacked with ``a, b = g(...)``), tuple and chained assignment, module-level
constants, annotated assignment, docstrings and ``assert``.

Some constructs are there for reverse mode, which must record what the
forward sweep decided and overwrote:

* convergence loops, whose trip count depends on float data
  (:func:`converge_loop`): ``while k < N and abs(v) > tol:`` / ``v = 0.5 * v
  + ...``, a fixed-point iteration tested by ``abs(v - w) > tol``, Heron's
  square root, or ``while True: ... if abs(v) <= tol or k >= N: break`` (the
  test after the update, or at the end of the body); often with a
  data-dependent ``break`` too;
* nested loops (:func:`nested_loops`): a ``for`` / ``while`` / convergence
  loop inside another, with a conditional ``break`` or ``continue`` (now and
  then ``return``) in the inner loop and, after the inner loop, in the outer;
* in-place overwrites of array elements by functions of their old values
  (:func:`inplace_update`, :func:`inplace_sweep`): ``x[i] = x[i] * e``,
  ``a[j] = math.sin(a[j]) + e``; an element read, overwritten, then read
  again; overwritten twice; sweeps ``x[i] = 0.5 * x[i] + 0.5 * x[i - 1]`` (a
  recurrence on the element just overwritten), now and then repeated by
  ``for r in range(2):``, on array parameters and local arrays;
* recursion: a recursive helper often takes an array (read, or written in
  place), calls itself plainly, in one branch of an ``if`` or in a loop of
  ``2`` or ``m`` trips, and the entry calls it in its loops
  (:func:`recursion_in_loop`);
* ``prange`` loops (:func:`prange_loop`), whose iterations are independent:
  element-wise writes ``out[i] = ...`` (also ``out[i - 1]``, ``out[i, j]``,
  in-place ``out[i] *= e``), stencil reads of other arrays at ``i - 1``,
  ``i``, ``i + 1`` guarded by their bounds (:func:`stencil`; in reverse mode
  the iterations then add to the same adjoint elements), sums ``s += e`` /
  ``s -= e`` into a fresh or an earlier variable (plain, in an ``if``, or in
  an inner ``range`` loop), inner sequential loops summing into a local,
  ``continue``, nested pranges, and random statements besides;
* running maxima and minima, ``m = max(m, e)`` alone in a loop or after a
  statement (:func:`extreme_loop`), which reverse mode rewrites into the index
  of the element kept;
* loops around a reduction loop (:func:`reduction_nest`): a float started
  per outer iteration, updated by an inner loop over a range fixed before the
  outer one, then summed (maybe after a statement), the shape the emitted code
  runs four outer iterations at a time (``transforms/jam.py``); one in two
  updates it by an array element and sums it behind a relu gate,
  ``s += max(g, 0.0) * z``, the shape whose adjoint loop and vector tangent
  ``transforms/skip_zero.py`` skips when the gate is zero;
* sums over a loop of calls of a float helper (:func:`call_sum`), whose
  adjoint is known in the forward sweep when the sum reaches the return
  linearly: the adjoint then calls the helper's ``g_b`` there
  (``ad/joint.py``);
* derivatives taken inside the module (one program in five, ``Program.nested``;
  :func:`nested_derivative`): the first helper (and often the second) is then
  differentiable (float scalar parameters, maybe a read-only array and an
  ``int``, one float result), and the later functions use ``grad(g)(...)``,
  ``grad(g, argnums=1)(...)`` in expressions, ``u, w = grad(g, argnums=(1,
  0))(...)``, ``(u,) = grad(g, argnums=(0,))(...)`` and ``y, yd = jvp(g, (...),
  (...))`` (a float tangent per float parameter, ``None`` for the others),
  plainly, in branches, in loops and in pranges; the second helper may take a
  derivative of the first and be differentiated itself (a gradient of a
  function that takes a gradient).  Half of these programs take ``grad`` only
  of *straight* helpers (no loops, recursion or calls: their adjoints keep no
  tape) and are checked in every mode; the others take it of any helper and
  leave vector reverse mode out (``Program.modes``), since it refuses ``grad``
  of a function whose adjoint keeps a tape.  There ``grad(g)`` of a helper with
  an array gets a custom adjoint (a Hessian-vector product of ``g``) that
  reads the array again in the reverse sweep, so it is passed only an array
  that nothing writes (a read-only parameter of the entry).

Now and then names are awkward on purpose (``AWKWARD_NAMES``: C keywords and
macros, libm names, adgen's own tangent and temporary names), since generated
C must rename or reject them.

How the programs stay valid, terminating and numerically tame
---------------------------------------------------------------
The generator tracks a :class:`Scope` of typed variables while it draws
statements, so every name is defined on every path that reaches a use and
every local keeps one type (fresh names: ``v0`` floats, ``k0`` ints, ``b0``
booleans, ``t0`` local arrays; loop variables ``i j l r`` are reused by
sequential loops, as people write them).

* Float expressions carry a bound on their magnitude (:class:`FExpr`).  A
  variable's bound never shrinks; inside a loop, a variable defined outside
  the loop may only be assigned an expression whose bound is within its own,
  so loop-carried values cannot grow (``v = 0.5 * v + ...``, ``v *= tanh(..)``).
  Expressions over a cap are scaled down or squashed (:func:`fit`);
  arguments of ``exp``-like functions are capped at 2, arguments of ``log``
  and ``sqrt`` are ``1.0 + e * e`` or ``abs(e) + 0.5``, divisors are
  bounded away from zero, except in guarded conditional expressions, whose
  guard keeps the operand away from the singularity (``abs(b) > 0.25``, ``v >
  0.1``) and reads a variable or an array element: a constant operand would
  be folded (and refused where negative, ``(-0.5) ** 0.5``) in an arm never
  taken.  Array elements stay within ``ARRAY_BOUND``.
* Integer expressions carry an interval (:class:`IExpr`), so divisors of
  ``//`` and ``%`` are nonzero, ``zeros`` extents are positive and loops
  have bounded trip counts.  Indices are in range by construction: loop
  variables remember which array extent they run over (:class:`Hint`), and
  any other integer ``e`` indexes as ``e % len(x)`` or as a constant.
* ``while`` loops are bounded by an integer counter (``k < n``) that no other
  statement touches; ``continue`` appears only where the counter is already
  incremented (never in a do-while loop, whose test ends the body).  A
  :func:`return_loop` tests its counter right after ``k += 1`` at the head (or
  before it) or at the end of the body, and returns when it reaches its bound;
  no ``break`` leaves it directly (:attr:`Loop.allow_break`), so it never
  falls through and ends its block.  Convergence loops keep such a counter as a backstop (``k <
  N`` with ``N <= 10``, incremented first, or last where nothing may
  ``continue``; ``while True`` loops test ``k >= N`` right after ``k += 1``,
  before anything can ``continue``, or at the end of the body, where nothing
  may ``continue``).  Their iterate follows the
  bound rule above (``v = 0.5 * v + c * e`` with ``|c * e| <= 0.5``, ``v *=
  0.9 * tanh(e)``) and its update contracts (:func:`of_var` is Lipschitz 1
  at most in ``v``), so the derivatives stay of order one; Heron's ``v =
  0.5 * (v + a / v)`` starts from ``a >= 0.5`` or ``1.0`` and neither ``a``
  nor ``v`` is assigned by any other statement, so ``v`` never nears zero.
  Nested loops stay small: they are drawn only where two more levels of
  nesting are allowed, and their bodies hold simple statements besides the
  inner loop and the jumps.
* A recursive helper starts with ``if m <= 0: return ...`` and calls itself
  on ``m - 1``: once, in a branch, or in a loop of ``2`` or ``m`` trips
  (``m <= 4``, so at most ``4!`` calls).
* A prange obeys the frontend's rules and the promise it takes on trust
  (:func:`prange_body_scope`): a variable defined before it is only summed
  into (``s += e``, and ``s`` is read nowhere in the loop), every other one
  is read-only inside (what the body assigns is its own, iteration-local);
  no ``break`` directly in it and no ``return`` anywhere in it; it writes
  only the one array ``out`` whose axis it iterates over, always at the
  index ``i`` (or ``i - 1``...) on that axis, also in nested loops, and reads
  ``out`` at that index only (never ``out[i + 1]``), so no iteration reads
  an element that another writes; other arrays are read-only inside and
  neither ``out`` nor a written array is passed to a helper.  Half the
  programs with a prange have ``Program.openmp`` set (check them compiled
  with ``-fopenmp``).
* An overwrite ``x[i] = G(x[i])`` keeps the element within ``ARRAY_BOUND``
  (``sin(t) + e`` with ``|e| <= 1``, ``0.25 * t * t - e``, ``0.5 * t + 0.5 *
  e``, ``t * e`` with ``|e| <= 1``...); in :func:`inplace_update` nothing
  between the reads and writes of one element assigns an integer, so its
  index names the same element throughout.
* Values flow to the outputs: expressions prefer recently assigned variables,
  loops often end in a reduction (``s += ...``), returns add a few recent
  values, and functions returning nothing end by writing an array parameter.
* A derivative taken inside (``grad``, the tangent of ``jvp``) has no bound
  the generator knows, so it is squashed (``tanh``, ``atan``, ``erf``, ``d /
  (1 + d * d)``: :func:`squash`) before anything else reads it; the value of
  ``jvp`` keeps the helper's bound.
* Every returned value includes an *anchor* term (a float parameter never
  reassigned, or an element of an array never written), so the tangent is of
  order one and the finite-difference check is meaningful.  Float inputs are
  uniform in [0.5, 1.5] (drawn from a NumPy generator seeded by Hypothesis so
  shrinking never moves them onto a comparison threshold).

Extending it (e.g. for reverse mode): the strategies are small and composable
(:func:`float_expr`, :func:`int_expr`, :func:`condition`, :func:`statement`,
:func:`block`, :func:`function`, :func:`programs`); a new construct is a new
weighted branch in one of them that respects the bound / interval discipline
above.  The loops (:func:`for_loop`, :func:`while_loop`, :func:`converge_loop`)
take an optional ``body_fn`` that draws the body in the loop's scope, to put a
given construct inside a loop.  Nothing here depends on the derivative mode: a reverse-mode test uses
the same programs with ``adgen.check(path, modes=(..., "reverse"))`` (leaving out vector reverse
mode where ``Program.modes`` does).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st

# --------------------------------------------------------------------------- limits

FLOAT_CAP = 8.0          #: magnitude cap of ordinary float expressions
EXP_CAP = 2.0            #: cap of arguments of exp, expm1, sinh, cosh and of pow exponents
ARRAY_BOUND = 2.0        #: every array element stays within [-ARRAY_BOUND, ARRAY_BOUND]
PARAM_BOUND = 2.0        #: helpers assume float arguments within this (call sites ensure it)
INT_PARAM = (0, 4)       #: interval of int parameters (entry and helpers)
HELPER_EXTENT = (1, 8)   #: extents a helper's array parameter may have
ENTRY_EXTENT = (2, 5)    #: extents of the entry's array parameters
INT_CAP = 60             #: integer expressions stay within [-INT_CAP, INT_CAP]
LOOP_NAMES = ("i", "j", "l", "r")
#: Awkward names, used now and then: valid Python, but they collide with something in C or in
#: the generated code (C keywords and macros, libc / libm functions, typedefs, adgen's
#: tangent, temporary and parameter names).  Locals may take any of them.
AWKWARD_NAMES = (
    "ad", "bd", "cd", "xd", "yd", "p0d", "p1d", "zd", "v0d", "nbdirs", "tmp", "tmp_1", "tmp_2",
    "ret", "ret0", "ret1", "retd", "result", "x_shape0", "y_shape1", "z_shape0", "i_1",
    "f_d", "f_dv", "g0_d", "g0_dv", "double", "long", "char", "auto", "register", "static",
    "signed", "unsigned", "const", "volatile", "sizeof", "struct", "union", "enum", "typedef",
    "extern", "switch", "case", "default", "goto", "do", "restrict", "inline", "exp", "sin",
    "cos", "log", "sqrt", "fabs", "erf", "tanh", "hypot", "pow_", "y0", "j0", "y1", "j1",
    "NAN", "INFINITY", "M_PI", "M_E", "HUGE_VAL", "EOF", "INT64_MAX", "SIZE_MAX", "unix",
    "linux", "offsetof", "NULL", "main", "printf", "free", "malloc", "size_t", "true", "false",
    "int64_t", "int8_t", "FILE", "stdin", "adgen_mod_i64", "isnan", "signbit", "lgamma",
    "remainder", "memcpy", "strlen", "g0_grad", "g0_jvp", "g0_grad_p1", "g0_grad_p0_p1",
    "g0_grad_fwd", "g0_b",
)
#: parameter names: the same kinds (a parameter's name is also in the generated header)
AWKWARD_PARAMS = ("ad", "xd", "double", "exp", "adgen_p", "ADGEN_Q", "M_E", "M_PI", "HUGE_VAL",
                  "EOF", "linux", "SIZE_MAX", "offsetof", "y0", "lgamma", "nbdirs", "result",
                  "ret", "tmp", "main", "int64_t", "x_shape0", "p0d", "NAN", "true", "default",
                  "errno", "sin", "class_", "new", "this", "template")
#: function names are the generated API, so adgen rejects those C cannot carry (keywords, names
#: from the C headers, adgen_*, derivative names f_d...); these awkward ones are accepted
AWKWARD_FUNCTIONS = ("tmp", "ret", "nbdirs", "entry", "xd", "double_", "main_", "result_", "x",
                     "ad", "tmp_1", "g", "val_d")


def maybe_awkward(draw: Callable[[Any], Any], default: str, pool: tuple[str, ...],
                  taken: set[str]) -> str:
    """``default``, or now and then a name from ``pool``; never a name in ``taken``."""
    name = default
    if draw(st.integers(0, 7)) == 0:
        free = [n for n in pool if n not in taken]
        if free:
            name = draw(st.sampled_from(free))
    while name in taken:
        name += "_"
    taken.add(name)
    return name

#: unary intrinsics: name -> (argument kind, spellings available).  Argument kinds:
#: "any" any float; "unit" |e| <= 1; "exp" |e| <= EXP_CAP; "pos" bounded away from 0.
UNARY = {
    "sin": "any", "cos": "any", "tanh": "any", "atan": "any", "erf": "any", "erfc": "any",
    "tan": "unit", "asin": "unit", "acos": "unit",
    "exp": "exp", "expm1": "exp", "sinh": "exp", "cosh": "exp",
    "log": "pos", "log1p": "pos", "log2": "pos", "log10": "pos", "sqrt": "pos", "cbrt": "pos",
    "fabs": "any",
}
NUMPY_NAMES = {"sin", "cos", "tan", "tanh", "exp", "expm1", "log", "log1p", "log2", "log10",
               "sqrt", "cbrt", "sinh", "cosh", "fabs", "hypot"}
NUMPY_RENAMED = {"atan": "arctan", "asin": "arcsin", "acos": "arccos", "atan2": "arctan2"}


# --------------------------------------------------------------------------- expressions

@dataclass(frozen=True)
class FExpr:
    """A float expression and a bound on its magnitude."""

    text: str
    bound: float


@dataclass(frozen=True)
class IExpr:
    """An integer expression and an interval holding its value."""

    text: str
    lo: int
    hi: int


@dataclass(frozen=True)
class Hint:
    """The variable lies in ``[lo, EXT + hi]`` where ``EXT`` is the extent named ``sym``."""

    sym: str
    lo: int
    hi: int


def ffmt(c: float) -> str:
    s = repr(float(c))
    return f"({s})" if c < 0 else s


def ifmt(c: int) -> str:
    return f"({c})" if c < 0 else str(c)


def nice_below(r: float) -> float:
    """A short decimal in (0, r]."""
    e = math.floor(math.log10(r))
    m = math.floor(r / 10.0 ** e)
    return float(f"{m}e{e}")


# --------------------------------------------------------------------------- scope

@dataclass
class FloatVar:
    name: str
    bound: float
    level: int           #: loop depth where it was defined
    mutable: bool = True


@dataclass
class IntVar:
    name: str
    lo: int
    hi: int
    level: int
    mutable: bool = True
    hints: tuple[Hint, ...] = ()


@dataclass
class BoolVar:
    name: str
    level: int


@dataclass(frozen=True)
class Extent:
    sym: str   #: canonical name of the extent ("x.shape[0]", "n + 1")
    lo: int
    hi: int


@dataclass
class ArrayVar:
    name: str
    extents: tuple[Extent, ...]
    writable: bool
    elem: str = "f64"   #: "f64", or "i64" for integer arrays (elements in INT_PARAM)
    #: per axis, the index every access must use (None: any index), or () for none: inside a
    #: prange that writes the array, the axis it writes by the loop variable (``out[i, :]``)
    pinned: tuple[str | None, ...] = ()
    #: nothing writes it while the function runs, nor between the halves of its adjoint: a
    #: read-only parameter of the entry (which no function calls)
    frozen: bool = False

    @property
    def ndim(self) -> int:
        return len(self.extents)

    def extent_text(self, axis: int, draw: Callable[[Any], Any]) -> str:
        if axis == 0 and draw(st.booleans()):
            return f"len({self.name})"
        return f"{self.name}.shape[{axis}]"


@dataclass
class Helper:
    """A generated helper's signature, as call sites need it."""

    name: str
    params: list[tuple[str, str]]     #: (name, "float" | "int" | "array")
    returns: str                      #: "float" | "tuple" | "tuple_fi" | "int" | "none"
    bound: float                      #: bound of its float results
    writes_array: bool
    recursive: bool = False           #: calls itself on ``m - 1``
    #: its body has no loop, no recursion and no call of a function of the module, so its adjoint
    #: keeps no tape: ``grad`` of it is differentiated by reversing its code, also in vector
    #: reverse mode, without a custom adjoint that reads its arrays again
    straight: bool = False

    @property
    def differentiable(self) -> bool:
        """``grad`` / ``jvp`` may be taken of it: one float result, a float scalar parameter,
        arrays only read."""
        return self.returns == "float" and not self.writes_array and \
            any(k == "float" for _, k in self.params)


@dataclass
class Function:
    """Per-function state shared by all blocks of one function."""

    name: str
    returns: str
    anchor: str
    helpers: list[Helper]
    max_depth: int
    counters: dict[str, int] = field(default_factory=dict)
    return_bound: float = 1.0
    constants: dict[str, float | int] = field(default_factory=dict)
    recent: list[str] = field(default_factory=list)   #: floats by time of last assignment
    aliases: list[str] = field(default_factory=list)  #: awkward names handed out by fresh()
    #: helpers whose derivatives it may take (``grad(g)(...)``, ``jvp(g, ...)``)
    nested: list[Helper] = field(default_factory=list)
    nested_uses: int = 0          #: how many grad / jvp it has drawn so far
    #: no loops, local arrays (filled by loops) or calls (see :attr:`Helper.straight`)
    straight: bool = False
    straight_grads: bool = False  #: ``grad`` only of straight helpers (vector reverse is checked)
    #: sums of calls (:func:`call_sum`) at the top of the body, which only the final return
    #: reads, as terms of its sum: their adjoint is the return's
    linear: list[tuple[str, float]] = field(default_factory=list)

    def fresh(self, prefix: str) -> str:
        if self.aliases and prefix in ("v", "k", "b", "t"):
            return self.aliases.pop()
        n = self.counters.get(prefix, 0)
        self.counters[prefix] = n + 1
        return f"{prefix}{n}"


@dataclass
class Loop:
    allow_continue: bool
    parallel: bool = False   #: a prange: no break directly in it, no return anywhere in it
    #: a ``while True:`` left only by ``return`` (:func:`return_loop`): no ``break`` of its own
    allow_break: bool = True


@dataclass
class Scope:
    """The variables visible in one block, and where that block is."""

    fn: Function
    floats: dict[str, FloatVar] = field(default_factory=dict)
    ints: dict[str, IntVar] = field(default_factory=dict)
    bools: dict[str, BoolVar] = field(default_factory=dict)
    arrays: dict[str, ArrayVar] = field(default_factory=dict)
    loops: list[Loop] = field(default_factory=list)
    top: bool = True      #: the function body's top-level block (where zeros() may appear)
    depth: int = 0        #: statement nesting depth

    @property
    def level(self) -> int:
        return len(self.loops)

    def child(self, loop: Loop | None = None) -> Scope:
        return Scope(self.fn, dict(self.floats), dict(self.ints), dict(self.bools),
                     dict(self.arrays), self.loops + ([loop] if loop else []), False, self.depth + 1)

    def free_loop_name(self) -> str:
        for n in LOOP_NAMES:
            if n not in self.ints and n not in self.floats:
                return n
        return self.fn.fresh("i")

    def touch(self, name: str) -> None:
        """Remember that ``name`` was just assigned (expressions prefer recent values)."""
        self.fn.recent.append(name)

    def recent_floats(self, k: int) -> list[FloatVar]:
        out: list[FloatVar] = []
        for name in reversed(self.fn.recent):
            v = self.floats.get(name)
            if v is not None and v not in out:
                out.append(v)
                if len(out) == k:
                    break
        return out

    def float_cap(self, var: FloatVar) -> float:
        """How large a value assigned to ``var`` here may be."""
        return var.bound if var.level < self.level else FLOAT_CAP


# --------------------------------------------------------------------------- helpers for drawing

def pick(draw: Callable[[Any], Any], weighted: list[tuple[str, int]]) -> str:
    """A weighted choice; Hypothesis shrinks towards the first option."""
    options = [name for name, w in weighted for _ in range(w) if w > 0]
    return draw(st.sampled_from(options))


def spell(draw: Callable[[Any], Any], name: str) -> str:
    """``math.sin``, ``np.sin`` or ``np.arcsin``... for the intrinsic ``name``."""
    choices = [f"math.{name}"]
    if name in NUMPY_NAMES:
        choices.append(f"np.{name}")
    if name in NUMPY_RENAMED:
        choices.append(f"np.{NUMPY_RENAMED[name]}")
    return draw(st.sampled_from(choices))


def fit(draw: Callable[[Any], Any], e: FExpr, cap: float) -> FExpr:
    """``e`` if its bound is within ``cap``, else ``e`` scaled down or squashed."""
    if e.bound <= cap:
        return e
    how = pick(draw, [("scale", 3), ("tanh", 1 if e.bound <= 4 * cap else 0),
                      ("sin", 1 if e.bound <= 4 * cap else 0)])
    if how == "scale" or cap < 1.0:
        s = nice_below(cap / e.bound)
        return FExpr(f"({ffmt(s)} * {e.text})", s * e.bound)
    c = nice_below(cap)
    return FExpr(f"({ffmt(c)} * math.{how}({e.text}))", c)


# --------------------------------------------------------------------------- integers

@st.composite
def int_atom(draw, scope: Scope) -> IExpr:
    """An integer variable, an extent, an element of an integer array or a small constant."""
    extents = [(a, k) for a in scope.arrays.values() for k in range(a.ndim)]
    int_arrays = sorted(a.name for a in scope.arrays.values() if a.elem == "i64")
    int_consts = sorted(k for k, v in scope.fn.constants.items() if isinstance(v, int))
    kind = pick(draw, [("var", 4 if scope.ints else 0), ("extent", 2 if extents else 0),
                       ("const", 1), ("element", 2 if int_arrays else 0),
                       ("module_const", 1 if int_consts else 0)])
    if kind == "module_const":
        name = draw(st.sampled_from(int_consts))
        v = int(scope.fn.constants[name])
        return IExpr(name, v, v)
    if kind == "element":
        a = scope.arrays[draw(st.sampled_from(int_arrays))]
        return IExpr(draw(array_element(scope, a)), *INT_PARAM)
    if kind == "var":
        v = scope.ints[draw(st.sampled_from(sorted(scope.ints)))]
        return IExpr(v.name, v.lo, v.hi)
    if kind == "extent":
        a, k = draw(st.sampled_from(sorted(extents, key=lambda p: (p[0].name, p[1]))))
        return IExpr(a.extent_text(k, draw), a.extents[k].lo, a.extents[k].hi)
    c = draw(st.sampled_from([1, 2, 0, 3, -1]))
    return IExpr(ifmt(c), c, c)


def divide_interval(a: IExpr, d: IExpr) -> tuple[int, int]:
    qs = [x // y for x in (a.lo, a.hi) for y in (d.lo, d.hi)]
    return min(qs), max(qs)


@st.composite
def nonzero_divisor(draw, scope: Scope) -> IExpr:
    options = [IExpr(ifmt(c), c, c) for c in (2, 3, 4, -2, -3)]
    options += [IExpr(v.name, v.lo, v.hi) for v in scope.ints.values() if v.lo >= 1 or v.hi <= -1]
    for a in scope.arrays.values():
        for k, ext in enumerate(a.extents):
            options.append(IExpr(a.extent_text(k, draw), ext.lo, ext.hi))
    d = draw(st.sampled_from(options))
    if d.lo <= 0 <= d.hi:  # cannot happen by construction; keep the invariant explicit
        return IExpr("2", 2, 2)
    return d


def clamp_int(e: IExpr) -> IExpr:
    if -INT_CAP <= e.lo and e.hi <= INT_CAP:
        return e
    return IExpr(f"({e.text} % 7)", 0, 6)


@st.composite
def int_expr(draw, scope: Scope, depth: int = 2) -> IExpr:
    """An integer expression; ``//`` and ``%`` only by nonzero divisors."""
    form = pick(draw, [("atom", 4), ("add", 2), ("sub", 2), ("mul", 1), ("floordiv", 2),
                       ("mod", 2), ("neg", 1), ("abs", 1), ("min", 1), ("max", 1),
                       ("int", 1 if depth > 1 else 0), ("pow", 1), ("ifexp", 1),
                       ("call", 1 if depth > 1 and callable_helpers(scope, ("int",)) else 0)]
                if depth > 0 else [("atom", 1)])
    if form == "atom":
        return draw(int_atom(scope))
    if form == "call":  # a helper returning an int in INT_PARAM
        h = draw(st.sampled_from(callable_helpers(scope, ("int",))))
        return IExpr(draw(helper_call(scope, h, 0)).text, *INT_PARAM)
    if form == "ifexp":
        a, b, c = (draw(int_expr(scope, depth - 1)), draw(int_atom(scope)), draw(int_atom(scope)))
        return IExpr(f"({a.text} if {b.text} < {c.text} else {b.text})", min(a.lo, b.lo),
                     max(a.hi, b.hi))
    if form == "int":  # a data-dependent integer: int() truncates towards zero
        f = fit(draw, draw(float_expr(scope, depth - 2)), 3.0)
        return IExpr(f"int({f.text})", -3, 3)
    a = draw(int_expr(scope, depth - 1))
    if form == "neg":
        return IExpr(f"(-{a.text})", -a.hi, -a.lo)
    if form == "abs":
        lo = 0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
        return IExpr(f"abs({a.text})", lo, max(abs(a.lo), abs(a.hi)))
    if form == "pow":
        if max(abs(a.lo), abs(a.hi)) > 7:
            return a
        sq = [a.lo * a.lo, a.hi * a.hi]
        lo = 0 if a.lo <= 0 <= a.hi else min(sq)
        return IExpr(f"({a.text} ** 2)", lo, max(sq))
    if form in ("floordiv", "mod"):
        d = draw(nonzero_divisor(scope))
        if form == "floordiv":
            lo, hi = divide_interval(a, d)
            return IExpr(f"({a.text} // {d.text})", lo, hi)
        if d.lo > 0:
            return IExpr(f"({a.text} % {d.text})", 0, d.hi - 1)
        return IExpr(f"({a.text} % {d.text})", d.lo + 1, 0)
    b = draw(int_expr(scope, depth - 1))
    if form == "add":
        return clamp_int(IExpr(f"({a.text} + {b.text})", a.lo + b.lo, a.hi + b.hi))
    if form == "sub":
        return clamp_int(IExpr(f"({a.text} - {b.text})", a.lo - b.hi, a.hi - b.lo))
    if form == "mul":
        ps = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return clamp_int(IExpr(f"({a.text} * {b.text})", min(ps), max(ps)))
    if form == "min":
        return IExpr(f"min({a.text}, {b.text})", min(a.lo, b.lo), min(a.hi, b.hi))
    return IExpr(f"max({a.text}, {b.text})", max(a.lo, b.lo), max(a.hi, b.hi))


@st.composite
def small_int(draw, scope: Scope, lo: int, hi: int) -> IExpr:
    """An integer expression whose value lies in ``[lo, hi]``."""
    e = draw(int_expr(scope, 1))
    if lo <= e.lo and e.hi <= hi:
        return e
    how = pick(draw, [("mod", 1), ("clamp", 1)])
    if how == "mod" or e.hi < lo or e.lo > hi:
        m = hi - lo + 1
        text = f"({e.text} % {m})" if lo == 0 else f"({e.text} % {m} + {ifmt(lo)})"
        return IExpr(text, lo, hi)
    return IExpr(f"min(max({e.text}, {ifmt(lo)}), {ifmt(hi)})", lo, hi)


# --------------------------------------------------------------------------- indices and array reads

@st.composite
def index(draw, scope: Scope, ext: Extent, array: ArrayVar, axis: int) -> str:
    """An index expression that is in range for an axis of extent ``ext``."""
    if array.pinned and array.pinned[axis] is not None:
        return array.pinned[axis]
    options: list[str] = []
    for v in scope.ints.values():
        for h in v.hints:
            if h.sym != ext.sym:
                continue
            for d in (-1, 0, 1):
                if h.lo + d >= 0 and h.hi + d <= -1:
                    options.append(v.name if d == 0 else f"{v.name} {'+' if d > 0 else '-'} {abs(d)}")
        if 0 <= v.lo and v.hi <= ext.lo - 1:
            options.append(v.name)
    consts = [str(c) for c in range(min(ext.lo, 3))] + [f"-{c}" for c in range(1, min(ext.lo, 2) + 1)]
    how = pick(draw, [("hint", 6 if options else 0), ("const", 2), ("mod", 3)])
    if how == "hint":
        return draw(st.sampled_from(options))
    if how == "const":
        return draw(st.sampled_from(consts))
    e = draw(int_expr(scope, 1))
    return f"{e.text} % {array.extent_text(axis, draw)}"


@st.composite
def array_element(draw, scope: Scope, array: ArrayVar) -> str:
    idx = [draw(index(scope, ext, array, k)) for k, ext in enumerate(array.extents)]
    return f"{array.name}[{', '.join(idx)}]"


# --------------------------------------------------------------------------- floats

@st.composite
def float_const(draw) -> FExpr:
    c = draw(st.sampled_from([0.5, 0.25, 1.0, 2.0, 0.1, 1.5, 0.75, 3.0, -0.5, -1.25, 0.3,
                              "math.pi", "np.pi", "math.e"]))
    if isinstance(c, str):
        return FExpr(c, 3.2)
    return FExpr(ffmt(c), abs(c))


def float_constants(scope: Scope) -> list[str]:
    return sorted(k for k, v in scope.fn.constants.items() if isinstance(v, float))


def float_arrays(scope: Scope) -> list[str]:
    return sorted(a.name for a in scope.arrays.values() if a.elem == "f64")


@st.composite
def float_leaf(draw, scope: Scope) -> FExpr:
    recent = scope.recent_floats(3)
    kinds = [("const", 1), ("recent", 4 if recent else 0), ("var", 3 if scope.floats else 0),
             ("array", 4 if float_arrays(scope) else 0), ("int", 1),
             ("module_const", 1 if float_constants(scope) else 0)]
    kind = pick(draw, kinds)
    if kind == "recent":
        v = draw(st.sampled_from(recent))
        return FExpr(v.name, v.bound)
    if kind == "var":
        v = draw(st.sampled_from(sorted(scope.floats)))
        return FExpr(v, scope.floats[v].bound)
    if kind == "array":
        a = scope.arrays[draw(st.sampled_from(float_arrays(scope)))]
        return FExpr(draw(array_element(scope, a)), ARRAY_BOUND)
    if kind == "int":
        e = draw(int_expr(scope, 1))
        b = float(max(abs(e.lo), abs(e.hi), 1))
        form = pick(draw, [("float", 2), ("scaled", 2), ("truediv", 1)])
        if form == "float":
            return FExpr(f"float({e.text})", b)
        if form == "scaled":
            return FExpr(f"(0.25 * {e.text})", 0.25 * b)
        return FExpr(f"({e.text} / 4)", b / 4)
    if kind == "module_const":
        name = draw(st.sampled_from(float_constants(scope)))
        return FExpr(name, abs(scope.fn.constants[name]))
    return draw(float_const())


@st.composite
def positive_arg(draw, scope: Scope, depth: int) -> FExpr:
    """An expression bounded away from zero (for log, sqrt, pow bases, divisors); lower bound 0.5."""
    e = draw(float_expr(scope, depth))
    form = pick(draw, [("square", 1), ("abs", 1), ("cosh", 1)])
    if form == "square":
        return FExpr(f"(1.0 + {e.text} * {e.text})", 1.0 + e.bound * e.bound)
    if form == "abs":
        return FExpr(f"(abs({e.text}) + 0.5)", e.bound + 0.5)
    e = fit(draw, e, EXP_CAP)
    return FExpr(f"(2.0 - math.cos({e.text}))", 3.0)


@st.composite
def unary_intrinsic(draw, scope: Scope, depth: int) -> FExpr:
    name = draw(st.sampled_from(sorted(UNARY)))
    kind = UNARY[name]
    fname = spell(draw, name)
    if kind == "pos":
        a = draw(positive_arg(scope, depth))
        if name in ("log", "log2", "log10"):
            b = max(math.log(a.bound), math.log(2.0))
        elif name == "log1p":
            b = math.log1p(a.bound)
        elif name == "sqrt":
            b = math.sqrt(a.bound)
        else:
            b = a.bound ** (1.0 / 3.0)
        if name in ("log2", "log10"):
            b = b / math.log(2.0)
        return FExpr(f"{fname}({a.text})", b + 1e-9)
    a = draw(float_expr(scope, depth))
    if kind == "unit":
        a = fit(draw, a, 0.9)
        return FExpr(f"{fname}({a.text})", math.pi)
    if kind == "exp":
        a = fit(draw, a, EXP_CAP)
        return FExpr(f"{fname}({a.text})", math.exp(a.bound) + 1.0)
    if name == "fabs":
        name = draw(st.sampled_from(["fabs", "abs"]))
        return FExpr(f"{fname if name == 'fabs' else 'abs'}({a.text})", a.bound)
    if name in ("sin", "cos"):
        a = fit(draw, a, 4.0)  # keep derivatives moderate
    return FExpr(f"{fname}({a.text})", 2.0)


@st.composite
def binary_intrinsic(draw, scope: Scope, depth: int) -> FExpr:
    name = pick(draw, [("min", 2), ("max", 2), ("hypot", 1), ("atan2", 1), ("pow", 2),
                       ("square", 2), ("copysign", 1)])
    a = draw(float_expr(scope, depth))
    if name == "square":
        n = draw(st.sampled_from([2, 3]))
        a = fit(draw, a, 3.0)
        return FExpr(f"{a.text} ** {n}" if a.text[0] == "(" or a.text.isidentifier()
                     else f"({a.text}) ** {n}", a.bound ** n)
    if name == "pow":
        base = draw(positive_arg(scope, depth))
        base = FExpr(base.text, base.bound)
        form = pick(draw, [("const", 2), ("active", 1)])
        if form == "const":
            p = draw(st.sampled_from([0.5, 1.5, 2.5, -0.5, 2.0]))
            exponent = FExpr(ffmt(p), abs(p))
        else:
            exponent = fit(draw, draw(float_expr(scope, depth)), 1.5)
        spelled = draw(st.sampled_from(["pow", "math.pow", "np.power", "**"]))
        text = (f"{base.text} ** {exponent.text}" if spelled == "**"
                else f"{spelled}({base.text}, {exponent.text})")
        if spelled == "**":
            text = f"({text})"
        b = max(base.bound ** exponent.bound, 0.5 ** -exponent.bound)
        return FExpr(text, b)
    b = draw(float_expr(scope, depth))
    if name in ("min", "max"):
        builtin = draw(st.sampled_from([name, name, f"np.{'minimum' if name == 'min' else 'maximum'}"]))
        if builtin == name and draw(st.booleans()):
            c = draw(float_expr(scope, 0))
            return FExpr(f"{name}({a.text}, {b.text}, {c.text})", max(a.bound, b.bound, c.bound))
        return FExpr(f"{builtin}({a.text}, {b.text})", max(a.bound, b.bound))
    if name == "hypot":
        return FExpr(f"{spell(draw, 'hypot')}({a.text}, ({b.text} + 0.7))",
                     a.bound + b.bound + 0.7)
    if name == "atan2":
        return FExpr(f"{spell(draw, 'atan2')}({a.text}, ({b.text} + 0.3))", math.pi)
    return FExpr(f"math.copysign({a.text}, {b.text})", a.bound)


@st.composite
def float_expr(draw, scope: Scope, depth: int = 2, cap: float = FLOAT_CAP) -> FExpr:
    """A float expression of nesting ``depth`` at most, with magnitude at most ``cap``."""
    if depth <= 0:
        return fit(draw, draw(float_leaf(scope)), cap)
    calls = callable_helpers(scope, ("float",))
    form = pick(draw, [("leaf", 3), ("add", 3), ("sub", 2), ("mul", 3), ("div", 2), ("neg", 1),
                       ("unary", 4), ("binary", 2), ("ifexp", 1), ("call", 2 if calls else 0),
                       ("guarded", 1 if scope.floats or float_arrays(scope) else 0),
                       ("fmod", 1), ("grad", 1 if grad_targets(scope) else 0)])
    d = depth - 1
    if form == "leaf":
        e = draw(float_leaf(scope))
    elif form == "neg":
        a = draw(float_expr(scope, d))
        e = FExpr(f"({draw(st.sampled_from(['-', '-', '+']))}{a.text})", a.bound)
    elif form in ("add", "sub", "mul"):
        a, b = draw(float_expr(scope, d)), draw(float_expr(scope, d))
        sym = {"add": "+", "sub": "-", "mul": "*"}[form]
        bound = a.bound * b.bound if form == "mul" else a.bound + b.bound
        e = FExpr(f"({a.text} {sym} {b.text})", bound)
    elif form == "div":
        a = draw(float_expr(scope, d))
        how = pick(draw, [("pos", 3), ("const", 1)])
        if how == "pos":
            den = draw(positive_arg(scope, max(d - 1, 0)))
            e = FExpr(f"({a.text} / {den.text})", 2.0 * a.bound)
        else:
            c = draw(st.sampled_from([2.0, 3.0, -4.0, 0.5]))
            e = FExpr(f"({a.text} / {ffmt(c)})", a.bound / abs(c))
    elif form == "fmod":  # Python's float %: the sign of the divisor
        a = draw(float_expr(scope, d))
        c = draw(st.sampled_from([1.0, 0.7, -1.0]))
        e = FExpr(f"({a.text} % {ffmt(c)})", abs(c))
    elif form == "unary":
        e = draw(unary_intrinsic(scope, d))
    elif form == "binary":
        e = draw(binary_intrinsic(scope, d))
    elif form == "ifexp":
        c = draw(condition(scope, 1))
        a, b = draw(float_expr(scope, d)), draw(float_expr(scope, d))
        e = FExpr(f"({a.text} if {c} else {b.text})", max(a.bound, b.bound))
    elif form == "guarded":
        e = draw(guarded_expr(scope, d))
    elif form == "grad":
        e = draw(grad_expr(scope))
    else:
        e = draw(helper_call(scope, draw(st.sampled_from(calls))))
    return fit(draw, e, cap)


def atomic(text: str) -> str:
    """``text`` parenthesised unless it is a name or an array element (a base of ``**``)."""
    if text.replace("_", "a").isalnum() and not text[0].isdigit():
        return text
    if text.endswith("]") and "[" in text and text[:text.index("[")].replace("_", "a").isalnum() \
            and text.count("[") == 1:
        return text
    return f"({text})"


@st.composite
def variable_operand(draw, scope: Scope, cap: float) -> FExpr:
    """A float expression that reads a float variable or an array element, so never a constant
    (adgen folds constant arms it never takes, and refuses ``(-0.5) ** 0.5`` there): the
    variable alone, or combined with another expression."""
    kinds = [("var", 3 if scope.floats else 0), ("array", 2 if float_arrays(scope) else 0)]
    if pick(draw, kinds) == "var":
        recent = scope.recent_floats(3)
        name = draw(st.sampled_from(sorted({v.name for v in recent} | set(scope.floats))))
        leaf = FExpr(name, scope.floats[name].bound)
    else:
        a = scope.arrays[draw(st.sampled_from(float_arrays(scope)))]
        leaf = FExpr(draw(array_element(scope, a)), ARRAY_BOUND)
    form = pick(draw, [("plain", 3), ("add", 1), ("sub", 1), ("mul", 1), ("func", 1)])
    if form == "plain":
        e = leaf
    elif form == "func":
        f = spell(draw, draw(st.sampled_from(["sin", "cos", "tanh"])))
        e = FExpr(f"{f}({leaf.text})", 1.0)
    else:
        o = draw(float_expr(scope, 1, 2.0))
        sym = {"add": "+", "sub": "-", "mul": "*"}[form]
        e = FExpr(f"({leaf.text} {sym} {o.text})",
                  leaf.bound * o.bound if form == "mul" else leaf.bound + o.bound)
    return fit(draw, e, cap)


@st.composite
def guarded_expr(draw, scope: Scope, depth: int) -> FExpr:
    """A conditional expression whose taken arm is finite only under its guard, a test of a
    variable's value: ``(a / b if abs(b) > 0.25 else a)``, ``(v ** 0.5 if v > 0.25 else w)``,
    ``(pow(v, 1.5) if v > 0.1 else w)``, ``math.sqrt``, ``math.log`` (now and then the guard
    negated and the arms swapped).  CPython evaluates only the arm taken; adgen must branch
    (the partials of the other arm are infinite or NaN)."""
    form = pick(draw, [("div", 2), ("sqrt", 2), ("pow", 1), ("log", 1)])
    other = draw(float_expr(scope, max(depth - 1, 0)))
    if form == "div":
        a = draw(float_expr(scope, max(depth - 1, 0), 4.0))
        b = draw(variable_operand(scope, FLOAT_CAP))
        thr = draw(st.sampled_from([0.25, 0.5]))
        guard, neg = draw(st.sampled_from([
            (f"abs({b.text}) > {thr}", f"abs({b.text}) <= {thr}"),
            (f"abs({b.text}) >= {thr}", f"abs({b.text}) < {thr}"),
            (f"{b.text} > {thr}", f"{b.text} <= {thr}"),
            (f"{b.text} < {ffmt(-thr)}", f"{b.text} >= {ffmt(-thr)}")]))
        num = draw(st.sampled_from([a.text, "1.0"]))
        taken = FExpr(f"{atomic(num)} / {atomic(b.text)}", (a.bound if num == a.text else 1.0) / thr)
        if draw(st.booleans()):
            other = a
    else:
        v = draw(variable_operand(scope, 4.0 if form == "pow" else FLOAT_CAP))
        thr = draw(st.sampled_from([0.1, 0.25, 0.5]))
        guard, neg = f"{v.text} > {thr}", f"{v.text} <= {thr}"
        base = atomic(v.text)
        if form == "sqrt":
            text = draw(st.sampled_from([f"{base} ** 0.5", f"{spell(draw, 'sqrt')}({v.text})",
                                         f"pow({v.text}, 0.5)"]))
            taken = FExpr(text, math.sqrt(v.bound))
        elif form == "pow":
            p = draw(st.sampled_from([1.5, 0.5, 2.5, -0.5, 0.75]))
            text = draw(st.sampled_from([f"pow({v.text}, {ffmt(p)})", f"{base} ** {ffmt(p)}",
                                         f"math.pow({v.text}, {ffmt(p)})",
                                         f"np.power({v.text}, {ffmt(p)})"]))
            taken = FExpr(text, max(v.bound ** p, thr ** p))
        else:
            name = draw(st.sampled_from(["log", "log", "log2", "log10"]))
            taken = FExpr(f"{spell(draw, name)}({v.text})",
                          max(math.log(v.bound), -math.log(thr)) / (1.0 if name == "log" else 0.69))
    if draw(st.integers(0, 3)) == 0:
        text = f"({other.text} if {neg} else {taken.text})"
    else:
        text = f"({taken.text} if {guard} else {other.text})"
    return FExpr(text, max(taken.bound, other.bound))


@st.composite
def helper_call(draw, scope: Scope, h: Helper, depth: int = 1) -> FExpr:
    """``g(...)`` with arguments inside the ranges the helper assumes."""
    args = []
    for _, kind in h.params:
        if kind == "float":
            args.append(draw(float_expr(scope, depth, PARAM_BOUND)).text)
        elif kind == "int":
            args.append(draw(small_int(scope, *INT_PARAM)).text)
        else:
            args.append(draw(st.sampled_from(helper_arrays(scope, h))))
    return FExpr(f"{h.name}({', '.join(args)})", h.bound)


def helper_arrays(scope: Scope, h: Helper) -> list[str]:
    """The arrays that may be passed as the array parameter of ``h``."""
    return sorted(a.name for a in scope.arrays.values()
                  if a.ndim == 1 and a.elem == "f64" and not a.pinned
                  and HELPER_EXTENT[0] <= a.extents[0].lo
                  and a.extents[0].hi <= HELPER_EXTENT[1] and (a.writable or not h.writes_array))


def callable_helpers(scope: Scope, returns: tuple[str, ...]) -> list[Helper]:
    """Helpers returning one of ``returns`` that can be called here."""
    return [h for h in scope.fn.helpers if h.returns in returns
            and (not any(k == "array" for _, k in h.params) or helper_arrays(scope, h))
            and not scope.fn.straight]


# --------------------------------------------------------------------------- conditions

@st.composite
def condition(draw, scope: Scope, depth: int = 1) -> str:
    """A boolean expression; float comparisons are data-dependent."""
    form = pick(draw, [("fcmp", 6), ("icmp", 2), ("bool", 2 if scope.bools else 0),
                       ("chain", 2), ("not", 1 if depth > 0 else 0), ("and", 1 if depth > 0 else 0),
                       ("or", 1 if depth > 0 else 0)])
    op = draw(st.sampled_from(["<", "<=", ">", ">="]))
    if form == "fcmp":
        a = draw(float_expr(scope, 1))
        if draw(st.booleans()):
            c = draw(st.sampled_from([0.5, 1.0, 1.2, 0.8, 0.0, -0.3, 2.0]))
            return f"{a.text} {op} {ffmt(c)}"
        if draw(st.integers(0, 3)) == 0:  # a float compared with an int
            return f"{a.text} {op} {draw(int_expr(scope, 1)).text}"
        b = draw(float_expr(scope, 1))
        return f"{a.text} {op} {b.text}"
    if form == "icmp":
        a, b = draw(int_expr(scope, 1)), draw(int_expr(scope, 1))
        op = draw(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
        if draw(st.booleans()):
            return f"{a.text} % 2 == 0"
        return f"{a.text} {op} {b.text}"
    if form == "chain":
        return draw(chain(scope))
    if form == "bool":
        return draw(st.sampled_from(sorted(scope.bools)))
    if form == "not":
        return f"not ({draw(condition(scope, depth - 1))})"
    a, b = draw(condition(scope, depth - 1)), draw(condition(scope, depth - 1))
    return f"({a}) {form} ({b})"


@st.composite
def chain_operand(draw, scope: Scope) -> str:
    """A later operand of a comparison chain: an array element, a helper call (evaluated only
    where the comparisons before it hold), a float or an integer expression or a constant."""
    calls = callable_helpers(scope, ("float", "int"))
    kind = pick(draw, [("element", 3 if float_arrays(scope) else 0),
                       ("call", 3 if calls else 0), ("expr", 2), ("int", 1), ("const", 1)])
    if kind == "element":
        a = scope.arrays[draw(st.sampled_from(float_arrays(scope)))]
        return draw(array_element(scope, a))
    if kind == "call":
        return draw(helper_call(scope, draw(st.sampled_from(calls)), 0)).text
    if kind == "int":
        return draw(int_expr(scope, 1)).text
    if kind == "const":
        return ffmt(draw(st.sampled_from([0.5, 1.0, 1.2, 0.0, -0.3])))
    return draw(float_expr(scope, 1)).text


@st.composite
def chain(draw, scope: Scope) -> str:
    """A comparison chain: ``0.6 < e < 1.3``, ``lo < v < hi`` with bounds from variables,
    or ``a < x[i] <= g0(...)`` with array elements and helper calls as later operands (three
    or four operands, the operators mostly in one direction)."""
    form = pick(draw, [("const", 1), ("bounds", 2 if scope.floats or float_arrays(scope) else 0),
                       ("mixed", 3)])
    a = draw(float_expr(scope, 1))
    if form == "const":
        return f"0.6 < {a.text} < 1.3"
    up = draw(st.booleans())
    ops = ["<", "<="] if up else [">", ">="]
    if form == "bounds":  # lo < v < hi: both bounds read the data
        v = draw(variable_operand(scope, FLOAT_CAP))
        lo, hi = draw(float_expr(scope, 1)), draw(float_expr(scope, 1))
        if not up:
            lo, hi = hi, lo
        if draw(st.booleans()):   # around a value: v - c < w < v + c
            c = draw(st.sampled_from([0.25, 0.5, 1.0]))
            lo = FExpr(f"{a.text} - {c}", 0.0) if up else FExpr(f"{a.text} + {c}", 0.0)
            hi = FExpr(f"{a.text} + {c}", 0.0) if up else FExpr(f"{a.text} - {c}", 0.0)
        return (f"{lo.text} {draw(st.sampled_from(ops))} {v.text} "
                f"{draw(st.sampled_from(ops))} {hi.text}")
    n = draw(st.integers(2, 3))
    parts = [a.text]
    for _ in range(n):
        op = draw(st.sampled_from(ops)) if draw(st.integers(0, 4)) else \
            draw(st.sampled_from(["<", "<=", ">", ">="]))
        parts += [op, draw(chain_operand(scope))]
    return " ".join(parts)


# --------------------------------------------------------------------------- statements

def indent(lines: list[str]) -> list[str]:
    return ["    " + ln for ln in lines]


def mutable_floats(scope: Scope) -> list[FloatVar]:
    return [v for v in scope.floats.values() if v.mutable]


def mutable_ints(scope: Scope) -> list[IntVar]:
    return [v for v in scope.ints.values() if v.mutable]


def define_float(scope: Scope, name: str, bound: float) -> FloatVar:
    v = FloatVar(name, max(bound, 1.0), scope.level)
    scope.floats[name] = v
    scope.touch(name)
    return v


@st.composite
def new_float(draw, scope: Scope) -> list[str]:
    e = draw(float_expr(scope, draw(st.integers(1, 3))))
    name = scope.fn.fresh("v")
    define_float(scope, name, e.bound)
    if draw(st.integers(0, 9)) == 0:
        return [f"{name}: float = {e.text}"]
    return [f"{name} = {e.text}"]


@st.composite
def update_float(draw, scope: Scope) -> list[str]:
    """Assign to an existing float; within loops it keeps its bound (no growth)."""
    v = draw(st.sampled_from(sorted(mutable_floats(scope), key=lambda v: v.name)))
    cap = scope.float_cap(v)
    form = pick(draw, [("assign", 2), ("relax", 2), ("mul", 1), ("div", 1),
                       ("add", 2 if cap == FLOAT_CAP else 0), ("minmax", 1)])
    if form == "relax":   # v = v + 0.5 * (e - v): a convex combination
        e = draw(float_expr(scope, 2, cap))
        op = draw(st.sampled_from(["+=", "-="]))
        text = f"0.5 * ({e.text} - {v.name})" if op == "+=" else f"0.5 * ({v.name} - {e.text})"
        line = f"{v.name} {op} {text}"
        bound = max(v.bound, e.bound)
    elif form == "mul":
        e = draw(float_expr(scope, 2, 1.0))
        line, bound = f"{v.name} *= {e.text}", v.bound
    elif form == "div":
        e = draw(positive_arg(scope, 1))
        if not e.text.startswith("(1.0 +") and not e.text.startswith("(2.0 -"):
            e = FExpr(f"({e.text} + 0.5)", e.bound)  # abs(..) + 0.5 + 0.5 >= 1
        line, bound = f"{v.name} /= {e.text}", v.bound
    elif form == "add":
        e = draw(float_expr(scope, 2))
        op = draw(st.sampled_from(["+=", "-="]))
        line, bound = f"{v.name} {op} {e.text}", v.bound + e.bound
        if bound > FLOAT_CAP * 4:
            e = fit(draw, e, 1.0)
            line, bound = f"{v.name} {op} {e.text}", v.bound + e.bound
    elif form == "minmax":
        e = draw(float_expr(scope, 1, cap))
        f = draw(st.sampled_from(["min", "max"]))
        line, bound = f"{v.name} = {f}({v.name}, {e.text})", max(v.bound, e.bound)
    else:
        e = draw(float_expr(scope, 2, cap))
        line, bound = f"{v.name} = {e.text}", e.bound
    v.bound = max(v.bound, bound)
    scope.touch(v.name)
    return [line]


def swappable(scope: Scope) -> list[tuple[FloatVar, FloatVar]]:
    vs = sorted(mutable_floats(scope), key=lambda v: v.name)
    return [(u, w) for u in vs for w in vs if u.name < w.name
            and scope.float_cap(u) >= w.bound and scope.float_cap(w) >= u.bound]


@st.composite
def tuple_assign(draw, scope: Scope) -> list[str]:
    """``u, w = w, u`` or ``u, w = e1, e2`` (a tuple of values, not a call)."""
    u, w = draw(st.sampled_from(swappable(scope)))
    if draw(st.booleans()):
        bu, bw = w.bound, u.bound
        line = f"{u.name}, {w.name} = {w.name}, {u.name}"
    else:
        e1 = draw(float_expr(scope, 1, scope.float_cap(u)))
        e2 = draw(float_expr(scope, 1, scope.float_cap(w)))
        bu, bw = e1.bound, e2.bound
        line = f"{u.name}, {w.name} = {e1.text}, {e2.text}"
    u.bound, w.bound = max(u.bound, bu), max(w.bound, bw)
    scope.touch(u.name)
    scope.touch(w.name)
    return [line]


@st.composite
def chained_assign(draw, scope: Scope) -> list[str]:
    """``v1 = v2 = e``."""
    e = draw(float_expr(scope, 2))
    names = [scope.fn.fresh("v"), scope.fn.fresh("v")]
    for n in names:
        define_float(scope, n, e.bound)
    return [f"{names[0]} = {names[1]} = {e.text}"]


@st.composite
def new_int(draw, scope: Scope) -> list[str]:
    e = draw(int_expr(scope, 2))
    name = scope.fn.fresh("k")
    scope.ints[name] = IntVar(name, e.lo, e.hi, scope.level)
    return [f"{name} = {e.text}"]


@st.composite
def update_int(draw, scope: Scope) -> list[str]:
    """Assign to an existing int; within loops its interval is kept."""
    v = draw(st.sampled_from(sorted(mutable_ints(scope), key=lambda v: v.name)))
    if v.level == scope.level:
        e = draw(int_expr(scope, 2))
        op = pick(draw, [("=", 2), ("+=", 1), ("//=", 1), ("%=", 1)])
        if op == "=":
            v.lo, v.hi = min(v.lo, e.lo), max(v.hi, e.hi)
            return [f"{v.name} = {e.text}"]
        if op == "+=":
            v.lo, v.hi = min(v.lo, v.lo + e.lo), max(v.hi, v.hi + e.hi)
            clamped = clamp_int(IExpr(v.name, v.lo, v.hi))
            if clamped.text != v.name:
                v.lo, v.hi = min(v.lo, 0), max(v.hi, 6)
                return [f"{v.name} = ({v.name} + {e.text}) % 7"]
            return [f"{v.name} += {e.text}"]
        d = draw(nonzero_divisor(scope))
        if op == "//=":
            lo, hi = divide_interval(IExpr(v.name, v.lo, v.hi), d)
            v.lo, v.hi = min(v.lo, lo), max(v.hi, hi)
            return [f"{v.name} //= {d.text}"]
        lo, hi = (0, d.hi - 1) if d.lo > 0 else (d.lo + 1, 0)
        v.lo, v.hi = min(v.lo, lo), max(v.hi, hi)
        return [f"{v.name} %= {d.text}"]
    # outer variable inside a loop: stay within [lo, hi]
    forms = [("clamp", 1), ("down", 1), ("up", 1)]
    if v.lo >= 0:
        forms += [("half", 1)]
    if v.lo == 0 and v.hi >= 1:
        forms += [("mod", 2)]
    form = pick(draw, forms)
    if form == "half":
        return [f"{v.name} //= 2"]
    if form == "mod":
        e = draw(int_expr(scope, 1))
        m = draw(st.integers(2, min(v.hi + 1, 7))) if v.hi >= 1 else 1
        return [f"{v.name} = ({v.name} + {e.text}) % {m}"]
    if form == "down":
        return [f"{v.name} = max({v.name} - 1, {ifmt(v.lo)})"]
    if form == "up":
        return [f"{v.name} = min({v.name} + 1, {ifmt(v.hi)})"]
    e = draw(small_int(scope, v.lo, v.hi))
    return [f"{v.name} = {e.text}"]


@st.composite
def new_bool(draw, scope: Scope) -> list[str]:
    c = draw(condition(scope, 1))
    name = scope.fn.fresh("b")
    scope.bools[name] = BoolVar(name, scope.level)
    return [f"{name} = {c}"]


@st.composite
def array_write(draw, scope: Scope, only: list[str] | None = None) -> list[str]:
    """Write an element of a local array or an array parameter (in place)."""
    arrays = sorted(a.name for a in scope.arrays.values()
                    if a.writable and (only is None or a.name in only))
    a = scope.arrays[draw(st.sampled_from(arrays))]
    target = draw(array_element(scope, a))
    if a.elem == "i64":  # integer arrays keep their elements in INT_PARAM
        e = draw(small_int(scope, *INT_PARAM))
        return [f"{target} = {e.text}"]
    form = pick(draw, [("assign", 3), ("relax", 2), ("mul", 1), ("add", 1)])
    if form == "assign":
        e = draw(float_expr(scope, 2, ARRAY_BOUND))
        return [f"{target} = {e.text}"]
    if form == "relax":
        e = draw(float_expr(scope, 2, ARRAY_BOUND))
        return [f"{target} += 0.5 * ({e.text} - {target})"]
    if form == "mul":
        e = draw(float_expr(scope, 1, 1.0))
        return [f"{target} *= {e.text}"]
    # a[idx] = 0.5 * a[idx] + (...)  written as  a[idx] *= 0.5; a[idx] += e  with |e| <= 1
    e = draw(float_expr(scope, 1, 1.0))
    return [f"{target} *= 0.5", f"{target} += {e.text}"]


@st.composite
def unpack_call(draw, scope: Scope) -> list[str]:
    """``a, b = g(...)`` (tuple helpers) or ``g(...)`` (helpers returning nothing)."""
    h = draw(st.sampled_from(callable_helpers(scope, ("tuple", "tuple_fi", "none"))))
    call = draw(helper_call(scope, h)).text
    if h.returns == "none":
        return [call]
    a = scope.fn.fresh("v")
    if h.returns == "tuple":
        b = scope.fn.fresh("v")
        define_float(scope, a, h.bound)
        define_float(scope, b, h.bound)
    else:
        b = scope.fn.fresh("k")
        scope.ints[b] = IntVar(b, INT_PARAM[0], INT_PARAM[1], scope.level)
        define_float(scope, a, h.bound)
    return [f"{a}, {b} = {call}"]


@st.composite
def return_statement(draw, scope: Scope, final: bool = False) -> list[str]:
    """``return ...`` with the anchor term in the (first) float result; at the top level, or
    with ``final`` (the returns of a :func:`return_loop` at the top level), it adds the sums
    of :attr:`Function.linear`."""
    fn = scope.fn
    if fn.returns == "none":
        return ["return"]
    if fn.returns == "int":
        return [f"return {draw(small_int(scope, *INT_PARAM)).text}"]
    e = draw(float_expr(scope, draw(st.integers(1, 3))))
    terms = [e.text]
    bound = e.bound + 0.5 * ARRAY_BOUND
    for v in scope.recent_floats(draw(st.integers(0, 3))):
        t = fit(draw, FExpr(v.name, v.bound), 1.0)
        terms.append(t.text)
        bound += t.bound
    if scope.top or final:
        for name, b in fn.linear:
            terms.append(name)
            bound += b
    first = f"{' + '.join(terms)} + 0.5 * {fn.anchor}"
    fn.return_bound = max(fn.return_bound, bound)
    if fn.returns == "float":
        return [f"return {first}"]
    if fn.returns == "tuple":
        e2 = draw(float_expr(scope, 2))
        fn.return_bound = max(fn.return_bound, e2.bound)
        return [f"return {first}, {e2.text}"]
    k = draw(small_int(scope, *INT_PARAM))
    return [f"return {first}, {k.text}"]


@st.composite
def jump(draw, scope: Scope, returns: int = 2) -> list[str]:
    """``break``, ``continue`` (in loops) or ``return`` (weight ``returns``) that ends a branch;
    in a prange no ``return``, and no ``break`` directly in its body."""
    options = [("return", 0 if any(loop.parallel for loop in scope.loops) else returns)]
    if scope.loops:
        options += [("break", 3 if scope.loops[-1].allow_break and not scope.loops[-1].parallel
                     else 0),
                    ("continue", 2 if scope.loops[-1].allow_continue else 0)]
    kind = pick(draw, options)
    if kind == "return":
        return draw(return_statement(scope))
    return [kind]


@st.composite
def if_statement(draw, scope: Scope) -> list[str]:
    """``if / elif / else``; branches may end with a jump; names assigned in every
    branch that falls through are defined after the ``if``."""
    n_elif = pick(draw, [("0", 3), ("1", 2), ("2", 1)])
    has_else = draw(st.booleans()) or n_elif != "0"
    n_branches = 1 + int(n_elif) + int(has_else)
    merge = [scope.fn.fresh("v") for _ in range(draw(st.integers(0, 2 if has_else else 0)))]
    lines: list[str] = []
    bounds = [1.0] * len(merge)
    for k in range(n_branches):
        is_else = has_else and k == n_branches - 1
        if k == 0:
            lines.append(f"if {draw(condition(scope, 1))}:")
        elif not is_else:
            lines.append(f"elif {draw(condition(scope, 1))}:")
        else:
            lines.append("else:")
        inner = scope.child()
        body = draw(block(inner, 0, 2))
        ends_with_jump = not is_else and draw(st.integers(0, 3)) == 0
        if not ends_with_jump:
            for j, name in enumerate(merge):
                e = draw(float_expr(inner, 2))
                body.append(f"{name} = {e.text}")
                bounds[j] = max(bounds[j], e.bound)
        elif can_return_loop(inner) and draw(st.integers(0, 3)) == 0:
            body += draw(return_loop(inner))   # a while True: left only by return
        else:
            body += draw(jump(inner))
        lines += indent(body or ["pass"])
    for name, b in zip(merge, bounds, strict=True):
        define_float(scope, name, b)
    return lines


def loop_var(body: Scope, name: str, lo: int, hi: int, hints: tuple[Hint, ...]) -> None:
    """Declare the loop variable ``name`` in the loop body's scope."""
    body.ints[name] = IntVar(name, lo, max(lo, hi), body.level, mutable=False, hints=hints)


@st.composite
def axis_range(draw, a: ArrayVar, k: int) -> tuple[str, int, int, tuple[Hint, ...], int]:
    """``range(...)`` over axis ``k`` of ``a`` (every value an index of that axis)."""
    ext = a.extents[k]
    n = a.extent_text(k, draw)
    form = draw(st.sampled_from([
        (f"range({n})", 0, -1), (f"range({n} - 1)", 0, -2), (f"range(1, {n})", 1, -1),
        (f"range(0, {n}, 2)", 0, -1), (f"range({n} - 1, -1, -1)", 0, -1),
        (f"range({n} - 1, 0, -2)", 1, -1), (f"range(1, {n} - 1)", 1, -2),
        (f"range({n} - 2, -1, -1)", 0, -2)]))
    text, lo, hi = form
    return text, lo, ext.hi + hi, (Hint(ext.sym, lo, hi),), max(ext.hi, 1)


@st.composite
def range_header(draw, scope: Scope) -> tuple[str, int, int, tuple[Hint, ...], int]:
    """``range(...)`` over an array axis or integer bounds: (text, lo, hi, hints, trips)."""
    axes = [(a, k) for a in scope.arrays.values() for k in range(a.ndim)]
    how = pick(draw, [("axis", 3 if axes else 0), ("int", 2)])
    if how == "axis":
        a, k = draw(st.sampled_from(sorted(axes, key=lambda p: (p[0].name, p[1]))))
        return draw(axis_range(a, k))
    stop = draw(small_int(scope, -1, 5))
    form = pick(draw, [("stop", 2), ("start", 1), ("step", 1), ("down", 1), ("dynstep", 1)])
    if form == "stop":
        return f"range({stop.text})", 0, stop.hi - 1, (), max(stop.hi, 1)
    start = draw(small_int(scope, -1, 3))
    if form == "start":
        return f"range({start.text}, {stop.text})", start.lo, stop.hi - 1, (), max(stop.hi - start.lo, 1)
    if form == "step":
        s = draw(st.sampled_from([2, 3]))
        return f"range({start.text}, {stop.text}, {s})", start.lo, stop.hi - 1, (), max(stop.hi - start.lo, 1)
    if form == "down":
        s = draw(st.sampled_from([-1, -2]))
        return (f"range({stop.text}, {start.text}, {s})", start.lo + 1, stop.hi, (),
                max(stop.hi - start.lo, 1))
    step = draw(small_int(scope, 1, 2))
    if draw(st.booleans()):
        return f"range({start.text}, {stop.text}, {step.text})", start.lo, stop.hi - 1, (), \
            max(stop.hi - start.lo, 1)
    return (f"range({stop.text}, {start.text}, -{step.text})", start.lo + 1, stop.hi, (),
            max(stop.hi - start.lo, 1))


@st.composite
def accumulate(draw, scope: Scope, body: Scope, lines: list[str], trips: int) -> FloatVar | None:
    """Maybe turn the loop into a reduction: ``s = 0.0`` before, ``s += ...`` once per
    iteration (the last statement of the body, or in an if there); returns ``s``."""
    if draw(st.integers(0, 3)) == 0:
        return None
    name = scope.fn.fresh("v")
    c = draw(st.sampled_from([0.5, 0.25, 1.0]))
    e = draw(float_expr(body, 2, 1.0))
    op = draw(st.sampled_from(["+=", "-="]))
    stmt = f"{name} {op} {ffmt(c)} * {e.text}"
    if draw(st.integers(0, 2)) == 0:
        lines += [f"if {draw(condition(body, 0))}:", "    " + stmt]
    else:
        lines.append(stmt)
    return FloatVar(name, max(1.0, c * trips), scope.level)


def enter_loop(scope: Scope, loop: Loop) -> Scope:
    return scope.child(loop)


#: draws a loop body (its lines) in the body's scope; the loops take one to put a given
#: construct inside them instead of a random block
BodyFn = Callable[[Scope], Any]


@st.composite
def for_loop(draw, scope: Scope, body_fn: BodyFn | None = None) -> list[str]:
    text, lo, hi, hints, trips = draw(range_header(scope))
    name = scope.free_loop_name()
    body_scope = enter_loop(scope, Loop(allow_continue=True))
    loop_var(body_scope, name, lo, hi, hints)
    body = draw(body_fn(body_scope) if body_fn else block(body_scope, 1, 3))
    acc = draw(accumulate(scope, body_scope, body, trips))
    lines = [f"for {name} in {text}:"] + indent(body or ["pass"])
    if acc is not None:
        lines.insert(0, f"{acc.name} = 0.0")
        scope.floats[acc.name] = acc
        scope.touch(acc.name)
    return lines


@st.composite
def extreme_loop(draw, scope: Scope) -> list[str]:
    """A running maximum or minimum: ``m = e0`` before a ``for`` loop whose body (maybe
    after a statement) is ``m = max(m, e)`` (or ``min``, either operand order), the form
    reverse mode turns into the index of the element kept (``transforms/extremes.py``)."""
    text, lo, hi, hints, _ = draw(range_header(scope))
    name = scope.free_loop_name()
    first = draw(float_expr(scope, 2))
    body_scope = enter_loop(scope, Loop(allow_continue=False))
    loop_var(body_scope, name, lo, hi, hints)
    body = draw(block(body_scope, 0, 1)) if draw(st.booleans()) else []
    e = draw(float_expr(body_scope, 2))
    m = scope.fn.fresh("v")
    fn = draw(st.sampled_from(["max", "min"]))
    body.append(f"{m} = {fn}({m}, {e.text})" if draw(st.booleans()) else
                f"{m} = {fn}({e.text}, {m})")
    define_float(scope, m, max(first.bound, e.bound))
    return [f"{m} = {first.text}", f"for {name} in {text}:"] + indent(body)


@st.composite
def reduction_nest(draw, scope: Scope) -> list[str]:
    """A loop around a reduction loop, the shape ``transforms/jam.py`` runs four
    iterations at a time: per outer iteration a float starts from an expression, an inner
    loop over a range fixed before the outer loop updates it from loads and arithmetic, and
    the body ends with a sum over the outer loop of a function of it (before that, maybe a
    random statement, which may store into an array the inner loop reads)."""
    text, lo, hi, hints, trips = draw(range_header(scope))
    itext, ilo, ihi, ihints, itrips = draw(range_header(scope))  # not from the outer index
    name = scope.free_loop_name()
    body_scope = enter_loop(scope, Loop(allow_continue=False))
    loop_var(body_scope, name, lo, hi, hints)
    init = draw(float_expr(body_scope, 1, 1.0))
    iname = body_scope.free_loop_name()
    inner_scope = enter_loop(body_scope, Loop(allow_continue=False))
    loop_var(inner_scope, iname, ilo, ihi, ihints)
    c = draw(st.sampled_from([0.5, 0.25]))
    gated = draw(st.booleans())
    if gated and float_arrays(inner_scope):
        a = inner_scope.arrays[draw(st.sampled_from(float_arrays(inner_scope)))]
        e = FExpr(draw(array_element(inner_scope, a)), ARRAY_BOUND)
    else:
        e = draw(float_expr(inner_scope, 0 if gated else 2, 1.0))
    z = scope.fn.fresh("v")
    op = draw(st.sampled_from(["+=", "-="]))
    update = f"{z} {op} {ffmt(c)} * {e.text}" if draw(st.integers(0, 3)) else \
        f"{z} = {z} * 0.5 + {ffmt(c)} * {e.text}"
    define_float(body_scope, z, init.bound + c * e.bound * itrips)
    after = draw(block(body_scope, 0, 1)) if draw(st.integers(0, 2)) == 0 else []
    s = scope.fn.fresh("v")
    k = draw(st.sampled_from([0.5, 0.25]))
    term = draw(st.sampled_from([z, f"math.tanh({z})", f"math.tanh({z}) * math.tanh({z})"]))
    add = f"{s} += {ffmt(k)} * {term}"
    if gated:
        # a relu gate: zero for about half the iterations (transforms/skip_zero.py skips the
        # adjoint loop of the update behind it, and the tangent of a plain update)
        g = draw(float_expr(body_scope, 1, 1.0))
        add = f"{s} += max({g.text}, 0.0) * {z}"
    body = [f"{z} = {init.text}", f"for {iname} in {itext}:", "    " + update, *after, add]
    define_float(scope, s, k * max(1.0, init.bound + c * e.bound * itrips) * trips)
    return [f"{s} = 0.0", f"for {name} in {text}:"] + indent(body)


@st.composite
def while_loop(draw, scope: Scope, body_fn: BodyFn | None = None) -> list[str]:
    """A ``while`` bounded by an integer counter, maybe with a data-dependent condition."""
    k = scope.fn.fresh("k")
    axes = [(a, kk) for a in scope.arrays.values() for kk in range(a.ndim)]
    if axes and draw(st.booleans()):
        a, ax = draw(st.sampled_from(sorted(axes, key=lambda p: (p[0].name, p[1]))))
        bound = IExpr(a.extent_text(ax, draw), a.extents[ax].lo, a.extents[ax].hi)
        sym: str | None = a.extents[ax].sym
    else:
        bound, sym = draw(small_int(scope, 0, 5)), None
    form = pick(draw, [("inc_first", 3), ("inc_last", 2), ("true", 1), ("down", 1),
                       ("dowhile", 2)])
    guard = ""
    if form != "dowhile" and draw(st.integers(0, 2)) == 0:
        guard = f" and {draw(condition(scope, 0))}"
    trips = max(bound.hi, 1)
    lines = [f"{k} = {bound.text}" if form == "down" else f"{k} = 0"]
    body_scope = enter_loop(scope, Loop(allow_continue=form not in ("inc_last", "dowhile")))
    head: list[str]
    tail: list[str] = []
    if form == "inc_first":
        lines.append(f"while {k} < {bound.text}{guard}:")
        head = [f"{k} += 1"]
        lo, hi, hint = 1, bound.hi, (Hint(sym, 1, 0),) if sym else ()
    elif form == "inc_last":
        lines.append(f"while {k} < {bound.text}{guard}:")
        head, tail = [], [f"{k} += 1"]
        lo, hi, hint = 0, bound.hi - 1, (Hint(sym, 0, -1),) if sym else ()
    elif form == "true":
        lines.append("while True:")
        head = [f"if {k} >= {bound.text}:", "    break", f"{k} += 1"]
        lo, hi, hint = 1, bound.hi, (Hint(sym, 1, 0),) if sym else ()
    elif form == "dowhile":  # tested at the end of the body: at least one trip
        lines.append("while True:")
        head, tail = [], [f"{k} += 1", f"if {k} >= {bound.text}:", "    break"]
        # extents are at least 1, so k < len(x) on every trip
        lo, hi, hint = 0, max(bound.hi - 1, 0), (Hint(sym, 0, -1),) if sym else ()
    else:
        lines.append(f"while {k} > 0{guard}:")
        head = [f"{k} -= 1"]
        lo, hi, hint = 0, bound.hi - 1, (Hint(sym, 0, -1),) if sym else ()
    body_scope.ints[k] = IntVar(k, lo, max(lo, hi), body_scope.level, mutable=False, hints=hint)
    body = head + draw(body_fn(body_scope) if body_fn else block(body_scope, 1, 3))
    if body_fn is None and draw(st.integers(0, 2)) == 0:
        body += [f"if {draw(condition(body_scope, 0))}:", "    break"]
    acc = None
    if form != "inc_last":
        acc = draw(accumulate(scope, body_scope, body, trips))
    body += tail
    if acc is not None:
        lines.insert(0, f"{acc.name} = 0.0")
        scope.floats[acc.name] = acc
        scope.touch(acc.name)
    scope.ints[k] = IntVar(k, min(0, lo), max(bound.hi, 1), scope.level, mutable=False)
    return lines + indent(body)


def can_return_loop(scope: Scope) -> bool:
    """Whether a :func:`return_loop` may end the block of ``scope``: a loop is allowed there
    and a ``return`` too (not in a prange)."""
    return (scope.depth < scope.fn.max_depth and not scope.fn.straight
            and not any(loop.parallel for loop in scope.loops))


@st.composite
def return_loop(draw, scope: Scope) -> list[str]:
    """``while True:`` that only ``return`` leaves (no ``break`` of its own), so it never falls
    through: it ends a block (the function body, or a branch of an ``if``) and nothing follows
    it.  A counter stops it: ``k += 1; if k >= N: return e`` right after the loop head (or the
    test first, then the increment), or ``...; k += 1; if k >= N: return e`` at the end of the
    body (then nothing may ``continue``); now and then a data-dependent ``return`` comes
    earlier.  Breaks inside inner loops leave only those loops."""
    fn = scope.fn
    k = fn.fresh("k")
    axes = [(a, kk) for a in scope.arrays.values() for kk in range(a.ndim)]
    if axes and draw(st.integers(0, 2)) == 0:
        a, ax = draw(st.sampled_from(sorted(axes, key=lambda p: (p[0].name, p[1]))))
        bound = IExpr(a.extent_text(ax, draw), a.extents[ax].lo, a.extents[ax].hi)
        sym: str | None = a.extents[ax].sym
    else:
        bound, sym = draw(small_int(scope, 0, 5)), None
    form = pick(draw, [("inc_test", 2), ("test_inc", 1), ("tail", 2)])
    body_scope = enter_loop(scope, Loop(allow_continue=form != "tail", allow_break=False))
    final = scope.top   # its returns are the function's last: they add the linear sums
    lines = [f"{k} = 0", "while True:"]
    body: list[str] = []

    def at_test(lo: int) -> Scope:
        """The scope of the return under ``if k >= N:``, where k is N (or lo, if N < lo)."""
        s = body_scope.child()
        s.ints[k] = IntVar(k, lo, max(lo, bound.hi), s.level, mutable=False,
                           hints=(Hint(sym, lo, 0),) if sym else ())
        return s

    if form == "inc_test":   # k in [1, N - 1] after the test
        body_scope.ints[k] = IntVar(k, 1, max(1, bound.hi - 1), body_scope.level,
                                    mutable=False, hints=(Hint(sym, 1, -1),) if sym else ())
        body += [f"{k} += 1", f"if {k} >= {bound.text}:"]
        body += indent(draw(return_statement(at_test(1), final)))
    elif form == "test_inc":  # k in [1, N]
        body_scope.ints[k] = IntVar(k, 1, max(1, bound.hi), body_scope.level, mutable=False,
                                    hints=(Hint(sym, 1, 0),) if sym else ())
        body += [f"if {k} >= {bound.text}:"]
        body += indent(draw(return_statement(at_test(0), final)))
        body += [f"{k} += 1"]
    else:                     # k in [0, max(N - 1, 0)]: at least one trip
        body_scope.ints[k] = IntVar(k, 0, max(0, bound.hi - 1), body_scope.level,
                                    mutable=False, hints=(Hint(sym, 0, -1),) if sym else ())
    body += draw(block(body_scope, 1, 3))
    if draw(st.integers(0, 2)) == 0:   # a data-dependent early return
        body += [f"if {draw(condition(body_scope, 1))}:"]
        body += indent(draw(return_statement(body_scope.child(), final)))
        body += draw(simple_block(body_scope, 0, 1))
    if form == "tail":
        body += [f"{k} += 1", f"if {k} >= {bound.text}:"]
        body += indent(draw(return_statement(at_test(1), final)))
    elif draw(st.booleans()):  # and a return after the loop's work, on the last trips
        body += [f"if {k} >= {bound.text} - 1:" if draw(st.booleans()) else
                 f"if {draw(condition(body_scope, 0))}:"]
        body += indent(draw(return_statement(body_scope.child(), final)))
    return lines + indent(body)


# --------------------------------------------------------------------------- data-dependent loops

#: tolerances of convergence loops (``while k < N and abs(v) > tol``)
CONVERGE_TOLERANCES = (0.1, 0.05, 0.2, 0.01, 1e-3, 1e-6)


@st.composite
def simple_block(draw, scope: Scope, min_size: int, max_size: int) -> list[str]:
    """Like :func:`block`, but without compound statements (keeps nested constructs small)."""
    saved = scope.depth
    scope.depth = max(saved, scope.fn.max_depth)
    try:
        return draw(block(scope, min_size, max_size))
    finally:
        scope.depth = saved


@st.composite
def of_var(draw, scope: Scope, v: str, cap: float) -> FExpr:
    """An expression of the iterate ``v`` (and other values), magnitude within ``cap``, and
    Lipschitz in ``v`` with constant 1 at most, so ``0.5 * v + 0.5 * h(v)`` contracts (the
    derivatives stay of order one however many trips the loop makes)."""
    form = pick(draw, [("tanh", 2), ("sin", 2), ("cos", 1), ("rational", 1), ("gauss", 1)])
    if form == "cos":
        e = FExpr(f"{spell(draw, 'cos')}({v})", 1.0)
    elif form == "tanh":
        e2 = draw(float_expr(scope, 1))
        e = FExpr(f"{spell(draw, 'tanh')}({v} - {e2.text})", 1.0)
    elif form == "sin":
        e2 = draw(float_expr(scope, 1, 1.0))
        e = FExpr(f"{e2.text} * {spell(draw, 'sin')}({v})", e2.bound)
    elif form == "rational":
        e = FExpr(f"{v} / (1.0 + {v} * {v})", 0.5)
    else:
        e = FExpr(f"math.exp(-{v} * {v})", 1.0)
    return fit(draw, e, cap)


@st.composite
def converge_loop(draw, scope: Scope, body_fn: BodyFn | None = None) -> list[str]:
    """A loop whose trip count depends on float data: iterate until a float is small or stops
    changing, with an integer counter as the backstop (``while k < N and abs(v) > tol:`` or
    ``while True: ... if abs(v) <= tol or k >= N: break``), maybe with a data-dependent
    ``break`` as well.  The iterate keeps its bound (``v = 0.5 * v + c * e`` with ``|c * e|
    <= 0.5``, ``v *= 0.9 * tanh(e)``, a fixed-point step ``v = 0.5 * v + 0.5 * h(v)`` tested
    by ``abs(v - w) > tol``, or Heron's ``v = 0.5 * (v + a / v)`` with ``a >= 0.5``)."""
    fn = scope.fn
    k, v = fn.fresh("k"), fn.fresh("v")
    form = pick(draw, [("halve", 3), ("shrink", 2), ("fixed", 2), ("heron", 2)])
    if draw(st.integers(0, 3)) == 0:
        n = draw(small_int(scope, 1, 6))
        n_text, n_hi = n.text, n.hi
    else:
        c = draw(st.sampled_from([6, 8, 4, 10]))
        n_text, n_hi = str(c), c
    tol = draw(st.sampled_from(CONVERGE_TOLERANCES))
    lines: list[str] = []
    w = a = ""
    if form == "heron":  # v -> sqrt(a); from v0 = a or 1, v stays in [min(a, sqrt(a)), max(a, 1)]
        a = fn.fresh("v")
        e = draw(float_expr(scope, 2, 2.5))
        if draw(st.booleans()):
            a_text, a_bound = f"abs({e.text}) + 0.5", e.bound + 0.5
        else:
            e = fit(draw, e, 1.5)
            a_text, a_bound = f"1.0 + {e.text} * {e.text}", 1.0 + e.bound * e.bound
        lines += [f"{a} = {a_text}", f"{v} = {draw(st.sampled_from([a, '1.0']))}"]
        # neither may change while the loop divides by v
        define_float(scope, a, a_bound).mutable = False
        define_float(scope, v, a_bound).mutable = False
        test = f"abs({v} * {v} - {a}) > {ffmt(tol)}"
        stop = f"abs({v} * {v} - {a}) <= {ffmt(tol)}"
    else:
        e = draw(float_expr(scope, 2))
        lines.append(f"{v} = {e.text}")
        define_float(scope, v, e.bound)
        if form == "fixed":
            w = fn.fresh("v")
            lines.append(f"{w} = {v} + 1.0")
            define_float(scope, w, scope.floats[v].bound + 1.0)
            test = f"abs({v} - {w}) > {ffmt(tol)}"
            stop = f"abs({v} - {w}) <= {ffmt(tol)}"
        else:
            test, stop = draw(st.sampled_from([
                (f"abs({v}) > {ffmt(tol)}", f"abs({v}) <= {ffmt(tol)}"),
                (f"abs({v}) > {ffmt(tol)}", f"abs({v}) <= {ffmt(tol)}"),
                (f"{v} > {ffmt(tol)}", f"{v} <= {ffmt(tol)}"),
                (f"{v} * {v} > {ffmt(tol)}", f"{v} * {v} <= {ffmt(tol)}")]))
    lines.append(f"{k} = 0")
    until = draw(st.integers(0, 3)) == 0   # while True: ... if <converged> or k >= N: break
    if until:
        lines.append("while True:")
    elif draw(st.integers(0, 3)) == 0:
        lines.append(f"while {test} and {k} < {n_text}:")
    else:
        lines.append(f"while {k} < {n_text} and {test}:")
    # the counter moves first, or (now and then) last, and then nothing may continue; a
    # while True may test at the end of its body (do-while), and then nothing may continue
    # either (it would skip the test)
    inc_last = not until and draw(st.integers(0, 2)) == 0
    test_last = until and draw(st.booleans())
    body_scope = enter_loop(scope, Loop(allow_continue=not inc_last and not test_last))
    lo = 0 if inc_last else 1   # k is in [0, N - 1] (incremented last) or [1, N]
    body_scope.ints[k] = IntVar(k, lo, max(lo, n_hi - 1 + lo), body_scope.level, mutable=False)
    body = [] if inc_last else [f"{k} += 1"]
    if form == "heron":
        body.append(f"{v} = 0.5 * ({v} + {a} / {v})")
    elif form == "fixed":
        h = draw(of_var(body_scope, v, scope.floats[v].bound))
        body += [f"{w} = {v}", f"{v} = 0.5 * {v} + 0.5 * {h.text}"]
    elif form == "halve":
        c = draw(st.sampled_from([0.1, 0.25, 0.5]))
        if draw(st.booleans()):
            h = draw(of_var(body_scope, v, 1.0))
        else:
            h = draw(float_expr(body_scope, 2, 1.0))
        body.append(f"{v} = 0.5 * {v} + {ffmt(c)} * {h.text}")
    else:
        h = draw(float_expr(body_scope, 1))
        body.append(draw(st.sampled_from([
            f"{v} *= 0.9 * {spell(draw, 'tanh')}({h.text})",
            f"{v} *= 0.5 + 0.4 * {spell(draw, 'cos')}({h.text})",
            f"{v} = {v} * 0.8 * math.erf({h.text})"])))
    body_scope.touch(v)
    if until and not test_last:
        body += [f"if {stop} or {k} >= {n_text}:", "    break"]
    body += draw(body_fn(body_scope) if body_fn else block(body_scope, 0, 2))
    if body_fn is None and draw(st.booleans()):  # a data-dependent break
        if draw(st.booleans()):
            cond = f"{v} < {ffmt(draw(st.sampled_from([0.3, 0.5, -0.2, 0.05])))}"
        else:
            cond = draw(condition(body_scope, 0))
        body += [f"if {cond}:", "    break"]
    acc = draw(accumulate(scope, body_scope, body, n_hi))
    if inc_last:
        body.append(f"{k} += 1")
    if test_last:
        body += [f"if {stop} or {k} >= {n_text}:", "    break"]
    if acc is not None:
        lines.insert(0, f"{acc.name} = 0.0")
        scope.floats[acc.name] = acc
        scope.touch(acc.name)
    scope.ints[k] = IntVar(k, 0, max(0, n_hi), scope.level, mutable=False)
    scope.touch(v)
    return lines + indent(body)


@st.composite
def any_loop(draw, scope: Scope, body_fn: BodyFn, converge: bool = True) -> list[str]:
    kind = pick(draw, [("for", 3), ("while", 2), ("converge", 1 if converge else 0)])
    strategy = {"for": for_loop, "while": while_loop, "converge": converge_loop}[kind]
    return draw(strategy(scope, body_fn))


@st.composite
def jump_body(draw, scope: Scope, inner: bool) -> list[str]:
    """A loop body with a conditional ``break`` / ``continue`` (now and then ``return``);
    with ``inner``, an inner loop with its own jump comes first and the jump follows it."""
    lines = draw(simple_block(scope, 0, 1))
    if inner:
        lines += draw(any_loop(scope, lambda s: jump_body(s, False)))
    if not inner or draw(st.integers(0, 3)) > 0:
        lines += [f"if {draw(condition(scope, 1))}:"] + indent(draw(jump(scope.child(), returns=1)))
    lines += draw(simple_block(scope, 0, 1))
    return lines


@st.composite
def nested_loops(draw, scope: Scope) -> list[str]:
    """A loop in a loop (``for`` / ``while`` / convergence loops), ``break`` or ``continue``
    in the inner one and in the outer one after the inner loop."""
    return draw(any_loop(scope, lambda s: jump_body(s, True)))


# --------------------------------------------------------------------------- in-place overwrites

def float_writable(scope: Scope) -> list[str]:
    return sorted(a.name for a in scope.arrays.values() if a.writable and a.elem == "f64")


def sweepable(scope: Scope) -> list[str]:
    """Writable float arrays with an axis a sweep may run along (not one a prange pins)."""
    return [n for n in float_writable(scope)
            if not scope.arrays[n].pinned or None in scope.arrays[n].pinned]


@st.composite
def overwrite(draw, scope: Scope, t: str) -> str:
    """``t = G(t)``: the element ``t`` replaced by a function of its old value (the derivative
    needs the old value); the result stays within ``ARRAY_BOUND``."""
    form = pick(draw, [("scale", 2), ("func", 2), ("square", 1), ("relax", 2), ("div", 1)])
    if form == "scale":
        e = draw(float_expr(scope, 1, 1.0))
        return f"{t} = {t} * {e.text}" if draw(st.booleans()) else f"{t} = {e.text} * {t}"
    if form == "func":
        f = spell(draw, draw(st.sampled_from(["sin", "tanh", "cos"])))
        e = draw(float_expr(scope, 1, 1.0))
        return f"{t} = {f}({t}) + {e.text}"
    if form == "square":
        e = draw(float_expr(scope, 1, 1.0))
        return f"{t} = 0.25 * {t} * {t} - {e.text}"
    if form == "relax":
        e = draw(float_expr(scope, 2, ARRAY_BOUND))
        return f"{t} = 0.5 * {t} + 0.5 * {e.text}"
    e = draw(float_expr(scope, 1))
    return f"{t} = {t} / (1.0 + {e.text} * {e.text})"


@st.composite
def inplace_update(draw, scope: Scope) -> list[str]:
    """Overwrite an array element with a function of its old value: once, twice, or read
    before and read again after (``v = x[i] * e; x[i] = sin(x[i]) + ..; w = x[i] * v``)."""
    a = scope.arrays[draw(st.sampled_from(float_writable(scope)))]
    t = draw(array_element(scope, a))
    form = pick(draw, [("once", 2), ("rwr", 2), ("twice", 2)])
    if form == "once":
        return [draw(overwrite(scope, t))]
    lines: list[str] = []
    if form == "rwr":
        v = scope.fn.fresh("v")
        e = draw(float_expr(scope, 1, 2.0))
        text, bound = draw(st.sampled_from([
            (f"{t} * {e.text}", ARRAY_BOUND * e.bound), (t, ARRAY_BOUND),
            (f"{spell(draw, 'sin')}({t}) + {e.text}", 1.0 + e.bound)]))
        lines.append(f"{v} = {text}")
        define_float(scope, v, bound)
    lines.append(draw(overwrite(scope, t)))
    if form == "twice":
        lines.append(draw(overwrite(scope, t)))
    w = scope.fn.fresh("v")
    if form == "rwr" or draw(st.booleans()):  # read it again
        e = fit(draw, draw(float_expr(scope, 1)), 2.0)
        lines.append(f"{w} = {t} * {e.text}")
        define_float(scope, w, ARRAY_BOUND * e.bound)
    return lines


@st.composite
def inplace_sweep(draw, scope: Scope) -> list[str]:
    """A loop along one axis of an array overwriting each element in place from its old value
    and the element overwritten just before (``x[i] = 0.5 * x[i] + 0.5 * x[i - 1]``), maybe
    twice per iteration, maybe swept twice (``for r in range(2):``)."""
    a = scope.arrays[draw(st.sampled_from(sweepable(scope)))]
    ax = draw(st.sampled_from([k for k in range(a.ndim) if not a.pinned or a.pinned[k] is None]))
    ext = a.extents[ax]
    n = a.extent_text(ax, draw)
    outer = scope
    repeat = draw(st.integers(0, 3)) == 0
    r = ""
    if repeat:
        r = scope.free_loop_name()
        outer = enter_loop(scope, Loop(True))
        loop_var(outer, r, 0, 1, ())
    i = outer.free_loop_name()
    body = enter_loop(outer, Loop(True))
    direction = pick(draw, [("forward", 2), ("backward", 1), ("plain", 2)])
    if direction == "forward":
        text, lo, hi, nb = f"range(1, {n})", 1, -1, f"{i} - 1"
    elif direction == "backward":
        text, lo, hi, nb = f"range({n} - 2, -1, -1)", 0, -2, f"{i} + 1"
    else:
        text, lo, hi, nb = f"range({n})", 0, -1, ""
    loop_var(body, i, lo, ext.hi + hi, (Hint(ext.sym, lo, hi),))
    others = [draw(index(body, e, a, k)) if k != ax else "" for k, e in enumerate(a.extents)]

    def elem(j: str) -> str:
        return f"{a.name}[{', '.join(j if k == ax else o for k, o in enumerate(others))}]"

    t = elem(i)
    lines: list[str] = []
    if nb and draw(st.integers(0, 2)) > 0:  # a recurrence on the element just overwritten
        lines.append(draw(st.sampled_from([
            f"{t} = 0.5 * {t} + 0.5 * {elem(nb)}",
            f"{t} = {spell(draw, 'sin')}({elem(nb)}) + 0.5 * {t}",
            f"{t} = {t} * {spell(draw, 'tanh')}({elem(nb)})"])))
    else:
        lines.append(draw(overwrite(body, t)))
    lines += draw(simple_block(body, 0, 1))
    if draw(st.booleans()):
        lines.append(draw(overwrite(body, t)))
    acc = ""
    if draw(st.booleans()):  # read the new value again
        acc = scope.fn.fresh("v")
        lines.append(f"{acc} += 0.5 * {t}")
    lines = [f"for {i} in {text}:"] + indent(lines)
    if repeat:
        lines = [f"for {r} in range(2):"] + indent(lines)
    if acc:
        lines.insert(0, f"{acc} = 0.0")
        define_float(scope, acc, 0.5 * ARRAY_BOUND * max(ext.hi, 1) * (2 if repeat else 1))
    return lines


# --------------------------------------------------------------------------- parallel loops

def prange_body_scope(scope: Scope, out: ArrayVar | None, axis: int, at: str,
                      hidden: set[str]) -> Scope:
    """The scope of a prange body: no variable from before the loop may be assigned (the
    sums are added to by hand and are not visible, ``hidden``), and every array is read-only
    but ``out``, whose ``axis`` is pinned to the index ``at`` (computed from the loop
    variable), so each iteration reads and writes only its own slice of ``out``; the other
    arrays may be read anywhere (at ``i - 1`` and ``i + 1`` too: a stencil)."""
    body = enter_loop(scope, Loop(allow_continue=True, parallel=True))
    body.floats = {n: replace(v, mutable=False) for n, v in body.floats.items()
                   if n not in hidden}
    body.ints = {n: replace(v, mutable=False) for n, v in body.ints.items()}
    arrays: dict[str, ArrayVar] = {}
    for n, a in body.arrays.items():
        if out is not None and n == out.name:
            pinned = list(a.pinned or (None,) * a.ndim)
            pinned[axis] = at
            arrays[n] = replace(a, pinned=tuple(pinned))
        elif a.writable:
            arrays[n] = replace(a, writable=False)
        else:
            arrays[n] = a
    body.arrays = arrays
    return body


@st.composite
def stencil(draw, body: Scope, i: str) -> list[str]:
    """``w = 0.0; if 0 <= i - 1 < len(x): w += c * x[i - 1]; ...``: reads of an array the
    prange does not write at neighbouring indices, guarded by its bounds (in reverse mode
    iterations then add to the same adjoint elements)."""
    cands = [(a, k) for a in sorted(body.arrays.values(), key=lambda a: a.name)
             if a.elem == "f64" and not a.writable
             for k in range(a.ndim) if not a.pinned or a.pinned[k] is None]
    a, k = draw(st.sampled_from(cands))
    others = [draw(index(body, e, a, kk)) if kk != k else "" for kk, e in enumerate(a.extents)]
    w = body.fn.fresh("v")
    lines = [f"{w} = 0.0"]
    bound = 0.0
    for d in draw(st.lists(st.sampled_from([-1, 1, 0]), min_size=1, max_size=3, unique=True)):
        j = i if d == 0 else f"{i} {'+' if d > 0 else '-'} 1"
        n = a.extent_text(k, draw)
        guard = draw(st.sampled_from([f"0 <= {j} < {n}", f"{j} >= 0 and {j} < {n}"]))
        c = draw(st.sampled_from([0.5, 0.25, -0.25, 1.0]))
        elem = f"{a.name}[{', '.join(j if kk == k else o for kk, o in enumerate(others))}]"
        lines += [f"if {guard}:", f"    {w} += {ffmt(c)} * {elem}"]
        bound += abs(c) * ARRAY_BOUND
    define_float(body, w, bound)
    return lines


@st.composite
def add_to_sum(draw, scope: Scope, name: str, c: float, op: str, simple: bool = False
               ) -> list[str]:
    """``name += c * e`` (or ``-=``) with ``|e| <= 1``; with ``simple``, after a few simple
    statements (the body of an inner loop)."""
    lines = draw(simple_block(scope, 0, 1)) if simple else []
    return lines + [f"{name} {op} {ffmt(c)} * {draw(float_expr(scope, 2, 1.0)).text}"]


@st.composite
def prange_loop(draw, scope: Scope) -> list[str]:
    """``for i in prange(...)``, iterations independent: element-wise writes ``out[i] = ...``
    (``out`` read only at its own slice), stencil reads of other arrays, sums ``s += e`` (``s``
    defined before the loop, fresh or not, read nowhere in it; in an ``if`` or in an inner
    ``range`` loop too), an inner sequential loop summing into an iteration-local value, and
    random statements that assign only the iteration's own locals; ``continue`` but no
    ``break`` directly in it, no ``return`` in it, maybe a nested prange."""
    fn = scope.fn
    i = scope.free_loop_name()
    targets = [(a, k) for a in sorted(scope.arrays.values(), key=lambda a: a.name) if a.writable
               for k in range(a.ndim) if not a.pinned or a.pinned[k] is None]
    out: ArrayVar | None = None
    axis, at = 0, i
    if targets and draw(st.integers(0, 3)) > 0:
        out, axis = draw(st.sampled_from(targets))
        text, lo, hi, hints, trips = draw(axis_range(out, axis))
        h = hints[0]
        shifts = [d for d in (-1, 1) if h.lo + d >= 0 and h.hi + d <= -1]
        d = int(pick(draw, [("0", 4)] + [(str(d), 1) for d in shifts]))
        if d:
            at = f"{i} {'+' if d > 0 else '-'} 1"
    else:
        text, lo, hi, hints, trips = draw(range_header(scope))
    # the sums: fresh variables, or one defined before at this loop depth
    n_sums = int(pick(draw, [("0", 2 if out is not None else 0), ("1", 3), ("2", 1)]))
    sums: list[tuple[str, bool]] = []   # (name, fresh)
    for _ in range(n_sums):
        old = sorted(v.name for v in mutable_floats(scope) if v.level == scope.level
                     and v.name not in {n for n, _ in sums})
        if old and draw(st.integers(0, 3)) == 0:
            sums.append((draw(st.sampled_from(old)), False))
        else:
            sums.append((fn.fresh("v"), True))
    body = prange_body_scope(scope, out, axis, at, {n for n, _ in sums})
    loop_var(body, i, lo, hi, hints)
    lines: list[str] = []
    deeper = body.depth < fn.max_depth
    if any(not a.writable and a.elem == "f64" and (not a.pinned or None in a.pinned)
           for a in body.arrays.values()) and draw(st.integers(0, 2)) > 0:
        lines += draw(stencil(body, i))
    lines += draw(block(body, 0 if lines or out else 1, 2))
    if deeper and draw(st.integers(0, 3)) == 0:  # an inner loop, often summing into a local
        lines += draw(for_loop(body))
    if out is not None:
        lines += draw(array_write(body, [out.name]))
    bounds: dict[str, float] = {}
    for name, _ in sums:
        c = draw(st.sampled_from([0.5, 0.25, 1.0]))
        op = draw(st.sampled_from(["+=", "-="]))
        where = pick(draw, [("plain", 4), ("if", 2), ("loop", 1 if deeper else 0)])
        if where == "loop":
            lines += draw(for_loop(body, lambda s, name=name, c=c, op=op:
                                   add_to_sum(s, name, c, op, simple=True)))
            bounds[name] = c * trips * 10   # inner range loops make fewer than 10 trips
        elif where == "if":
            lines += [f"if {draw(condition(body, 1))}:"]
            lines += indent(draw(add_to_sum(body.child(), name, c, op)))
            bounds[name] = c * trips
        else:
            lines += draw(add_to_sum(body, name, c, op))
            bounds[name] = c * trips
    head: list[str] = []
    inits: dict[str, float] = {}
    for name, fresh in sums:
        if not fresh:
            continue
        e = draw(float_expr(scope, 1)) if draw(st.integers(0, 3)) == 0 else FExpr("0.0", 0.0)
        head.append(f"{name} = {e.text}")
        inits[name] = e.bound
    for name, fresh in sums:
        if fresh:
            define_float(scope, name, inits[name] + bounds[name])
        else:
            v = scope.floats[name]
            v.bound += bounds[name]
            scope.touch(name)
    return head + [f"for {i} in p{text}:"] + indent(lines or ["pass"])


# --------------------------------------------------------------------------- recursion in loops

def recursive_helpers(scope: Scope) -> list[Helper]:
    return [h for h in callable_helpers(scope, ("float", "none")) if h.recursive]


@st.composite
def recursion_in_loop(draw, scope: Scope) -> list[str]:
    """A loop of the caller that calls a recursive helper on every trip: ``s += c * g(...)``
    (the depth argument may be the loop variable), or ``g(..., z)`` writing an array."""
    h = draw(st.sampled_from(recursive_helpers(scope)))
    acc = scope.fn.fresh("v") if h.returns == "float" else ""

    @st.composite
    def body(draw2, s: Scope) -> list[str]:
        lines = draw2(simple_block(s, 0, 1))
        call = draw2(helper_call(s, h))
        if acc:
            lines.append(f"{acc} += 0.25 * {fit(draw2, call, 1.0).text}")
        else:
            lines.append(call.text)
        return lines + draw2(simple_block(s, 0, 1))

    lines = draw(any_loop(scope, body, converge=False))
    if acc:
        lines.insert(0, f"{acc} = 0.0")
        define_float(scope, acc, 0.25 * 10)  # trip counts of for / while loops stay below 10
    return lines


@st.composite
def call_sum(draw, scope: Scope) -> list[str]:
    """A sum over a ``for`` loop of calls of a float helper, ``s += c * g(...)``, maybe
    after a simple statement: where the sum reaches the return linearly and nothing writes
    an array with an adjoint, the adjoint calls ``g_b`` in its forward sweep
    (``ad/joint.py``)."""
    h = draw(st.sampled_from(callable_helpers(scope, ("float",))))
    acc = scope.fn.fresh("v")
    c = draw(st.sampled_from([0.25, 0.5]))

    @st.composite
    def body(draw2, s: Scope) -> list[str]:
        lines = draw2(simple_block(s, 0, 1))
        call = draw2(helper_call(s, h))
        return lines + [f"{acc} += {ffmt(c)} * {fit(draw2, call, 1.0).text}"]

    lines = [f"{acc} = 0.0"] + draw(for_loop(scope, body))
    if scope.top and draw(st.booleans()):
        scope.fn.linear.append((acc, c * 10))  # read by the final return alone
    else:
        define_float(scope, acc, c * 10)  # trip counts of for loops stay below 10
    return lines


# --------------------------------------------------------------------------- nested derivatives

def jvp_targets(scope: Scope) -> list[Helper]:
    """Helpers whose ``jvp`` may be taken here (their arrays are at hand)."""
    return [h for h in scope.fn.nested
            if (not any(k == "array" for _, k in h.params) or helper_arrays(scope, h))
            and not scope.fn.straight]


def grad_arrays(scope: Scope, h: Helper) -> list[str]:
    """The arrays that may be passed to ``grad(h)``: where ``h``'s adjoint may keep a tape,
    ``grad(h)`` gets a custom adjoint (a Hessian-vector product of ``h``) that reads the
    array again in the reverse sweep, so only a frozen one (see :attr:`ArrayVar.frozen`)."""
    return [n for n in helper_arrays(scope, h) if h.straight or scope.arrays[n].frozen]


def grad_targets(scope: Scope) -> list[Helper]:
    """Helpers whose ``grad`` may be taken here; where vector reverse mode is checked
    (``Function.straight_grads``), only straight ones, whose adjoints keep no tape."""
    return [h for h in jvp_targets(scope)
            if (not any(k == "array" for _, k in h.params) or grad_arrays(scope, h))
            and (h.straight or not scope.fn.straight_grads)]


@st.composite
def derivative_args(draw, scope: Scope, h: Helper, grad: bool) -> list[str]:
    """Arguments of ``h`` in the ranges it assumes, as :func:`helper_call` draws them (with
    ``grad``, arrays from :func:`grad_arrays`)."""
    args = []
    for _, kind in h.params:
        if kind == "float":
            args.append(draw(float_expr(scope, 1, PARAM_BOUND)).text)
        elif kind == "int":
            args.append(draw(small_int(scope, *INT_PARAM)).text)
        else:
            arrays = grad_arrays(scope, h) if grad else helper_arrays(scope, h)
            args.append(draw(st.sampled_from(arrays)))
    return args


@st.composite
def squash(draw, text: str) -> FExpr:
    """A derivative (of no known bound) squashed into a bounded, smooth value."""
    form = pick(draw, [("tanh", 3), ("atan", 2), ("erf", 1), ("rational", 1)])
    if form == "tanh":
        f = spell(draw, "tanh")
        return FExpr(draw(st.sampled_from([f"{f}({text})", f"{f}(0.5 * {text})"])), 1.0)
    if form == "atan":
        return FExpr(f"(0.5 * {spell(draw, 'atan')}({text}))", 0.8)
    if form == "erf":
        return FExpr(f"math.erf(0.25 * {text})", 1.0)
    return FExpr(f"({text} / (1.0 + {text} * {text}))", 0.5)


def float_indices(h: Helper) -> list[int]:
    return [i for i, (_, k) in enumerate(h.params) if k == "float"]


@st.composite
def grad_expr(draw, scope: Scope) -> FExpr:
    """``grad(g)(...)`` / ``grad(g, argnums=i)(...)`` (one partial derivative), squashed."""
    h = draw(st.sampled_from(grad_targets(scope)))
    i = draw(st.sampled_from(float_indices(h)))
    if i == 0 and draw(st.booleans()):
        spelled = f"grad({h.name})"  # argnums=0 by default
    else:
        spelled = f"grad({h.name}, argnums={i})"
    args = draw(derivative_args(scope, h, True))
    scope.fn.nested_uses += 1
    return draw(squash(f"{spelled}({', '.join(args)})"))


@st.composite
def nested_derivative(draw, scope: Scope) -> list[str]:
    """A nested derivative assigned to fresh names: ``v = squash(grad(g)(...))``, ``u, w =
    grad(g, argnums=(1, 0))(...)`` (also ``(u,) = ...``) or ``y, yd = jvp(g, (...), (...))``
    (a float tangent for each float parameter, ``None`` for the others); derivatives, whose
    bound is unknown, are squashed before anything else reads them."""
    fn = scope.fn
    form = pick(draw, [("grad", 1 if grad_targets(scope) else 0),
                       ("grad_tuple", 2 if grad_targets(scope) else 0), ("jvp", 3)])
    fn.nested_uses += 1
    if form == "grad":
        e = draw(grad_expr(scope))
        v = fn.fresh("v")
        define_float(scope, v, e.bound)
        return [f"{v} = {e.text}"]
    if form == "grad_tuple":
        h = draw(st.sampled_from(grad_targets(scope)))
        idx = float_indices(h)
        k = draw(st.integers(1, len(idx)))
        wrt = draw(st.permutations(idx))[:k]
        names = [fn.fresh("v") for _ in wrt]
        args = draw(derivative_args(scope, h, True))
        argnums = f"({wrt[0]},)" if k == 1 else f"({', '.join(map(str, wrt))})"
        target = f"({names[0]},)" if k == 1 else ", ".join(names)
        lines = [f"{target} = grad({h.name}, argnums={argnums})({', '.join(args)})"]
        for n in names:
            e = draw(squash(n))
            lines.append(f"{n} = {e.text}")
            define_float(scope, n, e.bound)
        return lines
    h = draw(st.sampled_from(jvp_targets(scope)))
    args = draw(derivative_args(scope, h, False))
    tangents = []
    for _, kind in h.params:
        if kind != "float":
            tangents.append("None")
        elif draw(st.booleans()):
            tangents.append(draw(st.sampled_from(["1.0", "0.0", "0.5", "(-1.0)"])))
        else:
            tangents.append(draw(float_expr(scope, 1, 1.0)).text)

    def tup(items: list[str]) -> str:
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"

    y, yd = fn.fresh("v"), fn.fresh("v")
    lines = [f"{y}, {yd} = jvp({h.name}, {tup(args)}, {tup(tangents)})"]
    e = draw(squash(yd))
    lines.append(f"{yd} = {e.text}")
    define_float(scope, y, h.bound)
    define_float(scope, yd, e.bound)
    return lines


def last_float(scope: Scope) -> FExpr:
    """The float assigned last (what a nested derivative just defined)."""
    v = scope.recent_floats(1)[0]
    return FExpr(v.name, v.bound)


@st.composite
def placed_derivative(draw, scope: Scope) -> list[str]:
    """A nested derivative, plainly, in a branch or in a loop (summed over its trips)."""
    where = pick(draw, [("plain", 2), ("if", 1), ("loop", 2)])
    if where == "plain" or scope.fn.straight:
        return draw(nested_derivative(scope))
    if where == "if":
        v = scope.fn.fresh("v")
        inner = scope.child()
        body = draw(nested_derivative(inner))
        e = fit(draw, last_float(inner), 2.0)
        lines = [f"{v} = 0.0", f"if {draw(condition(scope, 1))}:"]
        lines += indent(body + [f"{v} = {e.text}"])
        define_float(scope, v, e.bound)
        return lines
    acc = scope.fn.fresh("v")

    @st.composite
    def body(draw2, s: Scope) -> list[str]:
        lines = draw2(nested_derivative(s))
        e = fit(draw2, last_float(s), 1.0)
        return lines + [f"{acc} += 0.25 * {e.text}"]

    lines = draw(any_loop(scope, body))
    define_float(scope, acc, 0.25 * 10)  # trip counts of for / while loops stay below 10
    return [f"{acc} = 0.0"] + lines


@st.composite
def local_array(draw, scope: Scope) -> list[str]:
    """``t = zeros(n)`` / ``zeros((n, m))`` (top level only), usually filled by a loop."""
    name = scope.fn.fresh("t")
    exts: list[tuple[str, Extent]] = []
    ndim = int(pick(draw, [("1", 6), ("2", 2), ("3", 1)]))
    for _ in range(ndim):
        src = [(a, k) for a in scope.arrays.values() for k in range(a.ndim)]
        how = pick(draw, [("like", 3 if src else 0), ("param", 1 if scope.ints else 0), ("const", 1)])
        if how == "like":
            a, k = draw(st.sampled_from(sorted(src, key=lambda p: (p[0].name, p[1]))))
            exts.append((a.extent_text(k, draw), a.extents[k]))
        elif how == "param":
            params = [v for v in scope.ints.values() if not v.mutable and not v.hints and v.lo >= 0
                      and v.hi <= 5]
            if params:
                p = draw(st.sampled_from(sorted(params, key=lambda v: v.name)))
                text = f"{p.name} + 1"
                exts.append((text, Extent(text, p.lo + 1, p.hi + 1)))
                continue
            c = draw(st.integers(1, 5))
            exts.append((str(c), Extent(str(c), c, c)))
        else:
            c = draw(st.integers(1, 5))
            exts.append((str(c), Extent(str(c), c, c)))
    shape = exts[0][0] if len(exts) == 1 else f"({', '.join(text for text, _ in exts)})"
    arr = ArrayVar(name, tuple(e for _, e in exts), writable=True)
    scope.arrays[name] = arr
    lines = [f"{name} = zeros({shape})"]
    if draw(st.integers(0, 3)) > 0:  # fill it
        body_scope = enter_loop(scope, Loop(True))
        idx = []
        header = []
        for k, ext in enumerate(arr.extents):
            v = body_scope.free_loop_name()
            loop_var(body_scope, v, 0, ext.hi - 1, (Hint(ext.sym, 0, -1),))
            header.append(f"for {v} in range({arr.extent_text(k, draw)}):")
            idx.append(v)
            if k + 1 < arr.ndim:
                body_scope = enter_loop(body_scope, Loop(True))
        e = draw(float_expr(body_scope, 2, ARRAY_BOUND))
        fill = [f"{name}[{', '.join(idx)}] = {e.text}"]
        for k in reversed(range(len(header))):
            fill = [header[k]] + indent(fill)
        lines += fill
    return lines


@st.composite
def assert_statement(draw, scope: Scope) -> list[str]:
    floats = mutable_floats(scope)
    if floats and draw(st.booleans()):
        v = draw(st.sampled_from(sorted(floats, key=lambda v: v.name)))
        return [f"assert abs({v.name}) <= {ffmt(math.ceil(v.bound * 1.01 + 1e-9))}"]
    if scope.arrays:
        a = draw(st.sampled_from(sorted(scope.arrays)))
        return [f"assert len({a}) >= 1"]
    return ["assert True"]


@st.composite
def statement(draw, scope: Scope) -> list[str]:
    """One statement (possibly compound), chosen by what the scope allows."""
    fn = scope.fn
    deep = scope.depth < fn.max_depth
    writable = any(a.writable for a in scope.arrays.values())
    float_arrays_w = bool(float_writable(scope))
    sweep_ok = bool(sweepable(scope))
    options = [
        ("new_float", 6), ("update_float", 4 if mutable_floats(scope) else 0),
        ("new_int", 1), ("update_int", 1 if mutable_ints(scope) else 0),
        ("new_bool", 1), ("array_write", 2 if writable else 0),
        ("if", 3 if deep else 0), ("for", 2 if deep else 0), ("while", 1 if deep else 0),
        ("local_array", 2 if scope.top else 0),
        ("call", 2 if callable_helpers(scope, ("tuple", "tuple_fi", "none")) else 0),
        ("jump", 1 if deep else 0), ("assert", 1),
        ("tuple_assign", 1 if swappable(scope) else 0), ("chained_assign", 1),
        # constructs that stress reverse mode
        ("converge", 1 if deep else 0),
        ("nested", 1 if scope.depth + 2 <= fn.max_depth else 0),
        ("inplace", 2 if float_arrays_w else 0),
        ("sweep", 1 if deep and sweep_ok else 0),
        ("recursion_loop", 2 if deep and recursive_helpers(scope) else 0),
        ("call_sum", 2 if deep and callable_helpers(scope, ("float",)) else 0),
        ("prange", 2 if deep else 0),
        ("nested_derivative", 2 if jvp_targets(scope) else 0),
        ("extreme", 1 if deep else 0),
        ("reduction_nest", 1 if scope.depth + 2 <= fn.max_depth else 0),
    ]
    if fn.straight:  # no loops (their adjoints keep tapes), no local arrays (filled by loops)
        loops = ("for", "while", "local_array", "converge", "nested", "sweep", "recursion_loop",
                 "call_sum", "prange", "extreme", "reduction_nest")
        options = [(k, 0 if k in loops else w) for k, w in options]
    kind = pick(draw, options)
    if kind == "jump":  # a conditional jump: if c: break / continue / return
        return [f"if {draw(condition(scope, 1))}:"] + indent(draw(jump(scope.child())))
    strategy = {
        "new_float": new_float, "update_float": update_float, "new_int": new_int,
        "update_int": update_int, "new_bool": new_bool, "array_write": array_write,
        "if": if_statement, "for": for_loop, "while": while_loop, "local_array": local_array,
        "call": unpack_call, "assert": assert_statement, "tuple_assign": tuple_assign,
        "chained_assign": chained_assign, "converge": converge_loop, "nested": nested_loops,
        "inplace": inplace_update, "sweep": inplace_sweep, "recursion_loop": recursion_in_loop,
        "prange": prange_loop, "nested_derivative": nested_derivative, "extreme": extreme_loop,
        "reduction_nest": reduction_nest, "call_sum": call_sum,
    }[kind]
    return draw(strategy(scope))


@st.composite
def block(draw, scope: Scope, min_size: int, max_size: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(min_size, max_size))):
        lines += draw(statement(scope))
    return lines


# --------------------------------------------------------------------------- functions and modules

@dataclass
class Param:
    name: str
    kind: str                        #: "float" | "int" | "bool" | "array" | "iarray" (Array[i64])
    shape: tuple[int, ...] = ()      #: entry arrays: the extents passed
    writable: bool = False


@dataclass
class Program:
    """A generated module: its source, its entry function and arguments for every function."""

    source: str
    entry: str
    args: tuple[Any, ...]
    helper_args: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    #: check it compiled with -fopenmp (drawn for half the programs with a prange), so that
    #: its prange loops run in parallel
    openmp: bool = False
    #: the modes to check (``adgen.check``'s default, all of them, if None)
    modes: tuple[str, ...] | None = None
    nested: bool = False   #: drawn to take derivatives inside (``grad`` / ``jvp``)

    @property
    def all_args(self) -> dict[str, tuple[Any, ...]]:
        return {self.entry: self.args, **self.helper_args}

    def write(self, directory: str, name: str = "prog.py") -> str:
        path = os.path.join(directory, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.source)
        return path

    def __repr__(self) -> str:  # Hypothesis prints this for the falsifying example
        return (f"Program(entry={self.entry!r}, args={self.args!r}, openmp={self.openmp!r})\n"
                f"{self.source}")


def annotation(draw: Callable[[Any], Any], p: Param) -> str:
    if p.kind == "float":
        return draw(st.sampled_from(["float", "f64"]))
    if p.kind == "int":
        return draw(st.sampled_from(["int", "i64", "i32"]))
    if p.kind == "bool":
        return "bool"
    elem = "i64" if p.kind == "iarray" else "f64"
    return f"Array[{elem}]" if len(p.shape) == 1 else f"Array[{elem}, {len(p.shape)}]"


def return_annotation(returns: str) -> str:
    return {"float": "float", "tuple": "tuple[float, float]", "tuple_fi": "tuple[float, int]",
            "int": "int", "none": "None"}[returns]


@st.composite
def function(draw, name: str, params: list[Param], returns: str, helpers: list[Helper],
             constants: dict[str, float | int], max_depth: int, entry: bool, recursive: bool = False,
             module_names: set[str] = frozenset(), nested: list[Helper] | None = None,
             straight: bool = False, straight_grads: bool = False) -> tuple[list[str], Function]:
    """A function definition over ``params``; returns its lines and its state.  ``nested``:
    the helpers whose derivatives it takes (one at least, if it can); ``straight``: see
    :attr:`Function.straight`; ``straight_grads``: ``grad`` only of straight helpers."""
    floats = [p for p in params if p.kind == "float"]
    ro_arrays = [p for p in params if p.kind == "array" and not p.writable]
    if floats:
        anchor = floats[0].name
    else:
        a = ro_arrays[0]
        anchor = f"{a.name}[{', '.join(['0'] * len(a.shape))}]"
    fn = Function(name, returns, anchor, helpers, max_depth, constants=dict(constants),
                  nested=list(nested or []), straight=straight, straight_grads=straight_grads)
    if draw(st.integers(0, 3)) == 0:
        pool = [n for n in AWKWARD_NAMES if n not in module_names and n not in {p.name for p in params}]
        fn.aliases = list(draw(st.permutations(pool))[:draw(st.integers(1, 6))])
    scope = Scope(fn)
    for p in params:
        if p.kind == "float":
            # the anchor is never reassigned; other float parameters may be
            scope.floats[p.name] = FloatVar(p.name, 1.5 if entry else PARAM_BOUND, 0,
                                            mutable=p.name != anchor)
        elif p.kind == "int":
            scope.ints[p.name] = IntVar(p.name, *INT_PARAM, level=0, mutable=False)
        elif p.kind == "bool":
            scope.bools[p.name] = BoolVar(p.name, 0)
        else:
            if entry:
                exts = tuple(Extent(f"{p.name}.shape[{k}]", n, n) for k, n in enumerate(p.shape))
            else:
                exts = (Extent(f"{p.name}.shape[0]", *HELPER_EXTENT),)
            scope.arrays[p.name] = ArrayVar(p.name, exts, p.writable,
                                            "i64" if p.kind == "iarray" else "f64",
                                            frozen=entry and not p.writable)
    body: list[str] = []
    if draw(st.integers(0, 7)) == 0:
        body.append(f'"""{name}: generated by tests/programs.py."""')
    if recursive:  # if m <= 0: return ...;  ...;  g(..., m - 1)
        m = next(p.name for p in params if p.kind == "int")
        body += [f"if {m} <= 0:"] + indent(draw(return_statement(scope.child())))
    body += draw(block(scope, 1, 5 if entry else 3))
    if fn.nested and not fn.nested_uses and jvp_targets(scope):
        body += draw(placed_derivative(scope))
    if recursive:
        body += draw(recursive_call(scope, name, params, returns))
        body += draw(block(scope, 0, 2))
    if returns == "none":  # make sure something is written (it is the only output)
        body += draw(array_write(scope, [p.name for p in params if p.writable and p.kind == "array"]))
    if can_return_loop(scope) and draw(st.integers(0, 6)) == 0:
        body += draw(return_loop(scope))   # while True: ... left only by return
    elif returns != "none" or draw(st.booleans()):
        body += draw(return_statement(scope))
    sig = ", ".join(f"{p.name}: {annotation(draw, p)}" for p in params)
    lines = [f"def {name}({sig}) -> {return_annotation(returns)}:"] + indent(body)
    return lines, fn


@st.composite
def recursive_call(draw, scope: Scope, name: str, params: list[Param], returns: str) -> list[str]:
    """The self-call of a recursive helper, on ``m - 1`` (the base case stops it): a plain
    call, a call in one branch of an ``if``, or calls in a loop of ``2`` or ``m`` trips (at most
    ``4!`` calls in all, since ``m <= 4``)."""
    form = pick(draw, [("plain", 3), ("if", 1), ("loop", 1)])
    m = next(p.name for p in params if p.kind == "int")
    v = scope.fn.fresh("v") if returns != "none" else ""
    lines: list[str] = []
    inner = scope
    if form == "loop":
        trips = draw(st.sampled_from(["2", m]))
        i = scope.free_loop_name()
        inner = enter_loop(scope, Loop(True))
        loop_var(inner, i, 0, 3, ())
        if v:
            lines.append(f"{v} = 0.0")
        lines.append(f"for {i} in range({trips}):")
    elif form == "if":
        lines.append(f"if {draw(condition(scope, 1))}:")
        inner = scope.child()
    args = []
    for p in params:
        if p.kind == "float":
            args.append(draw(float_expr(inner, 1, PARAM_BOUND)).text)
        elif p.kind == "int":
            args.append(f"{p.name} - 1")
        else:
            args.append(p.name)
    call = f"{name}({', '.join(args)})"
    if not v:
        stmt = call
    elif form == "loop":
        stmt = f"{v} += 0.25 * math.tanh({call})"
    else:
        stmt = f"{v} = math.tanh({call})"
    lines += indent([stmt]) if form != "plain" else [stmt]
    if form == "if" and v:
        lines += ["else:"] + indent([f"{v} = {draw(float_expr(scope, 1, 1.0)).text}"])
    if v:
        define_float(scope, v, 1.0)
    return lines


@st.composite
def helper_function(draw, name: str, helpers: list[Helper], constants: dict[str, float | int],
                    module_names: set[str], nested: list[Helper] | None = None,
                    differentiable: bool = False, straight: bool = False,
                    straight_grads: bool = False) -> tuple[list[str], Helper, list[Param]]:
    """A helper; with ``differentiable``, one that ``grad`` and ``jvp`` may be taken of (a
    float result, up to three float parameters, arrays only read), ``straight`` (without
    loops) if asked; it takes derivatives of the helpers ``nested``."""
    taken = set(module_names)
    want_recursion = not straight and draw(st.integers(0, 3)) == 0   # often over an array
    params = [Param(maybe_awkward(draw, f"p{k}", AWKWARD_PARAMS, taken), "float")
              for k in range(draw(st.integers(1, 3 if differentiable else 2)))]
    if want_recursion or draw(st.booleans()):
        params.append(Param(maybe_awkward(draw, "m", AWKWARD_PARAMS, taken), "int"))
    writes = False
    if draw(st.integers(0, 2)) == 0 or (want_recursion and draw(st.booleans())):
        writes = not differentiable and draw(st.booleans())
        params.append(Param(maybe_awkward(draw, "z", AWKWARD_PARAMS, taken), "array",
                            (draw(st.integers(*ENTRY_EXTENT)),), writable=writes))
    if differentiable:
        returns = "float"
    elif want_recursion:
        returns = pick(draw, [("float", 3), ("none", 1 if writes else 0)])
    else:
        returns = pick(draw, [("float", 4), ("tuple", 2), ("tuple_fi", 1), ("int", 1),
                              ("none", 1 if writes else 0)])
    recursive = (not straight and any(p.kind == "int" for p in params)
                 and returns in ("float", "none")
                 and (want_recursion or draw(st.integers(0, 2)) == 0))
    lines, fn = draw(function(name, params, returns, helpers, constants, 2, entry=False,
                              recursive=recursive, module_names=module_names, nested=nested,
                              straight=straight, straight_grads=straight_grads))
    h = Helper(name, [(p.name, p.kind) for p in params], returns, fn.return_bound, writes,
               recursive, straight)
    return lines, h, params


def make_args(params: list[Param], rng: np.random.Generator, ints: list[int]) -> tuple[Any, ...]:
    out: list[Any] = []
    it = iter(ints)
    for p in params:
        if p.kind == "float":
            out.append(float(rng.uniform(0.5, 1.5)))
        elif p.kind == "int":
            out.append(next(it))
        elif p.kind == "bool":
            out.append(bool(rng.integers(0, 2)))
        elif p.kind == "iarray":
            out.append(rng.integers(INT_PARAM[0], INT_PARAM[1] + 1, p.shape).astype(np.int64))
        else:
            out.append(rng.uniform(0.5, 1.5, p.shape))
    return tuple(out)


@st.composite
def programs(draw, max_helpers: int = 2) -> Program:
    """A module with helpers ``g0, g1...`` and an entry ``f`` (now and then with awkward
    names instead), plus arguments for all."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # one program in five takes derivatives inside (grad / jvp of a helper); half of those
    # take grad only of straight helpers and are checked in every mode, the others take it
    # of any helper and are not checked in vector reverse mode (which refuses grad(g) of a g
    # whose adjoint keeps a tape)
    nested = draw(st.integers(0, 4)) == 0
    straight = nested and draw(st.booleans())
    constants: dict[str, float | int] = {}
    for k in range(draw(st.integers(0, 2))):
        constants[f"C{k}"] = draw(st.sampled_from([0.5, 0.75, 1.25, -0.5, 2.0]))
    if draw(st.integers(0, 3)) == 0:
        constants["K0"] = draw(st.sampled_from([2, 3, -1]))
    header = ["import math", "", "import numpy as np", "",
              "from adgen import Array, f64, grad, i32, i64, jvp, prange, zeros" if nested else
              "from adgen import Array, f64, i32, i64, prange, zeros", ""]
    header += [f"{k} = {v!r}" for k, v in constants.items()]
    chunks: list[list[str]] = []
    helpers: list[Helper] = []
    helper_args: dict[str, tuple[Any, ...]] = {}
    n_helpers = draw(st.integers(1 if nested else 0, max_helpers))
    names: set[str] = set(constants)
    fnames = [maybe_awkward(draw, f"g{k}", AWKWARD_FUNCTIONS, names) for k in range(n_helpers)]
    entry = maybe_awkward(draw, "f", AWKWARD_FUNCTIONS, names)
    for k in range(n_helpers):
        differentiable = nested and (k == 0 or draw(st.integers(0, 3)) > 0)
        targets = [h for h in helpers if h.differentiable] if nested else []
        lines, h, params = draw(helper_function(
            fnames[k], list(helpers), constants, names, targets, differentiable,
            straight=straight and differentiable and (k == 0 or draw(st.integers(0, 3)) > 0),
            straight_grads=straight))
        chunks.append(lines)
        helpers.append(h)
        ints = [draw(st.integers(*INT_PARAM)) for p in params if p.kind == "int"]
        helper_args[h.name] = make_args(params, rng, ints)
    # the entry's parameters
    taken = set(names)
    params: list[Param] = [Param(maybe_awkward(draw, n, AWKWARD_PARAMS, taken), "float")
                           for n in ("a", "b", "c")[:draw(st.integers(0, 3))]]
    n_arrays = draw(st.integers(0 if params else 1, 2))
    for k in range(n_arrays):
        ndim = int(pick(draw, [("1", 6), ("2", 2), ("3", 1)]))
        lo, hi = ENTRY_EXTENT
        shape = tuple(draw(st.integers(lo, hi if ndim < 3 else 3)) for _ in range(ndim))
        params.append(Param(maybe_awkward(draw, ("x", "y")[k], AWKWARD_PARAMS, taken), "array",
                            shape, writable=False))
    arrays = [p for p in params if p.kind == "array"]
    if arrays:
        # some arrays are written in place; keep one read-only if no float scalar anchors
        for p in arrays[(0 if any(q.kind == "float" for q in params) else 1):]:
            p.writable = draw(st.booleans())
    if draw(st.booleans()):
        params.insert(draw(st.integers(0, len(params))),
                      Param(maybe_awkward(draw, "n", AWKWARD_PARAMS, taken), "int"))
    if draw(st.integers(0, 5)) == 0:
        params.append(Param(maybe_awkward(draw, "s", AWKWARD_PARAMS, taken), "bool"))
    if draw(st.integers(0, 5)) == 0:  # an integer array (indices, counts)
        params.append(Param(maybe_awkward(draw, "ix", AWKWARD_PARAMS, taken), "iarray",
                            (draw(st.integers(*ENTRY_EXTENT)),), writable=draw(st.booleans())))
    writes = any(p.writable and p.kind == "array" for p in params)
    returns = pick(draw, [("float", 6), ("tuple", 1), ("none", 1 if writes else 0)])
    lines, _ = draw(function(entry, params, returns, helpers, constants, 3, entry=True,
                             module_names=names,
                             nested=[h for h in helpers if h.differentiable] if nested else [],
                             straight_grads=straight))
    chunks.append(lines)
    ints = [draw(st.integers(*INT_PARAM)) for p in params if p.kind == "int"]
    args = make_args(params, rng, ints)
    body: list[str] = []
    for c in chunks:
        body += ["", ""] + c
    source = "\n".join(header + body) + "\n"
    openmp = "prange(" in source and draw(st.booleans())
    modes = ("forward", "vector-forward", "reverse", "hvp") if nested and not straight else None
    return Program(source, entry, args, helper_args, openmp, modes, nested)
