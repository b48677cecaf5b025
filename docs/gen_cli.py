"""Generate docs/cli.md from the command line's own definitions.

    python docs/gen_cli.py            # rewrite docs/cli.md
    python docs/gen_cli.py --check    # exit 1 if docs/cli.md is out of date

The option table comes from ``adgen.cli.parser()``, the exit codes from the
``EXIT_*`` constants of ``adgen.cli``, the modes and file names from
``adgen.api.SUPPORTED_MODES`` and
``adgen.transpile.emit.module.MODES``.  The two example runs (the file list,
the dependency file, ``-v`` on an unchanged output) are produced by running
``adgen.cli.main`` on a two-line module in a temporary directory, so the page
shows what the code does today.  ``tests/test_docs.py`` fails when the page
and this script's output differ.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "cli.md"

#: what each exit code means; the generator fails if adgen.cli grows a code this page does not know
EXIT_MEANING = {
    "EXIT_OK": "success: every file was written (and built, and every check passed)",
    "EXIT_CHECK_FAILED": "`--check` ran and at least one check failed (the table says which); "
                         "the files were still written",
    "EXIT_BAD_INPUT": "bad input or usage: a rejected module (a located `file:line:col: error:` "
                      "message), an unknown or unsupported option value (`-MF` with an empty "
                      "name), a missing input file, an output file that cannot be written or "
                      "that would overwrite the module, a standard output that cannot be "
                      "written (`> /dev/full`); or a `--build`/`--check` whose "
                      "compilation fails otherwise (the compiler's message is shown: a flag of "
                      "`--cflags` it does not know, a `--source` file or the C file of an "
                      "`@external` function that does not compile or does not match the "
                      "prototypes the generated headers declare); `--check` on the CUDA target "
                      "without a usable GPU and driver (`--emulate` runs the kernels on the "
                      "CPU), or a CUDA call that fails during it. Nothing is written when the "
                      "module or an option is rejected, nor when no GPU is usable; when only the "
                      "compilation or the GPU fails, the module was valid and its generated "
                      "files are written as without `--build`/`--check`",
    "EXIT_BROKEN_PIPE": "standard output was closed by its reader before adgen finished "
                        "writing to it (`--dump-ir=all` piped into `head`): adgen stops there "
                        "quietly, as `cat` does (128 + SIGPIPE). The `--dump-ir` text comes "
                        "before the files are written, so then none is",
    "EXIT_INTERNAL": "an internal error (a bug in adgen). The last line of the Python traceback "
                     "is printed; set `ADGEN_TRACEBACK=1` to print all of it. Also generated C "
                     "of the C target that does not compile with adgen's own flags (no "
                     "`--cflags`, `--source` "
                     "or `@external` C, no `CFLAGS` or `CPPFLAGS` in the environment, and the "
                     "compiler's error is in a generated file): the "
                     "compiler's message is shown and the files are written, to look at and "
                     "to report. The compiler runs in the C locale (`LC_ALL=C`), so that its "
                     "errors read `error:` in any language",
}

EXAMPLE_MODULE = "def scale(x: float, a: float) -> float:\n    return a * x\n"


def _md(text: str) -> str:
    """Table-cell safe text."""
    return " ".join(text.split()).replace("|", "\\|")


def _argument(action: argparse.Action) -> str:
    """The value an option takes, as it is written on the command line."""
    if action.nargs == 0:
        return ""
    if action.choices is not None:
        value = "{" + ",".join(str(c) for c in action.choices) + "}"
    elif action.metavar is not None:
        value = str(action.metavar)
    else:
        value = action.dest.upper()
    if action.nargs == "?":
        return f"[={value}]"
    return value


def _default(action: argparse.Action) -> str:
    d = action.default
    if d is None or d is False or d == argparse.SUPPRESS:
        return ""
    return f"`{d}`"


def synopsis(parser: argparse.ArgumentParser) -> str:
    """A usage line built from the actions (argparse's own wrapping varies between Pythons)."""
    groups = []
    for action in parser._actions:
        if not action.option_strings:
            continue
        arg = _argument(action)
        opt = action.option_strings[0]
        if arg.startswith("[="):
            text = f"[{opt}{arg}]"
        else:
            text = f"[{opt}{' ' + arg if arg else ''}]"
        if isinstance(action, argparse._AppendAction):
            text += "..."
        groups.append(text)
    positionals = [a.metavar or a.dest for a in parser._actions if not a.option_strings]
    head = f"{parser.prog} {' '.join(str(p) for p in positionals)}"
    lines, current = [], head
    for g in groups:  # wrap between groups, never inside one
        if len(current) + 1 + len(g) > 88:
            lines.append(current)
            current = " " * len(head) + " " + g
        else:
            current += " " + g
    lines.append(current)
    return "\n".join(lines)


def option_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = ["| option | value | default | what it does |", "| --- | --- | --- | --- |"]
    for action in parser._actions:
        names = ", ".join(f"`{s}`" for s in action.option_strings) or f"`{action.metavar}`"
        arg = _argument(action) if action.option_strings else ""
        rows.append(f"| {names} | {('`' + _md(arg) + '`') if arg else ''} | {_default(action)} "
                    f"| {_md(action.help or '')} |")
    return rows


def _run(argv: list[str]) -> tuple[int, str, str]:
    from adgen.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def example_runs() -> dict[str, list[str]]:
    """Run adgen on a tiny module in a temporary directory; return Markdown showing it."""
    shown: dict[str, list[str]] = {}
    old = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="adgen-docs-") as tmp:
        os.chdir(tmp)
        try:
            Path("scale.py").write_text(EXAMPLE_MODULE)
            first = ["scale.py", "--mode", "primal", "--mode", "forward", "-o", "gen", "-MD"]
            rc, out, err = _run(first)
            assert rc == 0 and not err, (rc, err)
            dep = Path("gen/scale.d").read_text()
            shown["deps"] = [
                "With this two-line module, `scale.py`:", "",
                "```python", EXAMPLE_MODULE.rstrip(), "```", "",
                "the command `adgen " + " ".join(first) + "` prints the files it wrote, "
                "one per line:", "",
                "```text", out.rstrip(), "```", "",
                "and `gen/scale.d` holds one Make rule, the generated sources and headers as "
                "targets and the module as prerequisite:", "",
                "```make", dep.rstrip(), "```", "",
            ]
            head = ["scale.py", "--head", "scale(return)/(a)", "-o", "only_a", "-q"]
            rc, out, err = _run(head)
            assert rc == 0 and not out and not err, (rc, out, err)
            proto = [ln for ln in Path("only_a/scale_d.h").read_text().splitlines()
                     if ln.startswith("double scale_d(")]
            spelled = " ".join(f'"{a}"' if "(" in a else a for a in head)
            shown["head"] = [
                "For example, with the two-line `scale.py` shown under "
                f"[dependency files](#dependency-files--md--mf), `adgen {spelled}` "
                "differentiates `scale` with respect to `a` only; its tangent is", "",
                "```c", *proto, "```", "",
            ]
            again = ["scale.py", "--mode", "primal", "--mode", "forward", "-o", "gen", "-v"]
            _run(again)
            rc, out, err = _run(again)
            assert rc == 0, (rc, err)
            shown["verbose"] = [
                "Running `adgen " + " ".join(again) + "` twice, the second run reports on "
                "stderr that nothing changed (stdout still lists the files):", "",
                "```text", err.rstrip(), "```", "",
            ]
        finally:
            os.chdir(old)
    return shown


