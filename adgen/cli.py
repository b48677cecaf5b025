"""The ``adgen`` command (DESIGN.md section 6).

    adgen MODULE.py [--mode primal|forward|reverse|vector-forward|vector-reverse|hvp|vector-hvp|
                            jacobian]...
                    [-o OUTDIR]
                    [--functions f,g] [--wrt x,y] [--of return,r] [--head "f(y)/(x)"]
                    [--build] [--check] [-MD] [-MF FILE] [--precision f64|f32]
                    [--dump-ir[=all]] [--debug] [--cflags FLAGS] [--openmp] [--quiet]

Exit codes: 0 success, 1 a check failed, 2 bad input or usage, 3 internal error.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import re
import shlex
import shutil
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .build import DEFAULT_CFLAGS

if TYPE_CHECKING:
    from .validate import CheckReport

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
#: stdout closed early by its reader (128 + SIGPIPE, what the shell reports for cat)
EXIT_BROKEN_PIPE = 141

#: modes that stand for several (expanded before anything uses the modes)
MODE_ALIASES = {"jacobian": ["vector-forward", "vector-reverse"]}


def _names(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:  # --wrt= would otherwise mean the default, every input
        raise argparse.ArgumentTypeError(f"no names in {text!r}")
    return names


def _head(text: str) -> str:
    if not text.replace(";", " ").strip():
        raise argparse.ArgumentTypeError(f"no function in {text!r}")
    return text


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, not {text!r}")
    return seed


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="adgen",
        description="Differentiate a module written in adgen's typed Python subset: writes "
                    "readable C for its functions and their derivatives.",
        epilog="Example: adgen model.py --mode forward -o out --build --check. "
               "Exit codes: 0 ok, 1 a check failed, 2 bad input or usage, 3 internal error.")
    p.add_argument("module", metavar="MODULE.py", help="the module to transpile")
    p.add_argument("--mode", action="append",
                   choices=["primal", "forward", "vector-forward", "reverse", "vector-reverse", "hvp",
                            "vector-hvp", "jacobian"],
                   help="what to generate; repeat for several (default: forward). "
                        "primal -> MODULE.c, forward -> MODULE_d.c (f_d), "
                        "reverse -> MODULE_b.c (f_b), vector-forward -> MODULE_dv.c (f_dv), "
                        "vector-reverse -> MODULE_bv.c (f_bv), "
                        "hvp -> MODULE_b_d.c (f_b_d, Hessian-vector products), "
                        "vector-hvp -> MODULE_b_dv.c (f_b_dv, many directions), "
                        "jacobian -> both vector modes, MODULE_dv.c and MODULE_bv.c "
                        "(what adgen.jacobian uses)")
    p.add_argument("--target", choices=["c", "cuda"], default="c",
                   help="output language (default c); cuda: each prange is a kernel, .cu files")
    p.add_argument("--arch", metavar="sm_XX",
                   help="with --target cuda: the GPU architecture to build for (default: sm_80 "
                        "and sm_90)")
    p.add_argument("--emulate", action="store_true",
                   help="with --target cuda and --build/--check: build the CPU emulation (kernels "
                        "run as loops on the host; no GPU needed)")
    p.add_argument("-o", "--output-dir", default=".", metavar="OUTDIR",
                   help="directory for the generated files (default: current directory)")
    # a list option given twice names both lists (--wrt W1 --wrt b1 is --wrt W1,b1)
    p.add_argument("--functions", type=_names, action="extend", metavar="f,g",
                   help="functions to differentiate (default: every function with float inputs "
                        "and outputs)")
    p.add_argument("--wrt", type=_names, action="extend", metavar="x,y",
                   help="independent inputs (default: every float parameter)")
    p.add_argument("--of", type=_names, action="extend", metavar="return,a",
                   help="dependent outputs: 'return' and/or arrays the function writes "
                        "(default: all float outputs)")
    p.add_argument("--head", type=_head, action="append", metavar='"f(outputs)/(inputs)"',
                   help="Tapenade-style shorthand for --functions/--of/--wrt")
    p.add_argument("--build", action="store_true",
                   help="compile the generated C into a Python extension (cached) and print its path")
    p.add_argument("--check", action="store_true",
                   help="validate: primal vs CPython, tangent vs finite differences, adjoint vs "
                        "tangent (dot product), vector vs scalar derivatives; exit 1 on failure")
    p.add_argument("--source", action="append", default=[], metavar="FILE.c",
                   help="with --build/--check: compile FILE.c (e.g. a hand-edited generated "
                        "file) instead of the generated file of the same name, which is then not "
                        "written; repeat for several")
    p.add_argument("--seed", type=_seed, default=0, help="random seed of --check inputs")
    p.add_argument("-MD", dest="make_deps", action="store_true",
                   help="write a Make dependency file (OUTDIR/MODULE.d unless -MF is given): "
                        "a rule whose targets are the .c and .h files this run writes (not "
                        "adgen_runtime.h, nor a file that --source replaces, which this run "
                        "leaves alone) and whose prerequisites are the module, the C files "
                        "of its @external functions and the files those include (as the "
                        "compiler finds them, not the system's headers); and, as gcc -MP "
                        "writes, an empty rule for each of those files, so that make does not "
                        "stop when one is renamed or removed. A path with a newline in it, "
                        "which make cannot read, is refused (exit 2, nothing written)")
    p.add_argument("-MF", dest="dep_file", metavar="FILE", help="name of the dependency file")
    p.add_argument("--precision", choices=["f64", "f32"], default="f64",
                   help="what float/f64 mean (default f64)")
    p.add_argument("--dump-ir", nargs="?", const="final", choices=["final", "all"],
                   help="print the IR that is emitted (all: also after each pass); its value "
                        "is optional: write --dump-ir=all, or put --dump-ir after the module")
    p.add_argument("--debug", action="store_true",
                   help="bounds checks and asserts in the generated code (-DADGEN_DEBUG to enable)")
    p.add_argument("--cflags", help="C compiler flags for --build/--check (default "
                                    f"{' '.join(DEFAULT_CFLAGS)})")
    p.add_argument("--openmp", action="store_true",
                   help="with --build/--check: compile with -fopenmp, so that prange loops run "
                        "in parallel (the generated files are the same)")
    p.add_argument("--werror", action="store_true",
                   help="treat warnings (derivatives lost in floor/int(), float equality on "
                        "an active value) as errors: exit 2, write nothing")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing but warnings and errors")
    p.add_argument("-v", "--verbose", action="store_true", help="say what is being done")
    p.add_argument("--version", action="version", version=f"adgen {__version__}")
    return p


def _unchanged(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == text
    except (OSError, UnicodeDecodeError):
        return False


def _stage(path: str, text: str) -> str:
    """A temporary file next to ``path`` holding ``text``, with the mode open() would give."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would create it, not mkstemp's 0600
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def _keep_old(path: str) -> str | None:
    """A hard link (else a copy) of the file at ``path`` next to it, to put it back; None
    when there is none."""
    if not os.path.isfile(path):
        return None
    fd, old = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".old",
                               dir=os.path.dirname(path) or ".")
    os.close(fd)
    try:
        os.unlink(old)
        os.link(path, old)
    except OSError:
        shutil.copy2(path, old)
    return old


