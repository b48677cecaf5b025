"""The documentation under docs/ stays in step with the code.

- docs/cli.md is generated from the argparse definitions by docs/gen_cli.py;
- docs/language.md names every intrinsic spelling and module constant the frontend accepts;
- links between the pages point at pages and headings that exist;
- C functions shown under the name of a golden file's function are copies of it.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from adgen.transpile.ir.prims import CONSTANTS, INTRINSICS
from helpers import ROOT

DOCS = ROOT / "docs"
SPELLING = {"math": "math.{}", "numpy": "np.{}", "": "{}"}


def _gen_cli():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_md_is_generated_from_the_parser() -> None:
    expected = _gen_cli().render()
    current = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert current == expected, (
        "docs/cli.md is out of date with adgen/cli.py: run `python docs/gen_cli.py` and commit "
        "the result")


def test_language_md_names_every_intrinsic_and_constant() -> None:
    text = (DOCS / "language.md").read_text(encoding="utf-8")
    missing = [SPELLING[mod].format(name) for (mod, name) in list(INTRINSICS) + list(CONSTANTS)
               if f"`{SPELLING[mod].format(name)}`" not in text]
    assert not missing, f"docs/language.md does not mention {', '.join(missing)}"


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}


def test_links_between_pages_resolve() -> None:
    for page in DOCS.glob("*.md"):
        for target, anchor in re.findall(r"\]\(([\w./-]*?\.md)?(?:#([\w-]+))?\)",
                                         page.read_text(encoding="utf-8")):
            linked = page.parent / target if target else page
            assert linked.exists(), f"{page.name} links to missing {target}"
            if anchor:
                assert anchor in _anchors(linked), f"{page.name} links to missing {target}#{anchor}"


def test_docs_show_the_golden_functions_as_generated() -> None:
    """Every whole C function the docs show with the signature of a function of a golden
    file (``layer_b``, ``power_b`` ...) is a verbatim copy of it: excerpts follow the
    generator."""
    goldens = [p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "golden").rglob("*.c*")]
    text = "\n".join(goldens)
    defined = set(re.findall(r"^((?:static )?[\w ]+?\b\w+\([^\n]*\))\n\{", text, flags=re.M))
    shown = 0
    for page in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]:
        for block in re.findall(r"```c\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
            for fn in re.finditer(r"^((?:static )?[\w ]+?\b(\w+)\([^\n]*\))\n\{\n.*?^\}\n", block,
                                  flags=re.S | re.M):
                if fn.group(1) in defined and "..." not in fn.group(0):
                    shown += 1
                    assert fn.group(0) in text, (
                        f"{page.name}: {fn.group(2)} is not what adgen generates (see tests/golden)")
    assert shown >= 8


def test_readme_shows_real_generated_code() -> None:
    """Every C function shown in the README is a verbatim excerpt of a golden file."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    golden = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "golden").glob("*.c")}
    shown = 0
    for block in re.findall(r"```c\n(.*?)```", readme, flags=re.S):
        m = re.match(r"\w[\w ]*?\b(\w+)\(", block)
        if m is None or "{" not in block:
            continue  # a call, not a definition
        shown += 1
        assert any(block in text for text in golden.values()), \
            f"README's {m.group(1)} is not what adgen generates (see tests/golden)"
    assert shown >= 2
