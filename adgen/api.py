"""The Python API: ``adgen.transpile``, ``adgen.load``, ``adgen.check``."""

from __future__ import annotations

import os
import re
import shlex
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from .binding import AdgenFunction, _Call
from .build import (
    DEFAULT_CFLAGS, EMULATE_FLAGS, Unit, build, build_cuda, compiler_flags, environment_words,
    nvcc_flags,
)
from .transpile.analysis.activity import written_params
from .transpile.emit.module import EmittedModule
from .transpile.frontend.diagnostics import AdgenError, format_error, source_lines
from .transpile.pipeline import Selection, Transpiled, UsageError, transpile_source

SUPPORTED_MODES = ("primal", "forward", "vector-forward", "reverse", "vector-reverse", "hvp",
                   "vector-hvp")
PLANNED_MODES: tuple[str, ...] = ()


class LoadError(Exception):
    """Bad input to ``adgen.load``; the message is the located diagnostic."""


class AdgenWarning(UserWarning):
    """Legal code whose derivative is probably not what was meant (``adgen.load`` issues one
    per warning the command line prints; ``werror=True`` makes them a ``LoadError``)."""


def option_list(value: Any, what: str, comma: bool = False,
                empty: bool = False) -> list[str] | None:
    """A sequence-of-strings option as a list (None stays None): one string is one item or,
    with ``comma``, a comma-separated list of names, as on the command line, which may be
    ``empty`` only if the caller says so (it would otherwise read as the default)."""
    if value is None:
        return None
    if isinstance(value, str):
        out = [v.strip() for v in value.split(",") if v.strip()] if comma else [value]
    elif not isinstance(value, Iterable) or isinstance(value, bytes):
        raise TypeError(f"{what} must be a sequence of strings, got {type(value).__name__}")
    else:
        out = list(value)
        for v in out:
            if not isinstance(v, str):
                raise TypeError(f"{what} must be a sequence of strings, got an item {v!r}")
    if comma and not out and not empty:  # empty would read as the default, every name
        raise UsageError(f"{what}={value!r} names nothing (leave {what} out, or None, "
                         f"for the default)")
    return out