def write_all(files: dict[str, str]) -> dict[str, bool]:
    """Write every file of ``files`` (path -> text) or none.  Each file whose text changed
    goes to a temporary file in its directory; only when all are written are they renamed
    over the old files, and a rename that fails (or an interrupt, Ctrl-C, while they are
    renamed) puts back the files renamed before it, so a reader never sees a half-written
    file nor a mix of old and new ones.  A file that
    already holds its text is not touched (its timestamp stays).  Returns path -> whether it
    changed; an OSError's ``filename`` is the file that could not be written."""
    changed = {path: not _unchanged(path, text) for path, text in files.items()}
    staged: list[tuple[str, str]] = []
    #: (temporary file, path, the old file kept) of each rename begun; recorded before the
    #: rename, so that an interrupt right after it (KeyboardInterrupt) still puts the old
    #: file back. Whether it took place is whether the temporary file is gone
    done: list[tuple[str, str, str | None]] = []
    try:
        for path, text in files.items():
            try:
                if not changed[path]:
                    continue
                if os.path.isdir(path):
                    raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
                staged.append((_stage(path, text), path))
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, path) from None
        for tmp, path in staged:
            old = _keep_old(path)
            done.append((tmp, path, old))
            try:
                os.replace(tmp, path)
            except OSError as exc:
                done.pop()  # not renamed: nothing to put back
                if old is not None:
                    os.unlink(old)
                raise OSError(exc.errno, exc.strerror, path) from None
    except BaseException:
        for tmp, path, old in reversed(done):
            with contextlib.suppress(OSError):
                if os.path.lexists(tmp):  # interrupted before the rename: path is as it was
                    if old is not None:
                        os.unlink(old)
                elif old is None:
                    os.unlink(path)
                else:
                    os.replace(old, path)
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    for _, _, old in done:
        if old is not None:
            with contextlib.suppress(OSError):
                os.unlink(old)
    return changed


