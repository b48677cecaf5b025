"""Loop checkpointing: the tape's peak and the gradient/primal ratio of a time-stepping loop
taped, with '# adgen: checkpoint', and with '# adgen: binomial(k)'.

    python benchmarks/checkpointing.py                 # 100,000 steps, k = 20 and 4, 5 repetitions
    python benchmarks/checkpointing.py --steps 10000 --reps 3

The loop (8 weights, an inner loop and an exp per step) is the one of
tests/test_reverse.py.  The table gives, per variant, the tape's peak (the adjoint's
counter; binomial's snapshots are k x 24 bytes of local arrays besides), the median
gradient/primal ratio, and the revolve bound r + 2 (r: the least number of sweeps with
C(k + r, k) >= steps; each step is computed at most r + 1 times in the reverse sweep, plus
the forward sweep).  No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from math import comb
from pathlib import Path

import numpy as np

SOURCE = """
import math

from adgen import Array, f64


def integrate(x0: float, h: float, w: Array[f64], steps: int) -> float:
    x = x0
    v = 0.0
    for t in range(steps):{directive}
        force = 0.0
        for j in range(len(w)):
            force += w[j] * math.sin(x * (j + 1))
        v = v + h * force * math.exp(-0.1 * v * v)
        x = x + h * v
    return x * x + v
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=100_000, help="steps of the loop, 1 or more")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions, 1 or more")
    p.add_argument("--snapshots", default="20,4",
                   help="values of k for binomial(k), each 1 or more (default 20,4)")
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error(f"--steps: {args.steps} is not 1 or more")
    if args.reps < 1:
        p.error(f"--reps: {args.reps} is not 1 or more")
    try:
        snapshots = [int(k) for k in args.snapshots.split(",")]
    except ValueError:
        p.error(f"--snapshots: {args.snapshots!r} is not a list of integers (K,L,...)")
    if any(k < 1 for k in snapshots):
        p.error(f"--snapshots: {args.snapshots!r}: binomial(k) takes k >= 1 snapshots")
    import adgen

    variants = [("taped", ""), ("checkpoint", "  # adgen: checkpoint")]
    variants += [(f"binomial({k})", f"  # adgen: binomial({k})") for k in snapshots]
    w = np.linspace(0.5, 1.0, 8)
    call = (0.3, 0.001, w, args.steps)
    reference = None
    print(f"{'variant':14} {'tape bytes':>12} {'grad/primal':>12} {'bound r+2':>10} {'max rel diff':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, directive) in enumerate(variants):
            path = Path(tmp) / f"variant{i}.py"
            path.write_text(SOURCE.format(directive=directive))
            m = adgen.load(str(path), modes=("reverse",))
            # one untimed call of each first: the first call's costs (binding setup, first
            # touch of the memory) are not the function's, and with few repetitions they
            # would be the median
            m.integrate(*call)
            m.integrate.grad(*call)
            primal, grad = [], []
            for _ in range(args.reps):
                start = time.perf_counter()
                m.integrate(*call)
                primal.append(time.perf_counter() - start)
                start = time.perf_counter()
                g = m.integrate.grad(*call)
                grad.append(time.perf_counter() - start)
            tape = m.tape_bytes()
            values = np.array([x for x in g if x is not None and np.ndim(x) == 0] +
                              [v for x in g if x is not None and np.ndim(x) > 0 for v in x])
            reference = values if reference is None else reference
            diff = float(np.max(np.abs(values - reference) / np.maximum(np.abs(reference), 1e-300)))
            bound = "-"
            if name.startswith("binomial"):
                k, r = int(name[9:-1]), 0
                while comb(k + r, k) < args.steps:
                    r += 1
                bound = str(r + 2)
            ratio = statistics.median(grad) / statistics.median(primal)
            print(f"{name:14} {tape:12d} {ratio:12.2f} {bound:>10} {diff:13.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
