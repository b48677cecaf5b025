"""The command line on bad options, failed builds and failed writes (DESIGN.md sections 6
and 8): a message and exit code 2, never a traceback or exit code 3, and all outputs written
or none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import adgen
from helpers import ROOT, run_cli

ROSEN = ROOT / "examples" / "rosenbrock.py"


def tree(path: Path) -> dict[str, bytes]:
    """Every file under ``path`` (relative name -> contents); empty when it does not exist."""
    if not path.exists():
        return {}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*"))
            if p.is_file()}


def rejected(r, fragment: str) -> None:  # type: ignore[no-untyped-def]
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert fragment in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


@pytest.mark.parametrize("args, fragment", [
    (["--source", "x.c"], "--source needs --build or --check"),
    (["--build", "--source", "nosuch.c"], "nosuch.c: not a file this module generates"),
    (["--check", "--mode", "reverse", "--source", "nosuch_b.c"],
     "nosuch_b.c: not a file this module generates"),
    (["--build", "--source", "nodir/rosenbrock_d.c"], "cannot read nodir/rosenbrock_d.c"),
    (["--openmp"], "--openmp needs --build or --check"),
    (["--cflags=-O2"], "--cflags needs --build or --check"),
    (["--target", "cuda", "--emulate"], "--emulate needs --build or --check"),
    (["--target", "cuda", "--arch", "sm_90"], "--arch needs --build or --check"),
    (["--target", "cuda", "--openmp", "--build"], "--openmp applies to --target c"),
    (["-MF", ""], "-MF needs the name of the dependency file, not ''"),  # it wrote none, exit 0
])
def test_rejected_options_write_nothing(tmp_path: Path, args: list[str], fragment: str) -> None:
    module = ROOT / "examples" / ("kernels.py" if "cuda" in args else "rosenbrock.py")
    r = run_cli(str(module), *args, "-o", str(tmp_path / "out"), "-MD", cwd=tmp_path)
    rejected(r, fragment)
    assert tree(tmp_path / "out") == {}


def test_unknown_compiler_flag_exits_2_with_the_compilers_message(tmp_path: Path) -> None:
    """A build that fails is exit code 2 with gcc's message; the generated files, of a valid
    module, are written all the same."""
    out = tmp_path / "out"
    r = run_cli(str(ROSEN), "--build", "--cflags=-fnosuchflag", "-o", str(out))
    rejected(r, "unrecognized command-line option")
    assert "-fnosuchflag" in r.stderr
    assert sorted(tree(out)) == ["adgen_runtime.h", "rosenbrock_d.c", "rosenbrock_d.h"]
    assert str(out / "rosenbrock_d.c") in r.stdout


@pytest.mark.parametrize("action", ["--build", "--check"])
def test_source_that_does_not_compile_exits_2(tmp_path: Path, action: str) -> None:
    out = tmp_path / "out"
    out.mkdir()
    edited = out / "rosenbrock_d.c"
    edited.write_text("garbage here\n")
    r = run_cli(str(ROSEN), action, "--source", str(edited), "-o", str(out))
    rejected(r, f"{edited}:1:1: error:")
    assert ".build-" not in r.stderr.split("CompileError")[0]
    assert edited.read_text() == "garbage here\n"


@pytest.mark.parametrize("action", ["--build", "--check"])
def test_a_source_that_is_not_utf8_is_compiled(tmp_path: Path, action: str) -> None:
    """A hand-edited file with a Latin-1 comment (gcc reads any bytes) was an internal error,
    exit 3 (UnicodeDecodeError)."""
    out = tmp_path / "out"
    r = run_cli(str(ROSEN), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    edited = tmp_path / "mine" / "rosenbrock_d.c"
    edited.parent.mkdir()
    edited.write_bytes(b"/* r\xe9sum\xe9: edited */\n" + (out / "rosenbrock_d.c").read_bytes())
    r = run_cli(str(ROSEN), action, "--source", str(edited), "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert edited.read_bytes().startswith(b"/* r\xe9sum\xe9")


def test_a_file_that_cannot_be_written_leaves_every_output_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    out.mkdir()
    (out / "rosenbrock_d.c").write_text("old text\n")
    before = tree(out)
    mtime = (out / "rosenbrock_d.c").stat().st_mtime_ns
    r = run_cli(str(ROSEN), "-o", str(out), "-MF", str(tmp_path / "nodir" / "r.d"))
    rejected(r, f"cannot write {tmp_path / 'nodir' / 'r.d'}: No such file or directory")
    assert r.stdout == ""
    assert sorted(p.name for p in out.iterdir()) == ["rosenbrock_d.c"]  # no temporary left
    assert tree(out) == before and (out / "rosenbrock_d.c").stat().st_mtime_ns == mtime


def test_an_output_that_is_a_directory_is_named(tmp_path: Path) -> None:
    out = tmp_path / "q"
    (out / "rosenbrock_d.h").mkdir(parents=True)
    r = run_cli(str(ROSEN), "-o", str(out))
    rejected(r, f"cannot write {out / 'rosenbrock_d.h'}: Is a directory")
    assert [p.name for p in out.iterdir()] == ["rosenbrock_d.h"]
    assert tree(out) == {}


def test_an_output_directory_made_for_a_failed_write_is_removed(tmp_path: Path) -> None:
    r = run_cli(str(ROSEN), "-o", str(tmp_path / "new" / "gen"), "-MF",
                str(tmp_path / "nodir" / "r.d"))
    rejected(r, "cannot write")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "file").write_text("")
    r = run_cli(str(ROSEN), "-o", str(tmp_path / "file" / "gen"))
    rejected(r, f"cannot create the directory {tmp_path / 'file' / 'gen'}: Not a directory")


def test_a_failed_rename_puts_back_the_files_renamed_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from adgen import cli

    old = {tmp_path / "a.c": "old a\n", tmp_path / "b.c": "old b\n"}
    for p, text in old.items():
        p.write_text(text)
    replace, calls = os.replace, []

    def failing_replace(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 3:  # a.c, b.c, then the new c.c
            raise PermissionError(13, "Permission denied")
        replace(src, dst)
    monkeypatch.setattr(cli.os, "replace", failing_replace)
    with pytest.raises(OSError) as info:
        cli.write_all({str(tmp_path / n): f"new {n}\n" for n in ("a.c", "b.c", "c.c")})
    monkeypatch.undo()
    assert info.value.filename == str(tmp_path / "c.c")
    assert tree(tmp_path) == {"a.c": b"old a\n", "b.c": b"old b\n"}
    changed = cli.write_all({str(tmp_path / "a.c"): "old a\n", str(tmp_path / "b.c"): "new b\n"})
    assert changed == {str(tmp_path / "a.c"): False, str(tmp_path / "b.c"): True}
    assert tree(tmp_path) == {"a.c": b"old a\n", "b.c": b"new b\n"}


KERNELS = ROOT / "examples" / "kernels.py"


def test_cuda_check_without_a_usable_gpu_exits_2(tmp_path: Path) -> None:
    from adgen.cuda import gpu_problem

    if gpu_problem() is None:
        pytest.skip("a GPU is usable here")
    out = tmp_path / "out"
    r = run_cli(str(KERNELS), "--target", "cuda", "--mode", "reverse", "--check", "-o", str(out))
    rejected(r, "no usable GPU or CUDA driver here")
    assert "add --emulate" in r.stderr
    assert tree(out) == {}


def test_a_gpu_failure_during_the_check_exits_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
        ) -> None:
    import adgen.cuda
    import adgen.validate
    from adgen import cli
    from adgen.cuda import CudaError

    def run_checks(*args: object, **kwargs: object) -> None:
        raise CudaError("cudaMalloc failed: out of memory")
    monkeypatch.setattr(adgen.cuda, "gpu_problem", lambda: None)
    monkeypatch.setattr(adgen.validate, "run_checks", run_checks)
    out = tmp_path / "out"
    rc = cli.main([str(KERNELS), "--target", "cuda", "--mode", "reverse", "--check", "-o",
                   str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "cudaMalloc failed: out of memory (--emulate runs" in err and "internal" not in err
    assert sorted(tree(out)) == ["adgen_runtime.h", "adgen_runtime_cuda.cuh", "kernels_b.cu",
                                 "kernels_b.h"]


def test_dependency_file_quotes_paths_for_make(tmp_path: Path) -> None:
    """Spaces, `$`, `#` (as gcc -MD quotes them), `:` and `%` in paths: make reads the rule
    back (a `%` in a target made it a pattern rule, which no file matched)."""
    import os
    import shutil
    import subprocess

    (tmp_path / "src d$1#x%").mkdir()
    module = tmp_path / "src d$1#x%" / "mod.py"
    module.write_text(ROSEN.read_text())
    r = run_cli("src d$1#x%/mod.py", "-o", "out dir:1%", "-MD", "-q", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    dep = tmp_path / "out dir:1%" / "mod.d"
    assert dep.read_text() == ("out\\ dir\\:1\\%/mod_d.c "
                               "out\\ dir\\:1\\%/mod_d.h: src\\ d$$1\\#x%/mod.py\n")
    if shutil.which("make") is None:
        return
    (tmp_path / "rule.mk").write_text("%_d.c:\n\t@:$(info remake [$@] from [$^])\n")
    # newer than the generated file (which a slow run may have written 10 s after the module)
    later = (tmp_path / "out dir:1%" / "mod_d.c").stat().st_mtime + 10
    os.utime(module, (later, later))
    made = subprocess.run(["make", "-f", str(dep), "-f", "rule.mk", "out dir:1%/mod_d.c"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    assert made.stdout == "remake [out dir:1%/mod_d.c] from [src d$1#x%/mod.py]\n"


def test_a_dependency_file_never_overwrites_an_input_or_an_output(tmp_path: Path) -> None:
    """-MF naming the module, a --source file or a generated file is refused (it replaced the
    module with the rule, exit 0); nothing is written."""
    module = tmp_path / "rosenbrock.py"
    module.write_text(ROSEN.read_text())
    for extra in (["-MF", str(module)], ["-MF", str(tmp_path / "out" / "rosenbrock_d.c")]):
        r = run_cli(str(module), "-o", str(tmp_path / "out"), *extra)
        rejected(r, "would overwrite")
        assert module.read_text() == ROSEN.read_text() and not (tmp_path / "out").exists()


def test_cflags_with_an_unbalanced_quote_exit_2(tmp_path: Path) -> None:
    r = run_cli(str(ROSEN), "--build", "--cflags", '"-O2', "-o", str(tmp_path / "out"))
    rejected(r, "--cflags: cannot read")
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_check_of_a_module_without_kernels_needs_no_gpu(tmp_path: Path) -> None:
    """A module with no prange never touches the GPU: --check runs it on any machine (it was
    refused where there is no GPU, while adgen.check passed)."""
    module = tmp_path / "scale.py"
    module.write_text("def scale(x: float, a: float) -> float:\n    return a * x\n")
    r = run_cli(str(module), "--target", "cuda", "--check", "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_build_cache_that_cannot_be_made_exits_2(tmp_path: Path) -> None:
    import os

    env = dict(os.environ, ADGEN_CACHE_DIR=str(tmp_path / "a file" / "cache"))
    (tmp_path / "a file").write_text("")
    r = run_cli(str(ROSEN), "--build", "-o", str(tmp_path / "out"), env=env)
    rejected(r, "set ADGEN_CACHE_DIR to a directory adgen may write")


def break_generated_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every generated C file that adgen compiles fail to compile (a stand-in for a bug
    in adgen's output): a line that is not C appended to it."""
    import adgen.api

    unit_of = adgen.api.unit_of

    def broken(t):  # type: ignore[no-untyped-def]
        unit = unit_of(t)
        for name in unit.files:
            if name.endswith(".c"):
                unit.files[name] += "\nint adgen_broken = ;\n"
        return unit
    monkeypatch.setattr(adgen.api, "unit_of", broken)