def make_quote(path: str, target: bool = False) -> str:
    """``path`` as a word of a Make rule, quoted as ``gcc -MD`` quotes it: a space or tab
    after N backslashes becomes 2N+1 backslashes and the space, ``#`` becomes ``\\#``, ``$``
    becomes ``$$``; and ``:`` becomes ``\\:``, which gcc leaves as it is but GNU make would
    read as the colon of the rule. In a ``target``, ``%`` becomes ``\\%`` (make would read
    the rule as a pattern rule); a prerequisite of a rule that is not one keeps its ``%``,
    which make takes as it is there (and would not unquote)."""
    out = []
    slashes = 0
    for ch in path:
        if ch in " \t":
            out.append("\\" * (slashes + 1))
        elif ch in "#:" or (target and ch == "%"):
            out.append("\\")
        elif ch == "$":
            out.append("$")
        out.append(ch)
        slashes = slashes + 1 if ch == "\\" else 0
    return "".join(out)


def same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file: the same file when both exist (another
    spelling of the path, a link, a name that differs in case on a file system that ignores
    it), else the same path once links are resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def make_dirs(directory: str) -> list[str]:
    """Create ``directory`` and its missing parents; returns those created, outermost first.
    A directory that another process creates meanwhile (two adgen runs, or make -j, writing
    into the same new directory) is used as it is and not counted as created, so that a
    failed run does not remove it; a file in its place is an error."""
    missing = []
    d = os.path.normpath(directory)
    while d and not os.path.exists(d) and d not in missing:
        missing.append(d)
        d = os.path.dirname(d)
    created = []
    try:
        for d in reversed(missing):
            try:
                os.mkdir(d)
            except FileExistsError:
                if os.path.isdir(d):
                    continue
                raise
            created.append(d)
    except OSError:
        remove_dirs(created)
        raise
    return created


def remove_dirs(created: list[str]) -> None:
    for d in reversed(created):
        with contextlib.suppress(OSError):
            os.rmdir(d)


#: options that only change what --build and --check compile
BUILD_OPTIONS = (("source", "--source"), ("cflags", "--cflags"), ("openmp", "--openmp"),
                 ("emulate", "--emulate"), ("arch", "--arch"))


def check_options(args: argparse.Namespace) -> None:
    """Reject an option that does not apply to the other options given (before anything is
    written)."""
    from .api import TARGET_OPTIONS, misplaced_target_option
    from .transpile.pipeline import UsageError
    bad = misplaced_target_option(args.target, {name: getattr(args, name)
                                                for name in TARGET_OPTIONS})
    if bad is not None:
        name, own, why = bad
        raise UsageError(f"--{name} applies to --target {own}" + (f" ({why})" if why else ""))
    if args.dep_file == "":
        # -MF "" (an unset variable in a Makefile) wrote no dependency file and said nothing
        raise UsageError(f"-MF needs the name of the dependency file, not {args.dep_file!r}")
    if not (args.build or args.check):
        for dest, option in BUILD_OPTIONS:
            if getattr(args, dest):
                raise UsageError(f"{option} needs --build or --check")