def module_path(path: Any) -> str:
    """``path`` as the file name of a module: a str or an ``os.PathLike`` of one (an integer
    would open, and close, a file descriptor of the caller's)."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"path must be the file name of a module (a str or a path object), "
                        f"not {type(path).__name__}")
    return path


def check_bools(**options: Any) -> None:
    """Options that are True or False (a string such as "yes" was taken as true)."""
    for name, value in options.items():
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False, not {value!r}")


def flag_list(cflags: Any) -> list[str] | None:
    """``cflags`` as a list of compiler flags; a string is refused, not split."""
    if isinstance(cflags, str):
        raise TypeError(f"cflags must be a sequence of flags, e.g. {shlex.split(cflags)!r}, "
                        f"not a string")
    return option_list(cflags, "cflags")


#: the options of one target (keywords of ``load``/``check``, ``--NAME`` on the command
#: line), in the order they are checked: name -> (the target, why, where it is not obvious)
TARGET_OPTIONS = {
    "emulate": ("cuda", ""),
    "arch": ("cuda", ""),
    "openmp": ("c", "on the CUDA target each prange is a kernel"),
}


def misplaced_target_option(target: str, given: dict[str, object]) -> tuple[str, str, str] | None:
    """(name, its target, why) of the first option of ``given`` (name -> value) set for
    another target than its own (``TARGET_OPTIONS``), or None."""
    for name, (own, why) in TARGET_OPTIONS.items():
        if given.get(name) and target != own:
            return name, own, why
    return None


def check_target_options(target: str, emulate: bool, arch: str | None,
                         openmp: bool = False) -> None:
    """``emulate`` and ``arch`` apply to the CUDA target only (as ``--emulate`` and
    ``--arch``), ``openmp`` to the C target only (as ``--openmp``).  An unknown target is
    named first (``target='C', openmp=True`` is no CUDA target)."""
    if target not in ("c", "cuda"):
        raise UsageError(f"unknown target '{target}' (choose c or cuda)")
    bad = misplaced_target_option(target, {"emulate": emulate, "arch": arch, "openmp": openmp})
    if bad is not None:
        name, own, why = bad
        raise UsageError(f"{name} applies to target='{own}' ({why or f'target is {target!r}'})")


def check_modes(modes: Iterable[str]) -> list[str]:
    out = []
    for m in option_list(modes, "modes") or []:
        if m in PLANNED_MODES:
            raise UsageError(f"mode '{m}' is not supported yet (available: "
                             f"{', '.join(SUPPORTED_MODES)})")
        if m not in SUPPORTED_MODES:
            raise UsageError(f"unknown mode '{m}' (choose from {', '.join(SUPPORTED_MODES)})")
        out.append(m)
    return out


def canonical_command(path: str, modes: Sequence[str], functions: Sequence[str] | None,
                      wrt: Sequence[str] | None, of: Sequence[str] | None, head: str | None,
                      precision: str, debug: bool, target: str = "c") -> str:
    words = ["adgen", os.path.basename(path)]
    for m in [m for m in SUPPORTED_MODES if m in modes]:
        words += ["--mode", m]
    for flag, value in (("--functions", functions), ("--wrt", wrt), ("--of", of)):
        if value:
            words += [flag, ",".join(value)]
    if head:
        words += ["--head", shlex.quote(head)]
    if precision != "f64":
        words += ["--precision", precision]
    if debug:
        words.append("--debug")
    if target != "c":
        words += ["--target", target]
    return " ".join(words)


def _selection(functions: Sequence[str] | None, wrt: Sequence[str] | None,
               of: Sequence[str] | None, head: str | None) -> Selection:
    if head is not None:
        sel = Selection.from_head(head)
        return Selection(list(functions) if functions else sel.functions,
                         list(wrt) if wrt else None, list(of) if of else None, sel.heads)
    return Selection(list(functions) if functions else None, list(wrt) if wrt else None,
                     list(of) if of else None)


def transpile(path: str, modes: Sequence[str] = ("primal", "forward"), *,
              functions: Sequence[str] | None = None, wrt: Sequence[str] | None = None,
              of: Sequence[str] | None = None, head: str | None = None,
              precision: str = "f64", debug: bool = False, target: str = "c",
              dump_all: bool = False) -> Transpiled:
    """Generate C for ``path``; raises ``AdgenError`` (located) or ``UsageError``.

    The generated files name the command that reproduces them; it holds only what
    changes their text, so the CLI and ``load`` produce identical files (and share
    the build cache)."""
    path = module_path(path)
    if head is not None:
        given = head
        if not isinstance(head, str):  # heads apart, as --head repeats
            head = " ".join(option_list(head, "head") or [])
        if not head.replace(";", " ").strip():
            raise UsageError(f"head={given!r} names no function (leave head out, or None, "
                             f"for every function)")
    if target not in ("c", "cuda"):
        raise UsageError(f"unknown target '{target}' (choose c or cuda)")
    check_bools(debug=debug, dump_all=dump_all)
    functions = option_list(functions, "functions", comma=True)
    wrt = option_list(wrt, "wrt", comma=True)
    of = option_list(of, "of", comma=True)
    if precision not in ("f64", "f32"):
        raise UsageError(f"precision must be f64 or f32, got '{precision}'")
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except UnicodeDecodeError as exc:
        raise UsageError(not_utf8(path, exc)) from None
    modes = check_modes(modes)
    if target == "cuda":
        if debug:
            raise UsageError("--debug is not supported on the CUDA target yet (its index and "
                             "assert checks run on the host only)")
        vector = [m for m in modes if m.startswith("vector-")]
        if vector:
            raise UsageError(f"mode '{vector[0]}' is not supported on the CUDA target yet "
                             "(available: primal, forward, reverse, hvp)")
    command = canonical_command(path, modes, functions, wrt, of, head, precision, debug, target)
    try:
        return transpile_source(path, source, modes, _selection(functions, wrt, of, head),
                                precision=precision, debug=debug, command=command,
                                dump_all=dump_all, target=target)
    except RecursionError:  # an expression too deep for the recursive passes and emitter
        from .transpile.frontend.parse import too_deep
        raise too_deep(path, source) from None


def not_utf8(path: str, exc: UnicodeDecodeError) -> str:
    """What to say of a module that is not UTF-8 text (as CPython, which rejects it too)."""
    line = exc.object[:exc.start].count(b"\n") + 1
    return (f"{path}:{line}: the file is not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); "
            "save it as UTF-8")


@dataclass
class AdgenModule:
    """What ``adgen.load`` returns: one attribute per module function, plus the raw C."""

    path: str
    lib: Any
    ffi: Any
    functions: dict[str, AdgenFunction]
    transpiled: Transpiled
    #: the compiled library the functions call (in the build cache)
    library: str = ""

    def __getattr__(self, name: str) -> Any:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        lib = self.__dict__.get("lib")
        if lib is not None and hasattr(lib, name):
            return getattr(lib, name)
        raise AttributeError(f"module {os.path.basename(self.__dict__.get('path', '?'))} has no "
                             f"function '{name}'")

    def __repr__(self) -> str:
        return f"<adgen module {self.path}: {', '.join(self.functions)}>"

    def tape_bytes(self, mode: str = "reverse") -> int:
        """The most bytes the tape held during the last adjoint call (of any function of this
        module, in ``mode``) on the calling thread, with those of the whole adjoints it called
        in its forward sweep (their own tapes, alive at the same time); 0 when that call
        needed no tape."""
        from .transpile.emit.module import MODES
        if mode not in ("reverse", "vector-reverse", "hvp", "vector-hvp") or \
                mode not in self.transpiled.outputs:
            raise ValueError(f"tape_bytes: load the module with mode '{mode}' (a reverse mode "
                             "or hvp)")
        name = self.transpiled.module.name + MODES[mode][0] + "_tape_bytes"
        return int(getattr(self.lib, name)())

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.functions))


def load(path: str, modes: Sequence[str] = ("primal", "forward"), target: str = "c", *,
         wrt: Sequence[str] | None = None, of: Sequence[str] | None = None,
         functions: Sequence[str] | None = None, head: str | None = None,
         precision: str = "f64", debug: bool = False, openmp: bool = False,
         emulate: bool = False, arch: str | None = None,
         cflags: Sequence[str] | None = None, werror: bool = False) -> AdgenModule:
    """Transpile, build (cached) and bind ``path``; returns its functions.  ``openmp``:
    compile with ``-fopenmp``, so that ``prange`` loops run in parallel.  ``target="cuda"``:
    build with nvcc for ``arch`` (default sm_80 and sm_90), or with ``emulate`` for the CPU
    (kernels run as loops on the host; no GPU needed)."""
    path = module_path(path)
    modes = list(dict.fromkeys(["primal", *check_modes(modes)]))
    cflags = flag_list(cflags)
    check_bools(debug=debug, openmp=openmp, emulate=emulate, werror=werror)
    check_target_options(target, emulate, arch, openmp)
    try:
        t = transpile(path, modes, functions=functions, wrt=wrt, of=of, head=head,
                      precision=precision, debug=debug, target=target)
    except AdgenError as err:
        raise located(path, err) from None
    if t.warnings:
        from .transpile.frontend.diagnostics import format_message
        with open(path, encoding="utf-8") as f:
            lines = source_lines(f.read())
        texts = [format_message("error" if werror else "warning", w.loc, w.message, lines).rstrip()
                 for w in t.warnings]
        if werror:
            raise LoadError("\n".join(texts))
        for text in texts:
            warnings.warn(text, AdgenWarning, stacklevel=2)
    if target == "cuda":
        return bind(t, path, nvcc_flags(cflags, debug, emulate, arch))
    return bind(t, path, compiler_flags(cflags, debug, openmp))


def located(path: str, err: AdgenError) -> LoadError:
    """The ``LoadError`` of a rejected module: the diagnostic with the source line and caret,
    as the command line prints it."""
    with open(path, encoding="utf-8") as f:
        lines = source_lines(f.read())
    return LoadError(format_error(err, lines).rstrip())


def unit_of(t: Transpiled) -> Unit:
    files: dict[str, str] = {}
    cdef = ""
    for emitted in t.outputs.values():
        assert isinstance(emitted, EmittedModule)
        files[emitted.source.name] = emitted.source.text
        files[emitted.header.name] = emitted.header.text
        cdef += emitted.cdef
    headers = [name for name in files if name.endswith(".h")]
    include_dirs: list[str] = []
    for k, path in enumerate(external_sources(t)):
        name = f"external/{k}_{os.path.basename(path)}"
        files[name] = external_unit_text(path, headers)
        include = os.path.dirname(os.path.abspath(path))
        if include not in include_dirs:
            include_dirs.append(include)
    if t.target == "c":  # the binding's helpers, compiled with the build's flags
        files[BINDING_HEADER] = BINDING_FUNCTIONS
        cdef += BINDING_CDEF
    return Unit(files, cdef, tuple(include_dirs), tuple(external_sources(t)))


#: a header of the binding's own (not written with the generated files), compiled with the
#: build's flags: the binding calls adgen_fixed_nbdirs for the ADGEN_NBDIRS the build fixes,
#: whatever flags spelled it (-D, -Wp,-D, -imacros, a -include'd header, CFLAGS, CC), instead
#: of trusting its reading of the flags; and adgen_stack_left for the stack the calling
#: thread has left, before a vector call puts arrays of directions on it
BINDING_HEADER = "adgen-binding.h"  # (no module's header: not an identifier)
BINDING_FUNCTIONS = """#include <stdint.h>
#include <pthread.h>

