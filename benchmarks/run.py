#!/usr/bin/env python3
"""Gradient cost of adgen's reverse mode, and of JAX and PyTorch on the same problems.

For every problem and tool: ratio = time(derivative) / time(primal), the median
over repetitions of the two times measured in the same repetition, and for the
peers the derivative time of adgen over theirs.  Problems: GradBench's gmm,
lstm, lse and ode, the benchmarks of seed 000's Table 2 (the Zygote paper:
sincos, pow_loop, logsumexp, logreg, mlp) and rosenbrock.

Tools (rows of the table):

- ``adgen``: the C that adgen generates (``adgen.load``, modes primal and
  reverse), called through its raw cffi entry points from Python;
- ``adgen-c`` / ``manual-c``: the C benchmark of benchmarks/c/bench.c, in which
  the generated C (and a hand-written Rosenbrock gradient) is timed in C, no
  Python involved;
- ``jax``: ``jax.jit(f)`` and ``jax.jit(jax.grad(f))`` on the CPU, float64;
- ``torch``: ``f`` under ``torch.no_grad()`` and ``torch.autograd.grad``, CPU, float64.

JAX and PyTorch are optional (``pip install -e ".[bench]"``); without them
the table has the adgen rows and says the peers were skipped.  Every peer's
derivative is compared with adgen's, and adgen's with central differences; a
mismatch makes the exit code 1.  See benchmarks/README.md.

    python benchmarks/run.py                # full sizes, 15 repetitions (about 3 minutes)
    python benchmarks/run.py --quick        # small sizes, 5 repetitions (about 1 minute)
    python benchmarks/run.py --json results.json --only gmm,lse --tools adgen,jax
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROBLEMS_DIR = HERE / "problems"
GRADBENCH_DIR = HERE / "gradbench"

CC = os.environ.get("CC", "gcc")
#: the C compiler flags of adgen's code (``--cflags``): adgen's defaults, for this CPU (XLA
#: compiles JAX's code for the CPU it runs on too)
CFLAGS = ["-O3", "-fopenmp-simd", "-DADGEN_VECTORIZE", "-march=native"]

# --- tolerances --------------------------------------------------------------
# A peer's derivative (and value) must agree with adgen's to PEER_TOL, relative
# to the largest entry of adgen's; adgen's derivative must agree with central
# differences of adgen's compiled primal to FD_TOL at a few entries, relative to
# the largest entry of the gradient.  Everything runs in float64, so a real
# disagreement is many orders of magnitude above these.
PEER_TOL = 1e-6
FD_TOL = 1e-4
# the C driver's checks (bench.c): against a reference gradient, central differences, and
# the value against the reference's
C_REF_TOL = 1e-7
C_FD_TOL = 1e-4
C_VALUE_TOL = 1e-12
#: the most repetitions the C driver takes (bench.c)
MAX_REPS = 1000

ALL_TOOLS = ("c", "adgen", "jax", "torch")


# =============================================================================
# Small helpers


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)
    except subprocess.CalledProcessError as e:
        sys.stderr.write(f"run.py: command failed ({e.returncode}): {' '.join(map(str, cmd))}\n")
        sys.stderr.write(e.stdout + e.stderr)
        sys.exit(1)


def fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1.0:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.2f} us"
    return f"{s * 1e9:.1f} ns"


def rel_err(a: Any, ref: Any) -> float:
    """max |a - ref| / max |ref| (0 when both are 0)."""
    import numpy as np

    a = np.asarray(a, dtype=np.float64).ravel()
    ref = np.asarray(ref, dtype=np.float64).ravel()
    if a.shape != ref.shape:
        return math.inf
    if not np.all(np.isfinite(a)):
        return math.inf
    num = float(np.max(np.abs(a - ref))) if a.size else 0.0
    den = float(np.max(np.abs(ref))) if ref.size else 0.0
    if den == 0.0:
        return 0.0 if num == 0.0 else math.inf
    return num / den


# =============================================================================
# Timing: paired repetitions of a primal and a derivative


@dataclass
class Timing:
    primal_seconds: float  # median over the repetitions of the time of one call
    derivative_seconds: float
    ratio: float  # median over the repetitions of derivative / primal (paired)
    ratio_of_medians: float
    calls_primal: int  # consecutive calls timed in one repetition
    calls_derivative: int
    reps: int


def _calls_for(fn: Callable[[], Any], target: float) -> int:
    """How many consecutive calls of fn take about `target` seconds (at least 1).
    A block shorter than `target` is timed three times and the fastest kept, so
    that one interruption by another process does not spoil the estimate."""
    n = 1
    while True:
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best = min(best, time.perf_counter() - t0)
            if best >= target:
                break
        if best >= target / 8 or n >= 1 << 24:
            return max(1, round(n * target / max(best, 1e-9)))
        n *= 8


def time_pair(primal: Callable[[], Any], derivative: Callable[[], Any], reps: int,
              target: float) -> Timing:
    """Each repetition times `cp` consecutive primal calls and `cd` consecutive
    derivative calls (each block about `target` seconds; which goes first
    alternates), so the ratio of one repetition compares times taken moments
    apart.  Two warm-up calls of each are not timed."""
    for _ in range(2):
        primal()
        derivative()
    gc_was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()  # as timeit does: no collection pauses inside a timed block
    try:
        return _time_pair(primal, derivative, reps, target)
    finally:
        if gc_was_enabled:
            gc.enable()


def _time_pair(primal: Callable[[], Any], derivative: Callable[[], Any], reps: int,
               target: float) -> Timing:
    cp = _calls_for(primal, target)
    cd = _calls_for(derivative, target)
    tp, td, tr = [], [], []
    clock = time.perf_counter
    for r in range(reps):
        gc.collect()  # between repetitions, outside the timed blocks
        t_p = t_d = 0.0
        for half in range(2):
            if (half + r) % 2:
                t0 = clock()
                for _ in range(cd):
                    derivative()
                t_d = (clock() - t0) / cd
            else:
                t0 = clock()
                for _ in range(cp):
                    primal()
                t_p = (clock() - t0) / cp
        tp.append(t_p)
        td.append(t_d)
        tr.append(t_d / t_p)
    mp, md = statistics.median(tp), statistics.median(td)
    return Timing(mp, md, statistics.median(tr), md / mp, cp, cd, reps)


# =============================================================================
# The problems run from Python (adgen through cffi, JAX, PyTorch)


@dataclass
class Problem:
    """One objective: the adgen module, the inputs, and the peers' versions of it.

    `params` is the adgen function's parameter list in order; `wrt` the
    parameters differentiated (their adjoints are the derivative compared);
    `seeds` gives, for an array the function writes, the adjoint seed of its
    final contents (ode: e_{n-1}); a function returning a float gets retb = 1.
    `peer(lib, inputs)` returns (primal, objective) for lib "jax" or "torch":
    primal(*wrt_values, **const) computes what the adgen primal computes,
    objective the scalar whose gradient is the derivative.
    """

    name: str
    suite: str
    module: Path
    function: str
    params: list[str]
    wrt: tuple[str, ...]
    sizes: dict[str, dict[str, int]]  # "quick" / "full" -> workload parameters
    make_inputs: Callable[[dict[str, int]], dict[str, Any]]
    peer: Callable[[str, dict[str, Any]], tuple[Callable, Callable]]
    seeds: Callable[[dict[str, Any]], dict[str, Any]] = lambda inp: {}
    returns_float: bool = True
    peer_consts: tuple[str, ...] = ()  # inputs the peers take besides wrt (others are baked in)
    load_all_floats: bool = False  # adgen.load without wrt (every float parameter active)
    fd_step: float = 1e-6  # relative step of the central differences
    description: str = ""

    def workload(self, size: dict[str, int]) -> str:
        return ", ".join(f"{k}={v:,}" for k, v in size.items())


def _rng(seed: int):
    import numpy as np

    return np.random.default_rng(seed)


# ---- GradBench: gmm -----------------------------------------------------------


def gmm_inputs(size: dict[str, int]) -> dict[str, Any]:
    d, k, n = size["d"], size["k"], size["n"]
    r = _rng(1)
    return {
        "alpha": r.normal(size=k),
        "mu": r.uniform(size=(k, d)),
        "q": r.normal(scale=0.2, size=(k, d)),
        "l": r.normal(scale=0.2, size=(k, d * (d - 1) // 2)),
        "x": r.normal(size=(n, d)),
        "gamma": 1.0,
        "m": 0,
    }


def gmm_peer(lib: str, inp: dict[str, Any]):
    import numpy as np

    k, d = inp["mu"].shape
    n = inp["x"].shape[0]
    gamma, wm = inp["gamma"], inp["m"]
    # the strictly lower triangle of Q_k, column by column (column i: rows i+1..d-1)
    rows = np.array([j for i in range(d) for j in range(i + 1, d)], dtype=np.int64)
    cols = np.array([i for i in range(d) for j in range(i + 1, d)], dtype=np.int64)
    n_w = d + wm + 1
    log_gamma_distrib = 0.25 * d * (d - 1) * math.log(math.pi) + sum(
        math.lgamma((n_w + 1 - j) / 2) for j in range(1, d + 1))
    c_w = n_w * d * (math.log(gamma) - 0.5 * math.log(2.0)) - log_gamma_distrib
    constant = -n * d * 0.5 * math.log(2.0 * math.pi) + k * c_w

    if lib == "jax":
        import jax.numpy as jnp
        from jax.scipy.special import logsumexp

        def f(alpha, mu, q, l, x):
            qdiag = jnp.exp(q)
            sum_qs = jnp.sum(q, axis=1)
            L = jnp.zeros((k, d, d)).at[:, rows, cols].set(l)
            xc = x[:, None, :] - mu[None, :, :]
            qx = qdiag[None] * xc + jnp.einsum("kji,nki->nkj", L, xc)
            main = alpha[None] + sum_qs[None] - 0.5 * jnp.sum(qx * qx, axis=2)
            slse = jnp.sum(logsumexp(main, axis=1))
            wish = jnp.sum(0.5 * gamma * gamma * (jnp.sum(qdiag * qdiag, axis=1)
                                                   + jnp.sum(l * l, axis=1)) - wm * sum_qs)
            return constant + slse - n * logsumexp(alpha) - wish
    else:
        import torch

        rows_t, cols_t = torch.from_numpy(rows), torch.from_numpy(cols)

        def f(alpha, mu, q, l, x):
            qdiag = torch.exp(q)
            sum_qs = torch.sum(q, dim=1)
            L = torch.zeros((k, d, d), dtype=torch.float64)
            L[:, rows_t, cols_t] = l
            xc = x[:, None, :] - mu[None, :, :]
            qx = qdiag[None] * xc + torch.einsum("kji,nki->nkj", L, xc)
            main = alpha[None] + sum_qs[None] - 0.5 * torch.sum(qx * qx, dim=2)
            slse = torch.sum(torch.logsumexp(main, dim=1))
            wish = torch.sum(0.5 * gamma * gamma * (torch.sum(qdiag * qdiag, dim=1)
                                                     + torch.sum(l * l, dim=1)) - wm * sum_qs)
            return constant + slse - n * torch.logsumexp(alpha, dim=0) - wish
    return f, f


# ---- GradBench: lstm ----------------------------------------------------------


def lstm_inputs(size: dict[str, int]) -> dict[str, Any]:
    nl, c, b = size["l"], size["c"], size["b"]
    r = _rng(2)
    return {
        "main_params": r.uniform(-1, 1, size=(2 * nl, 4 * b)),
        "extra_params": r.uniform(-1, 1, size=(3, b)),
        "state": r.uniform(-1, 1, size=(2 * nl, b)),
        "sequence": r.uniform(-1, 1, size=(c, b)),
    }


def lstm_peer(lib: str, inp: dict[str, Any]):
    nl = inp["main_params"].shape[0] // 2
    c, b = inp["sequence"].shape

    def cell_step(xp, main, extra, hs, cs, inp_t, sigmoid):
        new_h, new_c = [], []
        x = inp_t * extra[0]
        for layer in range(nl):
            w, bias = main[2 * layer], main[2 * layer + 1]
            hid = hs[layer]
            forget = sigmoid(x * w[:b] + bias[:b])
            ingate = sigmoid(hid * w[b:2 * b] + bias[b:2 * b])
            outgate = sigmoid(x * w[2 * b:3 * b] + bias[2 * b:3 * b])
            change = xp.tanh(hid * w[3 * b:] + bias[3 * b:])
            cell = cs[layer] * forget + ingate * change
            x = outgate * xp.tanh(cell)
            new_h.append(x)
            new_c.append(cell)
        ypred = x * extra[1] + extra[2]
        return new_h, new_c, ypred

    if lib == "jax":
        import jax
        import jax.numpy as jnp

        def f(main_params, extra_params, state, sequence):
            def step(carry, t_in):
                hs, cs = carry
                x_t, y_next = t_in
                new_h, new_c, ypred = cell_step(jnp, main_params, extra_params, hs, cs, x_t,
                                                jax.nn.sigmoid)
                lse = jnp.log(jnp.sum(jnp.exp(ypred)) + 2.0)
                return (jnp.stack(new_h), jnp.stack(new_c)), jnp.sum(y_next * (ypred - lse))

            _, parts = jax.lax.scan(step, (state[0::2], state[1::2]),
                                    (sequence[:-1], sequence[1:]))
            return -jnp.sum(parts) / ((c - 1) * b)
    else:
        import torch

        def f(main_params, extra_params, state, sequence):
            hs = [state[2 * i] for i in range(nl)]
            cs = [state[2 * i + 1] for i in range(nl)]
            total = 0.0
            for t in range(c - 1):
                hs, cs, ypred = cell_step(torch, main_params, extra_params, hs, cs, sequence[t],
                                          torch.sigmoid)
                lse = torch.log(torch.sum(torch.exp(ypred)) + 2.0)
                total = total + torch.sum(sequence[t + 1] * (ypred - lse))
            return -total / ((c - 1) * b)
    return f, f


# ---- GradBench: lse, and the Zygote set's logsumexp -------------------------


def lse_inputs(size: dict[str, int]) -> dict[str, Any]:
    return {"x": _rng(3).uniform(-2.0, 2.0, size=size["n"])}


def lse_peer(lib: str, inp: dict[str, Any]):
    # the same formula as the adgen module: log(sum(exp(x - max x))) + max x
    if lib == "jax":
        import jax.numpy as jnp

        def f(x):
            a = jnp.max(x)
            return jnp.log(jnp.sum(jnp.exp(x - a))) + a
    else:
        import torch

        def f(x):
            a = torch.max(x)
            return torch.log(torch.sum(torch.exp(x - a))) + a
    return f, f


# ---- GradBench: ode -----------------------------------------------------------


def ode_inputs(size: dict[str, int]) -> dict[str, Any]:
    import numpy as np

    n = size["n"]
    return {"x": _rng(4).uniform(0.5, 1.5, size=n), "s": size["s"], "yf": np.zeros(n)}


def ode_seeds(inp: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    e = np.zeros_like(inp["x"])
    e[-1] = 1.0  # the gradient of yf[n - 1], as GradBench's ode asks
    return {"yf": e}


def ode_peer(lib: str, inp: dict[str, Any]):
    s = inp["s"]
    n = len(inp["x"])
    h = 2.0 / s
    if lib == "jax":
        import jax
        import jax.numpy as jnp

        def primal(x):
            def fun(y):
                return jnp.concatenate([x[:1], x[1:] * y[:-1]])

            def body(_, y):
                k1 = fun(y)
                k2 = fun(y + h * k1 / 2.0)
                k3 = fun(y + h * k2 / 2.0)
                k4 = fun(y + h * k3)
                return y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0

            return jax.lax.fori_loop(0, s, body, jnp.zeros(n))
    else:
        import torch

        def primal(x):
            def fun(y):
                return torch.cat([x[:1], x[1:] * y[:-1]])

            y = torch.zeros(n, dtype=torch.float64)
            for _ in range(s):
                k1 = fun(y)
                k2 = fun(y + h * k1 / 2.0)
                k3 = fun(y + h * k2 / 2.0)
                k4 = fun(y + h * k3)
                y = y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
            return y

    def objective(x):
        return primal(x)[-1]
    return primal, objective


# ---- Zygote set: sincos, pow_loop -------------------------------------------


def sincos_inputs(size: dict[str, int]) -> dict[str, Any]:
    return {"x": 0.5}


def sincos_peer(lib: str, inp: dict[str, Any]):
    if lib == "jax":
        import jax.numpy as jnp

        def f(x):
            return jnp.sin(jnp.cos(x))
    else:
        import torch

        def f(x):
            return torch.sin(torch.cos(x))
    return f, f


def pow_inputs(size: dict[str, int]) -> dict[str, Any]:
    return {"x": 0.9995, "n": size["n"]}


def pow_peer(lib: str, inp: dict[str, Any]):
    n = inp["n"]
    if lib == "jax":
        import jax

        def f(x):
            return jax.lax.fori_loop(0, n, lambda i, r: r * x, 1.0 + 0.0 * x)
    else:
        def f(x):
            r = 1.0 + 0.0 * x
            for _ in range(n):
                r = r * x
            return r
    return f, f


# ---- Zygote set: logistic regression, 2-layer MLP ---------------------------


def logreg_inputs(size: dict[str, int]) -> dict[str, Any]:
    m, d = size["m"], size["d"]
    r = _rng(5)
    return {
        "w": r.normal(size=d),
        "b": 0.1,
        "X": r.normal(scale=1.0 / math.sqrt(d), size=(m, d)),
        "y": (r.uniform(size=m) < 0.5).astype("float64"),
    }


def logreg_peer(lib: str, inp: dict[str, Any]):
    if lib == "jax":
        import jax.numpy as jnp

        def f(w, b, X, y):
            z = X @ w + b
            return jnp.mean(jnp.maximum(z, 0.0) + jnp.log1p(jnp.exp(-jnp.abs(z))) - y * z)
    else:
        import torch

        def f(w, b, X, y):
            z = X @ w + b
            return torch.mean(torch.clamp(z, min=0.0) + torch.log1p(torch.exp(-torch.abs(z))) - y * z)
    return f, f


def mlp_inputs(size: dict[str, int]) -> dict[str, Any]:
    import numpy as np

    batch, nin, nh, nout = size["batch"], size["in"], size["hidden"], size["out"]
    r = _rng(6)
    Y = np.zeros((batch, nout))
    Y[np.arange(batch), r.integers(0, nout, size=batch)] = 1.0
    return {
        "W1": r.normal(scale=1.0 / math.sqrt(nin), size=(nh, nin)),
        "b1": r.normal(scale=0.1, size=nh),
        "W2": r.normal(scale=1.0 / math.sqrt(nh), size=(nout, nh)),
        "b2": r.normal(scale=0.1, size=nout),
        "X": r.uniform(size=(batch, nin)),
        "Y": Y,
    }


def mlp_peer(lib: str, inp: dict[str, Any]):
    batch = inp["X"].shape[0]
    if lib == "jax":
        import jax.numpy as jnp
        from jax.scipy.special import logsumexp

        def f(W1, b1, W2, b2, X, Y):
            h = jnp.maximum(X @ W1.T + b1, 0.0)
            o = h @ W2.T + b2
            return jnp.sum(Y * (logsumexp(o, axis=1)[:, None] - o)) / batch
    else:
        import torch

        def f(W1, b1, W2, b2, X, Y):
            h = torch.clamp(X @ W1.T + b1, min=0.0)
            o = h @ W2.T + b2
            return torch.sum(Y * (torch.logsumexp(o, dim=1)[:, None] - o)) / batch
    return f, f


PROBLEMS: list[Problem] = [
    Problem("gmm", "GradBench", GRADBENCH_DIR / "gmm.py", "gmm_objective",
            ["alpha", "mu", "q", "l", "x", "gamma", "m"], ("alpha", "mu", "q", "l"),
            {"quick": {"d": 2, "k": 5, "n": 1000}, "full": {"d": 10, "k": 25, "n": 1000}},
            gmm_inputs, gmm_peer, peer_consts=("x",), fd_step=1e-5,
            description="Gaussian mixture log-posterior (ADBench), gradient wrt alpha, mu, q, l"),
    Problem("lstm", "GradBench", GRADBENCH_DIR / "lstm.py", "lstm_objective",
            ["main_params", "extra_params", "state", "sequence"], ("main_params", "extra_params"),
            {"quick": {"l": 2, "c": 128, "b": 14}, "full": {"l": 2, "c": 1024, "b": 14}},
            lstm_inputs, lstm_peer, peer_consts=("state", "sequence"),
            description="ADBench LSTM loss over a sequence, gradient wrt the parameters"),
    Problem("lse", "GradBench", GRADBENCH_DIR / "lse.py", "lse", ["x"], ("x",),
            {"quick": {"n": 100_000}, "full": {"n": 1_000_000}},
            lse_inputs, lse_peer, fd_step=1e-2,
            description="log(sum(exp(x))) with the max trick"),
    Problem("ode", "GradBench", GRADBENCH_DIR / "ode.py", "ode", ["x", "s", "yf"], ("x",),
            {"quick": {"n": 100, "s": 100}, "full": {"n": 100, "s": 1000}},
            ode_inputs, ode_peer, seeds=ode_seeds, returns_float=False, load_all_floats=True,
            description="s RK4 steps of y0' = x0, yi' = xi y(i-1); gradient of yf[n-1] wrt x"),
    Problem("sincos", "Zygote", PROBLEMS_DIR / "sincos.py", "sin_cos", ["x"], ("x",),
            {"quick": {}, "full": {}}, sincos_inputs, sincos_peer,
            description="sin(cos(x)), one scalar"),
    Problem("pow_loop", "Zygote", PROBLEMS_DIR / "pow_loop.py", "pow_loop", ["x", "n"], ("x",),
            {"quick": {"n": 1000}, "full": {"n": 10_000}}, pow_inputs, pow_peer,
            description="r = r * x, n times (the paper's 'loop')"),
    Problem("logsumexp", "Zygote", PROBLEMS_DIR / "logsumexp.py", "logsumexp", ["x"], ("x",),
            {"quick": {"n": 1000}, "full": {"n": 10_000}}, lse_inputs, lse_peer, fd_step=1e-2,
            description="log(sum(exp(x))) with the max trick, a short vector"),
    Problem("logreg", "Zygote", PROBLEMS_DIR / "logreg.py", "logreg", ["w", "b", "X", "y"],
            ("w", "b"), {"quick": {"m": 100, "d": 784}, "full": {"m": 1000, "d": 784}},
            logreg_inputs, logreg_peer, peer_consts=("X", "y"),
            description="logistic regression: mean log-loss, gradient wrt w, b"),
    Problem("mlp", "Zygote", PROBLEMS_DIR / "mlp.py", "mlp", ["W1", "b1", "W2", "b2", "X", "Y"],
            ("W1", "b1", "W2", "b2"),
            {"quick": {"batch": 10, "in": 784, "hidden": 32, "out": 10},
             "full": {"batch": 100, "in": 784, "hidden": 128, "out": 10}},
            mlp_inputs, mlp_peer, peer_consts=("X", "Y"),
            description="784-hidden-10 relu MLP, softmax cross-entropy, gradient wrt the weights"),
]
PROBLEM_NAMES = [p.name for p in PROBLEMS]


# ---- adgen through cffi -------------------------------------------------------


class AdgenRunner:
    """The compiled primal and adjoint of one problem, called through their raw
    cffi entry points (``m.lib.f`` and ``m.f_b``) with pre-built arguments."""

    def __init__(self, prob: Problem, inputs: dict[str, Any]) -> None:
        import numpy as np

        import adgen

        self.prob = prob
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.m = adgen.load(prob.module, modes=("primal", "reverse"),
                                wrt=None if prob.load_all_floats else prob.wrt, cflags=CFLAGS)
        self.ffi = self.m.ffi
        self.inputs = {k: (np.ascontiguousarray(v, dtype=np.float64)
                           if isinstance(v, np.ndarray) else v) for k, v in inputs.items()}
        self.primal_fn = getattr(self.m.lib, prob.function)
        self.adjoint_fn = getattr(self.m, prob.function + "_b")
        self.seeds = prob.seeds(self.inputs)
        # adjoint arrays: one per differentiated array and per seeded written array
        self.adj: dict[str, Any] = {}
        self.scalar_adj: dict[str, Any] = {}
        for p in prob.params:
            v = self.inputs[p]
            if isinstance(v, np.ndarray) and (p in prob.wrt or p in self.seeds):
                self.adj[p] = np.zeros_like(v)
            elif isinstance(v, float) and p in prob.wrt:
                self.scalar_adj[p] = self.ffi.new("double *")
        self.primal_args = self._args(self.inputs, adjoint=False)
        self.adjoint_args = self._args(self.inputs, adjoint=True)
        for fn, args in ((self.primal_fn, self.primal_args), (self.adjoint_fn, self.adjoint_args)):
            n = len(self.ffi.typeof(fn).args)
            if n != len(args):
                raise RuntimeError(f"{prob.function}: built {len(args)} arguments for a C function "
                                   f"of {n} ({self.ffi.typeof(fn)})")
        self.fills = list(self.adj.items())
        self.scalar_ptrs = list(self.scalar_adj.values())

    def _ptr(self, a: Any) -> Any:
        return self.ffi.from_buffer("double[]", a)

    def _args(self, inputs: dict[str, Any], adjoint: bool) -> list[Any]:
        import numpy as np

        args: list[Any] = []
        for p in self.prob.params:
            v = inputs[p]
            if isinstance(v, np.ndarray):
                args.append(self._ptr(v))
                if adjoint and p in self.adj:
                    args.append(self._ptr(self.adj[p]))
                args.extend(v.shape)
            else:
                args.append(v)
                if adjoint and p in self.scalar_adj:
                    args.append(self.scalar_adj[p])
        if adjoint and self.prob.returns_float:
            args.append(1.0)
        return args

    # what is timed
    def primal(self) -> Any:
        return self.primal_fn(*self.primal_args)

    def derivative(self) -> Any:
        # the adjoint adds to its adjoint arrays and consumes the output seeds:
        # zero / reseed them first (part of the timed call, as a user must do it)
        for p, a in self.fills:
            if p in self.seeds:
                a[...] = self.seeds[p]
            else:
                a.fill(0.0)
        for ptr in self.scalar_ptrs:
            ptr[0] = 0.0
        return self.adjoint_fn(*self.adjoint_args)

    # results, for the checks
    def value(self) -> Any:
        out = self.primal()
        if not self.prob.returns_float:  # ode: the written array
            return self.inputs["yf"].copy()
        return out

    def gradient(self) -> list[Any]:
        self.derivative()
        out = []
        for p in self.prob.wrt:
            out.append(self.adj[p].copy() if p in self.adj else float(self.scalar_adj[p][0]))
        return out

    def objective_at(self, inputs: dict[str, Any]) -> float:
        out = self.primal_fn(*self._args(inputs, adjoint=False))
        if not self.prob.returns_float:
            return float(inputs["yf"][-1])
        return float(out)

    def fd_check(self, grads: list[Any], step: float, seed: int = 7) -> float:
        """Central differences of the compiled primal at a few entries of each
        differentiated input (its largest gradient entry and two random ones);
        the largest difference relative to the largest gradient entry."""
        import numpy as np

        r = np.random.default_rng(seed)
        gmax = max(float(np.max(np.abs(g))) for g in grads)
        if gmax == 0.0:
            return math.inf
        worst = 0.0
        for p, g in zip(self.prob.wrt, grads):
            v = self.inputs[p]
            if isinstance(v, np.ndarray):
                flat_g = np.asarray(g).ravel()
                picks = {int(np.argmax(np.abs(flat_g)))}
                picks.update(int(i) for i in r.integers(0, flat_g.size, size=2))
                for i in sorted(picks):
                    work = {k: (a.copy() if isinstance(a, np.ndarray) else a)
                            for k, a in self.inputs.items()}
                    flat = work[p].reshape(-1)
                    x0 = flat[i]
                    h = step * max(1.0, abs(x0))
                    flat[i] = x0 + h
                    fp = self.objective_at(work)
                    flat[i] = x0 - h
                    fm = self.objective_at(work)
                    worst = max(worst, abs((fp - fm) / (2 * h) - flat_g[i]))
            else:
                h = step * max(1.0, abs(v))
                fp = self.objective_at({**self.inputs, p: v + h})
                fm = self.objective_at({**self.inputs, p: v - h})
                worst = max(worst, abs((fp - fm) / (2 * h) - g))
        return worst / gmax


# ---- peers ------------------------------------------------------------------


class PeerRunner:
    """JAX (jit, CPU) or PyTorch (CPU, eager + autograd) on the same inputs."""

    def __init__(self, lib: str, prob: Problem, inputs: dict[str, Any]) -> None:
        import numpy as np

        self.lib, self.prob = lib, prob
        primal, objective = prob.peer(lib, inputs)
        wrt = list(prob.wrt)
        # the differentiated inputs, then the constant arrays the peer takes;
        # integers (sizes, step counts) and constant scalars are baked into its function
        const_vals = [inputs[p] for p in prob.peer_consts]
        wrt_vals = [inputs[p] for p in wrt]
        self.n_wrt = len(wrt)
        if lib == "jax":
            import jax
            import jax.numpy as jnp

            def conv(v):
                return jax.device_put(jnp.asarray(v, dtype=jnp.float64))

            args = [conv(v) for v in wrt_vals + const_vals]
            f = jax.jit(primal)
            g = jax.jit(jax.grad(objective, argnums=tuple(range(self.n_wrt))))
            block = jax.block_until_ready
            self._primal = lambda: block(f(*args))
            self._grad = lambda: block(g(*args))
        else:
            import torch

            def conv(v, req):
                t = torch.tensor(np.asarray(v), dtype=torch.float64)
                return t.requires_grad_(req)

            wargs = [conv(v, True) for v in wrt_vals]
            cargs = [conv(v, False) for v in const_vals]
            args = wargs + cargs

            def tprimal():
                with torch.no_grad():
                    return primal(*args)

            def tgrad():
                return torch.autograd.grad(objective(*args), wargs)

            self._primal, self._grad = tprimal, tgrad

    def primal(self) -> Any:
        return self._primal()

    def derivative(self) -> Any:
        return self._grad()

    def value(self) -> Any:
        import numpy as np

        out = self._primal()
        return np.asarray(out.detach() if self.lib == "torch" else out, dtype=np.float64)

    def gradient(self) -> list[Any]:
        import numpy as np

        return [np.asarray(g.detach() if self.lib == "torch" else g, dtype=np.float64)
                for g in self._grad()]


def peer_available(lib: str) -> tuple[bool, str]:
    name = {"jax": "jax", "torch": "torch"}[lib]
    if importlib.util.find_spec(name) is None:
        return False, f"{name} is not installed"
    try:
        if lib == "jax":
            import jax

            jax.config.update("jax_enable_x64", True)
            jax.config.update("jax_platforms", "cpu")
            version = jax.__version__
        else:
            import torch

            torch.set_num_threads(THREADS)
            version = torch.__version__
    except Exception as e:  # noqa: BLE001 - an unusable install is reported, not fatal
        return False, f"{name} failed to import: {e!r}"
    return True, version


THREADS = 1


# =============================================================================
# The C driver (benchmarks/c/bench.c): the generated C timed in C

C_MODULES = {
    "rosenbrock": ROOT / "examples" / "rosenbrock.py",
    "pow_loop": PROBLEMS_DIR / "pow_loop.py",
    "logsumexp": PROBLEMS_DIR / "logsumexp.py",
    "sincos": PROBLEMS_DIR / "sincos.py",
}

# (bench.c problem, problem, tool, workload parameters, calls per timing)
C_FULL = [
    ("rosenbrock", "rosenbrock", "adgen-c", {"n": 1_000_000}, 10),
    ("rosenbrock_manual", "rosenbrock", "manual-c", {"n": 1_000_000}, 10),
    ("sincos", "sincos", "adgen-c", {}, 1_000_000),
    ("pow_loop", "pow_loop", "adgen-c", {"n": 10_000}, 2000),
    ("logsumexp", "logsumexp", "adgen-c", {"n": 1_000_000}, 5),
]
C_QUICK = [
    ("rosenbrock", "rosenbrock", "adgen-c", {"n": 100_000}, 10),
    ("rosenbrock_manual", "rosenbrock", "manual-c", {"n": 100_000}, 10),
    ("sincos", "sincos", "adgen-c", {}, 100_000),
    ("pow_loop", "pow_loop", "adgen-c", {"n": 1000}, 2000),
    ("logsumexp", "logsumexp", "adgen-c", {"n": 100_000}, 5),
]


def adgen_command() -> list[str]:
    """The adgen CLI of this Python (the module behind the ``adgen`` console script)."""
    return [sys.executable, "-m", "adgen.cli"]


def build_c(build_dir: Path, verbose: bool) -> Path:
    """Generate the C for every module of the C driver, compile it with bench.c."""
    gen = build_dir / "gen"
    obj = build_dir / "obj"
    obj.mkdir(parents=True, exist_ok=True)
    sources, includes = [], []
    for name, path in C_MODULES.items():
        out = gen / name
        cmd = adgen_command() + [str(path), "--mode", "primal", "--mode", "reverse",
                                 "-o", str(out), "-q"]
        if verbose:
            print("$", " ".join(cmd), file=sys.stderr)
        run(cmd)
        sources += [out / f"{name}.c", out / f"{name}_b.c"]
        includes.append(f"-I{out}")
    sources += [HERE / "c" / "rosenbrock_manual.c", HERE / "c" / "bench.c"]
    includes.append(f"-I{HERE / 'c'}")
    objects = []
    for src in sources:
        o = obj / (src.parent.name + "_" + src.stem + ".o")
        cmd = [CC, *CFLAGS, *includes, "-c", str(src), "-o", str(o)]
        if verbose:
            print("$", " ".join(cmd), file=sys.stderr)
        run(cmd)
        objects.append(str(o))
    exe = build_dir / "bench"
    cmd = [CC, *CFLAGS, *objects, "-o", str(exe), "-lm"]
    if verbose:
        print("$", " ".join(cmd), file=sys.stderr)
    run(cmd)
    return exe


def run_c(exe: Path, plan: list, reps: int) -> list[dict[str, Any]]:
    records = []
    for cname, problem, tool, size, calls in plan:
        n = size.get("n", 1)
        r = json.loads(run([str(exe), cname, str(n), str(reps), str(calls)]).stdout)
        ok = (r["ref_err"] <= C_REF_TOL and r["fd_err"] <= C_FD_TOL
              and r["value_err"] <= C_VALUE_TOL)
        records.append({
            "problem": problem,
            "workload": ", ".join(f"{k}={v:,}" for k, v in size.items()) or "scalar",
            "tool": tool,
            "primal_seconds": r["primal_s"],
            "derivative_seconds": r["grad_s"],
            "ratio": r["ratio"],
            "ratio_of_medians": r["ratio_of_medians"],
            "reps": reps,
            "calls_primal": calls,
            "calls_derivative": calls,
            "check_against": f"{r['reference']} and central differences",
            "check_error": max(r["ref_err"], r["fd_err"]),
            "check_ok": ok,
            "ref_error": r["ref_err"],
            "fd_error": r["fd_err"],
            "value_error": r["value_err"],
            "tape_bytes": None if tool == "manual-c" else r["tape_bytes"],
            "zero_seconds": r["zero_s"],
            "suite": "Zygote" if problem in ("sincos", "pow_loop", "logsumexp") else "C only",
        })
    return records


# =============================================================================
# Driving it


def machine() -> dict[str, Any]:
    gcc = run([CC, "--version"]).stdout.splitlines()[0]
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import adgen

        version = adgen.__version__
    except Exception:  # noqa: BLE001 - informative only
        version = "?"
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                text=True, capture_output=True).stdout.strip() or "?"
    except OSError:
        commit = "?"
    return {"date": datetime.date.today().isoformat(), "nproc": os.cpu_count(), "cpu": cpu,
            "gcc": gcc, "cflags": " ".join(CFLAGS), "python": platform.python_version(),
            "adgen": version, "commit": commit}


def bench_problem(prob: Problem, size: dict[str, int], tools: list[str], reps: int,
                  target: float, log: Callable[[str], None]) -> list[dict[str, Any]]:
    import numpy as np

    inputs = prob.make_inputs(size)
    workload = prob.workload(size) or "scalar"
    base = {"problem": prob.name, "workload": workload, "suite": prob.suite}
    records: list[dict[str, Any]] = []

    def record(tool: str, t: Timing | None, **extra: Any) -> dict[str, Any]:
        rec = dict(base, tool=tool)
        if t is not None:
            rec.update(primal_seconds=t.primal_seconds, derivative_seconds=t.derivative_seconds,
                       ratio=t.ratio, ratio_of_medians=t.ratio_of_medians, reps=t.reps,
                       calls_primal=t.calls_primal, calls_derivative=t.calls_derivative)
        else:
            rec.update(primal_seconds=None, derivative_seconds=None, ratio=None)
        rec.update(extra)
        records.append(rec)
        return rec

    log(f"{prob.name} ({workload}): adgen")
    try:
        ad = AdgenRunner(prob, inputs)
        ad_value = ad.value()
        ad_grad = ad.gradient()
        fd = ad.fd_check(ad_grad, prob.fd_step)
        t = time_pair(ad.primal, ad.derivative, reps, target)
        tape = ad.m.tape_bytes()
        record("adgen", t, check_against="central differences", check_error=float(fd),
               check_ok=bool(fd <= FD_TOL), tape_bytes=int(tape))
    except Exception:  # noqa: BLE001 - reported in the table, exit code 1
        err = traceback.format_exc()
        record("adgen", None, check_against="-", check_error=None, check_ok=False, error=err)
        log(err)
        return records
    ad_flat = np.concatenate([np.asarray(g, dtype=np.float64).ravel() for g in ad_grad])

    for lib in tools:
        if lib not in ("jax", "torch"):
            continue
        log(f"{prob.name} ({workload}): {lib}")
        try:
            peer = PeerRunner(lib, prob, inputs)
            val_err = rel_err(peer.value(), ad_value)
            g = peer.gradient()
            g_flat = np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in g])
            g_err = rel_err(g_flat, ad_flat)
            t = time_pair(peer.primal, peer.derivative, reps, target)
            record(lib, t, check_against="adgen", check_error=float(g_err),
                   value_error=float(val_err), check_ok=bool(g_err <= PEER_TOL and val_err <= PEER_TOL),
                   adgen_over_peer=records[0]["derivative_seconds"] / t.derivative_seconds)
        except Exception:  # noqa: BLE001 - reported in the table, exit code 1
            err = traceback.format_exc()
            record(lib, None, check_against="adgen", check_error=None, check_ok=False, error=err)
            log(err)
    return records


def print_table(records: list[dict[str, Any]]) -> None:
    header = ["suite", "problem", "workload", "tool", "primal", "derivative", "ratio",
              "adgen/peer", "check"]
    rows = []
    for r in records:
        if r.get("error"):
            check = "ERROR"
        else:
            check = ("ok" if r["check_ok"] else "FAIL") + f" {r['check_error']:.0e}"
            check += " (vs adgen)" if r["check_against"] == "adgen" else " (fd)" if \
                r["check_against"] == "central differences" else " (ref, fd)"
        ratio = r.get("adgen_over_peer")
        rows.append([r["suite"], r["problem"], r["workload"], r["tool"],
                     fmt_time(r["primal_seconds"]), fmt_time(r["derivative_seconds"]),
                     "-" if r["ratio"] is None else f"{r['ratio']:.2f}",
                     "-" if ratio is None else f"{ratio:.3g}", check])
    widths = [max(len(h), *(len(row[k]) for row in rows)) if rows else len(h)
              for k, h in enumerate(header)]
    right = {4, 5, 6, 7}

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if k in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    print(line(header))
    print(line(["-" * w for w in widths]))
    for row in rows:
        print(line(row))


def failed_checks(r: dict[str, Any]) -> str:
    """What failed in record r's checks: each error above its tolerance, with that tolerance."""
    if r["check_against"] == "adgen":
        checks = [("error", r["check_error"], PEER_TOL), ("value error", r.get("value_error"), PEER_TOL)]
    elif r["check_against"] == "central differences":
        checks = [("error", r["check_error"], FD_TOL)]
    else:  # the C driver
        checks = [("reference error", r["ref_error"], C_REF_TOL),
                  ("central-difference error", r["fd_error"], C_FD_TOL),
                  ("value error", r["value_error"], C_VALUE_TOL)]
    # (not err <= tol: a NaN fails too)
    return ", ".join(f"{name} {err:.2e} (tolerance {tol:g})" for name, err, tol in checks
                     if err is not None and not err <= tol) or f"error {r['check_error']:.2e}"


