"""Validation (DESIGN.md section 9): the generated code against independent references.

For each function, on random inputs:
- primal: the compiled function against CPython running the same module;
- forward: the tangent against central finite differences of the compiled primal;
- vector-forward: the vector tangent against scalar tangents, direction by direction;
- reverse: the adjoint against the tangent by the dot-product test: for random
  input tangents xd and output adjoints yb, <xd, xb> = <yd, yb> (xb from the
  adjoint, yd from the tangent), the difference relative to the magnitudes of
  the terms of the two sums (``dot_error``);
- vector-reverse: the vector adjoint against scalar adjoints, direction by direction;
- hvp: the Hessian-vector product against central differences of the adjoint's
  gradient (not for a function that computes in f32: too few digits to difference a
  gradient), and
  the symmetry of the Hessian, <u, H v> = <v, H u> for random u, v;
- vector-hvp: the vector Hessian-vector product against scalar ones, direction
  by direction.

Inputs are random: floats in [0.5, 1.5] (inside the domain of log, sqrt...),
arrays of extent 4 per axis, integers 3, booleans True.  Pass ``args`` to
check a function at inputs of your own.

A function that computes in f32 (every function of an f32 build; in an f64 build, one with
an f32 value or calling a function that has one, see ``single_precision``) is checked to
``TOLERANCE_F32``, the others to ``TOLERANCE``.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .api import (
    DEFAULT_CHECK_MODES, bind, check_bools, check_modes, check_target_options, flag_list,
    option_list, transpile,
)
from .binding import NP_DTYPES, AdgenFunction
from .build import PROGRESS, compiler_flags, nvcc_flags
from .transpile.analysis.activity import Request
from .transpile.ir.core import Module
from .transpile.ir.types import F32, ArrayType, ScalarType, Type, elem_of
from .transpile.ir.walk import calls_and_rules, reachable

ARRAY_EXTENT = 4
INT_VALUE = 3
FD_STEP = 1e-6
#: step of the differences of a gradient (Richardson: truncation ~h**4, rounding ~1e-16 / h)
HVP_STEP = 1e-4
#: at most this many tangent calls measure the terms of a tangent that cancel (tangent_terms)
TERM_GROUPS = 64
TOLERANCE = {"primal": 1e-13, "forward": 1e-6, "vector-forward": 1e-12, "reverse": 1e-12,
             "vector-reverse": 1e-12, "hvp": 1e-6, "hvp-symmetry": 1e-10, "vector-hvp": 1e-12}
TOLERANCE_F32 = {"primal": 1e-5, "forward": 1e-3, "vector-forward": 1e-5, "reverse": 1e-5,
                 "vector-reverse": 1e-5, "hvp": 1e-2, "hvp-symmetry": 1e-4, "vector-hvp": 1e-5}


@dataclass
class CheckRow:
    function: str
    check: str
    error: float
    tolerance: float
    note: str = ""

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.error)) and self.error <= self.tolerance


@dataclass
class CheckReport:
    path: str
    rows: list[CheckRow] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)

    def table(self) -> str:
        head = ("function", "check", "rel. error", "tolerance", "result")
        lines = [(r.function, r.check, f"{r.error:.2e}", f"{r.tolerance:.0e}",
                  ("ok" if r.ok else "FAIL") + (f" ({r.note})" if r.note else "")) for r in self.rows]
        widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths)
        out = [fmt.format(*head), fmt.format(*["-" * w for w in widths])]
        out += [fmt.format(*x) for x in lines]
        out.append(f"{sum(r.ok for r in self.rows)} passed, {sum(not r.ok for r in self.rows)} failed")
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()


def random_value(t: Type, rng: np.random.Generator) -> Any:
    if isinstance(t, ArrayType):
        shape = (ARRAY_EXTENT,) * t.ndim
        if t.elem.is_float:
            return rng.uniform(0.5, 1.5, shape).astype(NP_DTYPES[t.elem.name])
        return np.full(shape, INT_VALUE, dtype=NP_DTYPES[t.elem.name])
    assert isinstance(t, ScalarType)
    if t.is_float:
        return float(rng.uniform(0.5, 1.5))
    if t.is_int:
        return INT_VALUE
    return True


def copy_args(args: Sequence[Any]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def rel_error(a: Any, b: Any) -> float:
    """max |a - b| / max |b| over everything the function produced (0 where both agree)."""
    xa = np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in a]) if a else np.zeros(0)
    xb = np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in b]) if b else np.zeros(0)
    if xa.shape != xb.shape:
        return float("inf")
    if xa.size == 0:
        return 0.0
    same = (xa == xb) | (np.isnan(xa) & np.isnan(xb))
    if same.all():
        return 0.0
    scale = max(float(np.max(np.abs(xb[np.isfinite(xb)]), initial=0.0)), 1e-300)
    diff = np.abs(xa - xb)
    diff[same] = 0.0
    return float(np.max(diff) / scale)


def outputs(fn: AdgenFunction, args: Sequence[Any], result: Any, float_only: bool = False) -> list[Any]:
    """The return value(s) and the final contents of the arrays the function writes."""
    res = list(result) if fn._primal.fn.returns_tuple else ([] if result is None else [result])
    written = fn._primal.written
    arrays = [a for n, a in zip(fn.param_names, args, strict=True) if n in written]
    out = res + arrays
    if float_only:
        out = [o for o in out if np.issubdtype(np.asarray(o).dtype, np.floating)]
    return out


def single_precision(module: Module, name: str) -> bool:
    """Whether ``name``, a function it calls or a ``@custom_jvp``/``@custom_vjp`` derivative
    they use computes with an ``f32`` value (a parameter, a result, a local or a temporary,
    an array's elements): through ``--precision f32`` or an explicit ``f32`` annotation.  One
    such value is enough: a function mixing ``f32`` and ``f64`` loses single precision's
    digits where its values go through ``f32``."""
    reached = reachable(module, [name], calls_and_rules)
    for fn in module.functions:
        if fn.name not in reached:
            continue
        values = [*fn.params]
        for op in fn.walk():
            values += op.results
            values += [v for region in op.regions for v in region.args]
        if any(elem_of(t) == F32 for t in [*(r.type for r in fn.results),
                                            *(v.type for v in values)]):
            return True
    return False


def import_python(path: str) -> Any:
    name = f"_adgen_check_{abs(hash(path))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(name, None)
    return mod


class Checker:
    def __init__(self, path: str, fn: AdgenFunction, py: Any, args: list[Any], rng: np.random.Generator,
                 f32: bool, request: Request | None = None, own_values: bool = True) -> None:
        self.path = path
        self.fn = fn
        #: the independents and dependents asked for (--wrt, --of), if known
        self.request = request
        #: the independents (parameter indices; None: every float parameter): an array the
        #: function writes has a tangent even when it is not one, whose value on entry the
        #: derivatives take as zero (only its value on exit is differentiated)
        self.wrt = request.wrt if request is not None else None
        #: whether the derivative functions compute the value as the primal does (not through
        #: a @custom_jvp tangent or an @external C function): then it is compared
        self.own_values = own_values
        self.py = py
        self.args = args
        self.rng = rng
        #: whether the function computes in f32 (the f32 tolerances; differences through CPython)
        self.f32 = f32
        self.tol = TOLERANCE_F32 if f32 else TOLERANCE
        #: what CPython raised running the function at ``args``, if it did
        self.raised: Exception | None = None

    def primal(self) -> CheckRow:
        a1, a2 = copy_args(self.args), copy_args(self.args)
        # CPython computes with an np.float32 scalar in float32: give it the Python float
        a1 = [float(a) if isinstance(a, np.floating) else a for a in a1]
        try:
            expected = getattr(self.py, self.fn.name)(*a1)
        except Exception as exc:  # the user's module raised under CPython
            self.raised = exc
            return CheckRow(self.fn.name, "primal vs CPython", float("inf"), self.tol["primal"],
                            f"CPython raised {type(exc).__name__}: {exc}; pass inputs with args=")
        got = self.fn(*a2)
        with np.errstate(all="ignore"):  # a value that is not finite fails the row
            err = rel_error(outputs(self.fn, a2, got), outputs(self.fn, a1, expected))
        return CheckRow(self.fn.name, "primal vs CPython", err, self.tol["primal"])

    def not_run(self, check: str, tolerance: str) -> CheckRow:
        """The row of a check that is not run: CPython raised at the inputs, where the compiled
        code may fault (an integer division by zero) or read out of bounds."""
        assert self.raised is not None
        return CheckRow(self.fn.name, check, float("inf"), self.tol[tolerance],
                        f"not run: CPython raised {type(self.raised).__name__} at these inputs")

    def active(self) -> list[int]:
        call = self.fn._forward or self.fn._vector or self.fn._hvp
        assert call is not None
        fn = call.fn
        act = {fn.tangent_of[n] for n in fn.param_names if n in fn.tangent_of}
        return [i for i, n in enumerate(self.fn.param_names) if n in act]

    def direction(self, nbdirs: int | None = None) -> list[Any]:
        tangents: list[Any] = [None] * len(self.args)
        extra = () if nbdirs is None else (nbdirs,)
        for i in self.active():
            a = self.args[i]
            shape = (np.shape(a) if isinstance(a, np.ndarray) else ()) + extra
            # magnitudes in [0.5, 1]: a component near 0 would leave a derivative that
            # central differences resolve only to their rounding (~1e-10 of the values)
            d = self.rng.uniform(0.5, 1.0, shape) * self.rng.choice((-1.0, 1.0), shape)
            if self.wrt is not None and i not in self.wrt:
                d = np.zeros(shape)
            if isinstance(a, np.ndarray):
                d = d.astype(a.dtype)
            tangents[i] = float(d) if shape == () else d
        return tangents

    def forward(self) -> CheckRow:
        if self.raised is not None:
            return self.not_run("tangent vs finite differences", "forward")
        d = self.direction()
        a = copy_args(self.args)
        tans = [t.copy() if isinstance(t, np.ndarray) else t for t in d]
        value, tangent = self.fn.jvp(a, tans)
        wrong_value = self.value_differs(a, value, "_d")
        if wrong_value:
            return CheckRow(self.fn.name, "tangent vs finite differences", float("inf"),
                            self.tol["forward"], wrong_value)
        t_out = self.tangent_outputs(a, tangent, tans)
        # f32 code is differenced through CPython in f64: f32 has too few digits for a step
        evaluate = self.python_f64 if self.f32 else self.fn
        base = [a.astype(np.float64) if self.f32 and isinstance(a, np.ndarray) and
                np.issubdtype(a.dtype, np.floating) else
                float(a) if isinstance(a, np.floating) else  # np.float32(0.7) stays float32
                a for a in copy_args(self.args)]
        keep = self.dependents()  # outputs outside --of have no tangent to compare
        t_out = [v for v, k in zip(t_out, keep, strict=True) if k]

        def differences(h: float) -> tuple[list[np.ndarray], float]:
            """Central differences along d at step h, and the largest output they saw."""
            plus = [x + h * t if t is not None else x
                    for x, t in zip(copy_args(base), d, strict=True)]
            minus = [x - h * t if t is not None else x
                     for x, t in zip(copy_args(base), d, strict=True)]
            plus = [np.ascontiguousarray(p) if isinstance(p, np.ndarray) else p for p in plus]
            minus = [np.ascontiguousarray(m) if isinstance(m, np.ndarray) else m for m in minus]
            fp = outputs(self.fn, plus, evaluate(*plus), float_only=True)
            fm = outputs(self.fn, minus, evaluate(*minus), float_only=True)
            fd = [(np.asarray(p, dtype=np.float64) - np.asarray(m, dtype=np.float64)) / (2 * h)
                  for p, m, k in zip(fp, fm, keep, strict=True) if k]
            return fd, max((float(np.max(np.abs(np.asarray(v, dtype=np.float64)), initial=0.0))
                            for v in fp), default=0.0)
        err, terms = float("inf"), None
        # a failed comparison is tried again at a step ten times smaller (truncation near a
        # branch of high curvature, or a step that crosses it) and ten times larger (rounding)
        for h in (FD_STEP, FD_STEP / 10, FD_STEP * 10):
            try:
                fd, scale_f = differences(h)
            except Exception as exc:  # CPython (f32: the reference) raised at a shifted input
                if h != FD_STEP:
                    continue
                return CheckRow(self.fn.name, "tangent vs finite differences", float("inf"),
                                self.tol["forward"], f"CPython raised {type(exc).__name__}: "
                                f"{exc} at the finite-difference points; pass inputs with args=")
            err = min(err, self.fd_error(t_out, fd, scale_f))
            if err > self.tol["forward"]:  # terms of the tangent that cancel: measure by them
                if terms is None:
                    terms = [v for v, k in zip(self.tangent_terms(d), keep, strict=True) if k]
                err = min(err, self.fd_error(t_out, fd, scale_f, terms=terms))
            if err <= self.tol["forward"]:
                break
        return CheckRow(self.fn.name, "tangent vs finite differences", err, self.tol["forward"])

    def tangent_terms(self, d: list[Any]) -> list[np.ndarray]:
        """Per float output: sum over groups g of |tangent along d restricted to g|, where the
        groups part the coordinates of ``d`` (one coordinate each, for up to TERM_GROUPS of
        them). It bounds |tangent along d| and is what the differences must resolve: where
        the tangent's terms cancel, their sum is far below the terms themselves."""
        coords = [(i, j) for i, t in enumerate(d) if t is not None
                  for j in range(int(np.size(t)))]
        groups = np.array_split(np.arange(len(coords)), max(1, min(len(coords), TERM_GROUPS)))
        total: list[np.ndarray] | None = None
        for g in groups:
            tans = [None if t is None else np.zeros_like(t) if isinstance(t, np.ndarray)
                    else 0.0 for t in d]
            for c in g:
                i, j = coords[c]
                if isinstance(tans[i], np.ndarray):
                    tans[i].flat[j] = d[i].flat[j]
                else:
                    tans[i] = d[i]
            a = copy_args(self.args)
            _, tangent = self.fn.jvp(a, tans)
            part = [np.abs(np.asarray(v, dtype=np.float64))
                    for v in self.tangent_outputs(a, tangent, tans)]
            total = part if total is None else [s + p for s, p in zip(total, part, strict=True)]
        return total or []

    def value_differs(self, args: list[Any], value: Any, suffix: str) -> str:
        """Why the value a derivative function returned, and the arrays it wrote (into
        ``args``), are not the compiled primal's at the same inputs; '' when they are (an
        edited ``--source`` file can get them wrong while its derivatives are right)."""
        if not self.own_values:
            return ""
        a = copy_args(self.args)
        with np.errstate(all="ignore"):
            err = rel_error(outputs(self.fn, args, value), outputs(self.fn, a, self.fn(*a)))
        if err <= self.tol["primal"]:
            return ""
        return (f"{self.fn.name}{suffix} returns values that differ from the primal's "
                f"(rel. error {err:.2e})")

    def dependents(self) -> list[bool]:
        """Per float output (as ``tangent_outputs`` lists them): whether it has a tangent."""
        call = self.fn._forward
        assert call is not None
        has = set(call.fn.tangent_of.values())
        # outside --of: an array the function writes keeps a tangent argument, set to zero
        of = self.request
        keep = [r.name in has and (of is None or j in of.of_results)
                for j, r in enumerate(self.fn._primal.fn.results)
                if isinstance(r.type, ScalarType) and r.type.is_float]
        for i, n in enumerate(self.fn.param_names):
            t = self.fn.param_types[i]
            if n in self.fn._primal.written and isinstance(t, ArrayType) and t.elem.is_float:
                keep.append(n in has and (of is None or i in of.of_arrays))
        return keep

    def python_f64(self, *args: Any) -> Any:
        return getattr(self.py, self.fn.name)(*args)

    def tangent_outputs(self, args: list[Any], tangent: Any, tans: list[Any],
                        nbdirs: int | None = None) -> list[Any]:
        res_types = [r.type for r in self.fn._primal.fn.results]
        # one entry per result, None where the result has no tangent (an int)
        res = list(tangent) if self.fn._primal.fn.returns_tuple else \
            ([tangent] if res_types else [])
        res = [0.0 if v is None else v for v, t in zip(res, res_types, strict=True)
               if isinstance(t, ScalarType) and t.is_float]
        written = self.fn._primal.written
        for i, n in enumerate(self.fn.param_names):
            if n in written and isinstance(self.fn.param_types[i], ArrayType) and \
                    self.fn.param_types[i].elem.is_float:  # type: ignore[union-attr]
                # no tangent (outside --wrt and --of): zero, in each of nbdirs directions
                res.append(tans[i] if tans[i] is not None else np.zeros(
                    np.shape(args[i]) + (() if nbdirs is None else (nbdirs,))))
        return res

    def fd_error(self, t: list[Any], fd: list[Any], scale_f: float, floor: float = 1e-9,
                 terms: list[Any] | None = None) -> float:
        """max |t - fd| / max(|t|, |fd|, terms), where ``floor * (1 + scale_f)`` is added to the
        scale: differences of values of size ``scale_f`` cannot resolve less. ``terms``: the
        sums of the magnitudes of the tangent's terms (``tangent_terms``)."""
        flat = lambda vs: np.concatenate([np.ravel(np.asarray(v, dtype=np.float64))  # noqa: E731
                                          for v in vs]) if vs else np.zeros(0)
        xt, xf = flat(t), flat(fd)
        if xt.shape != xf.shape:
            return float("inf")
        if xt.size == 0:
            return 0.0
        scale = max(float(np.max(np.abs(xt))), float(np.max(np.abs(xf))),
                    float(np.max(flat(terms), initial=0.0)) if terms else 0.0) + \
            floor * (1.0 + scale_f)
        return float(np.max(np.abs(xt - xf)) / scale)

    def directions(self) -> int:
        """How many directions the vector checks use: 3, or what the build fixes
        (``-DADGEN_NBDIRS=N``)."""
        return next((c.fixed_nbdirs for c in self.fn._calls.values() if c.fixed_nbdirs),
                    None) or 3

    def vector(self) -> CheckRow:
        if self.raised is not None:
            return self.not_run("vector tangent vs scalar tangents", "vector-forward")
        nb = self.directions()
        d = self.direction(nb)
        a = copy_args(self.args)
        tans = [t.copy() if isinstance(t, np.ndarray) else t for t in d]
        _, tv = self.fn.jvp_vec(a, tans)
        vec_out = self.tangent_outputs(a, tv, tans, nb)
        errs = []
        for k in range(nb):
            dk = [None if t is None else np.ascontiguousarray(t[..., k]) if np.ndim(t) > 1 else
                  float(t[k]) for t in d]
            ak = copy_args(self.args)
            tk = [t.copy() if isinstance(t, np.ndarray) else t for t in dk]
            _, ts = self.fn.jvp(ak, tk)
            scalar_out = self.tangent_outputs(ak, ts, tk)
            # a result outside --of has no tangent: 0.0 (a scalar) in every direction
            column = [np.asarray(v)[..., k] if np.ndim(v) else v for v in vec_out]
            errs.append(rel_error(column, scalar_out))
        return CheckRow(self.fn.name, "vector tangent vs scalar tangents", max(errs),
                        self.tol["vector-forward"])


    # -- reverse mode -------------------------------------------------------------------
    def output_bars(self, nbdirs: int | None = None) -> tuple[Any, dict[str, Any]]:
        """Random adjoints of the outputs: (ybar for vjp, out_bars)."""
        fn = self.fn._primal.fn
        call = self.fn._reverse or self.fn._vector_reverse
        assert call is not None
        has_adjoint = set(call.fn.tangent_of.values())  # what --of made dependent
        # written arrays outside --of that no dependent reads: their adjoint is not read
        has_adjoint -= {call.fn.tangent_of[a] for a in call.fn.unneeded_tangents}
        extra = () if nbdirs is None else (nbdirs,)
        bars: list[Any] = []
        for r in fn.results:
            if isinstance(r.type, ScalarType) and r.type.is_float and r.name in has_adjoint:
                v = self.rng.uniform(-1.0, 1.0, extra)
                bars.append(float(v) if nbdirs is None else v)
            else:
                bars.append(None)
        ybar = tuple(bars) if fn.returns_tuple else (bars[0] if bars else None)
        out_bars = {}
        for i, n in enumerate(self.fn.param_names):
            t = self.fn.param_types[i]
            if n in self.fn._primal.written and isinstance(t, ArrayType) and t.elem.is_float \
                    and n in has_adjoint:
                out_bars[n] = self.rng.uniform(-1.0, 1.0, np.shape(self.args[i]) + extra).astype(
                    NP_DTYPES[t.elem.name])
        return ybar, out_bars

    def reverse(self) -> CheckRow:
        """The dot-product test <xd, xb> == <yd, yb>."""
        if self.raised is not None:
            return self.not_run("adjoint vs tangent (dot product)", "reverse")
        d = self.direction()
        a = copy_args(self.args)
        tans = [t.copy() if isinstance(t, np.ndarray) else t for t in d]
        _, tangent = self.fn.jvp(a, tans)
        yd = self.tangent_outputs(a, tangent, tans)
        ybar, out_bars = self.output_bars()
        ab = copy_args(self.args)
        value, grads = self.fn.vjp(ab, ybar, out_bars)
        wrong_value = self.value_differs(ab, value, "_b")
        if wrong_value:
            return CheckRow(self.fn.name, "adjoint vs tangent (dot product)", float("inf"),
                            self.tol["reverse"], wrong_value)
        fn = self.fn._primal.fn
        bars = list(ybar) if fn.returns_tuple else ([ybar] if fn.results else [])
        yb = [0.0 if b is None else b for b, r in zip(bars, fn.results, strict=True)
              if isinstance(r.type, ScalarType) and r.type.is_float]
        for i, n in enumerate(self.fn.param_names):  # as tangent_outputs lists them
            t = self.fn.param_types[i]
            if n in self.fn._primal.written and isinstance(t, ArrayType) and t.elem.is_float:
                yb.append(out_bars.get(n))  # None (no adjoint: outside --of) counts as zero
        lhs, rhs = _dot(d, grads), _dot(yd, yb)
        err = dot_error(lhs, rhs, _dot(d, grads, absolute=True), _dot(yd, yb, absolute=True))
        return CheckRow(self.fn.name, "adjoint vs tangent (dot product)", err, self.tol["reverse"])

    def vector_reverse(self) -> CheckRow:
        if self.raised is not None:
            return self.not_run("vector adjoint vs scalar adjoints", "vector-reverse")
        nb = self.directions()
        ybar, out_bars = self.output_bars(nb)
        _, gv = self.fn.vjp_vec(copy_args(self.args), ybar, out_bars)
        fn = self.fn._primal.fn
        errs = []
        for k in range(nb):
            def column(v: Any, k: int = k) -> Any:
                return None if v is None else (float(v[k]) if np.ndim(v) == 1 else
                                               np.ascontiguousarray(v[..., k]))
            yk = tuple(column(b) for b in ybar) if fn.returns_tuple else column(ybar)
            ok = {n: column(v) for n, v in out_bars.items()}
            _, gs = self.fn.vjp(copy_args(self.args), yk, ok)
            vec = [np.asarray(g)[..., k] for g in gv if g is not None]
            sca = [g for g in gs if g is not None]
            errs.append(rel_error(vec, sca))
        return CheckRow(self.fn.name, "vector adjoint vs scalar adjoints", max(errs),
                        self.tol["vector-reverse"])


    # -- second order -----------------------------------------------------------------------
    def hvp(self) -> list[CheckRow]:
        """H v against central differences of the gradient along v; <u, H v> = <v, H u>."""
        if self.raised is not None:
            return ([] if self.f32 else [self.not_run("hvp vs differences of the gradient",
                                                      "hvp")]) + \
                [self.not_run("hvp symmetry <u, Hv> = <v, Hu>", "hvp-symmetry")]
        ybar, out_bars = self.output_bars()
        u, v = self.direction(), self.direction()
        hu = self.fn.hvp(copy_args(self.args), u, ybar, out_bars)
        hv = self.fn.hvp(copy_args(self.args), v, ybar, out_bars)
        rows = []
        if not self.f32:
            def gradient_at(step: float) -> tuple[Any, ...]:
                shifted = [np.ascontiguousarray(x + step * t) if isinstance(x, np.ndarray) and
                           t is not None else x + step * t if t is not None else x
                           for x, t in zip(copy_args(self.args), v, strict=True)]
                return self.fn.vjp(shifted, ybar, out_bars)[1]
            have = [k for k, x in enumerate(hv) if x is not None]

            def central(h: float) -> list[np.ndarray]:
                plus, minus = gradient_at(h), gradient_at(-h)
                return [(np.asarray(plus[k], dtype=np.float64) -
                         np.asarray(minus[k], dtype=np.float64)) / (2 * h) for k in have]
            gradient = gradient_at(0.0)
            scale_g = max((float(np.max(np.abs(np.asarray(gradient[k])), initial=0.0))
                           for k in have), default=0.0)
            err = float("inf")
            # a failed comparison is tried again: ten times larger (differences of a gradient
            # that itself carries rounding, 1 - tanh(t)**2 at large t, say), then ten and a
            # hundred times smaller (a step that crosses a jump of the gradient, that of
            # a % b for one)
            for h in (HVP_STEP, 10 * HVP_STEP, HVP_STEP / 10, HVP_STEP / 100):
                # Richardson: (4 D(h/2) - D(h)) / 3 cancels the h**2 term of central differences
                coarse, fine = central(h), central(h / 2)
                fd = [(4.0 * f - c) / 3.0 for f, c in zip(fine, coarse, strict=True)]
                # differences of a gradient of size g at step h carry rounding ~1e-16 g / h
                # per ulp of error in the gradient, and Richardson's combination triples
                # it: the floor allows ten ulps (a random program's gradient of size 0.5
                # through a recursion, whose Hessian entry is 1.5e-8: its differences are
                # off by 3.5e-12 at every step, rounding below 1e-4 and truncation above)
                err = min(err, self.fd_error([hv[k] for k in have], fd, scale_g,
                                             floor=1e-5 * max(1.0, HVP_STEP / h)))
                if err <= self.tol["hvp"]:
                    break
            rows.append(CheckRow(self.fn.name, "hvp vs differences of the gradient", err,
                                 self.tol["hvp"]))
        lhs, rhs = _dot(u, hv), _dot(v, hu)
        # relative to the terms (as the dot-product test of the adjoint), with an absolute
        # floor (as the differences above): a Hessian that is zero analytically comes out as
        # rounding noise (1e-17 one way, 0 the other)
        err = dot_error(lhs, rhs, _dot(u, hv, absolute=True), _dot(v, hu, absolute=True),
                        floor=1e-6)
        rows.append(CheckRow(self.fn.name, "hvp symmetry <u, Hv> = <v, Hu>", err,
                             self.tol["hvp-symmetry"]))
        return rows


    def vector_hvp(self) -> CheckRow:
        if self.raised is not None:
            return self.not_run("vector hvp vs scalar hvps", "vector-hvp")
        nb = self.directions()
        ybar, out_bars = self.output_bars()
        d = self.direction(nb)
        hv = self.fn.hvp_vec(copy_args(self.args), d, ybar, out_bars)
        errs = []
        for k in range(nb):
            dk = [None if t is None else np.ascontiguousarray(t[..., k]) if np.ndim(t) > 1 else
                  float(t[k]) for t in d]
            hk = self.fn.hvp(copy_args(self.args), dk, ybar, out_bars)
            vec = [np.asarray(h)[..., k] for h in hv if h is not None]
            errs.append(rel_error(vec, [h for h in hk if h is not None]))
        return CheckRow(self.fn.name, "vector hvp vs scalar hvps", max(errs),
                        self.tol["vector-hvp"])


def use_sources(t: Any, sources: Sequence[str]) -> None:
    """Replace generated C text by the files in ``sources`` (matched by file name)."""
    from .transpile.pipeline import UsageError
    if isinstance(sources, (str, bytes)):
        raise TypeError(f"sources must be a sequence of file names, e.g. [{sources!r}], not a "
                        "string")
    by_name = {emitted.source.name: emitted for emitted in t.outputs.values()}
    given: dict[str, str] = {}
    for src in sources:
        name = os.path.basename(src)
        if name in given and os.path.realpath(given[name]) != os.path.realpath(src):
            raise UsageError(f"{given[name]} and {src} both replace {name} (give one of them)")
        given[name] = src
        if name not in by_name:
            raise UsageError(f"{src}: not a file this module generates for the modes checked "
                             f"({', '.join(sorted(by_name))})")
        try:
            # (any bytes, as the compiler reads them: an accent in a comment in Latin-1 was a
            # UnicodeDecodeError; the build writes the text back with the same errors)
            with open(src, encoding="utf-8", errors="surrogateescape") as f:
                by_name[name].source.text = f.read()
        except OSError as exc:
            raise UsageError(f"cannot read {src}: {exc.strerror}") from None


def _dot(a: Sequence[Any], b: Sequence[Any], absolute: bool = False) -> float:
    """Sum of elementwise products over matching entries (None counts as zero); with
    ``absolute``, the sum of their magnitudes."""
    total = 0.0
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            continue
        terms = np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64)
        total += float(np.sum(np.abs(terms) if absolute else terms))
    return total