static int64_t adgen_fixed_nbdirs(void)
{
#ifdef ADGEN_NBDIRS
    return ADGEN_NBDIRS;
#else
    return 0;
#endif
}

#if defined(__linux__) && defined(__GLIBC__)
extern int pthread_getattr_np(pthread_t, pthread_attr_t *);

/* The low end of the calling thread's stack, read once per thread (0: not yet; 1: not
   known): for the main thread glibc reads /proc/self/maps, about 0.5 ms. */
static __thread uintptr_t adgen_stack_low;
#endif

/* Bytes of stack below this function's frame, of the calling thread's (-1: not known). */
static int64_t adgen_stack_left(void)
{
#if defined(__linux__) && defined(__GLIBC__)
    char here;
    if (adgen_stack_low == 0) {
        pthread_attr_t attr;
        void *low;
        size_t size;
        adgen_stack_low = 1;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &low, &size) == 0 && (uintptr_t)low > 1)
                adgen_stack_low = (uintptr_t)low;
            pthread_attr_destroy(&attr);
        }
    }
    if (adgen_stack_low == 1 || (uintptr_t)&here < adgen_stack_low)
        return -1;
    return (int64_t)((uintptr_t)&here - adgen_stack_low);
#else
    return -1;
#endif
}
"""
BINDING_CDEF = "int64_t adgen_fixed_nbdirs(void);\nint64_t adgen_stack_left(void);\n"


def external_sources(t: Transpiled) -> list[str]:
    """The C files of the module's ``@external`` functions (paths as the module names them,
    relative to the current directory when the module's path is), in module order."""
    return list(dict.fromkeys(fn.external.path for fn in t.module.functions
                              if fn.external is not None))