def _json_default(o: Any) -> Any:
    if hasattr(o, "item"):  # NumPy scalars
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def json_text(records: list[dict[str, Any]]) -> str:
    """The records as strict JSON: a non-finite error (a check that found an infinity) is null,
    as the GradBench tool writes its non-finite numbers (its ``finite``)."""
    spec = importlib.util.spec_from_file_location("adgen_gradbench_tool",
                                                  GRADBENCH_DIR / "tool.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return json.dumps(tool.finite(records), indent=2, default=_json_default,
                      allow_nan=False) + "\n"


def set_xla_flags(threads: int) -> str:
    """XLA_FLAGS (read when JAX starts its CPU backend) for ``threads``, unless XLA_FLAGS is set
    already: that one is kept.  One thread: Eigen's thread pool off.  More: XLA's own threads
    (all cores), for XLA has no flag for a number of them.  Returns what the JAX header line
    says."""
    given = os.environ.get("XLA_FLAGS")
    if given is not None:
        return f"XLA_FLAGS of the environment kept, --threads not applied: {given!r}"
    if threads > 1:
        return "XLA's own threads (all cores: XLA has no flag for a number of threads)"
    os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    return "1 thread"


def main(argv: list[str] | None = None) -> int:
    global THREADS, CFLAGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="small sizes and 5 repetitions (about a minute)")
    ap.add_argument("--reps", type=int,
                    help=f"repetitions, 1 to {MAX_REPS} (the C driver's limit; default 15, "
                         "5 with --quick)")
    ap.add_argument("--json", metavar="FILE", help="also write the records as JSON to FILE")
    ap.add_argument("--only", metavar="P,Q",
                    help="run only these problems: " + ", ".join(PROBLEM_NAMES + ["rosenbrock"]))
    ap.add_argument("--tools", metavar="T,U", default=",".join(ALL_TOOLS),
                    help="tools to run (default all available): c (the C driver, bench.c), "
                         "adgen, jax, torch; the peers need adgen")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads JAX and PyTorch may use (default 1: adgen's C is single-threaded)")
    ap.add_argument("--build-dir", metavar="DIR", default=str(HERE / "build"),
                    help="where the C driver's generated C and binary go (default benchmarks/build)")
    ap.add_argument("--cflags", default=" ".join(CFLAGS),
                    help=f"C compiler flags of adgen's code (default '{' '.join(CFLAGS)}')")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print progress and the commands on stderr")
    args = ap.parse_args(argv)
    if args.reps is not None and not 1 <= args.reps <= MAX_REPS:
        ap.error(f"--reps: {args.reps} is not between 1 and {MAX_REPS}")
    if args.threads < 1:
        ap.error(f"--threads: {args.threads} is not a number of threads (1 or more)")
    THREADS = args.threads
    CFLAGS = args.cflags.split()

    reps = args.reps if args.reps is not None else (5 if args.quick else 15)
    target = 0.01 if args.quick else 0.04  # seconds per timed block of consecutive calls
    mode = "quick" if args.quick else "full"
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = set(tools) - set(ALL_TOOLS)
    if unknown:
        ap.error(f"--tools: unknown tool(s) {', '.join(sorted(unknown))}")
    if ("jax" in tools or "torch" in tools) and "adgen" not in tools:
        ap.error("--tools: jax and torch are checked against adgen; add adgen")
    names = PROBLEM_NAMES + ["rosenbrock"]
    wanted = set(names)
    if args.only:
        wanted = {w.strip() for w in args.only.split(",") if w.strip()}
        wanted = {"rosenbrock" if w == "rosenbrock_manual" else w for w in wanted}
        bad = wanted - set(names)
        if bad:
            ap.error(f"--only: unknown problem(s) {', '.join(sorted(bad))}")
    c_plan = [row for row in (C_QUICK if args.quick else C_FULL)
              if "c" in tools and row[1] in wanted]
    py_names = [name for name in PROBLEM_NAMES if "adgen" in tools and name in wanted]
    if not c_plan and not py_names:
        if not tools:
            why = "--tools names no tool"
        elif not wanted:
            why = "--only names no problem"
        else:
            why = (f"no problem of --only ({', '.join(sorted(wanted))}) runs with --tools "
                   f"{','.join(tools)} (the C driver, c, runs rosenbrock, sincos, pow_loop and "
                   "logsumexp; adgen and its peers every problem but rosenbrock)")
        ap.error(f"nothing to run: {why}")
    if c_plan:
        try:
            Path(args.build_dir).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            ap.error(f"--build-dir: cannot create {args.build_dir}: {e.strerror or e}")
    json_file = None
    if args.json:
        # opened now (appending: a previous file stays until the records replace it), so that
        # a path that cannot be written is said before the run, not after it
        try:
            json_file = open(args.json, "a")
        except OSError as e:
            ap.error(f"--json: cannot write {args.json}: {e.strerror or e}")

    xla_note = set_xla_flags(THREADS) if "jax" in tools else ""
    log = (lambda s: print(s, file=sys.stderr, flush=True)) if args.verbose else (lambda s: None)

    info = machine()
    print(f"adgen {info['adgen']} ({info['commit']}), {info['gcc']} {' '.join(CFLAGS)}, Python {info['python']}, "
          f"{info['nproc']} cores, {info['cpu']}, {info['date']}")
    skipped = []
    peers = []
    for lib in ("jax", "torch"):
        if lib not in tools:
            continue
        ok, what = peer_available(lib)
        if ok:
            peers.append(lib)
            threads = xla_note if lib == "jax" else f"{THREADS} thread{'s' if THREADS > 1 else ''}"
            print(f"{lib} {what} (CPU, float64, {threads})")
        else:
            skipped.append(f"{lib}: {what}")
    print(f"{mode} run: median of {reps} repetitions, each timing consecutive calls for about "
          f"{target * 1e3:.0f} ms (the C driver: a fixed count)\n")

    records: list[dict[str, Any]] = []
    started = time.perf_counter()
    c_records: list[dict[str, Any]] = []
    if c_plan:
        log("C driver: generating and compiling")
        exe = build_c(Path(args.build_dir), args.verbose)
        log("C driver: running")
        c_records = run_c(exe, c_plan, reps)
    for prob in PROBLEMS:
        if prob.name not in py_names:
            records += [r for r in c_records if r["problem"] == prob.name]
            continue
        rows = bench_problem(prob, prob.sizes[mode], ["adgen"] + peers, reps, target, log)
        records += [r for r in c_records if r["problem"] == prob.name] + rows
    records += [r for r in c_records if r["problem"] not in PROBLEM_NAMES]

    print_table(records)
    print()
    print("primal, derivative: median over the repetitions of the time of one call; ratio: median over the")
    print("repetitions of derivative / primal timed in the same repetition; adgen/peer: adgen's derivative")
    print("time over the peer's (below 1: adgen faster); check: the derivative's max relative error against")
    print("adgen's (peers), central differences (adgen), a reference and central differences (C driver).")
    print("adgen: the generated C through its raw cffi functions, Python call included (~0.1-0.3 us a call);")
    print("adgen-c / manual-c: timed in C by benchmarks/c/bench.c, no Python.")
    tiny = [r for r in records if r["tool"] == "adgen" and r["primal_seconds"] is not None
            and r["primal_seconds"] < 2e-6]
    for r in tiny:
        print(f"note: {r['problem']}: adgen's primal ({fmt_time(r['primal_seconds'])}) includes a "
              f"Python-to-C call of ~0.1-0.3 us; the adgen-c row is the C alone.")
    for s in skipped:
        print(f"peer skipped: {s} (pip install -e \".[bench]\" installs jax and torch)")
    failed = [r for r in records if not r["check_ok"]]
    for r in failed:
        what = r.get("error") or failed_checks(r)
        print(f"CHECK FAILED: {r['problem']} {r['tool']}: {what}")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")

    if json_file is not None:
        for r in records:
            r.setdefault("date", info["date"])
        with json_file:
            json_file.seek(0)
            json_file.truncate()
            json_file.write(json_text(records))
        print(f"wrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
