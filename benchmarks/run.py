#!/usr/bin/env python3
"""Gradient cost of adgen's reverse mode: time(gradient) / time(primal), in C.

Generates C with the adgen command line (``--mode primal --mode reverse``)
for the modules in benchmarks/problems/ (and examples/rosenbrock.py), compiles
them with the driver benchmarks/c/bench.c and the hand-written
benchmarks/c/rosenbrock_manual.c using ``gcc -O3``, runs one process per
problem and prints one table.  See benchmarks/README.md.

    python benchmarks/run.py            # full sizes (n = 1e6), 15 repetitions
    python benchmarks/run.py --quick    # small sizes, a smoke run of a few seconds
    python benchmarks/run.py --json results.json
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# module file, problems timed from it
MODULES = {
    "rosenbrock": ROOT / "examples" / "rosenbrock.py",
    "pow_loop": HERE / "problems" / "pow_loop.py",
    "logsumexp": HERE / "problems" / "logsumexp.py",
}

# (problem, label, n, calls per timing); full and --quick sizes
FULL = [
    ("rosenbrock", "rosenbrock (adgen)", 1_000_000, 10),
    ("rosenbrock_manual", "rosenbrock (manual C)", 1_000_000, 10),
    ("pow_loop", "pow_loop (adgen)", 1000, 20_000),
    ("logsumexp", "logsumexp (adgen)", 1_000_000, 5),
]
QUICK = [
    ("rosenbrock", "rosenbrock (adgen)", 100_000, 10),
    ("rosenbrock_manual", "rosenbrock (manual C)", 100_000, 10),
    ("pow_loop", "pow_loop (adgen)", 1000, 2000),
    ("logsumexp", "logsumexp (adgen)", 100_000, 5),
]

CC = os.environ.get("CC", "gcc")
CFLAGS = ["-O3"]

# a gradient passes the sanity check if it agrees with the reference gradient
# (manual C / analytic) to REF_TOL and with central differences to FD_TOL,
# both relative to the largest gradient component compared
REF_TOL = 1e-7
FD_TOL = 1e-4


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)
    except subprocess.CalledProcessError as e:
        sys.stderr.write(
            f"run.py: command failed ({e.returncode}): {' '.join(map(str, cmd))}\n"
        )
        sys.stderr.write(e.stdout + e.stderr)
        sys.exit(1)


def adgen_command() -> list[str]:
    """The adgen CLI of this Python (the module behind the ``adgen`` console script)."""
    return [sys.executable, "-m", "adgen.cli"]


def build(build_dir: Path, verbose: bool) -> tuple[Path, list[str]]:
    """Generate the C for every module, compile it with the driver; returns the binary."""
    gen = build_dir / "gen"
    obj = build_dir / "obj"
    obj.mkdir(parents=True, exist_ok=True)
    commands = []
    sources = []
    includes = []
    for name, path in MODULES.items():
        out = gen / name
        cmd = adgen_command() + [
            str(path),
            "--mode",
            "primal",
            "--mode",
            "reverse",
            "-o",
            str(out),
            "-q",
        ]
        commands.append(" ".join(cmd))
        if verbose:
            print("$", commands[-1], file=sys.stderr)
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
    commands.append(
        f"{CC} {' '.join(CFLAGS)} -c <each .c>  &&  {CC} {' '.join(CFLAGS)} *.o -o bench -lm"
    )
    return exe, commands


def fmt_time(s: float) -> str:
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.2f} us"


def fmt_bytes(b: int | None) -> str:
    if b is None:
        return "-"
    if b >= 1 << 20:
        return f"{b / (1 << 20):.1f} MiB"
    if b >= 1 << 10:
        return f"{b / (1 << 10):.1f} KiB"
    return f"{b} B"


def machine() -> dict:
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
        commit = run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]
        ).stdout.strip()
    except SystemExit:
        commit = "?"
    return {
        "date": datetime.date.today().isoformat(),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "gcc": gcc,
        "cflags": " ".join(CFLAGS),
        "python": platform.python_version(),
        "adgen": version,
        "commit": commit,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="small sizes and 5 repetitions (smoke run)"
    )
    ap.add_argument(
        "--reps", type=int, help="repetitions per problem (default 15, 5 with --quick)"
    )
    ap.add_argument(
        "--json", metavar="FILE", help="also write the results as JSON to FILE"
    )
    ap.add_argument(
        "--build-dir",
        metavar="DIR",
        default=str(HERE / "build"),
        help="where the generated C and the binary go (default benchmarks/build)",
    )
    ap.add_argument(
        "--only",
        metavar="P,Q",
        help="run only these problems (rosenbrock, "
        "rosenbrock_manual, pow_loop, logsumexp)",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="print the commands")
    args = ap.parse_args(argv)

    reps = args.reps or (5 if args.quick else 15)
    plan = QUICK if args.quick else FULL
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {row[0] for row in plan}
        if unknown:
            ap.error(f"--only: unknown problem(s) {', '.join(sorted(unknown))}")
        plan = [row for row in plan if row[0] in wanted]

    build_dir = Path(args.build_dir)
    exe, commands = build(build_dir, args.verbose)
    info = machine()
    print(
        f"adgen {info['adgen']} ({info['commit']}), {info['gcc']}, {' '.join(CFLAGS)}, "
        f"{info['nproc']} cores, {info['cpu']}, {info['date']}"
    )
    print(
        f"median of {reps} repetitions; each repetition times `calls` consecutive calls\n"
    )

    results = []
    for problem, label, n, calls in plan:
        out = run([str(exe), problem, str(n), str(reps), str(calls)]).stdout
        r = json.loads(out)
        r["label"] = label
        if problem == "rosenbrock_manual":
            r["tape_bytes"] = None
        r["check_ok"] = (
            r["ref_err"] <= REF_TOL
            and r["fd_err"] <= FD_TOL
            and r["value_err"] <= 1e-12
        )
        results.append(r)

    header = ["problem", "n", "calls", "primal", "gradient", "ratio", "tape", "check"]
    rows = []
    for r in results:
        check = "ok" if r["check_ok"] else "FAIL"
        check += f" (ref {r['ref_err']:.0e}, fd {r['fd_err']:.0e})"
        rows.append(
            [
                r["label"],
                f"{r['n']:,}",
                f"{r['calls']:,}",
                fmt_time(r["primal_s"]),
                fmt_time(r["grad_s"]),
                f"{r['ratio']:.2f}",
                fmt_bytes(r["tape_bytes"]),
                check,
            ]
        )
    widths = [max(len(h), *(len(row[k]) for row in rows)) for k, h in enumerate(header)]
    right = {1, 2, 3, 4, 5, 6}

    def line(cells):
        cells = (
            c.rjust(w) if k in right else c.ljust(w)
            for k, (c, w) in enumerate(zip(cells, widths))
        )
        return "  ".join(cells).rstrip()

    print(line(header))
    print(line(["-" * w for w in widths]))
    for row in rows:
        print(line(row))

    print()
    print(
        "primal, gradient: median time of one call; ratio: median over the repetitions of gradient / primal"
    )
    print(
        "timed in the same repetition (paired, so it need not equal the quotient of the two medians); tape: bytes the adjoint's"
    )
    print(
        "tape held (f_b_tape_bytes()); check: max |g - g_ref| / max |g_ref| against the reference gradient"
    )
    print(
        "(rosenbrock: the manual C gradient; manual: the adgen gradient; pow_loop: n*x**(n-1);"
    )
    print("logsumexp: softmax), and against central differences at a few components.")
    zeros = [r for r in results if r["zero_s"] > 0]
    if zeros:
        print(
            "Not included in the gradient time: zeroing the gradient array before a call (memset), "
            + ", ".join(
                f"{r['label'].split()[0]} n={r['n']:,}: {fmt_time(r['zero_s'])}"
                for r in zeros
                if r["problem"] != "rosenbrock_manual"
            )
            + "."
        )
    over = [r for r in results if r["ratio"] > 3.0]
    for r in over:
        print(f"ABOVE TARGET: {r['label']} ratio {r['ratio']:.2f} > 3")
    failed = [r for r in results if not r["check_ok"]]
    for r in failed:
        print(f"CHECK FAILED: {r['label']}: {json.dumps(r)}")

    if args.json:
        doc = {
            "machine": info,
            "quick": args.quick,
            "reps": reps,
            "commands": commands,
            "results": results,
        }
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
