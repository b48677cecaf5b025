"""adgen's CUDA kernels on a GPU: device three-way checks, then primal, tangent and adjoint
times, and PyTorch autograd on the same GPU, in one table.

    python benchmarks/gpu/run.py                 # on a machine with a GPU (and CuPy or PyTorch)
    python benchmarks/gpu/run.py --emulate       # the CPU emulation: checks only, small sizes

Problems (examples/kernels.py and examples/mixture.py), f32:
  hm_lstm      seed 003's HM-LSTM cell update, n x n units for n = 512, 1024, 2048
  xs_lookup    an XSBench-like lookup: binary search in an energy grid, interpolation, sum
  gmm          a Gaussian-mixture log-likelihood (mixture.loglik): 2^18 points, d = 8, k = 16
  kmeans_cost  the dense k-means cost: 2^18 points, d = 8, k = 16

Ratios are derivative time / primal time within one run, medians of --reps repetitions;
adgen/torch is adgen's derivative time over PyTorch's.  No timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "examples" / "kernels.py"
MIXTURE = ROOT / "examples" / "mixture.py"


def _inputs(name: str, n: int, dtype: Any, rng: np.random.Generator) -> tuple:
    if name == "hm_lstm":
        units = n * n
        return (rng.standard_normal((units, 4)).astype(dtype), rng.standard_normal(units).astype(dtype),
                (rng.random(units) < 0.3).astype(dtype), (rng.random(units) < 0.2).astype(dtype),
                np.zeros(units, dtype), np.zeros(units, dtype))
    if name in ("gmm", "kmeans_cost"):
        x = rng.standard_normal((n, 8)).astype(dtype)
        centers = rng.standard_normal((16, 8)).astype(dtype)
        if name == "kmeans_cost":
            return (x, centers)
        return (x, centers, rng.standard_normal(16).astype(dtype), np.zeros(n, dtype))
    grid = np.sort(rng.uniform(0.0, 10.0, 4096)).astype(dtype)
    return (rng.uniform(grid[0], grid[-1], n).astype(dtype), grid,
            rng.random((4096, 8)).astype(dtype), rng.random(8).astype(dtype), np.zeros(n, dtype))


def _median(fn: Callable[[], Any], sync: Callable[[], None], reps: int) -> float:
    fn()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _torch_rows(name: str, args: tuple, reps: int) -> dict[str, float] | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    dev = [torch.as_tensor(a, device="cuda") for a in args]

    if name == "hm_lstm":
        z, c, flush, copy = (t.clone() for t in dev[:4])
        z.requires_grad_(True)
        c.requires_grad_(True)

        def forward() -> Any:
            f, i, o = (torch.sigmoid(z[:, k]) for k in range(3))
            g = torch.tanh(z[:, 3])
            c_new = torch.where(copy > 0.5, c, torch.where(flush > 0.5, i * g, f * c + i * g))
            return (o * torch.tanh(c_new)).sum() + c_new.sum()
    elif name == "kmeans_cost":
        x, centers = (t.clone().requires_grad_(True) for t in dev[:2])

        def forward() -> Any:
            return torch.cdist(x, centers).square().min(dim=1).values.sum()
    elif name == "gmm":
        x, means, logw = (t.clone().requires_grad_(True) for t in dev[:3])

        def forward() -> Any:
            d2 = torch.cdist(x, means).square()
            return torch.logsumexp(logw[None, :] - 0.5 * d2, dim=1).sum()
    else:
        energy, grid, xs, weight = (t.clone() for t in dev[:4])
        for t in (energy, grid, xs, weight):
            t.requires_grad_(True)

        def forward() -> Any:
            hi = torch.clamp(torch.searchsorted(grid.detach(), energy.detach()), 1, len(grid) - 1)
            lo = hi - 1
            t = (energy - grid[lo]) / (grid[hi] - grid[lo])
            acc = ((1 - t)[:, None] * xs[lo] + t[:, None] * xs[hi]) @ weight
            return acc.sum()

    def backward() -> None:
        forward().backward()

    sync = torch.cuda.synchronize
    with torch.no_grad():
        primal = _median(forward, sync, reps)
    return {"primal": primal, "adjoint": _median(backward, sync, reps)}


def _raw_call(f: Any, mode: str, host: tuple, to_device: Callable[[np.ndarray], Any],
              rng: np.random.Generator) -> Callable[[], Any]:
    """One call of the generated function of ``mode`` with every array already on the device
    (inputs, and random tangents or adjoints of their shapes): kernels and launches only."""
    from adgen.transpile.emit.signature import root_param
    from adgen.transpile.ir.types import ArrayType

    call = f._calls[mode]
    fn = call.fn
    primal = dict(zip(f.param_names, host))
    values: dict[str, Any] = {}
    for name, v in zip(fn.param_names, fn.params):
        if name in primal:
            values[name] = to_device(primal[name]) if isinstance(v.type, ArrayType) else primal[name]
        elif isinstance(v.type, ArrayType):
            like = primal[root_param(fn, name)]
            values[name] = to_device(rng.standard_normal(like.shape).astype(like.dtype))
        else:
            values[name] = 1.0
    return lambda: call(values)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--emulate", action="store_true", help="the CPU emulation (checks, small sizes)")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import adgen
    from adgen.cuda import device_count

    if not args.emulate and device_count() == 0:
        print("no GPU: run on a machine with one, or with --emulate for the checks")
        return 2
    modes = ("primal", "forward", "reverse", "hvp")
    failed = False
    records: list[dict[str, Any]] = []
    for path in (KERNELS, MIXTURE):
        for precision in ("f64", "f32"):
            report = adgen.check(str(path), modes=modes, target="cuda", emulate=args.emulate,
                                 precision=precision)
            for row in report.rows:
                records.append({"problem": row.function, "check": row.check,
                                "precision": precision, "error": row.error, "ok": row.ok})
                failed |= not row.ok
            print(report.table())
    sizes = {"hm_lstm": (512, 1024, 2048) if not args.emulate else (16,),
             "xs_lookup": (1 << 20,) if not args.emulate else (1000,),
             "gmm": (1 << 18,) if not args.emulate else (500,),
             "kmeans_cost": (1 << 18,) if not args.emulate else (500,)}
    loaded = {path: adgen.load(str(path), modes=("forward", "reverse"), target="cuda",
                               emulate=args.emulate, precision="f32")
              for path in (KERNELS, MIXTURE)}
    sync: Callable[[], None] = lambda: None
    to_device: Callable[[np.ndarray], Any]
    if not args.emulate:
        try:
            import cupy

            def to_device(a: np.ndarray) -> Any:
                return cupy.asarray(a)
            sync = cupy.cuda.Device().synchronize
        except ImportError:
            import torch

            def to_device(a: np.ndarray) -> Any:
                return torch.as_tensor(a, device="cuda")
            sync = torch.cuda.synchronize
    else:
        def to_device(a: np.ndarray) -> Any:
            return a
    rng = np.random.default_rng(0)
    print(f"\n{'problem':12} {'size':>8} {'primal ms':>10} {'tangent/p':>10} {'adjoint/p':>10} "
          f"{'torch adj/p':>12} {'adgen/torch':>12}")
    for name, ns in sizes.items():
        f = getattr(loaded[MIXTURE], "loglik") if name == "gmm" else getattr(loaded[KERNELS], name)
        for n in ns:
            host = _inputs(name, n, np.float32, rng)
            times = {mode: _median(_raw_call(f, mode, host, to_device, rng), sync, args.reps)
                     for mode in ("primal", "forward", "reverse")}
            primal = times["primal"]
            torch_rows = None if args.emulate else _torch_rows(name, host, args.reps)
            peer = f"{torch_rows['adjoint'] / torch_rows['primal']:12.2f}" if torch_rows else \
                f"{'-':>12}"
            versus = f"{times['reverse'] / torch_rows['adjoint']:12.2f}" if torch_rows else \
                f"{'-':>12}"
            print(f"{name:12} {n:8d} {primal * 1e3:10.3f} {times['forward'] / primal:10.2f} "
                  f"{times['reverse'] / primal:10.2f} {peer} {versus}")
            records.append({"problem": name, "size": n, "primal_s": primal,
                            "tangent_ratio": times["forward"] / primal,
                            "adjoint_ratio": times["reverse"] / primal, "torch": torch_rows})
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
