"""Derivative / objective ratios of adgen's GradBench tool on the evals that
`benchmarks/run.py` does not cover (llsq, det, ba, ht, kmeans), at the sizes
GradBench's evals use, over the protocol, as GradBench times them.

    python benchmarks/gradbench/ratios.py [--quick] [--only ba,ht] [--min-seconds S] [--json FILE]

It starts `tool.py` as GradBench would, sends `define` and, for each workload,
`evaluate` of the objective and of the derivative with `min_runs` and
`min_seconds`, and takes the median of the per-run `evaluate` timings the
tool reports. The ratio is median(derivative) / median(objective). Inputs:
llsq and det as their evals draw them (uniform in [0, 1), seed 31337); ba one
camera, point, weight and feature replicated to ADBench's ba1 sizes (as the
eval sends them); ht a synthetic model (random rigid bones, 544 vertices, the
sizes of ADBench's hand models) and the correspondences of hand1/hand2; kmeans
random points and centroids. Outputs are not validated here
(`tests/test_gradbench.py` does that against NumPy references).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tests"))
from test_gradbench import ht_input  # noqa: E402  (the synthetic hand model of the tests)


class Tool:
    """tool.py in a subprocess, one JSON message per line each way."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(HERE / "tool.py")], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        message = {"id": self.next_id} | message
        self.next_id += 1
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        response = json.loads(self.proc.stdout.readline())
        if response.get("success") is False:
            raise RuntimeError(f"{message['kind']} failed: {response.get('error')}")
        return response

    def median_seconds(self, module: str, function: str, input: dict[str, Any],
                       min_runs: int, min_seconds: float) -> tuple[float, int]:
        r = self.send({"kind": "evaluate", "module": module, "function": function,
                       "input": input | {"min_runs": min_runs, "min_seconds": min_seconds}})
        ns = [t["nanoseconds"] for t in r["timings"] if t["name"] == "evaluate"]
        return statistics.median(ns) * 1e-9, len(ns)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def ba_input(rng: np.random.Generator, n: int, m: int, p: int) -> dict[str, Any]:
    cam = np.concatenate([rng.uniform(-0.5, 0.5, 3), rng.uniform(-1, 1, 3), [400.0],
                          rng.uniform(-1, 1, 2), rng.uniform(-0.1, 0.1, 2)])
    point = np.concatenate([rng.uniform(-1, 1, 2), [5.0]])
    return {"n": n, "m": m, "p": p, "cam": cam.tolist(), "x": point.tolist(), "w": 0.8,
            "feat": rng.uniform(-1, 1, 2).tolist()}


def workloads(quick: bool) -> list[tuple[str, str, str, str, dict[str, Any]]]:
    """(module, workload, objective function, derivative function, input)."""
    np.random.seed(31337)  # as the llsq and det evals draw their inputs
    out: list[tuple[str, str, str, str, dict[str, Any]]] = []
    for n in ((1024,) if quick else (1024, 4096, 16392)):
        out.append(("llsq", f"n={n}, m=128", "primal", "gradient",
                    {"x": np.random.rand(128).tolist(), "n": n}))
    for ell in ((7,) if quick else (7, 9)):
        out.append(("det", f"ell={ell}", "primal", "gradient",
                    {"A": np.random.rand(ell * ell).tolist(), "ell": ell}))
    rng = np.random.default_rng(5)
    sizes = [(49, 7776, 31843)] if not quick else [(21, 1000, 4000)]
    for n, m, p in sizes:
        out.append(("ba", f"n={n}, m={m}, p={p:,}", "objective", "jacobian",
                    ba_input(rng, n, m, p)))
    for complicated in (False, True):
        for npts in ((100,) if quick else (100, 192)):
            kind = "complicated" if complicated else "simple"
            out.append(("ht", f"{kind}, 544 vertices, {npts} points", "objective", "jacobian",
                        ht_input(rng, 544, npts, complicated, complicated)))
    n, k, d = (1000, 20, 8) if quick else (10000, 100, 8)
    out.append(("kmeans", f"n={n:,}, k={k}, d={d}", "cost", "dir",
                {"points": rng.normal(size=(n, d)).tolist(),
                 "centroids": rng.normal(size=(k, d)).tolist()}))
    return out


EVALS = ("llsq", "det", "ba", "ht", "kmeans")


def table_line(module: str, workload: str, objective: str, derivative: str, ratio: str,
               width: int) -> str:
    """One line of the table, the workload column `width` wide."""
    return f"{module:<7} {workload:<{width}} {objective:>11} {derivative:>11} {ratio:>6}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="small sizes (5 s on an idle machine, under a minute on a loaded one)")
    ap.add_argument("--min-runs", type=int, default=10, help="per evaluate, 1 or more (default 10)")
    ap.add_argument("--min-seconds", type=float, default=None,
                    help="per evaluate, 0 or more (default 1, 0.2 with --quick)")
    ap.add_argument("--only", metavar="E,F", help="run only these evals (" + ", ".join(EVALS) + ")")
    ap.add_argument("--json", metavar="FILE", help="also write the records as JSON")
    args = ap.parse_args(argv)
    only = None
    if args.only is not None:
        only = {e.strip() for e in args.only.split(",") if e.strip()}
        unknown = only - set(EVALS)
        if unknown:
            ap.error(f"--only: unknown eval(s) {', '.join(sorted(unknown))} "
                     f"(these are {', '.join(EVALS)})")
        if not only:
            ap.error("--only names no eval")
    if args.min_runs < 1:
        ap.error(f"--min-runs: {args.min_runs} is not 1 or more")
    if args.min_seconds is not None and not (math.isfinite(args.min_seconds)
                                             and args.min_seconds >= 0):
        ap.error(f"--min-seconds: {args.min_seconds} is not a number of seconds, 0 or more")
    min_seconds = args.min_seconds if args.min_seconds is not None else (
        0.2 if args.quick else 1.0)
    json_file = None
    if args.json:
        # opened now, so that a path that cannot be written is said before the run
        try:
            json_file = open(args.json, "a")
        except OSError as e:
            ap.error(f"--json: cannot write {args.json}: {e.strerror or e}")
    plan = [w for w in workloads(args.quick) if only is None or w[0] in only]
    width = max(len("workload"), *(len(w[1]) for w in plan))
    tool = Tool()
    tool.send({"kind": "start", "eval": "ratios"})
    defined: set[str] = set()
    records = []
    print(table_line("eval", "workload", "objective", "derivative", "ratio", width))
    try:
        for module, workload, fobj, fder, inp in plan:
            if module not in defined:
                tool.send({"kind": "define", "module": module})
                defined.add(module)
            t_obj, runs_obj = tool.median_seconds(module, fobj, inp, args.min_runs, min_seconds)
            t_der, runs_der = tool.median_seconds(module, fder, inp, args.min_runs, min_seconds)
            ratio = t_der / t_obj
            print(table_line(module, workload, f"{t_obj * 1e3:9.3f}ms", f"{t_der * 1e3:9.3f}ms",
                             f"{ratio:6.2f}", width), flush=True)
            records.append({"eval": module, "workload": workload, "objective": fobj,
                            "derivative": fder, "objective_seconds": t_obj,
                            "derivative_seconds": t_der, "ratio": ratio,
                            "runs": [runs_obj, runs_der]})
    finally:
        tool.close()
    if json_file is not None:
        with json_file:
            json_file.seek(0)
            json_file.truncate()
            json_file.write(json.dumps(records, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
