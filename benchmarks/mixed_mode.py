"""Forward-in-reverse (seed 003's mixed mode) against the ordinary adjoint, on the C target:
the gradient of the HM-LSTM cell update of examples/kernels.py (`hm_lstm`), taken plain and
with '# adgen: forward-in-reverse' on its prange; and of a prange whose body has an inner
loop (`power`, whose ordinary adjoint tapes the inner loop's values, per thread).

    python benchmarks/mixed_mode.py                  # n = 1,000,000 units, 9 repetitions
    python benchmarks/mixed_mode.py --n 100000 --reps 5
    python benchmarks/mixed_mode.py --quick          # a smoke run (small n, 3 repetitions)
    python benchmarks/mixed_mode.py --inputs 4       # the inner-loop case with 4 inputs

The cell with the directive is the function of examples/kernels.py with the comment added to
its loop line, so both variants compute the same thing.  Each repetition calls the primal and
the adjoint (`vjp` with random adjoints of the arrays written; both variants pay the same
binding costs).  The table gives the medians, the derivative/primal ratio of each variant,
the ratio of the medians mixed/plain, and the largest relative difference between the two
gradients.  No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "examples" / "kernels.py"
LOOP = "    for i in prange(len(c)):\n        f = 1.0 / (1.0 + math.exp(-z[i, 0]))"


def mixed_source() -> str:
    """examples/kernels.py with '# adgen: forward-in-reverse' on the loop of hm_lstm."""
    text = KERNELS.read_text()
    if text.count(LOOP) != 1:
        raise SystemExit(f"the loop of hm_lstm is not where expected in {KERNELS}")
    return text.replace(LOOP, LOOP.replace(":\n", ":  # adgen: forward-in-reverse\n", 1))


#: a prange with an inner loop carrying an active value (16 steps per element)
POWER = """
import math

from adgen import Array, f64, prange


def power(x: Array[f64], y: Array[f64], k: int) -> None:
    for i in prange(len(x)):{directive}
        p = 1.0
        xi = x[i]
        for j in range(k):
            p = p * xi + math.sin(p)
        y[i] = p