def build_failure(failure: str, files: dict[str, str], args: argparse.Namespace, outdir: str,
                  own_flags: bool) -> tuple[str, str | None]:
    """The message of a failed compilation (``failure``, the compiler's output), with the
    build cache's paths replaced by the files the user has, and why it is adgen's own fault
    (exit code 3) or None: an error located in a file adgen generated, compiled with adgen's
    own flags (``own_flags``: no --cflags, no @external C) and nothing of the user's (no
    --source, no CFLAGS or CPPFLAGS in the environment)."""
    from .build import cache_root
    # a staging directory of the build cache (build._staging), which may hold a space; not
    # a directory of the user's named '.build-...'
    in_cache = r"(?<![^\s'\"])" + re.escape(os.path.join(cache_root(), ".build-")) + \
        r"[^/\s]+/"
    for name in files:  # name the files written (or given), not their copies in the cache
        shown = next((src for src in args.source if os.path.basename(src) == name),
                     os.path.join(outdir, name))
        # a function as the replacement: the path is not a template (a backslash in it)
        failure = re.sub(in_cache + re.escape(name) + r"\b", lambda _, s=shown: s, failure)
    # what --check compiles besides (the primal): named as --mode primal would write it
    cached = in_cache + r"((?!_adgen_)[^/\s:'\"]+\.(?:c|h|cu|cuh))(?=:)"
    others = sorted(set(re.findall(cached, failure)))
    failure = re.sub(cached, r"\1", failure)
    if others:
        failure += (f"\n({', '.join(others)}: compiled by --check, not written; "
                    "--mode primal writes the primal)")
    # the compiler also takes the flags of CFLAGS and CPPFLAGS (distutils reads them):
    # those are the user's too
    internal = None
    if args.target == "c" and own_flags and not args.source \
            and not any(os.environ.get(v, "").strip() for v in ("CFLAGS", "CPPFLAGS")) \
            and re.search(
                r"(^|[\s/'\"])(" + "|".join(re.escape(n) for n in [*files, *others]) +
                r")\:\d+(:\d+)?: (fatal )?error:", failure, re.M):
        # an error located in a file adgen generated (the primal of --check, in the build
        # cache, too), compiled with adgen's own flags (in the C locale:
        # build._child_environment; a warning or a note located there is not the failure)
        internal = ("the generated code does not compile with the default flags (this is a "
                    "bug in adgen; please report it with the input module and this "
                    "message)")
    return failure, internal


