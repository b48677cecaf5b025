"""adgen's CUDA kernels on a GPU: device three-way checks, then primal, tangent and adjoint
times, and PyTorch autograd on the same GPU, in one table.

    python benchmarks/gpu/run.py                 # on a machine with a GPU (and CuPy or PyTorch)
    python benchmarks/gpu/run.py --emulate       # the CPU emulation: checks only, small sizes
    python benchmarks/gpu/run.py --times-only    # without the device's three-way checks

Problems (examples/kernels.py and examples/mixture.py), f32:
  hm_lstm      seed 003's HM-LSTM cell update, n x n units for n = 512, 1024, 2048
  xs_lookup    an XSBench-like lookup: binary search in an energy grid, interpolation, sum
  gmm          a Gaussian-mixture log-likelihood (mixture.loglik): 2^18 points, d = 8, k = 16
  kmeans_cost  the dense k-means cost: 2^18 points, d = 8, k = 16

Times are of the generated host function called through its cffi entry point with every
array on the device and the C arguments prepared once (kernels, launches, and reading the
sums back), synchronized after each call.
Ratios are derivative time / primal time within one run, medians of --reps repetitions;
adgen/torch is adgen's derivative time over PyTorch's.  No timing is asserted anywhere.
"vs CPU" is the largest relative difference (in norm) between the tangent and adjoint
results of the device and those of the CPU emulation at the benchmark's size, where many
blocks add to the same adjoint arrays; over 1e-3 fails the run.
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


def _arguments(f: Any, mode: str, host: tuple, seed: int) -> dict[str, Any]:
    """The arguments of the generated function of ``mode``, by C name, on the host: the
    inputs ``host``, and random tangents or adjoints of their shapes (from ``seed``)."""
    from adgen.transpile.emit.signature import root_param
    from adgen.transpile.ir.types import ArrayType

    rng = np.random.default_rng(seed)
    fn = f._calls[mode].fn
    primal = dict(zip(f.param_names, host))
    values: dict[str, Any] = {}
    for name, v in zip(fn.param_names, fn.params):
        if name in primal:
            values[name] = primal[name].copy() if isinstance(v.type, ArrayType) else primal[name]
        elif isinstance(v.type, ArrayType):
            like = primal[root_param(fn, name)]
            values[name] = rng.standard_normal(like.shape).astype(like.dtype)
        else:
            values[name] = 1.0
    return values


def _raw_call(f: Any, mode: str, values: dict[str, Any],
              to_device: Callable[[np.ndarray], Any]) -> tuple[Callable[[], Any], dict[str, Any]]:
    """One call of the generated function of ``mode`` with every array already on the device,
    its C arguments prepared once (``_Call.arguments``; on the emulation, host pointers):
    kernels and launches only; and the arguments it reads and writes."""
    from adgen.cuda import Transfers

    placed = {name: to_device(v) if isinstance(v, np.ndarray) else v
              for name, v in values.items()}
    call = f._calls[mode]
    args, _ = call.arguments(placed, transfers=Transfers() if call.device else None)

    def run() -> Any:
        assert placed  # the arrays live as long as the pointers in args
        return call.cfunc(*args)

    return run, placed


def _agreement(device: Any, host: Any, mode: str, args: tuple,
               to_device: Callable[[np.ndarray], Any], to_host: Callable[[Any], np.ndarray]) -> float:
    """The largest relative difference (in norm, over the arrays it writes and its result)
    between one call of ``mode`` on the device and the same call in the CPU emulation, at a
    benchmark's size: the atomics and block copies of many blocks at work."""
    values = _arguments(device, mode, args, seed=1)
    run, placed = _raw_call(device, mode, values, to_device)
    got = run()
    expect, _ = host._calls[mode](values)
    worst = 0.0 if got is None else abs(got - expect) / max(abs(expect), 1e-30)
    for name, v in placed.items():
        if isinstance(values[name], np.ndarray):
            a, b = to_host(v).astype(np.float64), values[name].astype(np.float64)
            worst = max(worst, float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)))
    return worst


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--emulate", action="store_true", help="the CPU emulation (checks, small sizes)")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--json", metavar="FILE")
    p.add_argument("--times-only", action="store_true",
                   help="skip the three-way checks of the device code (the times and 'vs CPU' only)")
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
    for path in (KERNELS, MIXTURE) if not args.times_only else ():
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
    def load(emulate: bool) -> dict[Path, Any]:
        return {path: adgen.load(str(path), modes=("forward", "reverse"), target="cuda",
                                 emulate=emulate, precision="f32") for path in (KERNELS, MIXTURE)}
    loaded = load(args.emulate)
    emulated = loaded if args.emulate else load(True)
    sync: Callable[[], None] = lambda: None
    to_device: Callable[[np.ndarray], Any]
    to_host: Callable[[Any], np.ndarray]
    if not args.emulate:
        try:
            import cupy

            def to_device(a: np.ndarray) -> Any:
                return cupy.asarray(a)

            def to_host(a: Any) -> np.ndarray:
                return cupy.asnumpy(a)
            sync = cupy.cuda.Device().synchronize
        except ImportError:
            import torch

            def to_device(a: np.ndarray) -> Any:
                return torch.as_tensor(a, device="cuda")

            def to_host(a: Any) -> np.ndarray:
                return a.cpu().numpy()
            sync = torch.cuda.synchronize
    else:
        def to_device(a: np.ndarray) -> Any:
            return a.copy()

        def to_host(a: Any) -> np.ndarray:
            return a
    rng = np.random.default_rng(0)
    print(f"\n{'problem':12} {'size':>8} {'primal ms':>10} {'tangent/p':>10} {'adjoint/p':>10} "
          f"{'torch adj/p':>12} {'adgen/torch':>12} {'vs CPU':>8}")
    for name, ns in sizes.items():
        fname = "loglik" if name == "gmm" else name
        where = MIXTURE if name == "gmm" else KERNELS
        f, on_cpu = getattr(loaded[where], fname), getattr(emulated[where], fname)
        for n in ns:
            host = _inputs(name, n, np.float32, rng)
            times = {mode: _median(_raw_call(f, mode, _arguments(f, mode, host, seed=0),
                                             to_device)[0], sync, args.reps)
                     for mode in ("primal", "forward", "reverse")}
            # the device's results against the emulation's at this size (f32 sums in another
            # order: a few 1e-5 apart)
            agree = max(_agreement(f, on_cpu, mode, host, to_device, to_host)
                        for mode in ("forward", "reverse"))
            failed |= not agree < 1e-3
            primal = times["primal"]
            torch_rows = None if args.emulate else _torch_rows(name, host, args.reps)
            peer = f"{torch_rows['adjoint'] / torch_rows['primal']:12.2f}" if torch_rows else \
                f"{'-':>12}"
            versus = f"{times['reverse'] / torch_rows['adjoint']:12.2f}" if torch_rows else \
                f"{'-':>12}"
            print(f"{name:12} {n:8d} {primal * 1e3:10.3f} {times['forward'] / primal:10.2f} "
                  f"{times['reverse'] / primal:10.2f} {peer} {versus} {agree:8.1e}")
            records.append({"problem": name, "size": n, "primal_s": primal,
                            "tangent_ratio": times["forward"] / primal,
                            "adjoint_ratio": times["reverse"] / primal, "torch": torch_rows,
                            "relative_difference_to_emulation": agree})
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