def dot_error(lhs: float, rhs: float, lhs_terms: float, rhs_terms: float,
              floor: float = 1e-300) -> float:
    """The error of the dot-product test ``<xd, xb> == <yd, yb>``: ``|lhs - rhs|`` relative
    to the sums of the magnitudes of the terms of the two sides (``lhs_terms``,
    ``rhs_terms``), not to the sides themselves.  Each side is a sum whose rounding error
    is relative to its terms: where terms of about 0.5 cancel to 0.001 (1.1 * -0.4556 +
    0.5), a correct adjoint is off by 1e-15, 1e-12 of the sum.  A partial derivative off by
    a fraction e of itself still shows: its term is off by e of that term, which among n
    terms of one size is e / n of their magnitudes.  Below ``floor`` the error is absolute."""
    if lhs == rhs:
        return 0.0
    return abs(lhs - rhs) / max(lhs_terms, rhs_terms, floor)


def check_given(args: Any, names: list[str], module: str) -> None:
    """``args`` is None or a mapping whose keys name functions of the module."""
    if args is None:
        return
    if not isinstance(args, Mapping):
        raise TypeError("check: args must be a dict from a function name to its argument tuple, "
                        f"got {type(args).__name__}")
    for name in args:
        if name not in names:
            raise ValueError(f"check: args names '{name}', which is not a function of {module} "
                             f"(it defines {', '.join(names)})")