@pytest.mark.parametrize("action", ["--build", "--check"])
def test_generated_code_that_does_not_compile_is_an_internal_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        action: str) -> None:
    # an error located in a generated file, compiled with adgen's own flags, is adgen's bug:
    # exit code 3, the compiler's message, the files written (to look at); with the user's
    # --cflags the same failure may be theirs (exit code 2)
    from adgen import cli

    break_generated_c(monkeypatch)
    out = tmp_path / "out"
    rc = cli.main([str(ROSEN), "--mode", "reverse", action, "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 3, err
    assert "error: expected expression before" in err
    assert "adgen: internal error: the generated code does not compile with the default flags " \
           "(this is a bug in adgen" in err
    assert "Traceback" not in err and ".build-" not in err
    if action == "--check":  # the primal, which --check compiles first, is not written
        assert "\nrosenbrock.c:" in err and "(rosenbrock.c: compiled by --check, not written; " \
            "--mode primal writes the primal)" in err
    else:
        assert f"\n{out / 'rosenbrock_b.c'}:" in err
    assert sorted(tree(out)) == ["adgen_runtime.h", "rosenbrock_b.c", "rosenbrock_b.h"]
    rc = cli.main([str(ROSEN), "--mode", "reverse", action, "--cflags=-O2", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "internal error" not in err, err
    # flags of the environment's CFLAGS, which the compiler takes too, are the user's as well
    monkeypatch.setenv("CFLAGS", "-DADGEN_USER_FLAG")
    rc = cli.main([str(ROSEN), "--mode", "reverse", action, "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "internal error" not in err, err


def test_lines_are_numbered_as_python_numbers_them(tmp_path: Path) -> None:
    # a page break (\f) between functions and a U+2028 in a comment are inside a line for
    # Python; str.splitlines ended lines there, so the excerpt under a diagnostic and the
    # source quoted in the generated C were those of other lines
    path = tmp_path / "paged.py"
    path.write_text("def g(x: float) -> float:\n    return x\n\f\n"
                    "def f(x: float) -> float:\n    z = x * x  # a \u2028 b\n"
                    "    return z * y\n", encoding="utf-8")
    r = run_cli(str(path), "-o", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.startswith(f"{path}:6:16: error: unknown name 'y'") and \
        "\n        return z * y\n" in r.stderr, r.stderr
    path.write_text(path.read_text(encoding="utf-8").replace("z * y", "z * x"),
                    encoding="utf-8")
    r = run_cli(str(path), "-o", str(tmp_path), "-q")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "paged_d.c").read_text(encoding="utf-8")
    assert "/* paged.py:5: z = x * x  # a \u2028 b */" in text
    assert "/* paged.py:6: return z * x */" in text


def test_the_failed_command_is_named_without_the_build_cache() -> None:
    # setuptools 84 reports a failed compiler with its whole command line (the staging
    # directory of the build cache in it); older ones named the compiler alone
    from adgen.build import _short

    new = ("CompileError: Command '['gcc', '-fPIC', '-I/c/.build-x1', '-c', 'f.c', '-o', "
           "'./c/.build-x1/f.o']' returned non-zero exit status 1.")
    old = "error: command '/usr/bin/gcc' failed with exit code 1"
    assert _short(new) == "CompileError: command 'gcc' failed with exit code 1"
    assert _short(old) == old
    # a compiler killed (by the out-of-memory killer), at a path with an apostrophe
    killed = ("CompileError: Command '[\"/opt/cc's/gcc\", '-c', 'f.c', '-o', "
              "'./c/.build-x1/f.o']' died with <Signals.SIGKILL: 9>.")
    assert _short(killed) == \
        "CompileError: command \"/opt/cc's/gcc\" died with <Signals.SIGKILL: 9>"


def test_the_compiler_runs_in_the_c_locale_and_only_its_errors_are_adgen_s_bug(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # gcc under LANG=de_DE writes 'Fehler' where it writes 'error', which gave exit code 2 for
    # adgen's own bug; the compiler now runs in the C locale, whatever the user's is
    import argparse

    from adgen import cli
    from adgen.build import cache_root

    seen = tmp_path / "locale.txt"
    cc = tmp_path / "cc.sh"
    cc.write_text(f'#!/bin/sh\necho "$LC_ALL" >> "{seen}"\nexec gcc "$@"\n')
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    path = tmp_path / "m.py"
    path.write_text("def f(x: float) -> float:\n    return x * x\n")
    assert adgen.load(str(path), modes=("reverse",)).f.grad(3.0) == (6.0,)
    assert set(seen.read_text().split()) == {"C"}
    assert os.environ["LC_ALL"] == "de_DE.UTF-8"  # put back
    # an error located in a generated file is adgen's (exit code 3); a warning or a note
    # located there, with the failure elsewhere, is not
    staged = os.path.join(cache_root(), ".build-1234", "rosenbrock_b.c")
    args = argparse.Namespace(target="c", source=[])
    for word in ("error", "fatal error"):
        failure = f"{staged}:40:28: {word}: expected expression before ';' token\n"
        message, internal = cli.build_failure(failure, {"rosenbrock_b.c": ""}, args,
                                              str(tmp_path), own_flags=True)
        assert internal is not None and "bug in adgen" in internal, word
        assert message.startswith(f"{tmp_path / 'rosenbrock_b.c'}:40:28: {word}:"), message
    for word in ("warning", "note"):
        failure = (f"{staged}:40:28: {word}: in expansion of macro 'ADGEN_SIMD'\n"
                   "/usr/bin/ld: cannot find -lm: No such file or directory\n")
        assert cli.build_failure(failure, {"rosenbrock_b.c": ""}, args, str(tmp_path),
                                 own_flags=True)[1] is None, word
    # a fatal error of the machine (no Python headers) is not located in a generated file
    failure = "_adgen_rosenbrock.c:2:10: fatal error: Python.h: No such file or directory\n"
    assert cli.build_failure(failure, {"rosenbrock_b.c": ""}, args, str(tmp_path),
                             own_flags=True)[1] is None


def test_stdout_closed_by_its_reader_stops_quietly(tmp_path: Path) -> None:
    # adgen m.py --dump-ir=all | head -1: no internal error, the status of SIGPIPE (the dump,
    # 190 KB, is more than a pipe holds, so adgen is still writing when the reader leaves)
    import subprocess
    import sys

    from helpers import ROOT as root

    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from adgen.cli import main; sys.exit(main())",
         str(ROOT / "examples" / "mixture.py"), "--mode", "reverse", "--mode", "hvp",
         "--dump-ir=all", "-o", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=root)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert first.startswith(b"// ----")
    assert proc.wait() == 141, err
    assert err == "" and not (tmp_path / "out").exists()


def test_a_failed_compile_names_the_files_whatever_the_paths(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # a space in the build cache's path, an output directory named '.build-...' (not the
    # cache's) and a backslash in it: the message names the written file, whole, and says
    # nothing of --check (the path had been cut at the space, the output directory taken for
    # the cache and its file for a primal --check compiled, and '\1' read as a group: re.error)
    from adgen import cli

    break_generated_c(monkeypatch)
    monkeypatch.setenv("ADGEN_CACHE_DIR", str(tmp_path / "my cache"))
    out = tmp_path / ".build-out" / "x\\1y"
    rc = cli.main([str(ROSEN), "--mode", "reverse", "--build", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 3, err
    assert f"\n{out / 'rosenbrock_b.c'}:" in err and "--check" not in err, err
    assert "my cache" not in err, err


def test_an_output_directory_made_meanwhile_by_another_run_is_used(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs (make -j) creating the same new -o directory: the one that finds it made by
    the other between its look and its mkdir uses it (it failed, 'File exists', exit 2), and
    does not remove it when it fails; a file made there is still an error."""
    from adgen import cli

    mkdir = os.mkdir

    def made_meanwhile(d: str, *args: object) -> None:
        mkdir(d)  # the other run's
        mkdir(d, *args)
    monkeypatch.setattr(cli.os, "mkdir", made_meanwhile)
    out = tmp_path / "gen" / "x"
    assert cli.main([str(ROSEN), "-o", str(out), "-q"]) == 0, capsys.readouterr().err
    assert sorted(tree(out)) == ["adgen_runtime.h", "rosenbrock_d.c", "rosenbrock_d.h"]
    # a failed write removes only the directories this run made: none here
    other = tmp_path / "other" / "y"
    assert cli.main([str(ROSEN), "-o", str(other), "-MF", str(tmp_path / "no" / "r.d")]) == 2
    assert other.is_dir() and tree(tmp_path / "other") == {}
    capsys.readouterr()

    def file_meanwhile(d: str, *args: object) -> None:
        Path(d).write_text("")
        mkdir(d, *args)
    monkeypatch.setattr(cli.os, "mkdir", file_meanwhile)
    assert cli.main([str(ROSEN), "-o", str(tmp_path / "f" / "z")]) == 2
    rejected_err = capsys.readouterr().err
    assert f"cannot create the directory {tmp_path / 'f'}: File exists" in rejected_err


def test_a_path_with_a_newline_in_the_dependency_rule_is_refused(tmp_path: Path) -> None:
    """make reads a rule line by line, and no quoting keeps a newline: -o or the module's
    directory with one gave a dependency file make could not read ('missing separator')."""
    r = run_cli(str(ROSEN), "-o", "n\nl", "-MD", cwd=tmp_path)
    rejected(r, "-MD: make cannot read a path with a newline in it: 'n\\nl/rosenbrock_d.c' "
                "(choose another -o)")
    (tmp_path / "d\nd").mkdir()
    (tmp_path / "d\nd" / "rosenbrock.py").write_text(ROSEN.read_text())
    r = run_cli("d\nd/rosenbrock.py", "-o", "out", "-MD", cwd=tmp_path)
    rejected(r, "'d\\nd/rosenbrock.py' (rename it or its directory)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d\nd"]
    assert run_cli(str(ROSEN), "-o", "n\nl", "-q", cwd=tmp_path).returncode == 0  # no -MD: no rule


def test_an_output_never_overwrites_the_module(tmp_path: Path) -> None:
    """A module not named .py whose output has its name (m.h and --mode primal -o its
    directory) was replaced by the generated header, exit 0; now refused, nothing written.
    So is -MF naming the module by another path."""
    module = tmp_path / "sqh.h"
    module.write_text(ROSEN.read_text())
    r = run_cli("sqh.h", "--mode", "primal", "-o", ".", cwd=tmp_path)
    rejected(r, "writing ./sqh.h would overwrite the module sqh.h")
    assert module.read_text() == ROSEN.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sqh.h"]
    (tmp_path / "sub").mkdir()
    r = run_cli("../sqh.h", "--mode", "primal", "-o", "../sub/..", cwd=tmp_path / "sub")
    rejected(r, "would overwrite the module ../sqh.h")
    r = run_cli("sqh.h", "--mode", "primal", "-o", "out", "-MF", "sub/../sqh.h", cwd=tmp_path)
    rejected(r, "the dependency file sub/../sqh.h would overwrite the module")
    assert module.read_text() == ROSEN.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sqh.h", "sub"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_standard_output_that_cannot_be_written_exits_2(tmp_path: Path, unbuffered: str) -> None:
    """adgen ... > /dev/full: the list of written files cannot be written; that is the
    machine's failure, exit 2 with a message, not an internal error (exit 3, OSError) nor
    Python's 'Exception ignored' at exit. Written to a file, print() fails at the flush."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = unbuffered
    for extra, written in (([], True), (["--dump-ir"], False)):
        out = tmp_path / f"out{len(extra)}"
        with open("/dev/full", "w") as full:
            r = subprocess.run([sys.executable, "-m", "adgen.cli", str(ROSEN), "-o", str(out),
                                *extra], stdout=full, stderr=subprocess.PIPE, text=True,
                               env=env, check=False)
        assert r.returncode == 2, r.stderr
        assert r.stderr == "adgen: error: cannot write to standard output: No space left on " \
                           "device\n"
        # the --dump-ir text comes before the files are written
        assert sorted(tree(out)) == (["adgen_runtime.h", "rosenbrock_d.c", "rosenbrock_d.h"]
                                     if written else [])


@pytest.mark.parametrize("renamed", [True, False])
def test_an_interrupt_during_the_renames_puts_back_every_old_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, renamed: bool) -> None:
    """Ctrl-C right after a rename (before write_all recorded it) left that file new among
    old ones, and its kept old copy as a stray '.b.c.*.old'; right before it, too."""
    from adgen import cli

    for n in ("a.c", "b.c"):
        (tmp_path / n).write_text(f"old {n}\n")
    replace, calls = os.replace, []

    def interrupted_replace(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == 2 and not renamed:
            raise KeyboardInterrupt
        replace(src, dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
    monkeypatch.setattr(cli.os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        cli.write_all({str(tmp_path / n): f"new {n}\n" for n in ("a.c", "b.c", "c.c")})
    monkeypatch.undo()
    assert calls[:2] == [str(tmp_path / "a.c"), str(tmp_path / "b.c")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.c", "b.c"]
    assert tree(tmp_path) == {"a.c": b"old a.c\n", "b.c": b"old b.c\n"}


def test_an_interrupt_while_writing_removes_the_output_directory_it_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from adgen import cli

    replace = os.replace

    def interrupted_replace(src: str, dst: str) -> None:
        replace(src, dst)
        raise KeyboardInterrupt
    monkeypatch.setattr(cli.os, "replace", interrupted_replace)
    assert cli.main([str(ROSEN), "-o", str(tmp_path / "new" / "gen"), "-q"]) == 130
    assert list(tmp_path.iterdir()) == []