def render() -> str:
    import adgen.cli as cli
    from adgen import __version__
    from adgen.api import SUPPORTED_MODES
    from adgen.build import DEBUG_CFLAGS, DEFAULT_CFLAGS
    from adgen.transpile.emit.module import MODES

    parser = cli.parser()
    runs = example_runs()
    codes = {name: getattr(cli, name) for name in dir(cli) if name.startswith("EXIT_")}
    unknown = set(codes) - set(EXIT_MEANING)
    if unknown:
        raise SystemExit(f"gen_cli.py: describe {', '.join(sorted(unknown))} in EXIT_MEANING")

    lines = [
        "# The `adgen` command",
        "",
        "<!-- Generated by docs/gen_cli.py from adgen.cli.parser(); do not edit by hand. "
        "Run `python docs/gen_cli.py` after changing the command line. -->",
        "",
        f"This page describes `adgen` {__version__}. {parser.description}",
        "",
        "```text",
        synopsis(parser),
        "```",
        "",
        "Several values can be given to `--functions`, `--wrt` and `--of` as one "
        "comma-separated word (`--wrt x,y`) or by repeating the option (`--wrt x --wrt y` is "
        "`--wrt x,y`; an empty list, `--wrt=`, is an error). `--head` repeats too (`--head "
        "'g(return)/(x)' --head 'k(y)/(x)'` is one `--head` of both). `--mode` repeats "
        "(`--mode primal --mode forward`). "
        "A `--cflags` value that is a single word starting with `-` must be attached with `=` "
        "(`--cflags=-O2`); a quoted value with spaces can follow as usual "
        "(`--cflags \"-O2 -march=native\"`).",
        "",
        "## Options",
        "",
        *option_table(parser),
        "",
        f"`--build` and `--check` compile with `{' '.join(DEFAULT_CFLAGS)}`, or with "
        f"`{' '.join(DEBUG_CFLAGS)}` under `--debug`, unless `--cflags` is given. "
        "`--debug` also makes the generated code wrap every computed index in `ADGEN_INDEX`, "
        "which checks it only when the C file is compiled with `-DADGEN_DEBUG` "
        "(see [generated-code.md](generated-code.md)).",
        "",
        "`--source`, `--cflags`, `--openmp`, `--emulate` and `--arch` change only what "
        "`--build` and `--check` compile: without either of them they are rejected "
        f"(exit code {cli.EXIT_BAD_INPUT}, nothing written), as are `--emulate` and `--arch` "
        "without `--target cuda` and `--openmp` with it (a CUDA build runs each `prange` as "
        "a kernel).",
        "",
        "## Modes and the files they write",
        "",
        "Each mode writes one C source and one header into `OUTDIR`, named after the module "
        "(`MODULE` is the file name without `.py`). For a function `f`:",
        "",
        "| `--mode` | files | C function | contents |",
        "| --- | --- | --- | --- |",
    ]
    for mode in SUPPORTED_MODES:
        suffix, what, _ = MODES[mode]
        files = f"`MODULE{suffix}.c`, `MODULE{suffix}.h`"
        lines.append(f"| `{mode}` | {files} | `f{suffix}` | {what} |")
    lines += [
        "",
        "Every run also writes `OUTDIR/adgen_runtime.h`, the header the generated sources "
        "include. Without `--mode` the mode is `forward`. The primal file has every function "
        "of the module; a derivative file has the derivative of every selected function "
        "(`--functions`, default: those with floating-point inputs and outputs), of the module "
        "functions they call with active arguments, and `static` copies of the primal functions "
        "they call otherwise. See [generated-code.md](generated-code.md) for the signatures.",
        "",
        "With `--target cuda` the sources are `.cu` files (each outermost `prange` a kernel) "
        "and the run also writes `OUTDIR/adgen_runtime_cuda.cuh`; the vector modes are not "
        f"available there yet (exit {cli.EXIT_BAD_INPUT}, `not supported on the CUDA target "
        "yet`). `--build`/`--check` then compile with nvcc, for `--arch` or sm_80 and sm_90, "
        "or for the CPU with `--emulate`. See [cuda.md](cuda.md).",
        "",
        "`--build` compiles exactly the modes given into a Python extension in the build cache "
        "and prints its path; `--check` builds its own (the primal, the modes given and what "
        "their checks compare with: the scalar tangent for `vector-forward` and `reverse`, the "
        "scalar adjoint for `vector-reverse`) and prints a table, one row per function and "
        "check (see [python-api.md](python-api.md#adgencheck)). The tangent is compared with "
        "finite differences when a first-order mode is given (`forward`, `vector-forward`, "
        "`reverse`, `vector-reverse`, or `jacobian`), the adjoint with the tangent "
        "(dot-product test) when `reverse` or `vector-reverse` is given, and each vector mode "
        "with its scalar mode "
        "(see [reverse-mode.md](reverse-mode.md#validation)). A function that computes in `f32` "
        "(every one under `--precision f32`; in an f64 build, one with an `f32` value or calling "
        "such a function) is checked to single precision's tolerances, the others to double "
        "precision's. With `-q` only a failing table is printed.",
        "",
        "When stderr is a terminal (and without `-q`), a progress line, rewritten in place and "
        "cleared when done, says what `--build` and `--check` are doing: the compilation that "
        "runs (`adgen: compiling ...`), then the check of each function "
        "(`adgen: checking f: tangent vs finite differences...`). The primal check runs the "
        "module in CPython, which can take minutes where it loops over compiled derivatives "
        "(`grad` and `jvp` of module functions, each a call of the Python binding).",
        "",
        "## Choosing what to differentiate",
        "",
        "`--functions f,g` selects the functions (default: every function with floating-point "
        "inputs and outputs; a selected function without them is an error). `--wrt x,y` "
        "names the independent inputs: floating-point parameters (scalars or arrays) of the "
        "selected functions; default all of them. `--of` names the dependent outputs: "
        "`return` (every floating-point element of the return value, also of a tuple; single "
        "elements of a tuple cannot be chosen) and array parameters the function writes; "
        "default all of them. A name that matches no parameter or output of the selected "
        "functions is an error (exit code 2). `--head \"f(outputs)/(inputs)\"` is Tapenade's "
        "spelling of the three at once; several heads are separated by spaces or `;`, each "
        "naming the outputs and inputs of its own function (`--head \"g(return)/(x) "
        "k(return)/(n)\"` differentiates `g` with respect to `x` and `k` with respect to `n`), "
        "and a name in a head that is not a floating-point input or output of its function is "
        "an error that names it (`--head: 'zz' is not a floating-point parameter of g`). "
        "`--functions`, `--wrt`, `--of` given as well take precedence (`--wrt` and `--of` then "
        "apply to every function). Callees of a selected "
        "function are differentiated as needed, whatever `--functions` says.",
        "",
        *runs["head"],
        "## Exit codes",
        "",
        "| code | meaning |",
        "| --- | --- |",
    ]
    for name, code in sorted(codes.items(), key=lambda kv: kv[1]):
        lines.append(f"| {code} | {EXIT_MEANING[name]} |")
    lines += [
        "",
        "Error messages go to stderr; stdout has the list of written files, the `--build` "
        "path, the `--check` table and the `--dump-ir` text.",
        "",
        "## Dependency files (`-MD`, `-MF`)",
        "",
        "`-MD` writes a Make dependency file, as `gcc -MD` does: `OUTDIR/MODULE.d`, or the "
        "file named by `-MF FILE` (`-MF` alone implies `-MD`). It holds a rule whose targets "
        "are the `.c` and `.h` files this run writes (not `adgen_runtime.h`, nor a generated "
        "file that `--source` replaces: the run leaves that one alone) and whose "
        "prerequisite is the module, with paths as given on the command line. An adgen module "
        "imports nothing but `math`, `numpy`, `typing` and `adgen`, so the module is the only "
        "prerequisite, besides the C files its `@external` functions name "
        "([language.md](language.md#external-c-functions)), which follow it (each the "
        "module's directory joined with the path the decorator gives), and the files those "
        "include, as the compiler finds them with the build's flags (`gcc -MM`: nested "
        "includes too, not the system's headers). As `gcc -MP` writes, each prerequisite but "
        "the module also gets an empty rule of its own, so that make does not stop (\"No rule "
        "to make target\") when one is renamed or removed: it runs adgen again, which writes "
        "the new rules. A path with a newline in it, which make cannot read in a rule, is "
        "refused (exit code 2, nothing written). Paths are quoted for "
        "make as `gcc -MD` quotes them, a space as `\\ `, `$` as `$$`, `#` as `\\#`, and a "
        "colon as `\\:` (which gcc does not quote, but make would otherwise read as the colon "
        "of the rule), and a `%` in a target as `\\%` (make would read a pattern rule; "
        "a prerequisite keeps its `%`, which make reads as it is there). A Makefile includes it "
        "with "
        "`-include OUTDIR/MODULE.d`; "
        "[tutorial.md](tutorial.md#6-a-makefile) has a complete one.",
        "",
        *runs["deps"],
        "## Atomic writes, unchanged files keep their timestamps",
        "",
        "Nothing is written until the whole module has been transpiled, so a rejected module "
        "or option leaves `OUTDIR` as it was. Each file is then written to a temporary file in "
        "the same directory, and only when all of them (the dependency file included) are "
        "written are they renamed over the old ones, so a reader (or a parallel `make`) "
        "never sees a half-written file. The files are written all or none: when one cannot "
        f"be written (exit code {cli.EXIT_BAD_INPUT}, the message names it), the temporary "
        "files are removed, the old files are left as they were and an output directory "
        "adgen created is removed again. A file whose new text equals the old is not touched "
        "at all, so its timestamp stays and `make` does not rebuild what depends on it.",
        "",
        "The first comment of each generated `.c` file records the options that change its "
        "text, in a fixed order (the module's file name, the modes, `--functions`, `--wrt`, "
        "`--of`, `--head`, `--precision`, `--debug`, `--target`); the other options (`-o`, "
        "`-q`, `-v`, `-MD`, `--build`, `--check`...) do not change the files. The headers do "
        "not record it.",
        "",
        *runs["verbose"],
        "## Environment",
        "",
        "| variable | effect |",
        "| --- | --- |",
        "| `ADGEN_CACHE_DIR` | directory of the build cache used by `--build`, `--check` and "
        "`adgen.load` (default `$XDG_CACHE_HOME/adgen`, else `~/.cache/adgen`) |",
        "| `ADGEN_TRACEBACK` | when set, an internal error (exit code "
        f"{cli.EXIT_INTERNAL}) prints the full Python traceback |",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print("docs/cli.md is out of date: run python docs/gen_cli.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    print(OUTPUT)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