def given_args(fn: AdgenFunction, given: Any) -> list[Any]:
    """The inputs ``args`` gives for ``fn``, checked as for a call: a ``TypeError`` or
    ``ValueError`` naming the function and the argument."""
    if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
        raise TypeError(f"check: args['{fn.name}'] must be a tuple with one entry per argument "
                        f"of {fn.name} ({', '.join(fn.param_names)}), got {type(given).__name__}")
    try:  # the arrays as given (the checks run on copies): strided, read-only or aliased
        fn._values(given, fn._primal.written)  # ones are refused, as a call refuses them
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"check: args['{fn.name}']: {exc}") from None
    return list(given)


def run_checks(path: str, modes: Sequence[str] = DEFAULT_CHECK_MODES, *,
               args: dict[str, Sequence[Any]] | None = None, seed: int = 0,
               functions: Sequence[str] | None = None, wrt: Sequence[str] | None = None,
               of: Sequence[str] | None = None, head: str | None = None, precision: str = "f64",
               debug: bool = False, cflags: Sequence[str] | None = None,
               openmp: bool = False, target: str = "c", emulate: bool = False,
               arch: str | None = None, sources: Sequence[str] = ()) -> CheckReport:
    """``sources``: C files (e.g. hand-edited generated files) compiled instead of the
    generated file of the same name, so that an edit is checked against the module.
    ``target="cuda"``: the vector modes of the default ``modes`` are left out (not on the
    CUDA target yet; asked for, they are a ``UsageError``); ``emulate`` runs the kernels on
    the CPU."""
    default = tuple(modes) == DEFAULT_CHECK_MODES
    modes = [m for m in check_modes(modes) if m != "primal"]
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be a non-negative integer, not {seed!r}")
    if seed < 0:
        from .transpile.pipeline import UsageError
        raise UsageError(f"seed must be a non-negative integer, not {seed!r}")
    functions = option_list(functions, "functions", comma=True)
    cflags = flag_list(cflags)
    check_bools(openmp=openmp, emulate=emulate)
    check_target_options(target, emulate, arch, openmp)
    if target == "cuda" and default:  # (asked for, the transpiler refuses them)
        modes = [m for m in modes if not m.startswith("vector-")]
    # the vector tangent is checked against scalar tangents, the adjoint against the tangent,
    # the vector adjoint against scalar adjoints: build what each needs
    built = ["primal", *modes]
    if any(m in modes for m in ("vector-forward", "reverse", "vector-reverse")):
        built.append("forward")
    if any(m in modes for m in ("vector-reverse", "hvp", "vector-hvp")):
        built.append("reverse")  # hvp: differences of the gradient
    if "vector-hvp" in modes:
        built.append("hvp")
    built = list(dict.fromkeys(built))
    t = transpile(path, built, functions=functions, wrt=wrt, of=of, head=head,
                  precision=precision, debug=debug, target=target)
    use_sources(t, sources)
    flags = nvcc_flags(cflags, debug, emulate, arch) if target == "cuda" else \
        compiler_flags(cflags, debug, openmp)
    check_given(args, [fn.name for fn in t.module.functions], os.path.basename(path))
    m = bind(t, path, flags)
    for name, given in (args or {}).items():  # every given input, before anything runs
        if name in m.functions and (not functions or name in functions):
            given_args(m.functions[name], given)
    py = import_python(path)
    report = CheckReport(path)
    rng = np.random.default_rng(seed)
    progress = PROGRESS.get()
    for name, fn in m.functions.items():
        if functions and name not in functions:
            continue
        given = (args or {}).get(name)
        fn_args = given_args(fn, given) if given is not None else \
            [random_value(tp, rng) for tp in fn.param_types]
        # a @custom_jvp tangent may compute the value by another formula (a stable one where
        # the body overflows), and so may the C of an @external function: their values, and
        # their callers', are not compared with the primal's
        reached = reachable(t.module, [name])
        own_values = not any(f.custom_tangent or f.custom_adjoint or f.external is not None
                             for f in t.module.functions if f.name in reached)
        # a function that computes in f32 (the f32 build, or f32 annotations in an f64 one) is
        # checked to the f32 tolerances, its differences through CPython in f64
        f32 = precision == "f32" or single_precision(t.module, name)
        checker = Checker(path, fn, py, fn_args, rng, f32, t.requests.get(name), own_values)
        checks = [("primal vs CPython", checker.primal), *derivative_checks(checker, fn, modes)]
        for k, (what, run) in enumerate(checks):
            # (on the command line's progress line: the CPython reference of a function
            # that loops over compiled derivatives may take minutes)
            if progress is not None:
                progress(f"checking {name}: {what}...", False)
            # (in the derivative checks, all but the first, a value that is not finite fails
            # its row)
            with np.errstate(all="ignore") if k else nullcontext():
                rows = run()
            report.rows += rows if isinstance(rows, list) else [rows]
            if progress is not None:
                progress(f"checking {name}: {what}", True)
    return report


