#!/usr/bin/env python3
"""adgen as a GradBench tool: speaks the GradBench protocol on stdin/stdout.

Run from the repository root, with adgen installed in the Python that runs it:

    python benchmarks/gradbench/tool.py

GradBench (https://github.com/gradbench/gradbench) sends one JSON message per
line on stdin; this program answers each with one JSON line on stdout:

- ``start``: ``{"id", "tool": "adgen", "config": {...}}``;
- ``define``: builds the module's generated C (``adgen.load``) and answers
  ``{"id", "success", "timings": [{"name": "define", ...}]}``, or
  ``"success": false`` with an ``"error"`` for a module it does not implement;
- ``evaluate``: converts the input to NumPy arrays (not timed), runs the
  compiled function at least ``min_runs`` times and until the runs add up to
  ``min_seconds`` (one ``"evaluate"`` timing per run), converts the last
  result to the eval's JSON output (not timed) and answers
  ``{"id", "success": true, "output", "timings"}``; an unknown function or a
  failure gives ``"success": false`` with an ``"error"``;
- anything else (``analysis``, ...): ``{"id"}``.

Every function value and derivative comes from the C that adgen generates for
the modules beside this file (one module per eval, the objective written once
in adgen's Python subset); this file only converts inputs and outputs and
calls the compiled functions through their raw cffi entry points
(``m.lib.f``, ``m.f_b``, ``m.f_dv``, ``m.f_b_d``). See README.md beside it.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
#: the C compiler flags of the generated code: adgen's defaults, for this CPU (as GradBench's
#: C++ tools are built); ADGEN_CFLAGS replaces them
CFLAGS = tuple(os.environ.get("ADGEN_CFLAGS",
                              "-O3 -fopenmp-simd -DADGEN_VECTORIZE -march=native").split())

# Evals GradBench has that this tool does not implement, and why.
UNSUPPORTED: dict[str, str] = {}


# ---------------------------------------------------------------------------
# plumbing


class Job:
    """One prepared evaluation: ``run()`` is what is timed, ``output()`` packs the result."""

    def __init__(self, run: Callable[[], Any], output: Callable[[], Any]) -> None:
        self.run = run
        self.output = output


def f64(value: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(value, dtype=np.float64))


def i64(value: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(value, dtype=np.int64))


class Raw:
    """Builds the arguments of a raw generated C function: each array is its pointer
    followed by its extents (and, for a differentiated array, the pointers of its
    derivatives in between), in the order of the C signature."""

    def __init__(self, ffi: Any) -> None:
        self.ffi = ffi

    def ptr(self, a: np.ndarray) -> Any:
        ctype = {np.dtype(np.float64): "double[]", np.dtype(np.int64): "int64_t[]"}[a.dtype]
        return self.ffi.from_buffer(ctype, a)

    def a(self, arr: np.ndarray, *derivs: np.ndarray) -> list[Any]:
        """arr's pointer, its derivatives' pointers (one for f_d / f_b / f_dv; for f_b_d
        the direction, the adjoint and the adjoint's tangent), then arr's extents."""
        out = [self.ptr(arr)]
        out.extend(self.ptr(d) for d in derivs)
        out.extend(arr.shape)
        return out


#: doubles in one SIMD register of the vector loops gcc writes (256 bits: AVX2, and what gcc
#: prefers on AVX-512 machines too)
SIMD_DOUBLES = 4


def lanes(directions: int) -> int:
    """The number of directions of a vector-mode call for ``directions`` seeds: rounded up to
    whole SIMD registers, the last directions zero.  The loops over directions then have no
    scalar remainder: ba's Jacobian took 8.3-8.7 ms with 15 directions and 6.9-7.4 with 16
    (benchmarks/gradbench/README.md)."""
    return -(-directions // SIMD_DOUBLES) * SIMD_DOUBLES


class Eval:
    """An eval's module: which adgen modes it needs, and a job factory per function."""

    module = ""
    modes: tuple[str, ...] = ()
    load_options: dict[str, Any] = {}
    #: the number of directions of every vector-mode call, where it is fixed: the build
    #: then says so (-DADGEN_NBDIRS), and the loops over directions get unrolled
    nbdirs: int | None = None

    def __init__(self) -> None:
        self.m = self.load(self.nbdirs)
        self.raw = Raw(self.m.ffi)

    def load(self, nbdirs: int | None) -> Any:
        import adgen

        flags = CFLAGS + ((f"-DADGEN_NBDIRS={nbdirs}",) if nbdirs is not None else ())
        with warnings.catch_warnings():
            # ba.py compares a float with 0.0 on purpose (the Rodrigues formula's branch)
            warnings.simplefilter("ignore")
            return adgen.load(HERE / f"{self.module}.py", modes=self.modes, cflags=flags,
                              **self.load_options)

    def job(self, function: str, input: Any) -> Job:
        factory = getattr(self, f"fn_{function}", None)
        if factory is None:
            raise UnknownFunction(function)
        return factory(input)


# ---------------------------------------------------------------------------
# hello


class Hello(Eval):
    module = "hello"
    modes = ("reverse",)

    def fn_square(self, x: Any) -> Job:
        x = float(x)
        res = [0.0]
        fn = self.m.lib.square

        def run() -> None:
            res[0] = fn(x)
        return Job(run, lambda: res[0])

    def fn_double(self, x: Any) -> Job:
        x = float(x)
        xb = self.m.ffi.new("double *")
        fn = self.m.square_b

        def run() -> None:
            xb[0] = 0.0
            fn(x, xb, 1.0)
        return Job(run, lambda: xb[0])


# ---------------------------------------------------------------------------
# lse, llsq, det, ode: a gradient by one reverse sweep


class Lse(Eval):
    module = "lse"
    modes = ("reverse",)

    @staticmethod
    def _x(inp: dict) -> np.ndarray:
        x = f64(inp["x"])
        if x.size == 0:  # lse reads x[0]
            raise ValueError("lse: x must have at least one element")
        return x

    def fn_primal(self, inp: dict) -> Job:
        x = self._x(inp)
        args, res = self.raw.a(x), [0.0]
        fn = self.m.lib.lse

        def run() -> None:
            res[0] = fn(*args)
        return Job(run, lambda: res[0])

    def fn_gradient(self, inp: dict) -> Job:
        x = self._x(inp)
        xb = np.zeros_like(x)
        args = self.raw.a(x, xb)
        fn = self.m.lse_b

        def run() -> None:
            xb.fill(0.0)
            fn(*args, 1.0)
        return Job(run, lambda: xb.tolist())


class Llsq(Eval):
    module = "llsq"
    modes = ("reverse",)

    def fn_primal(self, inp: dict) -> Job:
        x, n = f64(inp["x"]), int(inp["n"])
        args, res = self.raw.a(x), [0.0]
        fn = self.m.lib.llsq

        def run() -> None:
            res[0] = fn(*args, n)
        return Job(run, lambda: res[0])

    def fn_gradient(self, inp: dict) -> Job:
        x, n = f64(inp["x"]), int(inp["n"])
        xb = np.zeros_like(x)
        args = self.raw.a(x, xb)
        fn = self.m.llsq_b

        def run() -> None:
            xb.fill(0.0)
            fn(*args, n, 1.0)
        return Job(run, lambda: xb.tolist())


class Det(Eval):
    module = "det"
    modes = ("reverse",)

    def _prepare(self, inp: dict) -> tuple[np.ndarray, int, list[Any]]:
        a, ell = f64(inp["A"]), int(inp["ell"])
        if a.size != ell * ell:
            raise ValueError(f"A has {a.size} entries, expected ell * ell = {ell * ell}")
        # the linked lists of rows and columns of the minors (work arrays, set by det)
        work = self.raw.a(np.zeros(ell + 1, dtype=np.int64)) + self.raw.a(np.zeros(ell + 1, dtype=np.int64))
        return a, ell, work

    def fn_primal(self, inp: dict) -> Job:
        a, ell, work = self._prepare(inp)
        args, res = self.raw.a(a), [0.0]
        fn = self.m.lib.det

        def run() -> None:
            res[0] = fn(*args, ell, *work)
        return Job(run, lambda: res[0])

    def fn_gradient(self, inp: dict) -> Job:
        a, ell, work = self._prepare(inp)
        ab = np.zeros_like(a)
        args = self.raw.a(a, ab)
        fn = self.m.det_b

        def run() -> None:
            ab.fill(0.0)
            fn(*args, ell, *work, 1.0)
        return Job(run, lambda: ab.tolist())


class Ode(Eval):
    module = "ode"
    modes = ("reverse",)

    def fn_primal(self, inp: dict) -> Job:
        x, s = f64(inp["x"]), int(inp["s"])
        yf = np.zeros_like(x)
        args = self.raw.a(x) + [s] + self.raw.a(yf)
        fn = self.m.lib.ode

        def run() -> None:
            fn(*args)
        return Job(run, lambda: yf.tolist())

    def fn_gradient(self, inp: dict) -> Job:
        # the gradient of the last output, yf[n - 1]: its adjoint is the unit vector e_{n-1}
        x, s = f64(inp["x"]), int(inp["s"])
        yf, xb, yfb = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
        args = self.raw.a(x, xb) + [s] + self.raw.a(yf, yfb)
        fn = self.m.ode_b

        def run() -> None:
            xb.fill(0.0)
            yfb.fill(0.0)
            yfb[-1] = 1.0
            fn(*args)
        return Job(run, lambda: xb.tolist())


# ---------------------------------------------------------------------------
# gmm, lstm: the gradient of a scalar objective by one reverse sweep


class Gmm(Eval):
    module = "gmm"
    modes = ("reverse",)
    load_options = {"wrt": ("alpha", "mu", "q", "l")}

    def _prepare(self, inp: dict) -> tuple[list[np.ndarray], np.ndarray, float, int, bool]:
        d, k = int(inp["d"]), int(inp["k"])
        alpha = f64(inp["alpha"])
        x = f64(inp["x"]).reshape(-1, d)
        if "q" in inp:  # {mu, q, l}: the current format
            mu = f64(inp["mu"]).reshape(k, d)
            q = f64(inp["q"]).reshape(k, d)
            lt = f64(inp["l"]).reshape(k, d * (d - 1) // 2)
            split = True
        else:  # {means, icf}: icf[k] = q[k] followed by l[k]
            mu = f64(inp["means"]).reshape(k, d)
            icf = f64(inp["icf"]).reshape(k, d + d * (d - 1) // 2)
            q, lt = f64(icf[:, :d]), f64(icf[:, d:])
            split = False
        return [alpha, mu, q, lt], x, float(inp["gamma"]), int(inp["m"]), split

    def fn_objective(self, inp: dict) -> Job:
        params, x, gamma, wm, _ = self._prepare(inp)
        args = [p for a in params for p in self.raw.a(a)] + self.raw.a(x) + [gamma, wm]
        res = [0.0]
        fn = self.m.lib.gmm_objective

        def run() -> None:
            res[0] = fn(*args)
        return Job(run, lambda: res[0])

    def fn_jacobian(self, inp: dict) -> Job:
        params, x, gamma, wm, split = self._prepare(inp)
        grads = [np.zeros_like(a) for a in params]
        args = [p for a, g in zip(params, grads) for p in self.raw.a(a, g)] + self.raw.a(x) + [gamma, wm]
        fn = self.m.gmm_objective_b

        def run() -> None:
            for g in grads:
                g.fill(0.0)
            fn(*args, 1.0)

        def output() -> Any:
            ga, gmu, gq, gl = grads
            if split:
                return {"alpha": ga.tolist(), "mu": gmu.tolist(), "q": gq.tolist(), "l": gl.tolist()}
            return np.concatenate([ga, gmu.ravel(), np.hstack([gq, gl]).ravel()]).tolist()
        return Job(run, output)


class Lstm(Eval):
    module = "lstm"
    modes = ("reverse",)
    load_options = {"wrt": ("main_params", "extra_params")}

    def _prepare(self, inp: dict) -> list[np.ndarray]:
        return [f64(inp[k]) for k in ("main_params", "extra_params", "state", "sequence")]

    def fn_objective(self, inp: dict) -> Job:
        args = [p for a in self._prepare(inp) for p in self.raw.a(a)]
        res = [0.0]
        fn = self.m.lib.lstm_objective

        def run() -> None:
            res[0] = fn(*args)
        return Job(run, lambda: res[0])

    def fn_jacobian(self, inp: dict) -> Job:
        main, extra, state, seq = self._prepare(inp)
        gmain, gextra = np.zeros_like(main), np.zeros_like(extra)
        args = self.raw.a(main, gmain) + self.raw.a(extra, gextra) + self.raw.a(state) + self.raw.a(seq)
        fn = self.m.lstm_objective_b

        def run() -> None:
            gmain.fill(0.0)
            gextra.fill(0.0)
            fn(*args, 1.0)
        return Job(run, lambda: np.concatenate([gmain.ravel(), gextra.ravel()]).tolist())


# ---------------------------------------------------------------------------
# ba: a sparse Jacobian by one vector-forward sweep with 15 compressed seeds

BA_NCAM = 11
BA_DIRS = BA_NCAM + 3 + 1  # camera parameters, point coordinates, weight
BA_LANES = lanes(BA_DIRS)


class Ba(Eval):
    module = "ba"
    modes = ("vector-forward",)
    load_options = {"wrt": ("cams", "x", "w")}
    nbdirs = BA_LANES

    def _prepare(self, inp: dict) -> tuple[int, int, int, list[np.ndarray]]:
        # the eval sends one camera, point, weight and feature, replicated as ADBench does
        n, m, p = int(inp["n"]), int(inp["m"]), int(inp["p"])
        cams = f64(np.tile(f64(inp["cam"]), (n, 1)))
        x = f64(np.tile(f64(inp["x"]), (m, 1)))
        w = f64(np.full(p, float(inp["w"])))
        feats = f64(np.tile(f64(inp["feat"]), (p, 1)))
        obs = i64(np.stack([np.arange(p) % n, np.arange(p) % m], axis=1))
        return n, m, p, [cams, x, w, obs, feats]

    def fn_objective(self, inp: dict) -> Job:
        n, m, p, (cams, x, w, obs, feats) = self._prepare(inp)
        reproj, werr = np.zeros((p, 2)), np.zeros(p)
        args = [q for a in (cams, x, w, obs, feats, reproj, werr) for q in self.raw.a(a)]
        fn = self.m.lib.ba_objective

        def run() -> None:
            fn(*args)

        def output() -> Any:
            return {"reproj_error": {"elements": reproj[0].tolist(), "repeated": p},
                    "w_err": {"element": float(werr[0]), "repeated": p}}
        return Job(run, output)

    def fn_jacobian(self, inp: dict) -> Job:
        n, m, p, (cams, x, w, obs, feats) = self._prepare(inp)
        # Compressed seeding: observation i depends on one camera, one point and w[i]
        # only, so the 11 columns "parameter j of every camera", the 3 columns
        # "coordinate j of every point" and the column "every weight" are groups of
        # structurally orthogonal columns; one direction per group gives every
        # nonzero of the Jacobian in one vector-forward sweep of 15 directions (and one
        # zero direction: 16, see ``lanes``).
        camsd = np.zeros((n, BA_NCAM, BA_LANES))
        camsd[:, np.arange(BA_NCAM), np.arange(BA_NCAM)] = 1.0
        xd = np.zeros((m, 3, BA_LANES))
        xd[:, np.arange(3), BA_NCAM + np.arange(3)] = 1.0
        wd = np.zeros((p, BA_LANES))
        wd[:, BA_DIRS - 1] = 1.0
        reproj, reprojd = np.zeros((p, 2)), np.zeros((p, 2, BA_LANES))
        werr, werrd = np.zeros(p), np.zeros((p, BA_LANES))
        args = (self.raw.a(cams, camsd) + self.raw.a(x, xd) + self.raw.a(w, wd) + self.raw.a(obs)
                + self.raw.a(feats) + self.raw.a(reproj, reprojd) + self.raw.a(werr, werrd)
                + [BA_LANES])
        fn = self.m.ba_objective_dv

        def run() -> None:
            fn(*args)

        def output() -> Any:
            return ba_sparse_output(n, m, p, obs, reprojd[..., :BA_DIRS], werrd[:, :BA_DIRS])
        return Job(run, output)


def ba_sparse_output(n: int, m: int, p: int, obs: np.ndarray, reprojd: np.ndarray,
                     werrd: np.ndarray, cut: bool = True) -> dict[str, list]:
    """The Jacobian in ADBench's compressed-row layout (rows 2i, 2i + 1: 11 camera, 3 point
    and 1 weight entries; row 2p + i: the weight entry), cut down as the eval wants it:
    the first 30 and the last entry of each list (all of them with cut=False)."""
    # The vector tangent reprojd[i, r, :] lists exactly the 15 nonzeros of row 2 i + r in
    # the order of the layout, so the values need no gathering.
    vals = np.concatenate([reprojd.ravel(), werrd[:, BA_DIRS - 1]])
    dirs = np.arange(BA_DIRS)
    cam_cols = BA_NCAM * obs[:, 0:1] + dirs[None, :BA_NCAM]
    pt_cols = BA_NCAM * n + 3 * obs[:, 1:2] + np.arange(3)[None, :]
    w_cols = (BA_NCAM * n + 3 * m + np.arange(p))[:, None]
    row_cols = np.hstack([cam_cols, pt_cols, w_cols])  # (p, 15), the same for both rows of i
    cols = np.concatenate([np.repeat(row_cols, 2, axis=0).ravel(), BA_NCAM * n + 3 * m + np.arange(p)])
    rows = np.concatenate([BA_DIRS * np.arange(2 * p + 1), 2 * p * BA_DIRS + 1 + np.arange(p)])

    def pack(v: np.ndarray) -> list:
        return v[:30].tolist() + v[-1:].tolist() if cut else v.tolist()
    return {"rows": pack(rows), "cols": pack(cols), "vals": pack(vals)}


# ---------------------------------------------------------------------------
# ht: a Jacobian by one vector-forward sweep (26 theta directions, plus 2
# compressed directions for us)


class Ht(Eval):
    module = "ht"
    modes = ("vector-forward",)
    load_options = {"wrt": ("theta", "us")}

    def __init__(self) -> None:
        super().__init__()
        self.fixed: dict[int, Any] = {}  # a build per number of directions, made when needed

    def vector_module(self, nbdirs: int) -> Any:
        """The module built for ``nbdirs`` directions (28 with GradBench's 26 pose
        parameters: ht_simple_dv's 26 and ht_complicated_dv's 28, rounded by ``lanes``)."""
        if nbdirs not in self.fixed:
            self.fixed[nbdirs] = self.load(nbdirs)
        return self.fixed[nbdirs]

    def _prepare(self, inp: dict) -> tuple[np.ndarray, np.ndarray | None, list[Any], int]:
        data, model = inp["data"], inp["data"]["model"]
        theta = f64(inp["theta"])
        corr = i64(data["correspondences"])
        npts = corr.shape[0]
        us_in = np.asarray(inp.get("us", []), dtype=np.float64)
        us = f64(us_in.reshape(npts, 2)) if us_in.size else None
        model_args = (self.raw.a(i64(model["parents"])) + self.raw.a(f64(model["base_relatives"]))
                      + self.raw.a(f64(model["inverse_base_absolutes"]))
                      + self.raw.a(f64(model["base_positions"])) + self.raw.a(f64(model["weights"]))
                      + [bool(model["is_mirrored"])])
        if us is not None:
            model_args += self.raw.a(i64(model["triangles"]))
        tail = self.raw.a(corr) + self.raw.a(f64(data["points"]))
        return theta, us, model_args + tail, npts

    def fn_objective(self, inp: dict) -> Job:
        theta, us, rest, npts = self._prepare(inp)
        err = np.zeros(3 * npts)
        if us is None:
            args = self.raw.a(theta) + rest + self.raw.a(err)
            fn = self.m.lib.ht_simple
        else:
            args = self.raw.a(theta) + self.raw.a(us) + rest + self.raw.a(err)
            fn = self.m.lib.ht_complicated

        def run() -> None:
            fn(*args)
        return Job(run, lambda: err.tolist())

    def fn_jacobian(self, inp: dict) -> Job:
        theta, us, rest, npts = self._prepare(inp)
        ntheta = theta.shape[0]
        err = np.zeros(3 * npts)
        ncols = ntheta if us is None else 2 + ntheta
        nbdirs = lanes(ncols)  # the last ones zero
        if us is None:
            # dense in theta: one direction per parameter
            thetad = np.eye(ntheta, nbdirs)
            errd = np.zeros((3 * npts, nbdirs))
            args = self.raw.a(theta, thetad) + rest + self.raw.a(err, errd) + [nbdirs]
            fn = self.vector_module(nbdirs).ht_simple_dv
        else:
            # err[3 i + j] depends on us[i, 0:2] only: the columns "us[:, 0]" and
            # "us[:, 1]" are two groups of structurally orthogonal columns, so 2
            # directions give the whole (block-diagonal) us part; the eval wants it
            # compressed that way too, as the first two columns
            thetad = np.zeros((ntheta, nbdirs))
            thetad[:, 2:ncols] = np.eye(ntheta)
            usd = np.zeros((npts, 2, nbdirs))
            usd[:, 0, 0] = 1.0
            usd[:, 1, 1] = 1.0
            errd = np.zeros((3 * npts, nbdirs))
            args = (self.raw.a(theta, thetad) + self.raw.a(us, usd) + rest + self.raw.a(err, errd)
                    + [nbdirs])
            fn = self.vector_module(nbdirs).ht_complicated_dv

        def run() -> None:
            fn(*args)
        # errd[row, col] is the Jacobian entry: a list of rows
        return Job(run, lambda: errd[:, :ncols].tolist())


# ---------------------------------------------------------------------------
# kmeans: the gradient and the Hessian diagonal by one Hessian-vector product


class Kmeans(Eval):
    module = "kmeans"
    modes = ("hvp",)
    load_options = {"wrt": ("centroids",)}

    def _prepare(self, inp: dict) -> tuple[np.ndarray, np.ndarray]:
        centroids = f64(inp["centroids"])
        if centroids.ndim != 2:
            raise ValueError(f"centroids must be a list of points, got shape {centroids.shape}")
        points = f64(np.reshape(f64(inp["points"]), (-1, centroids.shape[1])))
        return points, centroids

    def fn_cost(self, inp: dict) -> Job:
        points, centroids = self._prepare(inp)
        args, res = self.raw.a(points) + self.raw.a(centroids), [0.0]
        fn = self.m.lib.kmeans_objective

        def run() -> None:
            res[0] = fn(*args)
        return Job(run, lambda: res[0])

    def fn_dir(self, inp: dict) -> Job:
        # The Newton direction J / H. The Hessian w.r.t. the centroids is diagonal (each
        # point's term is a quadratic in the coordinates of its nearest centroid only,
        # the choice of that centroid being piecewise constant; see kmeans.py), so
        # H 1 is its diagonal: one call of the hvp kmeans_objective_b_d along the
        # all-ones direction gives it, together with the gradient (centroidsb, from the
        # reverse sweep that kmeans_objective_b_d contains).
        points, centroids = self._prepare(inp)
        ones = np.ones_like(centroids)  # the direction: a constant seed, like the _dv seeds
        grad, hdiag = np.zeros_like(centroids), np.zeros_like(centroids)
        args = self.raw.a(points) + self.raw.a(centroids, ones, grad, hdiag) + [1.0]
        fn = self.m.kmeans_objective_b_d

        def run() -> None:
            grad.fill(0.0)
            hdiag.fill(0.0)
            fn(*args)
        # J H^-1 with H diagonal: an entrywise division (k d of them, not timed; the eval
        # guarantees every cluster is nonempty, so no diagonal entry is 0)
        return Job(run, lambda: (grad / hdiag).tolist())


# ---------------------------------------------------------------------------
# particle, saddle: nested derivatives, all inside the generated C
#
# The whole computation (the outer gradient descent, and each gradient it takes of a
# function that takes gradients itself) is one compiled primal function per variant:
# the derivatives are grad(...) / jvp(...) calls in the module, which adgen turns into
# generated derivative functions (forward or reverse over forward or reverse).


class Particle(Eval):
    module = "particle"
    modes = ("primal",)

    def job(self, function: str, input: Any) -> Job:
        if function not in ("rr", "rf", "fr", "ff"):
            raise UnknownFunction(function)
        w0, res = float(input["w"]), [0.0]
        fn = getattr(self.m.lib, f"particle_{function}")

        def run() -> None:
            res[0] = fn(w0)
        return Job(run, lambda: res[0])


class Saddle(Eval):
    module = "saddle"
    modes = ("primal",)

    def job(self, function: str, input: Any) -> Job:
        if function not in ("rr", "rf", "fr", "ff"):
            raise UnknownFunction(function)
        s0, s1 = (float(v) for v in input["start"])
        out = [self.m.ffi.new("double *") for _ in range(4)]
        fn = getattr(self.m.lib, f"saddle_{function}")

        def run() -> None:
            fn(s0, s1, *out)
        return Job(run, lambda: [p[0] for p in out])


EVALS: dict[str, type[Eval]] = {
    "hello": Hello, "lse": Lse, "gmm": Gmm, "llsq": Llsq, "det": Det, "ode": Ode,
    "lstm": Lstm, "ba": Ba, "ht": Ht, "kmeans": Kmeans, "particle": Particle,
    "saddle": Saddle,
}


# ---------------------------------------------------------------------------
# the protocol


def runs_wanted(input: Any) -> tuple[int, float]:
    """(min_runs, min_seconds) of an input; `hello` has neither (one run), older evals
    send `runs`."""
    if isinstance(input, dict):
        if "min_runs" in input or "min_seconds" in input:
            return max(1, int(input.get("min_runs", 1))), float(input.get("min_seconds", 0.0))
        if "runs" in input:
            return max(1, int(input["runs"])), 0.0
    return 1, 0.0


class UnknownFunction(Exception):
    """An evaluate message names a function its module does not have."""


def evaluate(job: Job, min_runs: int, min_seconds: float) -> list[dict[str, Any]]:
    timings: list[dict[str, Any]] = []
    elapsed = 0
    limit = math.ceil(min_seconds * 1e9)
    while len(timings) < min_runs or elapsed < limit:
        start = time.perf_counter_ns()
        job.run()
        ns = time.perf_counter_ns() - start
        timings.append({"name": "evaluate", "nanoseconds": ns})
        elapsed += ns
    return timings


class Tool:
    def __init__(self) -> None:
        self.defined: dict[str, Eval] = {}

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        kind = message.get("kind")
        response: dict[str, Any] = {"id": message.get("id")}
        if kind == "start":
            import adgen
            response["tool"] = "adgen"
            response["config"] = {"adgen": adgen.__version__, "evals": sorted(EVALS)}
        elif kind == "define":
            response.update(self.define(str(message.get("module"))))
        elif kind == "evaluate":
            response.update(self.evaluate(message))
        return response

    def define(self, module: str) -> dict[str, Any]:
        if module not in EVALS:
            why = UNSUPPORTED.get(module, "not implemented by the adgen tool")
            return {"success": False, "error": f"module {module!r}: {why}"}
        start = time.perf_counter_ns()
        try:
            if module not in self.defined:
                self.defined[module] = EVALS[module]()
        except Exception as e:  # a module adgen cannot build: report it, keep serving
            return {"success": False, "error": "".join(traceback.format_exception(e))}
        return {"success": True,
                "timings": [{"name": "define", "nanoseconds": time.perf_counter_ns() - start}]}

    def evaluate(self, message: dict[str, Any]) -> dict[str, Any]:
        module, function = message.get("module"), message.get("function")
        ev = self.defined.get(str(module))
        if ev is None:
            defined = self.define(str(module))
            if not defined["success"]:
                return defined
            ev = self.defined[str(module)]
        input = message.get("input")
        try:
            job = ev.job(str(function), input)
        except UnknownFunction:  # (a KeyError of the job, an input without a field, is not)
            return {"success": False, "error": f"module {module!r} has no function {function!r}"}
        except Exception as e:
            return {"success": False, "error": "".join(traceback.format_exception(e))}
        try:
            timings = evaluate(job, *runs_wanted(input))
            output = job.output()
        except Exception as e:
            return {"success": False, "error": "".join(traceback.format_exception(e))}
        return {"success": True, "output": output, "timings": timings}


def main() -> None:
    # The protocol owns stdout: keep a private handle on it and send everything else
    # that would print there (adgen, gcc, the C code) to stderr.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    tool = Tool()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError(f"a message is a JSON object, got {type(message).__name__}")
        except (ValueError, RecursionError) as e:  # no id to answer: say so on stderr, go on
            # (RecursionError: JSON nested deeper than the parser goes)
            what = str(e) or type(e).__name__
            print(f"adgen tool: ignored a line that is not a message ({what}): "
                  f"{line.strip()[:200]}", file=sys.stderr)
            continue
        text = answer(tool, message)
        if text is not None:
            out.write(text + "\n")
            out.flush()


def answer(tool: Tool, message: dict[str, Any]) -> str | None:
    """The response line to ``message``.  A failure that its handling does not answer
    itself (a bug of the tool, a message it did not foresee) is answered as a failed
    evaluate is, ``{"id", "success": false, "error"}``, and the tool reads on; a message
    whose id cannot be written back is not answered (said on stderr)."""
    try:
        return dumps(tool.handle(message))
    except Exception as e:  # noqa: BLE001 - answered, not the end of the stream
        error = "".join(traceback.format_exception(e))
    try:
        return dumps({"id": message.get("id"), "success": False, "error": error})
    except (ValueError, TypeError, RecursionError) as e:
        print(f"adgen tool: cannot answer a message ({e or type(e).__name__}): {error}",
              file=sys.stderr)
        return None


def dumps(response: dict[str, Any]) -> str:
    """``response`` as one line of JSON, a non-finite float written ``null`` (as GradBench's
    C++ references write it): ``NaN`` and ``Infinity`` are not JSON, and the intermediary
    refuses the whole line."""
    try:
        return json.dumps(response, allow_nan=False)
    except ValueError:
        return json.dumps(finite(response), allow_nan=False)


def finite(value: Any) -> Any:
    """``value`` with every non-finite float made None (NaN and Infinity are not JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