def external_unit_text(path: str, headers: list[str]) -> str:
    """The text compiled for the C file of an ``@external`` function: the generated headers
    first, so that the compiler checks its definitions against the prototypes the generated
    code calls, then the file as written (``#line``: messages name the user's file)."""
    try:
        # bytes that are not UTF-8 (a Latin-1 comment) pass through unchanged
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as exc:
        raise UsageError(f"cannot read the external C file {path}: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    quoted = path.replace("\\", "\\\\").replace('"', '\\"')
    # (by their path from the copy in external/: a header of the user's named like a generated
    # one, model.h beside the C file, stays the one its #include "model.h" finds)
    includes = "".join(f'#include "../{h}"\n' for h in sorted(headers))
    return f"{includes}#line 1 \"{quoted}\"\n{text}"


#: gcc options whose argument may be the next word
_ARGUMENT_NEXT = ("-I", "-o", "-L", "-l", "-include", "-imacros", "-isystem", "-idirafter",
                  "-iquote", "-iprefix", "-iwithprefix", "-iwithprefixbefore", "-isysroot",
                  "-imultilib", "-x", "-MF", "-MT", "-MQ", "-Xlinker", "-Xassembler",
                  "-aux-info", "--param", "-T", "-u", "-z", "-e", "--include-directory",
                  "--output", "--library-directory")
#: nvcc's too (``-Xcompiler -DN=8`` defines N for the host compiler only)
_NVCC_ARGUMENT_NEXT = ("-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options",
                       "-Xnvlink", "--nvlink-options", "-ccbin", "--compiler-bindir", "-odir",
                       "--output-directory", "-arch", "--gpu-architecture", "-code",
                       "--gpu-code", "-gencode", "--generate-code")


def fixed_nbdirs(cflags: Sequence[str], target: str = "c") -> int | None:
    """The number of directions that ``-DADGEN_NBDIRS=N`` among ``cflags`` fixes, or None,
    read as the compiler reads the flags: in order, the last definition or ``-U`` winning,
    ``-D NAME`` in two words and ``--define-macro`` too; for the C target after those of
    ``CFLAGS`` and ``CPPFLAGS``, which distutils puts first.  A definition adgen cannot read as the compiler
    does (no value, ``010``, ``4u``, ``(4)``, 0, -3) is a ``UsageError``: the binding passes
    the directions the C code assumes."""
    fixed: int | None = None
    words: list[str] = []
    for var in ("CFLAGS", "CPPFLAGS") if target == "c" else ():
        words += environment_words(var)
    words += list(cflags)
    spelled = {"-D": "-D", "-U": "-U", "--define-macro": "-D", "--undefine-macro": "-U"}
    # options whose argument is the next word, which is then no option of its own
    # (``-I -DADGEN_NBDIRS=4`` names an include directory; nvcc hands ``-Xcompiler``'s
    # argument to the host compiler only)
    taking = set(_ARGUMENT_NEXT) | (set(_NVCC_ARGUMENT_NEXT) if target == "cuda" else set())
    k = 0
    while k < len(words):
        flag = words[k]
        k += 1
        if flag in taking:
            k += 1
            continue
        if flag in spelled and k < len(words):  # two words: -D NAME=N
            flag = spelled[flag] + words[k]
            k += 1
        elif flag.startswith(("--define-macro=", "--undefine-macro=")):
            name, _, rest = flag.partition("=")
            flag = spelled[name] + rest
        m = re.fullmatch(r"-([DU])ADGEN_NBDIRS(=.*)?", flag)
        if m is None:
            continue
        if m.group(1) == "U":
            fixed = None
        elif m.group(2) is not None and re.fullmatch(r"=[1-9][0-9]*", m.group(2)):
            fixed = int(m.group(2)[1:])
        else:
            raise UsageError(f"cannot read '{flag}': the number of directions is written "
                             f"-DADGEN_NBDIRS=N with N a decimal number of at least 1, e.g. "
                             f"-DADGEN_NBDIRS=4")
    return fixed


def bind(t: Transpiled, path: str, cflags: tuple[str, ...] = DEFAULT_CFLAGS) -> AdgenModule:
    """Build ``t`` (gcc and cffi; nvcc for the CUDA target) and wrap its functions."""
    nbdirs = fixed_nbdirs(cflags, t.target)  # before the build: a flag it cannot read is refused
    if t.target == "cuda":
        ext: Any = build_cuda(t.module.name, unit_of(t), cflags)
    else:
        ext = build(t.module.name, unit_of(t), cflags)
        # the truth: a flag fixing it that the reading above missed (-Wp,-DADGEN_NBDIRS=1) gave
        # calls of another number of directions than the code assumes, and wrong results
        nbdirs = int(ext.lib.adgen_fixed_nbdirs()) or None
    lib, ffi = ext.lib, ext.ffi
    device = t.target == "cuda" and EMULATE_FLAGS[0] not in cflags
    calls: dict[str, dict[str, _Call]] = {}
    for mode, emitted in t.outputs.items():
        assert isinstance(emitted, EmittedModule)
        ir = t.ir[mode]
        # (only the vector modes keep arrays of directions: no scan of the others at each load)
        stack = direction_stack(emitted.source.text) if mode.startswith("vector-") else {}
        for fn in ir.functions:
            if emitted.signatures[fn.name].is_static or fn.external is not None:
                continue  # device functions on CUDA too; C functions given with @external
            written = {fn.param_names[i] for i in written_params(fn, ir)}
            calls.setdefault(fn.primal, {})[mode] = _Call(fn, emitted.signatures[fn.name], lib, ffi,
                                                         written, device, nbdirs,
                                                         stack.get(fn.name, 0))
    functions = {}
    for name, by_mode in calls.items():
        if "primal" not in by_mode:
            continue
        functions[name] = AdgenFunction(name, by_mode, t.target)
    library = ext.path if t.target == "cuda" else ext.__file__
    return AdgenModule(path, lib, ffi, functions, t, library)


#: a function definition of generated C: its name, and its body up to the closing brace
_C_FUNCTION = re.compile(r"^[A-Za-z_][^\n;]*?\b(\w+)\([^\n]*\)\n\{\n(.*?)^\}", re.M | re.S)
#: an array of directions on the stack (the count is nbdirs_ beside a parameter nbdirs; a
#: file generated before ADGEN_DIRS, given with sources=, declares them [nbdirs])
_C_DIRECTIONS = re.compile(r"\b(double|float) \w+\[(?:ADGEN_DIRS\(nbdirs\w*\)|nbdirs\w*)\];")
#: an array an OpenMP reduction copies into each thread's stack (the caller's among them)
_C_REDUCED = re.compile(r"\w+\[:nbdirs\w*\]")


def direction_stack(source: str) -> dict[str, int]:
    """For each function of a generated C file, the bytes of stack a direction may take in a
    call: the scalar tangents and adjoints it keeps in arrays on the stack (``double
    vb[nbdirs];``, and the private copies of the arrays an OpenMP reduction sums), plus the
    most of the functions it calls.  A recursion counts one level (each level has its own
    arrays, and the depth is not known: a lower bound)."""
    own: dict[str, int] = {}
    callees: dict[str, set[str]] = {}
    for m in _C_FUNCTION.finditer(source):
        name, body = m.group(1), m.group(2)
        own[name] = sum(8 if t == "double" else 4 for t in _C_DIRECTIONS.findall(body)) + \
            8 * len(_C_REDUCED.findall(body))
        callees[name] = set(re.findall(r"\b(\w+)\(", body))
    for name in callees:
        callees[name] &= set(own)
    total: dict[str, int] = {}

    def visit(name: str, path: tuple[str, ...]) -> int:
        if name in path:  # (the recursion's back edge)
            return 0
        if name not in total:
            total[name] = own[name] + max((visit(c, path + (name,)) for c in callees[name]),
                                          default=0)
        return total[name]
    for name in own:
        visit(name, ())
    return total


#: what ``adgen.check`` checks by default (on the CUDA target, without the vector modes)
DEFAULT_CHECK_MODES = ("forward", "vector-forward", "reverse", "vector-reverse", "hvp")


def check(path: str, modes: Sequence[str] = DEFAULT_CHECK_MODES, *,
          args: dict[str, Sequence[Any]] | None = None, seed: int = 0, **options: Any) -> Any:
    """Validate the generated code of ``path`` (DESIGN.md section 9); returns a report.  A
    module outside the subset raises ``LoadError``, as ``load`` does (caused by the
    ``AdgenError``, whose ``loc`` and ``message`` it formats)."""
    from .validate import run_checks
    path = module_path(path)
    try:
        return run_checks(path, modes, args=args, seed=seed, **options)
    except AdgenError as err:
        raise located(path, err) from err


def hessian(f: AdgenFunction, *args: Any) -> np.ndarray:
    """The Hessian of ``f`` (a function of a module loaded with mode ``hvp`` or ``vector-hvp``,
    returning one float) at ``args``: ``f.hessian(*args)``."""
    if not isinstance(f, AdgenFunction):
        raise TypeError(f"hessian: f must be a function of a module loaded with adgen.load, got "
                        f"{type(f).__name__}")
    return f.hessian(*args)


__all__ = ["AdgenError", "AdgenModule", "AdgenWarning", "LoadError", "UsageError", "check",
           "hessian", "load", "transpile"]
