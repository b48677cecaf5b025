"""The build cache against what changes beside it: headers edited while a build runs, C
functions nobody defines, relative include paths, a user header named like a generated one,
other processes replacing entries, forks during a build, and what killed builds leave."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import adgen
from adgen import build
from adgen.build import BuildError

EXTERNAL_PY = """
from adgen import external, f64


@external("k.c", name="kc", tangent="kc_d", adjoint="kc_b")
def kf(x: f64) -> f64:
    return K * x


def f(x: float) -> float:
    return kf(x) + 0.0
"""

K_C = """
#include <stdint.h>
#include "k.h"

double kc(double x) { return K * x; }
double kc_d(double x, double xd, double *retd) { *retd = K * xd; return K * x; }
double kc_b(double x, double *xb, double retb) { *xb += K * retb; return K * x; }
"""


def external_module(directory: Path, k: str = "1.0", header_dir: str = "") -> Path:
    """f(x) = K x through an @external C function whose header k.h defines K."""
    (directory / header_dir).mkdir(parents=True, exist_ok=True)
    (directory / header_dir / "k.h").write_text(f"#define K {k}\n")
    (directory / "k.c").write_text(textwrap.dedent(K_C).lstrip())
    path = directory / "ext.py"
    path.write_text(textwrap.dedent(EXTERNAL_PY).lstrip().replace("K * x", "1.0 * x"))
    return path


def test_a_header_edited_while_compiling_is_not_cached_under_the_old_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key hashes k.h as the load found it; gcc reads k.h when it runs.  An edit in
    between put a library of the new text under the old text's key, where every later load
    (of the old text) found it: f(1.0) = 2.0 with k.h saying K 1.0."""
    path = external_module(tmp_path, "1.0")
    real = build._compile

    def edited_meanwhile(*args, **kwargs):  # type: ignore[no-untyped-def]
        (tmp_path / "k.h").write_text("#define K 2.0\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "_compile", edited_meanwhile)
    assert adgen.load(str(path), modes=()).f(1.0) == 2.0  # built again, from the new text
    monkeypatch.setattr(build, "_compile", real)
    (tmp_path / "k.h").write_text("#define K 1.0\n")
    assert adgen.load(str(path), modes=()).f(1.0) == 1.0


def test_the_command_line_prints_the_library_it_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """--build computed the key again after the build to print the library's path: a header
    edited meanwhile gave another key, and an AssertionError (exit 3)."""
    from adgen import api, cli
    path = external_module(tmp_path, "1.0")
    real = api.bind

    def bind_then_edit(*args, **kwargs):  # type: ignore[no-untyped-def]
        module = real(*args, **kwargs)
        (tmp_path / "k.h").write_text("#define K 3.0\n")
        return module

    monkeypatch.setattr(api, "bind", bind_then_edit)
    code = cli.run([str(path), "--mode", "forward", "-o", str(tmp_path / "out"), "--build"])
    out = capsys.readouterr()
    assert code == 0, out.err
    printed = Path(out.out.strip().splitlines()[-1])
    assert printed.is_file() and printed.parent.parent == build.cache_root()


def test_a_c_function_nothing_defines_is_a_build_error_and_not_cached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An @external C file without the tangent the module calls: the extension did not load
    (ImportError: an internal error, exit 3) and stayed in the cache, failing every retry."""
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path / "cache"))
    path = external_module(tmp_path)
    (tmp_path / "k.c").write_text(textwrap.dedent(K_C).lstrip().replace("kc_d(", "kc_dx("))
    for _ in range(2):  # (the second is no cached failure: the same message)
        with pytest.raises(BuildError, match=r"nothing defines the C function 'kc_d'"):
            adgen.load(str(path), modes=("forward",))
    assert not list(build.cache_root().glob("*/_adgen_ext_*"))
    from helpers import run_cli
    r = run_cli(str(path), "--mode", "forward", "-o", str(tmp_path / "out"), "--build",
                env=dict(os.environ))
    assert r.returncode == 2 and "nothing defines the C function 'kc_d'" in r.stderr, r.stderr
    assert (tmp_path / "out" / "ext_d.c").is_file()  # the module was valid: its files written


def test_relative_include_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """-Iinc relative to the current directory, in cflags and in CPPFLAGS: the build ran in
    cffi's own directory, where gcc did not find inc/k.h (while -MD listed it)."""
    path = external_module(tmp_path, "4.0", header_dir="inc")
    monkeypatch.chdir(tmp_path)
    assert adgen.load(str(path), modes=(), cflags=["-O1", "-Iinc"]).f(1.0) == 4.0
    monkeypatch.setenv("CPPFLAGS", "-I inc")
    assert adgen.load(str(path), modes=(), cflags=["-O2"]).f(2.0) == 8.0


def test_files_of_include_options_are_found_as_gcc_finds_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """-include stdint.h is found on the include path (made absolute, it was looked for in the
    current directory only); -imacros nb.h of the current directory is read from it, and two
    directories with their own nb.h are two builds (the key hashed the flags as spelled)."""
    src = tmp_path / "vs.py"
    src.write_text("import math\n\n\ndef f(a: float) -> float:\n    return math.sin(a) * a\n")
    monkeypatch.chdir(tmp_path)
    assert adgen.load(str(src), modes=(), cflags=["-O1", "-include", "stdint.h"]).f(0.0) == 0.0
    for n in (2, 3):
        (tmp_path / f"d{n}").mkdir()
        (tmp_path / f"d{n}" / "nb.h").write_text(f"#define ADGEN_NBDIRS {n}\n")
    for n in (2, 3):
        monkeypatch.chdir(tmp_path / f"d{n}")
        m = adgen.load(str(src), modes=("vector-forward",), cflags=["-O1", "-imacros", "nb.h"])
        assert m.f._vector.fixed_nbdirs == n


def test_an_edited_file_of_an_include_option_is_another_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The texts of the files -include and -imacros name (in the flags or in CFLAGS), and of
    the files those include, are part of the key: after an edit of either, the library built
    with the old text was loaded again (it fixed 2 directions where the header now says 3)."""
    src = tmp_path / "fi.py"
    src.write_text("import math\n\n\ndef f(a: float) -> float:\n    return math.sin(a) * a\n")
    (tmp_path / "conf.h").write_text('#include "nb.h"\n')
    (tmp_path / "nb.h").write_text("#define ADGEN_NBDIRS 2\n")
    (tmp_path / "run.py").write_text(textwrap.dedent("""
        import sys
        import adgen
        m = adgen.load(sys.argv[1], modes=("vector-forward",), cflags=["-O1", *sys.argv[2:]])
        print(m.f._vector.fixed_nbdirs, m.library)
    """))
    monkeypatch.chdir(tmp_path)

    def fixed(*flags: str) -> tuple[int, str]:
        r = subprocess.run([sys.executable, "run.py", str(src), *flags], capture_output=True,
                           text=True, check=False)
        assert r.returncode == 0, r.stderr
        n, library = r.stdout.split()
        return int(n), library

    n, lib = fixed("-include", "conf.h")
    assert n == 2
    assert fixed("-include", "conf.h") == (2, lib)  # (unchanged: the same build)
    (tmp_path / "nb.h").write_text("#define ADGEN_NBDIRS 3\n")
    assert fixed("-include", "conf.h")[0] == 3
    monkeypatch.setenv("CFLAGS", "-imacros nb.h")  # (-imacros, in CFLAGS)
    assert fixed()[0] == 3
    (tmp_path / "nb.h").write_text("#define ADGEN_NBDIRS 4\n")
    assert fixed()[0] == 4


def test_an_edited_file_of_nvcc_include_is_another_cuda_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CUDA build's key hashes the files nvcc's -include (--pre-include) names and those
    they include, found with nvcc's -I and -D: it hashed none, and an edited header loaded
    the library built from its old text."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "conf.h").write_text('#ifdef WIDE\n#include "nb.h"\n#endif\n')
    (tmp_path / "inc" / "nb.h").write_text("#define ADGEN_NBDIRS 2\n")
    unit = build.Unit(files={"k.cu": "int k(void) { return 0; }\n"}, cdef="int k(void);")

    def path(*flags: str) -> Path:
        return build.cuda_library_path("k", unit, ("-O3", *flags))

    spellings = [("-Iinc", "-DWIDE", "-include", "conf.h"),
                 ("--include-path=inc", "--define-macro", "WIDE", "--pre-include=conf.h"),
                 ("-I", "inc", "-DOTHER,WIDE", "-include=conf.h")]
    before = [path(*flags) for flags in spellings]
    narrow = path("-Iinc", "-include", "conf.h")  # (nb.h is not read without WIDE)
    (tmp_path / "inc" / "nb.h").write_text("#define ADGEN_NBDIRS 3\n")
    after = [path(*flags) for flags in spellings]
    assert all(a != b for a, b in zip(after, before, strict=True))
    assert path("-Iinc", "-include", "conf.h") == narrow
    assert build.nvcc_forced_files(["-O3", "-arch=sm_90"]) == []
    # read as nvcc reads it (C++, __CUDACC__): gcc -x c listed no nb.h here, and failed on
    # a header that needs C++, which hashed nothing; where gcc fails, the named file counts
    (tmp_path / "inc" / "cuda.h").write_text('#ifdef __CUDACC__\n#include "nb.h"\n#endif\n')
    (tmp_path / "inc" / "cpp.h").write_text('#ifndef __cplusplus\n#error C++ only\n#endif\n'
                                            '#include "nb.h"\n')
    (tmp_path / "inc" / "bad.h").write_text("#error not for gcc\n")
    for name in ("cuda.h", "cpp.h"):
        assert build.nvcc_forced_files(["-Iinc", "-include", name]) == [f"inc/{name}",
                                                                        "inc/nb.h"]
    assert build.nvcc_forced_files(["-Iinc", "-include", "bad.h"]) == ["inc/bad.h"]


def test_paths_of_flags_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conf.h").write_text("")
    (tmp_path / "inc").mkdir()
    here = str(tmp_path)
    assert build.absolute_paths(
        ["-Iinc", "-I", "nowhere", "-includeconf.h", "-include", "stdint.h", "-imacros",
         "conf.h", "-I-", "-I=/usr/include", "-isystem-after", "-Wl,-rpath,lib", "-O2"]) == [
        f"-I{here}/inc", "-I", f"{here}/nowhere", f"-include{here}/conf.h", "-include",
        "stdint.h", "-imacros", f"{here}/conf.h", "-I-", "-I=/usr/include", "-isystem-after",
        "-Wl,-rpath,lib", "-O2"]


def test_a_header_of_the_user_named_like_a_generated_one(tmp_path: Path) -> None:
    """k.c includes its own ext.h, the name of the module's primal header: the build found
    the generated one first (and the function the user's header defines was missing)."""
    path = external_module(tmp_path)
    (tmp_path / "ext.h").write_text("static double twice(double x) { return 2.0 * x; }\n")
    (tmp_path / "k.c").write_text(textwrap.dedent(K_C).lstrip().replace(
        '#include "k.h"', '#include "k.h"\n#include "ext.h"').replace(
        "double kc(double x) { return K * x; }", "double kc(double x) { return twice(x); }"))
    assert adgen.load(str(path), modes=()).f(1.5) == 3.0


def test_a_finished_build_moved_aside_is_put_back(tmp_path: Path) -> None:
    """A process replacing an entry without its library tests it, then moves it aside: if
    another process renamed its finished build there in between, that build was deleted
    (and the other process, loading it, failed)."""
    target = tmp_path / "key"
    target.mkdir()
    (target / "lib").write_text("the other process's")
    answers = iter([False])  # the entry looked incomplete when tested, then was finished

    def complete(d: Path) -> bool:
        return next(answers, True) and (d / "lib").exists()

    with build._staging(target, {"lib": "ours"}, complete):
        pass
    assert (target / "lib").read_text() == "the other process's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["key"]


def test_a_dangling_link_in_the_cache_is_replaced(tmp_path: Path) -> None:
    target = tmp_path / "key"
    target.symlink_to(tmp_path / "nowhere")
    with build._staging(target, {"lib": "ours"}, lambda d: (d / "lib").exists()):
        pass
    assert (target / "lib").read_text() == "ours"


def test_what_killed_builds_left_is_removed(tmp_path: Path) -> None:
    """A build killed by SIGTERM or SIGKILL leaves its staging directory; one a day old is
    removed by the next build (a build running now is never that old)."""
    old, new = tmp_path / ".build-old", tmp_path / ".stale-new"
    for d in (old, new):
        d.mkdir()
        (d / "f.c").write_text("")
    day_ago = time.time() - build.ABANDONED_SECONDS - 60
    os.utime(old, (day_ago, day_ago))
    with build._staging(tmp_path / "key", {"lib": "ours"}, lambda d: (d / "lib").exists()):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [".stale-new", "key"]


FORK_DURING_A_BUILD = """
import multiprocessing as mp, os, sys, threading, time
import adgen

def worker(path, q):
    print("worker: hello", flush=True)
    q.put(adgen.load(path, modes=()).f(3.0))

if __name__ == "__main__":
    slow, quick = sys.argv[1], sys.argv[2]
    cache = os.environ["ADGEN_CACHE_DIR"]
    adgen.load(quick, modes=())
    t = threading.Thread(target=adgen.load, args=(slow,), kwargs={"modes": ("reverse",)})
    t.start()
    while not any(n.startswith(".build-") for n in os.listdir(cache)):
        time.sleep(0.01)
    time.sleep(0.2)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=worker, args=(quick, q))
    p.start()
    value = q.get(timeout=60)
    p.join(60)
    t.join()
    print("value", value, "exit", p.exitcode, flush=True)
"""


def test_a_fork_during_a_build(tmp_path: Path) -> None:
    """multiprocessing's fork while a thread builds: the child got the build lock held by a
    thread it does not have (its first load waited for ever)."""
    slow = tmp_path / "slow.py"
    slow.write_text("import math\n\n\ndef g(x: float) -> float:\n    s = 0.0\n" + "".join(
        f"    s += math.sin(x * {k}.0) * math.exp(s * 0.01)\n" for k in range(1, 300))
        + "    return s\n")
    quick = tmp_path / "quick.py"
    quick.write_text("def f(x: float) -> float:\n    return x * x\n")
    env = {**os.environ, "ADGEN_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", FORK_DURING_A_BUILD, str(slow), str(quick)],
                       capture_output=True, text=True, env=env, timeout=300, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "worker: hello" in r.stdout and "value 9.0 exit 0" in r.stdout, r.stdout


def test_a_build_leaves_the_other_threads_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    """cffi compiled in this process, in a directory of its own, with file descriptors 1 and
    2 sent to the compiler's capture: while a thread built, another thread's relative path
    was the build directory's, and what it wrote to stdout was lost.  The build runs in a
    process of its own."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.txt").write_text("mine")
    src = tmp_path / "alone.py"
    src.write_text(f"import math\n\n\ndef f(x: float) -> float:\n"
                   f"    return math.sin(x) * {abs(hash(str(tmp_path))) % 1000}.0\n")
    stop = threading.Event()
    seen: list[tuple[str, bool]] = []

    def watch() -> None:
        while not stop.is_set():
            seen.append((os.getcwd(), os.path.exists("data.txt")))
            os.write(1, b"tick\n")
            time.sleep(0.005)
    t = threading.Thread(target=watch)
    t.start()
    try:
        m = adgen.load(str(src), modes=("reverse",))
    finally:
        stop.set()
        t.join()
    assert m.f(0.0) == 0.0
    assert len(seen) > 10 and all(s == (str(tmp_path), True) for s in seen)
    assert capfd.readouterr().out.count("tick") == len(seen)


def test_a_build_in_a_cache_with_an_accent_under_the_c_locale(tmp_path: Path) -> None:
    """The build's process ran in the C locale from its start: without UTF-8 mode its file
    names were ASCII, and a cache directory named with an accent failed ('ascii' codec can't
    encode character '\\xe8'). The compiler alone runs in the C locale."""
    src = tmp_path / "acc.py"
    src.write_text("def f(x: float) -> float:\n    return 3.0 * x\n")
    env = {**os.environ, "PYTHONUTF8": "0", "ADGEN_CACHE_DIR": str(tmp_path / "cachè x")}
    r = subprocess.run([sys.executable, "-c", "import sys, adgen; "
                        "print(adgen.load(sys.argv[1], modes=()).f(2.0))", str(src)],
                       capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0 and r.stdout.split() == ["6.0"], r.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_build_ends_with_its_process(tmp_path: Path) -> None:
    """A process killed (SIGTERM) while its build's process compiles: that one went on
    starting compilers, orphaned; it now ends with its parent."""
    import signal
    slow = tmp_path / "slow.py"
    slow.write_text("import math\n\n\ndef g(x: float) -> float:\n    s = 0.0\n" + "".join(
        f"    s += math.sin(x * {k}.0) * math.exp(s * 0.01)\n" for k in range(1, 300))
        + "    return s\n")
    cache = tmp_path / "cache"
    env = {**os.environ, "ADGEN_CACHE_DIR": str(cache)}
    parent = subprocess.Popen([sys.executable, "-c", "import sys, adgen; "
                               "adgen.load(sys.argv[1], modes=('reverse',))", str(slow)], env=env)
    children: list[str] = []
    deadline = time.monotonic() + 60
    while not children and time.monotonic() < deadline and parent.poll() is None:
        time.sleep(0.05)
        with contextlib.suppress(OSError):
            children = Path(f"/proc/{parent.pid}/task/{parent.pid}/children").read_text().split()
    assert children, "the build's process was not seen"
    parent.send_signal(signal.SIGTERM)
    parent.wait(30)
    deadline = time.monotonic() + 2  # (the build itself takes longer: the child was killed)
    while time.monotonic() < deadline and any(Path(f"/proc/{c}").exists() for c in children):
        time.sleep(0.05)
    assert not any(Path(f"/proc/{c}").exists() for c in children)