#: the modes whose checks rest on the scalar tangent (compared with finite differences)
FIRST_ORDER = ("forward", "vector-forward", "reverse", "vector-reverse")


def derivative_checks(checker: Checker, fn: AdgenFunction, modes: Sequence[str]
                      ) -> list[tuple[str, Callable[[], CheckRow | list[CheckRow]]]]:
    """The derivative checks of ``modes`` that ``fn`` was built for, in order: what each
    compares, and the method that makes its row (rows, for hvp)."""
    checks: list[tuple[str, Callable[[], CheckRow | list[CheckRow]]]] = []
    # the dot-product test and the vector checks trust the scalar tangent: check it against
    # finite differences too
    if fn._forward is not None and any(m in modes for m in FIRST_ORDER):
        checks.append(("tangent vs finite differences", checker.forward))
    if "vector-forward" in modes and fn._vector is not None:
        checks.append(("vector tangent vs scalar tangents", checker.vector))
    if fn._reverse is not None and any(m in modes for m in ("reverse", "vector-reverse")):
        checks.append(("adjoint vs tangent (dot product)", checker.reverse))
    if "vector-reverse" in modes and fn._vector_reverse is not None:
        checks.append(("vector adjoint vs scalar adjoints", checker.vector_reverse))
    if fn._hvp is not None and any(m in modes for m in ("hvp", "vector-hvp")):
        checks.append(("hvp vs differences of the gradient, symmetry", checker.hvp))
    if "vector-hvp" in modes and fn._vector_hvp is not None:
        checks.append(("vector hvp vs scalar hvps", checker.vector_hvp))
    return checks