def run(argv: Sequence[str]) -> int:
    from .api import bind, check_modes, fixed_nbdirs, not_utf8, transpile
    from .build import (
        compiler_flags, nvcc_flags, runtime_cuda_header, runtime_header,
    )
    from .transpile.emit.module import EmittedModule
    from .transpile.frontend.diagnostics import AdgenError, format_error
    from .transpile.frontend.diagnostics import source_lines as read_lines
    from .transpile.ir.core import For
    from .transpile.ir.printer import print_module
    from .transpile.pipeline import UsageError

    args = parser().parse_args(argv)
    if args.head is not None:  # heads given apart are one list of heads, as in one --head
        args.head = " ".join(args.head)
    say = (lambda msg: None) if args.quiet else out
    verbose = (lambda msg: print(f"adgen: {msg}", file=sys.stderr)) if args.verbose else \
        (lambda msg: None)
    if args.target == "cuda" and "jacobian" in (args.mode or []):  # (named as it was asked)
        print("adgen: error: mode 'jacobian' (the vector modes) is not supported on the CUDA "
              "target yet (available: primal, forward, reverse, hvp)", file=sys.stderr)
        return EXIT_BAD_INPUT
    modes = list(dict.fromkeys(m for mode in args.mode or ["forward"]
                               for m in MODE_ALIASES.get(mode, [mode])))
    path = args.module
    try:
        with open(path, encoding="utf-8") as f:
            source_lines = read_lines(f.read())
    except OSError as exc:
        print(f"adgen: error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UnicodeDecodeError as exc:
        print(f"adgen: error: {not_utf8(path, exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        check_modes(modes)
        check_options(args)
        verbose(f"transpiling {path} ({', '.join(modes)})")
        t = transpile(path, modes, functions=args.functions, wrt=args.wrt, of=args.of,
                      head=args.head, precision=args.precision, debug=args.debug,
                      target=args.target, dump_all=args.dump_ir == "all")
    except AdgenError as err:
        sys.stderr.write(format_error(err, source_lines))
        return EXIT_BAD_INPUT
    except UsageError as err:
        print(f"adgen: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from .transpile.frontend.diagnostics import format_message
    for w in t.warnings:
        sys.stderr.write(format_message("error" if args.werror else "warning", w.loc,
                                        w.message + (" [--werror]" if args.werror else ""),
                                        source_lines))
    if args.werror and t.warnings:
        return EXIT_BAD_INPUT

    if args.dump_ir:
        if args.dump_ir == "all":
            out("\n\n".join(t.log.entries))
        for mode, ir in t.ir.items():
            out(f"// ==== {mode}")
            out(print_module(ir))
        _flush_stdout()  # all of it, before any file is written (a failure writes none)

    outdir = args.output_dir
    files: dict[str, str] = {}
    for emitted in t.outputs.values():
        assert isinstance(emitted, EmittedModule)
        files[emitted.source.name] = emitted.source.text
        files[emitted.header.name] = emitted.header.text
    files["adgen_runtime.h"] = runtime_header()
    if args.target == "cuda":
        files["adgen_runtime_cuda.cuh"] = runtime_cuda_header()
    kept = {os.path.basename(src) for src in args.source}
    for name in files:
        if name not in kept and same_file(os.path.join(outdir, name), path):
            # a module not named .py (m.h) and -o its directory: its header replaced it
            print(f"adgen: error: writing {os.path.join(outdir, name)} would overwrite the "
                  f"module {path} (choose another -o, or name the module "
                  f"{t.module.name}.py)", file=sys.stderr)
            return EXIT_BAD_INPUT
    from .api import external_sources
    for source in external_sources(t):  # (as files: -o may be a link to its directory)
        if any(same_file(source, os.path.join(outdir, n)) for n in files):
            print(f"adgen: error: writing {os.path.join(outdir, os.path.basename(source))} would "
                  f"overwrite the C file of an @external function (choose another -o, or "
                  f"rename {source})", file=sys.stderr)
            return EXIT_BAD_INPUT

    # the rule of -MD: the files this run writes, not the runtime headers (the same for every
    # module) nor the generated file a --source replaces (the user's, which this run leaves
    # alone), made from the module and the C files of its @external functions
    dep_targets = [os.path.join(outdir, n) for n in files
                   if n not in ("adgen_runtime.h", "adgen_runtime_cuda.cuh") and n not in kept]
    dep_prerequisites = [path, *external_sources(t)]
    if args.make_deps or args.dep_file:
        dep = args.dep_file or os.path.join(outdir, t.module.name + ".d")
        for word in (*dep_targets, *dep_prerequisites):
            if "\n" in word:  # make reads a rule line by line: no quoting keeps a newline
                fix = "rename it or its directory" if word in dep_prerequisites else \
                    "choose another -o"
                print(f"adgen: error: -MD: make cannot read a path with a newline in it: "
                      f"{word!r} ({fix})", file=sys.stderr)
                return EXIT_BAD_INPUT
        taken = [*((os.path.join(outdir, n), "a generated file") for n in files),
                 (path, "the module"), *((p, "a --source file") for p in args.source),
                 *((p, "an @external C file") for p in external_sources(t))]
        clash = next((what for p, what in taken if same_file(dep, p)), None)
        if clash is not None:
            print(f"adgen: error: the dependency file {dep} would overwrite {clash} (name "
                  "another with -MF)", file=sys.stderr)
            return EXIT_BAD_INPUT

    # compile and check first: a --source the module does not generate, or a module --check
    # rejects, leaves the output directory as it was
    try:
        cflags = shlex.split(args.cflags) if args.cflags else None
    except ValueError as exc:  # an unbalanced quote
        print(f"adgen: error: --cflags: cannot read {args.cflags!r} ({exc})", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.target == "cuda":
        flags = nvcc_flags(cflags, args.debug, args.emulate, args.arch)
    else:
        flags = compiler_flags(cflags, args.debug, args.openmp)
    try:
        if args.build or args.check:  # the flags of a build: read as the binding reads them
            fixed_nbdirs(flags, args.target)
    except UsageError as exc:
        where = "--cflags" if args.target == "cuda" else "--cflags, CFLAGS or CPPFLAGS"
        print(f"adgen: error: {where}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from .build import PROGRESS, BuildError
    from .validate import run_checks, use_sources
    if not args.quiet and sys.stderr.isatty():
        PROGRESS.set(_progress_line)
    kernels = any(isinstance(op, For) and op.parallel for fn in t.module.functions
                  for op in fn.walk())
    if args.check and args.target == "cuda" and not args.emulate and kernels:
        from .cuda import gpu_problem
        problem = gpu_problem()
        if problem is not None:
            print(f"adgen: error: --check runs the kernels on a GPU, and there is no usable GPU "
                  f"or CUDA driver here ({problem}); add --emulate to run them on the CPU",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
    from .cuda import CudaError
    built: Path | None = None
    report: CheckReport | None = None
    failure: str | None = None
    #: why a failure is adgen's own (exit code 3), not the input's or this machine's
    internal: str | None = None
    try:
        if args.build:
            verbose("compiling with " + ("nvcc" if args.target == "cuda" else "gcc"))
            use_sources(t, args.source)
            # (the library loaded: the key computed again could name another build, of a C
            # file or header edited meanwhile)
            built = Path(bind(t, path, flags).library)
        if args.check:
            verbose("checking")
            report = run_checks(path, modes, functions=args.functions, wrt=args.wrt, of=args.of,
                                head=args.head, precision=args.precision, debug=args.debug,
                                cflags=cflags, openmp=args.openmp, target=args.target,
                                emulate=args.emulate, arch=args.arch, seed=args.seed,
                                sources=args.source)
    except UsageError as err:
        print(f"adgen: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except AdgenError as err:  # --check builds the primal of every function, not just those asked
        sys.stderr.write(format_error(err, source_lines))
        return EXIT_BAD_INPUT
    except BuildError as err:
        # the module was valid: its files are written all the same, to look at or to build
        # by hand; the compiler's message says what failed (an unknown flag, the user's C)
        failure, internal = build_failure(str(err), files, args, outdir,
                                          cflags is None and not external_sources(t))
    except CudaError as err:  # the GPU failed while checking (out of memory, a lost device)
        failure = f"{err} (--emulate runs the kernels on the CPU)"
    except OSError as err:  # this machine's: the build cache cannot be made or written
        from .build import cache_root
        where = f" {err.filename}" if err.filename else ""
        print(f"adgen: error: cannot build:{where}: {err.strerror or err} (the builds are cached "
              f"in {cache_root()}; set ADGEN_CACHE_DIR to a directory adgen may write)",
              file=sys.stderr)
        return EXIT_BAD_INPUT

    outputs: dict[str, str] = {}
    for name, text in files.items():
        if name in kept:
            verbose(f"kept {name}: --source {name} replaces it")
            continue  # never overwrite the edited file the user asks to check
        outputs[os.path.join(outdir, name)] = text
    if args.make_deps or args.dep_file:
        if dep_prerequisites[1:]:  # and the files the @external C files include (gcc -MM)
            from .api import unit_of
            from .build import included_files
            # (not a generated header an external C file includes: a target of this rule)
            dep_prerequisites += [p for p in included_files(unit_of(t), flags)
                                  if "\n" not in p and p not in dep_prerequisites and not any(
                                      same_file(p, os.path.join(outdir, n)) for n in files)]
        targets = " ".join(make_quote(p, target=True) for p in dep_targets)
        prerequisites = " ".join(make_quote(p) for p in dep_prerequisites)
        # as gcc -MP: an empty rule for each prerequisite but the module, so that make does
        # not stop ("No rule to make target") when an @external C file or a header it includes
        # is renamed or removed and no longer needed; it reruns adgen, which writes new rules
        phony = "".join(f"\n{make_quote(p, target=True)}:\n" for p in dep_prerequisites[1:])
        outputs[dep] = f"{targets}: {prerequisites}\n{phony}"
    try:
        created = make_dirs(outdir)
    except OSError as exc:
        print(f"adgen: error: cannot create the directory {exc.filename or outdir}: "
              f"{exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        changed = write_all(outputs)
    except OSError as exc:
        remove_dirs(created)
        if failure is not None:
            print(f"adgen: error: {failure}", file=sys.stderr)
        print(f"adgen: error: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # write_all put back the old files: none of this run is left
        remove_dirs(created)
        raise
    written = list(outputs)
    for full in written:
        verbose(f"{'wrote' if changed[full] else 'unchanged'} {full}")
    for w in written:
        say(w)
    if failure is not None:
        print(f"adgen: error: {failure}", file=sys.stderr)
        if internal is not None:
            print(f"adgen: internal error: {internal}", file=sys.stderr)
            return EXIT_INTERNAL
        return EXIT_BAD_INPUT
    if built is not None:
        say(str(built))
    if report is not None:
        if not args.quiet or not report.ok:
            out(report.table())
        if not report.ok:
            return EXIT_CHECK_FAILED
    return EXIT_OK


class StdoutError(Exception):
    """Standard output cannot be written (a full disk: adgen ... > /dev/full); not a reader
    that went away, which is a BrokenPipeError."""


def out(text: str) -> None:
    """Print ``text`` on standard output; a write that fails raises StdoutError."""
    try:
        print(text)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise StdoutError(exc.strerror or str(exc)) from None


def _flush_stdout() -> None:
    """Write what standard output holds (a file's buffer); as out() on failure."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise StdoutError(exc.strerror or str(exc)) from None


def _drop_stdout() -> None:
    """Send what is left for standard output to /dev/null, so that the interpreter's own
    flush at exit does not fail again (and print its own message)."""
    with contextlib.suppress(OSError, ValueError):  # no descriptor (captured output)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _progress_line(text: str, done: bool) -> None:
    """A progress line on a terminal, rewritten in place and cleared when done."""
    sys.stderr.write(f"\radgen: {text}\033[K" + ("\r\033[K" if done else ""))
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = run(sys.argv[1:] if argv is None else argv)
        _flush_stdout()  # into a file, what print() wrote is written here
        return code
    except KeyboardInterrupt:
        return 130
    except StdoutError as err:
        # the user's machine, not adgen: the files are written (when the list of them could
        # not be), or none is (when the --dump-ir text before them could not be)
        _drop_stdout()
        print(f"adgen: error: cannot write to standard output: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # the reader of stdout went away (adgen ... --dump-ir | head): stop quietly, as cat
        # does, with the status of a process ended by SIGPIPE; nothing more goes to the pipe
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except Exception:  # a bug in adgen: never a bare traceback for users
        tb = traceback.format_exc()
        print("adgen: internal error (this is a bug in adgen; please report it with the input "
              "module and this message):\n" + tb.strip().splitlines()[-1], file=sys.stderr)
        if os.environ.get("ADGEN_TRACEBACK"):
            print(tb, file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