"""


def power_inputs(k: int, directive: str) -> str:
    """``power`` with ``k`` inputs per iteration (``x[i, 0..k-1]``) feeding the inner loop:
    ``p = p * x0 + sin(p * x0) + ... + sin(p * x{k-1})``."""
    loads = "".join(f"        x{j} = x[i, {j}]\n" for j in range(k))
    terms = " + ".join(f"math.sin(p * x{j})" for j in range(k))
    return ("\nimport math\n\nfrom adgen import Array, f64, prange\n\n\n"
            "def power(x: Array[f64, 2], y: Array[f64], k: int) -> None:\n"
            f"    for i in prange(x.shape[0]):{directive}\n{loads}        p = 1.0\n"
            f"        for j in range(k):\n            p = p * x0 + {terms}\n        y[i] = p\n")


def inputs(n: int, seed: int = 0) -> tuple[tuple[np.ndarray, ...], dict[str, np.ndarray]]:
    """Arguments of hm_lstm (every branch taken) and adjoints of what it writes."""
    rng = np.random.default_rng(seed)
    args = (rng.standard_normal((n, 4)), rng.standard_normal(n),
            (rng.random(n) < 0.3).astype(float), (rng.random(n) < 0.2).astype(float),
            np.zeros(n), np.zeros(n))
    bars = {"c_new": rng.standard_normal(n), "h_new": rng.standard_normal(n)}
    return args, bars


def time_gradients(name: str, paths: dict[str, Path], call: tuple, bars: dict[str, np.ndarray],
                   reps: int) -> None:
    """Time the primal and the gradient of function ``name`` of each module; print the table."""
    import adgen

    results: dict[str, tuple[float, float, tuple]] = {}
    for variant, path in paths.items():
        f = getattr(adgen.load(str(path), modes=("reverse",), functions=[name]), name)
        # one untimed call of each first: the first call's costs (binding setup, first touch
        # of the memory) are not the function's, and with few repetitions would be the median
        f(*(a.copy() if isinstance(a, np.ndarray) else a for a in call))
        f.vjp(tuple(a.copy() if isinstance(a, np.ndarray) else a for a in call), None,
              out_bars={k: v.copy() for k, v in bars.items()})
        primal, grad = [], []
        for _ in range(reps):
            fresh = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in call)
            start = time.perf_counter()
            f(*fresh)
            primal.append(time.perf_counter() - start)
            fresh = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in call)
            out_bars = {k: v.copy() for k, v in bars.items()}
            start = time.perf_counter()
            _, g = f.vjp(fresh, None, out_bars=out_bars)
            grad.append(time.perf_counter() - start)
        results[variant] = (statistics.median(primal), statistics.median(grad), g)
    diff = max(float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))
               for a, b in zip(results["mixed"][2], results["plain"][2], strict=True)
               if a is not None)
    print(f"{'variant':8} {'primal ms':>10} {'gradient ms':>12} {'grad/primal':>12}")
    for variant, (tp, tg, _) in results.items():
        print(f"{variant:8} {tp * 1e3:10.2f} {tg * 1e3:12.2f} {tg / tp:12.2f}")
    print(f"mixed/plain gradient time: {results['mixed'][1] / results['plain'][1]:.2f}")
    print(f"max relative difference of the gradients: {diff:.1e}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, help="units of the cell, 5 or more (default 1,000,000; the "
                                         "inner-loop case takes n // 5)")
    p.add_argument("--reps", type=int, help="repetitions, 1 or more (default 9)")
    p.add_argument("--quick", action="store_true",
                   help="n = 20,000 and 3 repetitions, where --n and --reps are not given")
    p.add_argument("--inputs", type=int, default=1, metavar="K",
                   help="inputs per iteration of the inner-loop case, 1 or more "
                        "(x[i, 0..K-1]; 1: x[i])")
    args = p.parse_args(argv)
    # --quick sets what the options do not (as benchmarks/run.py: an explicit option wins)
    if args.n is None:
        args.n = 20_000 if args.quick else 1_000_000
    if args.reps is None:
        args.reps = 3 if args.quick else 9
    if args.n < 5:
        p.error(f"--n: {args.n} is less than 5 (the inner-loop case takes n // 5 elements)")
    if args.reps < 1:
        p.error(f"--reps: {args.reps} is not 1 or more")
    if args.inputs < 1:
        p.error(f"--inputs: {args.inputs} is not 1 or more")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        mixed = Path(tmp) / "kernels_mixed.py"
        mixed.write_text(mixed_source())
        call, bars = inputs(args.n)
        print(f"hm_lstm, n = {args.n}, median of {args.reps} runs (C target, one thread)")
        time_gradients("hm_lstm", {"plain": KERNELS, "mixed": mixed}, call, bars, args.reps)
        paths = {"plain": Path(tmp) / "power.py", "mixed": Path(tmp) / "power_mixed.py"}
        # an explicit directive keeps the ordinary adjoint: without one, this prange (an
        # inner loop carrying an active value, one input) runs forward-in-reverse by default
        source = POWER.format if args.inputs == 1 else \
            (lambda directive: power_inputs(args.inputs, directive))
        paths["plain"].write_text(source(directive="  # adgen: recompute"))
        paths["mixed"].write_text(source(directive="  # adgen: forward-in-reverse"))
        n = args.n // 5
        rng = np.random.default_rng(1)
        x = 0.5 * rng.standard_normal(n) if args.inputs == 1 else \
            rng.uniform(0.1, 0.5, size=(n, args.inputs))
        print(f"\npower (16 inner steps, {args.inputs} input(s)), n = {n}, "
              f"median of {args.reps} runs")
        time_gradients("power", paths, (x, np.zeros(n), 16),
                       {"y": rng.standard_normal(n)}, args.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
