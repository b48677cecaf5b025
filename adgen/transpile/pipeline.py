"""The one list of passes, in order, and the drivers that run it.

    module.py --frontend--> IR --simplify--> primal IR
              --ad.forward--> tangent IR --simplify--> emit.c --> .c/.h
              --single_exit--> --ad.reverse--> adjoint IR --simplify, fuse--> emit.c
              adjoint IR --ad.forward--> tangent of the adjoint (hvp) --simplify--> emit.c
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from .ir.core import Function, Module, is_array
from .ir.printer import print_function
from .ir.verifier import verify_function
from .ir.walk import reachable
from .transforms.cse import cse
from .transforms.dce import dce, prange_invariants, same_yields
from .transforms.extremes import running_extremes
from .transforms.fold import fold
from .transforms.fuse import fuse, fuse_ifs
from .transforms.jam import jam
from .transforms.sink import sink_stores
from .transforms.skip_zero import skip_zero

if TYPE_CHECKING:
    from .analysis.activity import ModuleActivity, Request
    from .frontend.diagnostics import Diagnostics
    from .frontend.diagnostics import Warning_

Pass = Callable[[Function], bool]

#: the simplification pipeline, run to a fixed point after lowering and after AD
SIMPLIFY: list[tuple[str, Pass]] = [
    ("fold", fold),
    ("cse", cse),
    ("same-yields", same_yields),
    ("prange-invariants", prange_invariants),
    ("dce", dce),
]


@dataclass
class PassLog:
    """What ``--dump-ir=all`` prints: the IR after each pass that changed it."""

    enabled: bool = False
    entries: list[str] = field(default_factory=list)

    def record(self, stage: str, fn: Function) -> None:
        if self.enabled:
            self.entries.append(f"// ---- {fn.name} after {stage}\n{print_function(fn)}")


def simplify(fn: Function, verify: bool = True, log: PassLog | None = None,
             max_rounds: int = 10) -> None:
    if fn.external is not None:  # a declaration of a C function: no body
        return
    for _ in range(max_rounds):
        changed = False
        for name, run in SIMPLIFY:
            if run(fn):
                changed = True
                if verify:
                    verify_function(fn)
                if log is not None:
                    log.record(name, fn)
        if not changed:
            return


def simplify_module(module: Module, verify: bool = True, log: PassLog | None = None) -> None:
    for fn in module.functions:
        simplify(fn, verify, log)


# -- from source text to generated files ---------------------------------------------

MODE_ORDER = ("primal", "forward", "vector-forward", "reverse", "vector-reverse", "hvp",
              "vector-hvp")


@dataclass
class Selection:
    """What to differentiate: --functions, --wrt, --of (None: the defaults), and from --head
    each function's own outputs and inputs (``heads``: name -> (of, wrt), None where the
    head leaves them out); --wrt and --of, when given, apply to every function."""

    functions: list[str] | None = None
    wrt: list[str] | None = None
    of: list[str] | None = None
    heads: dict[str, tuple[list[str] | None, list[str] | None]] = field(default_factory=dict)

    @staticmethod
    def from_head(head: str) -> "Selection":
        """Tapenade's ``f(outputs)/(inputs)``; several heads separated by spaces or ';'.  The
        outputs and inputs of a head are those of its function only."""
        import re
        functions: list[str] = []
        heads: dict[str, tuple[list[str] | None, list[str] | None]] = {}
        for part in re.split(r"[;\s]+(?![^()]*\))", head.strip()):
            if not part:
                continue
            m = re.fullmatch(r"(\w+)(?:\(([\w,\s]*)\))?(?:/\(([\w,\s]*)\))?", part)
            if m is None:
                raise UsageError(f"--head: cannot read '{part}' (write f(outputs)/(inputs))")
            name = m.group(1)
            if name not in functions:
                functions.append(name)
            of, wrt = heads.get(name, (None, None))
            if m.group(2):
                of = (of or []) + [s.strip() for s in m.group(2).split(",") if s.strip()]
            if m.group(3):
                wrt = (wrt or []) + [s.strip() for s in m.group(3).split(",") if s.strip()]
            heads[name] = (of or None, wrt or None)
        return Selection(functions, heads=heads)


class UsageError(Exception):
    """A bad option value (exit code 2, no location)."""


@dataclass
class Transpiled:
    module: Module  # the primal IR after simplification
    outputs: dict[str, object]  # mode -> EmittedModule
    ir: dict[str, Module]  # mode -> IR that was emitted
    log: PassLog
    warnings: list["Warning_"]  # located, in source order
    target: str = "c"  # "c" or "cuda"
    #: what each differentiated function was asked for (empty for a primal alone)
    requests: dict[str, "Request"] = field(default_factory=dict)


def build_requests(module: Module, sel: Selection) -> dict[str, "Request"]:
    from .analysis.activity import Request, differentiable, written_params
    from .ir.types import is_float

    # the declarations of @external C functions are not the module's functions
    names = [fn.name for fn in module.functions if fn.external is None]
    # a custom adjoint or tangent (@custom_vjp(g), @custom_jvp(g)) is derivative code itself:
    # not differentiated by default
    adjoints = {g for fn in module.functions for g in (fn.custom_adjoint, fn.custom_tangent) if g}
    # so is the function of a derivative taken inside the module (grad(f), static)
    chosen = sel.functions or [fn.name for fn in module.functions
                               if fn.name not in adjoints and not fn.is_static
                               and fn.external is None]
    for n in chosen:
        if n not in names:
            raise UsageError(f"no function named '{n}' in {module.file_name} "
                             f"(it defines {', '.join(names) or 'nothing'})")
    requests: dict[str, Request] = {}
    seen_wrt: set[str] = set()
    seen_of: set[str] = set()
    selected = []
    for name in chosen:
        fn = module.function(name)
        written = written_params(fn, module)
        floats = [i for i, p in enumerate(fn.params) if differentiable(p)]
        float_results = {j for j, r in enumerate(fn.results) if is_float(r.type)}
        float_written = {i for i in written if i in floats}
        head_of, head_wrt = sel.heads.get(name, (None, None))
        # --wrt and --of apply to every function; a head's names to its function only
        wrt_names, wrt_opt = (sel.wrt, "--wrt") if sel.wrt is not None else (head_wrt, "--head")
        of_names, of_opt = (sel.of, "--of") if sel.of is not None else (head_of, "--head")
        if wrt_names is None:
            wrt = set(floats)
        else:
            wrt = {i for i, n in enumerate(fn.param_names) if n in wrt_names}
            bad = [fn.param_names[i] for i in wrt if i not in floats]
            if bad:
                raise UsageError(f"{wrt_opt}: '{bad[0]}' of '{name}' is not a floating-point "
                                 "parameter")
            if wrt_opt == "--wrt":
                seen_wrt |= {fn.param_names[i] for i in wrt}
            else:
                unknown_names("--head", wrt_names, {fn.param_names[i] for i in wrt}, [name])
        if of_names is None:
            of_results, of_arrays = float_results, float_written
        else:
            of_results = float_results if "return" in of_names else set()
            of_arrays = {i for i in float_written if fn.param_names[i] in of_names}
            seen = {fn.param_names[i] for i in of_arrays} | \
                ({"return"} if "return" in of_names and float_results else set())
            if of_opt == "--of":
                seen_of |= seen
            else:
                unknown_names("--head", of_names, seen, [name], outputs=True)
        selected.append((name, wrt, of_results, of_arrays))
    unknown_names("--wrt", sel.wrt, seen_wrt, chosen)
    unknown_names("--of", sel.of, seen_of, chosen, outputs=True)
    for name, wrt, of_results, of_arrays in selected:
        if not wrt or not (of_results or of_arrays):
            if sel.functions is not None and name in sel.functions:
                raise UsageError(f"'{name}' has no floating-point "
                                 f"{'inputs' if not wrt else 'outputs'} to differentiate")
            continue
        requests[name] = Request(wrt, of_results, of_arrays)
    return requests


def unknown_names(opt: str, given: list[str] | None, seen: set[str], functions: list[str],
                  outputs: bool = False) -> None:
    """A UsageError for the first name in ``given`` that is not in ``seen``."""
    for n in given or []:
        if n not in seen:
            what = "output (return or a written array)" if outputs else "parameter"
            raise UsageError(f"{opt}: '{n}' is not a floating-point {what} of "
                             f"{', '.join(functions)}")


#: the C library's headers (C23's too), and those the CUDA, OpenMP and Python builds include: a
#: module of one of these names (in any case) is refused
SYSTEM_HEADERS = frozenset((
    "assert", "complex", "ctype", "errno", "fenv", "float", "inttypes", "iso646", "limits",
    "locale", "math", "setjmp", "signal", "stdalign", "stdarg", "stdatomic", "stdbit", "stdbool",
    "stdckdint", "stddef", "stdint", "stdio", "stdlib", "stdnoreturn", "string", "tgmath",
    "threads", "time", "uchar", "wchar", "wctype", "omp", "cuda_runtime", "cooperative_groups",
    "python"))


def check_module_name(path: str) -> None:
    """The module's name (its file's, without .py) names the generated files and C functions
    (``NAME_b.c``, ``NAME_b_tape_bytes``) and the Python extension: it must be an ASCII
    identifier, as a module Python can import is."""
    import os

    name = os.path.splitext(os.path.basename(path))[0]
    if not (name.isidentifier() and name.isascii()):
        better = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
        if not better[:1].isalpha() and better[:1] != "_":
            better = "m_" + better
        raise UsageError(f"the module name '{name}' cannot name C functions and files (rename "
                         f"the file to a Python identifier, e.g. {better}.py)")
    if name == "adgen_runtime":  # its primal header would be the runtime's, and lost
        raise UsageError("the module name 'adgen_runtime' is the name of adgen's runtime "
                         "header (adgen_runtime.h), written beside the generated files (rename "
                         "the file, e.g. adgen_runtime_model.py)")
    if name.lower() in SYSTEM_HEADERS:  # NAME.h beside the generated files would hide <NAME.h>
        # (also in another case: file systems that ignore case find Math.h for <math.h>;
        # the binding's build includes <Python.h>)
        header = "Python.h" if name.lower() == "python" else f"{name.lower()}.h"
        raise UsageError(f"the module name '{name}' is the name of a system header ({header}): "
                         f"a compiler looking in the generated files' directory (-I) would read "
                         f"the module's {name}.h for <{header}>, which the generated code and "
                         f"yours include (rename the file, e.g. {name}_model.py)")


#: the recursion limit while transpiling: the parser's visitors, the lowering and some passes
#: recurse over nested expressions (with CPython's default of 1,000 a sum of 300 terms was
#: already too deep; with this one a sum of 1,000 terms, as generated code has, transpiles)
RECURSION_LIMIT = 20_000


def transpile_source(path: str, source: str, modes: list[str], sel: Selection | None = None,
                     precision: str = "f64", debug: bool = False, dump_all: bool = False,
                     command: str = "", target: str = "c") -> Transpiled:
    import sys

    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, RECURSION_LIMIT))
    try:
        return _transpile_source(path, source, modes, sel, precision, debug, dump_all, command,
                                 target)
    finally:
        sys.setrecursionlimit(before)


def _transpile_source(path: str, source: str, modes: list[str], sel: Selection | None,
                      precision: str, debug: bool, dump_all: bool, command: str,
                      target: str) -> Transpiled:
    from .ad.forward import differentiate
    from .analysis.activity import analyze
    from .analysis.lint import lint, single_precision_constants
    from .emit.c import EmitOptions
    from .emit.module import emit_module
    from .frontend.diagnostics import Diagnostics
    from .frontend.parse import check_call_overlap, parse_module
    from .frontend.signatures import Options
    from .ir.verifier import verify_module

    sel = sel or Selection()
    check_module_name(path)
    diags = Diagnostics()
    module = parse_module(path, source, Options(precision=precision), diags)
    user = [fn.name for fn in module.functions]
    if module.nested:
        from .ad.nested import expand_nested
        expand_nested(module, diags)
    check_call_overlap(module, user)
    verify_module(module)
    diags.warnings += single_precision_constants(module)
    log = PassLog(enabled=dump_all)
    if dump_all:
        for fn in module.functions:
            log.record("lower", fn)
    simplify_module(module, log=log)
    device: set[str] = set()
    if target == "cuda":
        from .analysis.targets import check_cuda
        device = check_cuda(module, adjoint=any(m in ("reverse", "hvp") for m in modes),
                            modes=modes)
    options = EmitOptions(bounds_checks=debug, source_name=module.file_name, target=target,
                          device=frozenset(device))
    outputs: dict[str, object] = {}
    irs: dict[str, Module] = {}
    requests = None
    single_exit: Module | None = None
    hvp_source: Module | None = None  # the adjoint IR the hvp modes differentiate (read only)
    hvp_activity = None
    for mode in sorted(set(modes), key=MODE_ORDER.index):
        if mode == "primal":
            target = module
        else:
            if requests is None:
                requests = build_requests(module, sel)
                if not requests:
                    raise UsageError(f"nothing to differentiate in {module.file_name}: no function "
                                     "has floating-point inputs and outputs")
            if mode in ("forward", "vector-forward"):
                activity = analyze(module, requests)
                diags.warnings += lint(module, activity)
                check_nested(module, activity)
                target = differentiate(module, activity, vector=(mode == "vector-forward"))
                finish_module(target, mode, log)
            elif mode in ("reverse", "vector-reverse"):
                if single_exit is None:
                    single_exit = single_exit_form(module, log)
                target = adjoint_module(single_exit, requests, mode, diags, log)
            else:  # hvp, vector-hvp: the (vector) tangent of the adjoint
                if single_exit is None:
                    single_exit = single_exit_form(module, log)
                if hvp_source is None:  # a fresh f_b for both (the emitted one is not reused)
                    hvp_source = adjoint_module(single_exit, requests, "reverse", diags, log,
                                                early=False)
                    hvp_activity = analyze(hvp_source, hvp_requests(hvp_source))
                target = differentiate(hvp_source, hvp_activity, vector=(mode == "vector-hvp"))
                finish_module(target, mode, log)
        target = emitted_form(target, copy=(mode == "primal"), debug=debug, log=log,
                              cuda=(options.target == "cuda"))
        irs[mode] = target
        if options.target == "cuda":  # and the custom rules this mode's code calls there
            from .analysis.targets import with_custom_rules
            mode_options = replace(options, device=frozenset(with_custom_rules(module, device,
                                                                               mode)))
        else:
            mode_options = options
        outputs[mode] = emit_module(target, mode, mode_options, command)
    unique = {(w.loc, w.message): w for w in diags.warnings}
    warnings = sorted(unique.values(), key=lambda w: (w.loc.file, w.loc.line, w.loc.col))
    return Transpiled(module, outputs, irs, log, warnings, options.target, requests or {})


def emitted_form(module: Module, copy: bool, debug: bool, log: PassLog,
                 cuda: bool = False) -> Module:
    """The IR as it is emitted: loops around reductions jammed (``transforms/jam.py``),
    for the CUDA target the stores of each kernel's iteration sunk to its end
    (``transforms/sink.py``), and in a derivative (not ``copy``) the loops that only add
    multiples of a scalar, and the work of a term behind a weight, skipped when it is zero
    (``transforms/skip_zero.py``, verified after: it moves ops into branches); in a copy
    when ``copy`` (the primal IR, which the AD transforms read).  Not in a debug build,
    whose bounds checks must fail at the first bad index in the source's order (the jammed
    copies read before the copies of earlier iterations store)."""
    if debug:
        return module
    if copy:
        import copy as copying
        module = copying.deepcopy(module)
    for fn in module.functions:
        if fn.external is None and jam(fn):
            log.record("jam", fn)
            simplify(fn, log=log)  # the copies' loads of the same element become one
        if cuda and fn.external is None and sink_stores(fn):
            log.record("sink", fn)
        if not copy and fn.external is None and skip_zero(fn):
            log.record("skip-zero", fn)
            verify_function(fn)
    return module


def single_exit_form(module: Module, log: PassLog) -> Module:
    """The module with one exit per loop and function, as the adjoint transform needs."""
    from .ir.verifier import verify_module
    from .transforms.single_exit import single_exit_module

    out = single_exit_module(module)
    verify_module(out)
    for fn in out.functions:
        log.record("single_exit", fn)
        if running_extremes(fn):
            log.record("extremes", fn)
    verify_module(out)
    return out


def finish_module(target: Module, mode: str, log: PassLog) -> None:
    """Verify and simplify the IR an AD transform made."""
    from .ir.verifier import verify_module

    verify_module(target)
    for fn in target.functions:
        log.record("ad." + mode, fn)
    simplify_module(target, log=log)
    drop_unused_statics(target)


def drop_unused_statics(module: Module) -> None:
    """Remove the ``static`` functions no exported function reaches any more (simplification
    may have removed their last call: a call of a function without effects whose results are
    unused)."""
    reached = reachable(module, [fn.name for fn in module.functions if not fn.is_static])
    module.functions = [fn for fn in module.functions if fn.name in reached]


def adjoint_module(single_exit: Module, requests: dict[str, "Request"], mode: str,
                   diags: "Diagnostics", log: PassLog, early: bool = True) -> Module:
    """Adjoint IR (``f_b`` or ``f_bv``), simplified, with its two sweeps fused where they can;
    ``early=False`` for the adjoint a tangent is taken of (``reverse.differentiate``)."""
    from .ad import reverse
    from .analysis.activity import analyze
    from .analysis.lint import lint

    activity = analyze(single_exit, requests)
    diags.warnings += lint(single_exit, activity)
    check_nested(single_exit, activity)
    if single_exit.nested:
        from .ad.nested import check_reverse
        check_reverse(single_exit, {fn.name for fn in single_exit.functions
                                    if activity.needs_derivative(fn.name)},
                      vector=(mode == "vector-reverse"))
    target = reverse.differentiate(single_exit, activity, vector=(mode == "vector-reverse"),
                                   early=early)
    finish_module(target, mode, log)
    for fn in target.functions:
        if fn.tape == "local" and fuse(fn):  # f_b: one loop for both sweeps
            log.record("fuse", fn)
            simplify(fn, log=log)
        if fn.external is None and fuse_ifs(fn):  # an if of a sweep and its reverse: one
            log.record("fuse-ifs", fn)
            simplify(fn, log=log)
    return target


def check_nested(module: Module, activity: "ModuleActivity") -> None:
    """Located errors for derivatives of nested derivatives that cannot be built."""
    if module.nested:
        from .ad.nested import check_external
        check_external(module, {fn.name for fn in module.functions
                                if activity.needs_derivative(fn.name)})


def hvp_requests(adjoint: Module) -> dict[str, "Request"]:
    """What the tangent of each adjoint ``f_b`` differentiates: the inputs of ``f`` that have
    an adjoint are independent, the adjoints ``f_b`` computes (scalars it increments, arrays
    it updates) dependent.  Output adjoints (``retb``) stay constants.  The adjoint array of
    an input ``f`` only reads (``xb``) is independent too: ``f_b`` adds to it, so ``f_b_d``
    adds to its tangent (``xbd``), which comes in with what the caller has there."""
    from .analysis.activity import Request, written_params

    requests: dict[str, Request] = {}
    for fn in adjoint.functions:
        if fn.is_static or fn.mode != "reverse" or fn.external is not None:
            continue
        index = {n: i for i, n in enumerate(fn.param_names)}
        primal_of = fn.tangent_of  # adjoint name -> primal name
        written = written_params(fn, adjoint)
        wrt = {index[p] for a, p in primal_of.items() if p in index}
        wrt |= {index[a] for a, p in primal_of.items() if a in index and p in index
                and is_array(fn.params[index[a]]) and index[p] not in written}
        of_arrays = {index[a] for a in primal_of if a in index and is_array(fn.params[index[a]])
                     and primal_of[a] in index}
        of_results = {j for j, r in enumerate(fn.results) if r.name in fn.increments}
        if wrt and (of_arrays or of_results):
            requests[fn.name] = Request(wrt, of_results, of_arrays)
    return requests
