"""Compile generated C with gcc into a cffi (API mode) extension, cached.

The cache key is a hash of every generated file, the cdef, the compiler
flags, the compiler's version, the Python version and adgen's version, so a
repeated build of the same module is a directory lookup.  A build happens
in a temporary directory that is renamed into place when complete, so
concurrent builds never see half-written files.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType, SimpleNamespace

from . import __version__

#: gcc's: -fopenmp-simd and ADGEN_VECTORIZE turn the generated ADGEN_SIMD loops into
#: `#pragma omp simd` loops (vectorised sums and libm calls; see adgen_runtime.h)
DEFAULT_CFLAGS = ("-O3", "-fopenmp-simd", "-DADGEN_VECTORIZE")
#: nvcc's (host code is not vectorised)
DEFAULT_NVCC_FLAGS = ("-O3",)
DEBUG_CFLAGS = ("-O0", "-g", "-DADGEN_DEBUG")
OPENMP_FLAG = "-fopenmp"


def compiler_flags(cflags: Sequence[str] | None = None, debug: bool = False,
                   openmp: bool = False) -> tuple[str, ...]:
    """The gcc flags of a build: ``cflags`` if given, else the release or debug defaults;
    ``openmp`` adds ``-fopenmp`` (prange loops then run in parallel)."""
    flags = tuple(cflags) if cflags is not None else (DEBUG_CFLAGS if debug else DEFAULT_CFLAGS)
    if openmp and OPENMP_FLAG not in flags:
        flags += (OPENMP_FLAG,)
    return flags


class BuildError(Exception):
    """The C compiler rejected generated code (a bug in adgen, or bad flags)."""


@dataclass(frozen=True)
class Unit:
    """One generated translation unit: file name -> text, plus its cffi declarations.  The
    C files of ``@external`` functions are among the files (``external/NAME.c``);
    ``include_dirs`` are their directories, searched for the headers they include."""

    files: dict[str, str]
    cdef: str
    include_dirs: tuple[str, ...] = ()
    #: the C files of the ``@external`` functions as the module names them
    external_paths: tuple[str, ...] = ()


def included_files(unit: Unit, cflags: Sequence[str]) -> list[str]:
    """The files the C files of ``unit``'s ``@external`` functions include, as the compiler
    finds them with these flags (``gcc -MM``: not the system's headers): their texts are part
    of the build's key, and ``-MD`` lists them.  A file the compiler cannot read is left to
    the build, which reports it."""
    if not unit.external_paths:
        return []
    flags = [*_build_words(cflags), *(f"-I{d}" for d in unit.include_dirs)]
    found: list[str] = []
    for path in unit.external_paths:
        found += _prerequisites(flags, path)
    return list(dict.fromkeys(found))


def forced_files(cflags: Sequence[str]) -> list[str]:
    """The files that ``-include``/``-imacros`` in the flags (``cflags``, CFLAGS, CPPFLAGS)
    put into every C file of a build, and the files those include (``gcc -MM``: not the
    system's headers): their texts are part of the build's key.  Without such a flag, none
    (and no compiler runs)."""
    words = _build_words(cflags)
    if not any(w.startswith(FILE_OPTIONS) for w in words):
        return []
    return _prerequisites(words, os.devnull)


#: nvcc's options that decide which files its preprocessor reads (long and short names), and
#: gcc's spelling of each; nvcc takes their values as the next word, after "=", or joined
#: (-Idir), and several at once separated by commas
NVCC_PREPROCESSOR_OPTIONS = {
    "--pre-include": "-include", "-include": "-include", "--include-path": "-I", "-I": "-I",
    "--system-include": "-isystem", "-isystem": "-isystem", "--define-macro": "-D", "-D": "-D",
    "--undefine-macro": "-U", "-U": "-U"}


def nvcc_forced_files(flags: Sequence[str]) -> list[str]:
    """``forced_files`` of a CUDA build: the files that nvcc's ``-include`` (``--pre-include``)
    put into every file, and the files those include, found by ``gcc -MM`` with nvcc's
    include paths and macros.  (nvcc reads neither CFLAGS nor CPPFLAGS.)"""
    words: list[str] = []
    k = 0
    while k < len(flags):
        word = flags[k]
        k += 1
        name, equals, value = word.partition("=")
        if name not in NVCC_PREPROCESSOR_OPTIONS:
            name, value = word[:2], word[2:]  # -Idir, -DNAME=1
            if name not in ("-I", "-D", "-U") or not value:
                continue
        elif not equals:
            if k == len(flags):
                continue
            value = flags[k]
            k += 1
        for part in value.split(","):
            words += [NVCC_PREPROCESSOR_OPTIONS[name], part]
    if "-include" not in words:
        return []
    # (as nvcc reads them: C++ with nvcc's macros); where gcc cannot read them, the files the
    # options name, found as given or in an -I directory
    found = _prerequisites([*words, "-D__CUDACC__", "-D__NVCC__"], os.devnull, "c++")
    if found:
        return found
    dirs = ["", *(w for k, w in enumerate(words) if k and words[k - 1] == "-I")]
    for name in (w for k, w in enumerate(words) if k and words[k - 1] == "-include"):
        path = next((p for d in dirs if os.path.isfile(p := os.path.join(d, name))), None)
        if path is not None:
            found.append(path)
    return found


def _build_words(cflags: Sequence[str]) -> list[str]:
    """The compiler's flags in a build: distutils puts CFLAGS and CPPFLAGS of the
    environment before adgen's."""
    return [*environment_words("CFLAGS"), *environment_words("CPPFLAGS"), *cflags]


def _prerequisites(flags: list[str], path: str, language: str = "c") -> list[str]:
    """The files but ``path`` that compiling ``path`` (a C file; ``os.devnull`` read as
    ``language``) with ``flags`` reads, as ``gcc -MM -MG`` lists them (none when the
    compiler cannot run or fails)."""
    cc = shlex.split(os.environ.get("CC") or "gcc")
    language = ["-x", language] if path == os.devnull else []
    try:
        r = subprocess.run([*cc, "-MM", "-MG", *flags, *language, path], capture_output=True,
                           text=True, check=False, env=os.environ | {"LC_ALL": "C"})
    except OSError:
        return []
    if r.returncode != 0:
        return []
    found: list[str] = []
    # target: prerequisites, with make's continuation lines and quoting
    words = re.findall(r"(?:\\.|\$\$|[^\s\\])+", r.stdout.replace("\\\n", " "))
    for word in words[1:]:
        name = re.sub(r"\\(.)", r"\1", word).replace("$$", "$")
        if os.path.isfile(name) and not os.path.samefile(name, path):
            found.append(os.path.normpath(name))
    return found


def runtime_header() -> str:
    return resources.files("adgen").joinpath("runtime_c", "adgen_runtime.h").read_text()


def runtime_cuda_header() -> str:
    return resources.files("adgen").joinpath("runtime_cuda", "adgen_runtime_cuda.cuh").read_text()


#: nvcc's default targets: a fat binary for sm_80 (A100) and sm_90 (H100), with PTX for later
CUDA_ARCH_FLAGS = ("-gencode", "arch=compute_80,code=sm_80",
                   "-gencode", "arch=compute_90,code=[sm_90,compute_90]")
#: the CPU emulation of the CUDA target (kernels run as loops on the host); device code is
#: still compiled, for one architecture, so that nvcc checks it
EMULATE_FLAGS = ("-DADGEN_CUDA_EMULATE", "-arch=sm_80")


def nvcc_flags(cflags: Sequence[str] | None = None, debug: bool = False, emulate: bool = False,
               arch: str | None = None) -> tuple[str, ...]:
    """The nvcc flags of a CUDA build: optimisation (``cflags``, else -O3 or the debug flags),
    then the emulation define or the architectures (``arch``: e.g. sm_86)."""
    flags = tuple(cflags) if cflags is not None else (
        DEBUG_CFLAGS if debug else DEFAULT_NVCC_FLAGS)
    if emulate:
        return flags + EMULATE_FLAGS
    return flags + ((f"-arch={arch}",) if arch else CUDA_ARCH_FLAGS)


@functools.lru_cache(maxsize=None)
def compiler_version(cc: str = "gcc") -> str:
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, check=False)
        return out.stdout.splitlines()[0] if out.stdout else cc
    except OSError:
        return cc


def cache_root() -> Path:
    env = os.environ.get("ADGEN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "adgen"


#: the library's calls of its own functions bind to them, never to a symbol of the same name
#: loaded before it (glibc still exports `step` and `advance` of the old <regexp.h>: a module
#: function `step` called through cffi would otherwise run glibc's)
LINK_FLAGS = ("-Wl,-Bsymbolic",)


#: variables of the environment the C build reads (distutils adds CFLAGS, CPPFLAGS and
#: LDFLAGS to adgen's flags, CC and LDSHARED choose the programs): part of the build's key
BUILD_ENVIRONMENT = ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS", "LDSHARED")


def _key(name: str, unit: Unit, cflags: tuple[str, ...],
         included: list[str] | None = None) -> str:
    """The cache key of a build; ``included``: the texts of the files the build reads besides
    the unit's (``_read_files``; read now when not given)."""
    h = hashlib.sha256()
    env = [f"{v}={os.environ[v]}" for v in BUILD_ENVIRONMENT if v in os.environ]
    if included is None:
        included = _read_files(unit, cflags)
    # (the flags as the build reads them: -Iinc of two directories are two builds)
    env += [f"{v} read as {absolute_paths(environment_words(v))}" for v in ("CFLAGS", "CPPFLAGS")
            if v in os.environ]
    for part in (name, unit.cdef, repr(absolute_paths(list(cflags))), repr(LINK_FLAGS),
                 compiler_version(), *env,
                 sys.version, __version__,
                 runtime_header(), *[f"{k}\0{v}" for k, v in sorted(unit.files.items())],
                 *unit.include_dirs, *included):
        h.update(part.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()[:16]


def environment_words(var: str) -> list[str]:
    """The words of the environment variable ``var`` (split as a shell would; on an
    unbalanced quote at the spaces, as distutils does)."""
    try:
        return shlex.split(os.environ.get(var, ""))
    except ValueError:
        return os.environ.get(var, "").split()


def _read_files(unit: Unit, cflags: tuple[str, ...]) -> list[str]:
    """The names and texts of the files a build reads besides the unit's own: those the C of
    the ``@external`` functions includes, and those ``-include``/``-imacros`` add (an edited
    one is another build; it was the library built with its old text)."""
    return _texts([*included_files(unit, cflags), *forced_files(cflags)])


def _texts(paths: list[str]) -> list[str]:
    out = []
    for path in paths:
        try:
            out.append(f"{path}\0{Path(path).read_text(errors='surrogateescape')}")
        except OSError:
            out.append(path)
    return out


#: where ``build`` reports a compilation it starts and ends (the command line's progress line)
PROGRESS: contextvars.ContextVar[Callable[[str, bool], None] | None] = contextvars.ContextVar(
    "adgen_build_progress", default=None)


#: one build at a time in this process (the compilers of two would share the machine's cores)
_BUILD_LOCK = threading.RLock()  # (reentrant: a build may fork from its own thread)


def _after_fork_in_child() -> None:
    """A child forked while another thread built got the lock held by a thread it does not
    have: its first build waited for ever."""
    global _BUILD_LOCK
    _BUILD_LOCK = threading.RLock()


os.register_at_fork(after_in_child=_after_fork_in_child)


def build(name: str, unit: Unit, cflags: tuple[str, ...] = DEFAULT_CFLAGS) -> ModuleType:
    """Build (or find in the cache) and import the extension for ``unit``."""
    with _BUILD_LOCK:
        return _build(name, unit, cflags)


def _build(name: str, unit: Unit, cflags: tuple[str, ...]) -> ModuleType:
    for _ in range(3):
        included = _read_files(unit, cflags)
        key = _key(name, unit, cflags, included)
        modname = f"_adgen_{name}_{key}"
        if modname in sys.modules:
            return sys.modules[modname]
        target = cache_root() / key
        lib = _find_extension(target, modname)
        if lib is not None:
            break
        report = PROGRESS.get()
        sources = sum(1 for f in unit.files if f.endswith(".c"))
        what = f"compiling {name} ({sources} C file{'s' if sources != 1 else ''}, gcc " \
               f"{' '.join(cflags)})"
        start = time.monotonic()
        if report is not None:
            report(what + "...", False)
        # (a header the C of an @external includes, edited while the compiler ran: the build
        # is not published under the key of the texts it may not have read, and starts again)
        if not _compile(target, modname, unit, cflags,
                        lambda read=included: _read_files(unit, cflags) == read):
            continue
        if report is not None:
            report(f"{what}: {time.monotonic() - start:.1f} s", True)
        break
    else:
        raise BuildError("the headers the build reads (those the C files of the @external "
                         "functions include, and the files of -include and -imacros) kept "
                         "changing while they were compiled (build again when they are saved)")
    mod = _load(target, modname)
    sys.modules[modname] = mod
    return mod


def _load(target: Path, modname: str) -> ModuleType:
    """Import the extension of the cache entry ``target``.  Another process replacing an
    entry without its library may move a finished one aside for a moment (and put it back):
    a library not there is looked for again, for a few seconds."""
    for _ in range(50):
        lib = _find_extension(target, modname)
        if lib is None:
            time.sleep(0.1)
            continue
        spec = importlib.util.spec_from_file_location(modname, lib)
        assert spec is not None and spec.loader is not None
        try:
            mod = importlib.util.module_from_spec(spec)  # (dlopen: here a symbol is missing)
            spec.loader.exec_module(mod)
            return mod
        except ImportError as exc:
            if not lib.exists():  # moved aside while it was opened
                continue
            # a C function the module calls that nothing defines (an @external's C file
            # without it, or a function it calls): the cached library is of no use
            _discard(target)
            undefined = re.search(r"undefined symbol: (\S+)", str(exc))
            if undefined:
                raise BuildError(f"the built library cannot be loaded: nothing defines the C "
                                 f"function '{undefined[1]}' (the C files of the @external "
                                 "functions, and --source files, must define every function "
                                 "they call)") from None
            raise BuildError(f"the built library cannot be loaded: {exc}") from None
    raise BuildError(f"the build in {target} produced no extension module")


_CUDA_LIBS: dict[str, SimpleNamespace] = {}


def build_cuda(name: str, unit: Unit, flags: tuple[str, ...]) -> SimpleNamespace:
    """Build (or find in the cache) a shared library of ``unit``'s .cu files with nvcc and
    open it with cffi (ABI mode); returns an object with ``lib`` and ``ffi``."""
    with _BUILD_LOCK:
        return _build_cuda(name, unit, flags)


def _build_cuda(name: str, unit: Unit, flags: tuple[str, ...]) -> SimpleNamespace:
    path = cuda_library_path(name, unit, flags)
    if str(path) in _CUDA_LIBS:
        return _CUDA_LIBS[str(path)]
    if not path.exists():
        report = PROGRESS.get()
        what = f"compiling {name} (nvcc {' '.join(flags)})"
        start = time.monotonic()
        if report is not None:
            report(what + "...", False)
        _compile_cuda(path, unit, flags)
        if report is not None:
            report(f"{what}: {time.monotonic() - start:.1f} s", True)
    import cffi
    ffi = cffi.FFI()
    ffi.cdef(unit.cdef)
    out = SimpleNamespace(lib=ffi.dlopen(str(path)), ffi=ffi, path=str(path))
    _CUDA_LIBS[str(path)] = out
    return out


def cuda_library_path(name: str, unit: Unit, flags: tuple[str, ...]) -> Path:
    key = _key(name, unit, ("nvcc", compiler_version("nvcc"), runtime_cuda_header(), *flags),
               _texts(nvcc_forced_files(flags)))
    return cache_root() / key / f"libadgen_{name}_{key}.so"


def _compile_cuda(path: Path, unit: Unit, flags: tuple[str, ...]) -> None:
    files = {**unit.files, "adgen_runtime.h": runtime_header(),
             "adgen_runtime_cuda.cuh": runtime_cuda_header()}
    with _staging(path.parent, files, lambda d: (d / path.name).exists()) as tmp:
        sources = [str(tmp / f) for f in sorted(files) if f.endswith(".cu")]
        cmd = ["nvcc", "-shared", "-Xcompiler", "-fPIC", "-Xlinker", "-Bsymbolic", *flags,
               "-I", str(tmp), "-o",
               str(tmp / path.name), *sources]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                                 env={**os.environ, "LC_ALL": "C"})
        except OSError as exc:
            raise BuildError(f"cannot run nvcc ({exc.strerror}): the CUDA target needs the "
                             "CUDA toolkit") from None
        if out.returncode != 0:
            raise BuildError(f"compiling the CUDA failed:\n{' '.join(cmd)}\n{out.stdout}"
                             f"{out.stderr}")


def _find_extension(target: Path, modname: str) -> Path | None:
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    path = target / (modname + suffix)
    return path if path.exists() else None


@contextlib.contextmanager
def _staging(target: Path, files: dict[str, str],
             complete: Callable[[Path], bool]) -> Iterator[Path]:
    """A temporary build directory next to ``target`` holding ``files``; renamed to ``target``
    when the build in it succeeds, removed otherwise.  A ``target`` that another process
    renamed there first is used (``complete``: it holds its library); one without its
    library (left by a broken build of an older adgen, where every load then failed) is
    renamed aside, atomically, and replaced."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=target.parent))
    try:
        for fname, text in files.items():
            (tmp / fname).parent.mkdir(parents=True, exist_ok=True)
            (tmp / fname).write_text(text, encoding="utf-8", errors="surrogateescape")
        yield tmp
        for _ in range(3):
            try:
                os.rename(tmp, target)
                break
            except OSError:
                if not os.path.lexists(target):  # (a dangling link there is replaced too)
                    raise
                if complete(target):
                    break  # another process finished the same build first: it is identical
                stale = Path(tempfile.mkdtemp(prefix=".stale-", dir=target.parent))
                try:
                    os.rename(target, stale / "build")
                except OSError:
                    pass  # another process moved it first
                else:
                    # another process may have finished the build there between the test
                    # and the rename: put it back (it is loading it), else throw it away
                    if complete(stale / "build"):
                        with contextlib.suppress(OSError):
                            os.rename(stale / "build", target)
                shutil.rmtree(stale, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


#: a staging directory this old was left by a build that was killed (no build takes a day)
ABANDONED_SECONDS = 24 * 3600


def _remove_abandoned(root: Path) -> None:
    """Remove the staging directories of killed builds (SIGTERM, SIGKILL) from ``root``."""
    now = time.time()
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith((".build-", ".stale-")):
            try:
                old = now - entry.stat(follow_symlinks=False).st_mtime > ABANDONED_SECONDS
            except OSError:
                continue
            if old:
                shutil.rmtree(entry.path, ignore_errors=True)


def _discard(target: Path) -> None:
    """Remove the cache entry ``target`` (renamed aside first: atomically)."""
    stale = Path(tempfile.mkdtemp(prefix=".stale-", dir=target.parent))
    with contextlib.suppress(OSError):
        os.rename(target, stale / "build")
    shutil.rmtree(stale, ignore_errors=True)


#: the build of a cffi extension, in a process of its own (``python -c``, its input a JSON
#: object of ``_compile``): cffi compiles in a directory of its own, and distutils writes to
#: file descriptors 1 and 2 and reads the environment.  Done in this process, that took
#: them from every thread for the length of the build (a relative path another thread opened
#: was the build directory's, what it wrote to stdout was lost in the compiler's capture).
_CHILD_BUILD = """
import json, os, sys
spec = json.load(sys.stdin)
if sys.platform.startswith("linux"):  # ended with the build's parent (SIGTERM, SIGKILL)
    try:
        import ctypes, signal
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    if os.getppid() != spec["parent"]:  # (it ended before that)
        sys.exit(1)
sys.path[:] = spec["path"]
os.environ["LC_ALL"] = "C"  # the compiler's (not this interpreter's encodings: set now)
import cffi
ffi = cffi.FFI()
ffi.cdef(spec["cdef"])
ffi.set_source(spec["modname"], spec["headers"], sources=spec["sources"],
               include_dirs=spec["include_dirs"], extra_compile_args=spec["cflags"],
               libraries=["m"], extra_link_args=spec["link"])
try:
    ffi.compile(tmpdir=spec["tmpdir"], verbose=False)
except Exception as exc:  # distutils raises its own error types
    sys.stdout.flush()
    sys.stdout.write(%r + str(exc))
    sys.exit(1)
"""
#: what the build's output says before its failure (``_CHILD_BUILD``)
_FAILED = "\0adgen: the build failed:\0"
_CHILD_BUILD %= _FAILED


def _child_environment() -> dict[str, str]:
    """The build's environment: its output in UTF-8, and the paths of CFLAGS and CPPFLAGS
    made absolute (distutils adds them to the compiler's words, run in cffi's directory).
    The compiler runs in the C locale (its diagnostics say 'error:', which the command line
    reads for exit code 3, whatever language the user's locale speaks: 'Fehler' under
    LANG=de_DE): ``_CHILD_BUILD`` sets it once the interpreter has its encodings, which
    the C locale would make ASCII (a cache path with an accent failed)."""
    env = os.environ | {"PYTHONIOENCODING": "utf-8"}
    for var in ("CFLAGS", "CPPFLAGS"):
        if var in os.environ:
            env[var] = shlex.join(absolute_paths(environment_words(var)))
    return env


def _short(text: str) -> str:
    """The compiler's failure as distutils reports it, without the command line: newer
    setuptools put the whole command, with the build cache's paths, in the message
    ("Command '['gcc', ..., '-o', './tmp/.../f.o']' returned non-zero exit status 1."),
    where older ones said "command '/usr/bin/gcc' failed with exit code 1"."""
    failed = re.search(r"Command '\[('[^']*'|\"[^\"]*\").*\]' (returned non-zero exit status "
                       r"(\d+)|died with (<[^>]*>))", text, re.S)
    if failed:
        how = f"failed with exit code {failed[3]}" if failed[3] else f"died with {failed[4]}"
        return f"{text[:failed.start()]}command {failed[1]} {how}"
    return text


class _Changed(Exception):
    """What a build read changed while it ran: it is thrown away."""


def _compile(target: Path, modname: str, unit: Unit, cflags: tuple[str, ...],
             unchanged: Callable[[], bool] = lambda: True) -> bool:
    """Build ``unit`` into ``target``; False (and nothing published) when ``unchanged`` says
    the inputs changed while the compiler ran."""
    files = {**unit.files, "adgen_runtime.h": runtime_header()}
    try:
        with _staging(target, files, lambda d: _find_extension(d, modname) is not None) as tmp:
            sources = [str(tmp / f) for f in sorted(files) if f.endswith(".c")]
            headers = "".join(f'#include "{f}"\n' for f in sorted(files) if f.endswith(".h")
                              and f != "adgen_runtime.h")
            spec = {
                "parent": os.getpid(), "modname": modname, "cdef": unit.cdef,
                # (made absolute: the build runs in its own directory; '' is this one)
                "path": [os.path.abspath(p) if isinstance(p, str) else str(p)
                         for p in sys.path],
                "headers": headers, "sources": sources, "tmpdir": str(tmp),
                # the directories of the @external C files first: a header of the user's named
                # like a generated one is theirs (the copies include the generated ones by path)
                "include_dirs": [*unit.include_dirs, str(tmp)],
                "cflags": absolute_paths(list(cflags)),
                "link": [*LINK_FLAGS, *([OPENMP_FLAG] if OPENMP_FLAG in cflags else [])],
            }
            try:
                r = subprocess.run([sys.executable, "-c", _CHILD_BUILD], input=json.dumps(spec),
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   env=_child_environment(), cwd=tmp, check=False,
                                   encoding="utf-8", errors="replace")
            except OSError as exc:
                raise BuildError(f"cannot start the build ({sys.executable}): {exc}") from None
            if r.returncode != 0:
                output, _, failure = r.stdout.partition(_FAILED)
                if not failure:
                    failure = f"the build's process ended with status {r.returncode}"
                raise BuildError(f"compiling the C failed:\n{output}\n{_short(failure)}")
            if not unchanged():
                raise _Changed
    except _Changed:
        return False
    return True


#: options whose argument is a directory, which the build (run by cffi in its own directory)
#: reads made absolute: a relative -Iinc is the caller's inc/, as for `gcc -MM` and in make
DIRECTORY_OPTIONS = ("-iquote", "-isystem", "-idirafter", "-I", "-L")
#: options naming a file, which gcc looks for in its directory first and then on the include
#: path: made absolute only when the caller's directory has it (-include stdint.h stays)
FILE_OPTIONS = ("-include", "-imacros")


def absolute_paths(words: list[str]) -> list[str]:
    """``words`` (compiler flags) with the directories of ``DIRECTORY_OPTIONS`` and the files
    of ``FILE_OPTIONS`` that the current directory has made absolute, given as the next word
    or joined (``-I inc``, ``-Iinc``, ``-include conf.h``, ``-includeconf.h``)."""
    out: list[str] = []
    k = 0
    while k < len(words):
        word = words[k]
        k += 1
        if word in (*DIRECTORY_OPTIONS, *FILE_OPTIONS) and k < len(words):
            path = words[k]
            k += 1
            found = path and not path.startswith("=") and (
                word in DIRECTORY_OPTIONS or os.path.isfile(path))
            out += [word, os.path.abspath(path) if found else path]
            continue
        option = next((o for o in (*FILE_OPTIONS, *DIRECTORY_OPTIONS)
                       if word.startswith(o)), None)
        rest = word[len(option):] if option else ""
        if option is None or rest in ("", "-") or rest.startswith("=") or (
                not os.path.isfile(rest) if option in FILE_OPTIONS
                else option != "-I" and not os.path.isdir(rest)):
            # (not -I- nor -I=dir (the sysroot's), nor a clang option that begins the same,
            # -isystem-after; -includeFILE of a file the current directory has)
            out.append(word)
        else:
            out.append(option + os.path.abspath(rest))
    return out
