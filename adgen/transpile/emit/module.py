"""A whole IR module -> the text of its .c and .h files (and the cffi cdef).

File structure comes from the Jinja templates in ``adgen/templates``; the
function bodies from ``emit.c``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources

import jinja2

from ... import __version__
from ..ir.core import Call, For, Function, Module
from ..ir.types import ArrayType, VecType
from ..ir.walk import reachable
from .c import TAPE_MODES, EmitOptions, emit_function, taping
from .signature import CSignature, signatures

#: file suffix and wording per mode
MODES = {
    "primal": ("", "primal functions", "function"),
    "forward": ("_d", "tangent (forward mode) derivatives", "tangent"),
    "vector-forward": ("_dv", "vector tangent (forward mode, many directions) derivatives",
                       "vector tangent"),
    "reverse": ("_b", "adjoint (reverse mode) derivatives", "adjoint"),
    "vector-reverse": ("_bv", "vector adjoint (reverse mode, many directions) derivatives",
                       "vector adjoint"),
    "hvp": ("_b_d", "Hessian-vector products (tangent of the adjoint)",
            "Hessian-vector product (tangent of the adjoint)"),
    "vector-hvp": ("_b_dv", "Hessian-vector products, many directions (vector tangent of the "
                   "adjoint)", "Hessian-vector products (vector tangent of the adjoint)"),
}
REVERSE_MODES = ("reverse", "vector-reverse")


@dataclass
class EmittedFile:
    name: str
    text: str


@dataclass
class EmittedModule:
    source: EmittedFile
    header: EmittedFile
    cdef: str
    signatures: dict[str, CSignature]


def _env() -> jinja2.Environment:
    loader = jinja2.FunctionLoader(
        lambda name: resources.files("adgen").joinpath("templates", name).read_text())
    return jinja2.Environment(loader=loader, undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, autoescape=False)


def describe_adjoint(fn: Function, sig: CSignature, module: Module) -> list[str]:
    """The header comment of an adjoint: independents, dependents, what each adjoint means."""
    where = f"{module.file_name}:{fn.loc.line}"
    lines = [f"{fn.name}: {MODES[fn.mode][2]} of {fn.primal} ({where})."]
    index = {n: i for i, n in enumerate(fn.param_names)}
    cname = {p.source: p.name for p in sig.params}
    ins: list[str] = []
    outs: list[str] = []
    notes: list[str] = []
    size = f" [{fn.nbdirs}]" if fn.nbdirs else ""
    for p in sig.params:
        kind = p.source[0]
        if kind == "value":
            name = fn.param_names[p.source[1]]
            t = fn.params[p.source[1]].type
            if name in fn.tangent_of and isinstance(t, ArrayType):
                primal = fn.tangent_of[name]
                pc = cname[("value", index[primal])]
                written = not sig.params[[q.name for q in sig.params].index(pc)].ctype.startswith(
                    "const")
                ins.append(pc)
                shape = [q.name for q in sig.params
                         if q.source[0] == "shape" and q.source[1] == index[primal]]
                dims = " x ".join(shape + ([fn.nbdirs] if fn.nbdirs else []))
                if written and name in fn.unneeded_tangents:
                    notes.append(f"  {p.name} ({dims}): not read on entry ({pc} is not among "
                                 f"the dependents, --of), on return the adjoint of {pc} on "
                                 f"entry")
                elif written:
                    outs.append(pc)
                    notes.append(f"  {p.name} ({dims}): on entry the adjoint of {pc} on exit, on "
                                 f"return the adjoint of {pc} on entry")
                else:
                    notes.append(f"  {p.name} ({dims}): incremented by the adjoint of {pc}"
                                 f"{_left_as_it_is(p.ctype)}")
            elif name in fn.tangent_of:
                what = fn.tangent_of[name]
                outs.append("return" if what == "return" else what)
                notes.append(f"  {p.name}{size}: in, adjoint of "
                             f"{'the return value' if what == 'return' else what} (consumed)")
        elif kind == "result":
            r = fn.results[p.source[1]]
            if r.name in fn.increments:
                primal = cname[("value", index[fn.tangent_of[r.name]])]
                ins.append(primal)
                notes.append(f"  {p.name}{size}: incremented by the adjoint of {primal}")
            else:
                notes.append(f"  {p.name}: out, result")
    lines.append("  independents: " + (", ".join(ins) or "none"))
    lines.append("  dependents:   " + (", ".join(dict.fromkeys(outs)) or "none"))
    lines += notes
    if sig.c_return is not None:
        lines.append(f"  returns the value of {fn.primal}")
    lines.append("  Input adjoints are added to (zero them first); output adjoints are consumed.")
    return lines


def _left_as_it_is(ctype: str) -> str:
    """What the header adds to an adjoint (or its tangent) that the function only reads: the
    derivative is zero, nothing is added."""
    return ", which is zero here (left as it is)" if ctype.startswith("const") else ""


def describe_hvp(fn: Function, sig: CSignature, module: Module) -> list[str]:
    """The header comment of the tangent of an adjoint: which tangents go in, which come out."""
    where = f"{module.file_name}:{fn.loc.line}"
    lines = [f"{fn.name}: {MODES[fn.mode][2]} of {fn.primal} ({where})."]
    cname = {p.source: p.name for p in sig.params}
    index = {n: i for i, n in enumerate(fn.param_names)}
    result_index = {r.name: j for j, r in enumerate(fn.results)}

    def c_of(name: str) -> str:
        if name in index:
            return cname[("value", index[name])]
        return cname.get(("result", result_index[name]), name)

    ctype = {p.source: p.ctype for p in sig.params}

    def written(name: str) -> bool:
        """An array parameter of the primal that it writes (its adjoint is in/out)."""
        t = ctype.get(("value", index[name])) if name in index else None
        return t is not None and t.endswith("*") and not t.startswith("const")

    notes = []
    for p in sig.params:
        name = fn.param_names[p.source[1]] if p.source[0] == "value" else \
            fn.results[p.source[1]].name if p.source[0] == "result" else None
        if name is None:
            continue
        if name in fn.tangent_of:  # a tangent: of an input, or of an adjoint
            of = fn.tangent_of[name]
            if of in fn.adjoint_of:
                primal = fn.adjoint_of[of]
                what = "the return value" if primal == "return" else c_of(primal)
                how = "the tangent of" if primal in index and written(primal) else \
                    "incremented by the tangent of"
                if of in fn.unneeded_tangents:  # the adjoint is not read on entry: nor this
                    how = "not read on entry; on return " + how
                notes.append(f"  {p.name}: {how} {c_of(of)}, the adjoint of {what}: (H v) "
                             f"weighted by the output adjoints{_left_as_it_is(p.ctype)}")
            elif written(of) and name in fn.unneeded_tangents:
                notes.append(f"  {p.name}: in, the direction v for {c_of(of)} on entry; on "
                             f"return zero where {c_of(of)} gets a value no adjoint needs, "
                             f"elsewhere the tangent of {c_of(of)}")
            elif written(of):
                notes.append(f"  {p.name}: in, the direction v for {c_of(of)} on entry; on "
                             f"return the tangent of {c_of(of)}")
            else:
                notes.append(f"  {p.name}: in, the direction v for {c_of(of)}")
        elif p.source[0] == "result" and name not in fn.adjoint_of:
            notes.append(f"  {p.name}: out, result")
        elif name in fn.adjoint_of:
            primal = fn.adjoint_of[name]
            if primal in index and written(primal) and name in fn.unneeded_tangents:
                notes.append(f"  {p.name}: not read on entry ({c_of(primal)} is not among the "
                             f"dependents, --of), on return the adjoint of {c_of(primal)} on "
                             f"entry, as in {fn.primal}_b")
            elif primal in index and written(primal):
                notes.append(f"  {p.name}: on entry the adjoint of {c_of(primal)} on exit, on "
                             f"return the adjoint of {c_of(primal)} on entry, as in "
                             f"{fn.primal}_b")
            elif primal in index or name in fn.increments:
                notes.append(f"  {p.name}: incremented by the adjoint of {c_of(primal)}, as in "
                             f"{fn.primal}_b{_left_as_it_is(p.ctype)}")
            else:
                notes.append(f"  {p.name}: in, adjoint of "
                             f"{'the return value' if primal == 'return' else c_of(primal)}")
    lines += notes
    if sig.c_return is not None:
        lines.append(f"  returns the value of {fn.primal}")
    lines.append("  Input adjoints and their tangents are added to (zero them first; the "
                 "tangents of in/out adjoints too).")
    return lines


def describe(fn: Function, sig: CSignature, module: Module) -> list[str]:
    """The comment that documents a generated function in its header."""
    if fn.mode in REVERSE_MODES:
        return describe_adjoint(fn, sig, module)
    if fn.mode in ("hvp", "vector-hvp"):
        return describe_hvp(fn, sig, module)
    where = f"{module.file_name}:{fn.loc.line}"
    if fn.mode == "primal":
        lines = [f"{fn.name}: compiled from {where}."]
    else:
        lines = [f"{fn.name}: {MODES[fn.mode][2]} of {fn.primal} ({where})."]
    cname = {p.source: p.name for p in sig.params}
    index = {n: i for i, n in enumerate(fn.param_names)}
    if fn.mode != "primal":
        ins, outs, unneeded = [], [], []
        for p in sig.params:
            if p.source[0] == "value" and fn.param_names[p.source[1]] in fn.tangent_of:
                primal = cname[("value", index[fn.tangent_of[fn.param_names[p.source[1]]]])]
                ins.append(f"{primal} ({p.name})")
                if fn.param_names[p.source[1]] in fn.unneeded_tangents:
                    unneeded.append(f"{p.name} is zero where {primal} gets a value no dependent "
                                    f"needs ({primal} is not among the dependents, --of)")
                elif not p.ctype.startswith("const") and p.ctype.endswith("*") and \
                        isinstance(fn.params[p.source[1]].type, ArrayType):
                    outs.append(f"{primal} ({p.name}, updated in place)")
            elif p.source[0] == "result" and fn.results[p.source[1]].name in fn.tangent_of:
                outs.append(f"{fn.tangent_of[fn.results[p.source[1]].name]} ({p.name})")
        lines.append("  tangents in:  " + (", ".join(ins) or "none"))
        lines.append("  tangents out: " + "; ".join([", ".join(outs) or "none"] + unneeded))
    for p in sig.params:
        kind = p.source[0]
        if kind == "shape":
            continue
        if kind == "result":
            r = fn.results[p.source[1]]
            tangent = r.name in fn.tangent_of
            what = f"tangent of {fn.tangent_of[r.name]}" if tangent else "result"
            size = " [nbdirs]" if isinstance(r.type, VecType) else ""
            lines.append(f"  {p.name}{size}: out, {what}")
            continue
        t = fn.params[p.source[1]].type
        if isinstance(t, ArrayType):
            name = fn.param_names[p.source[1]]
            shape = [q.name for q in sig.params if q.source[0] == "shape"
                     and q.source[1] == index[fn.tangent_of.get(name, name)]]
            dims = " x ".join(shape) + (f" x {fn.nbdirs}" if t.vector else "")
            access = "read" if p.ctype.startswith("const") else "read and written in place"
            lines.append(f"  {p.name}: {dims} array, {access}")
        elif isinstance(t, VecType):
            lines.append(f"  {p.name} [{fn.nbdirs}]: one tangent per direction")
    if sig.c_return is not None:
        lines.append(f"  returns the value of {fn.primal}")
    return lines


def describe_external(fn: Function, sig: CSignature, module: Module) -> list[str]:
    """The header comment of a C function given with ``@external``: what adgen expects of it."""
    ext = fn.external
    assert ext is not None
    lines = describe(fn, sig, module)
    where = f"{module.file_name}:{ext.loc.line}"
    if fn.mode == "primal":
        lines[0] = f"{fn.name}: the C function of {ext.function} ({where})."
    lines.append(f"  Not generated: define it in {ext.source} (@external on {ext.function}).")
    return lines


def parallel_adjoints(module: Module) -> set[str]:
    """The adjoint functions called, directly or not, inside a prange (``g_bwd``, ``g_b``):
    their increments of the arrays they are passed are atomic, since other iterations may
    add to the same elements (the adjoint of an array every iteration reads).  A custom
    adjoint (``@custom_vjp(g)``, a primal function; its tangent in hvp mode) and what it
    calls add to the adjoint arrays too: they count as adjoints."""
    from .variables import ADJOINT_MODES
    inside = reachable(module, [op.callee for fn in module.functions for loop in fn.walk()
                                if isinstance(loop, For) and loop.parallel
                                for op in loop.walk() if isinstance(op, Call)])
    customs = {fn.custom_adjoint for fn in module.functions if fn.custom_adjoint}
    from_custom = reachable(module, [name for name in inside
                                     if (module.function(name).primal or name) in customs])
    return {name for name in inside if module.function(name).mode in ADJOINT_MODES} | \
        from_custom


def _called(module: Module, roots: list[Function]) -> list[Function]:
    """``roots`` and the functions they call, directly or not, in module order: a static
    function nothing calls is not written (on CUDA a device function's own adjoint; the
    Hessian-vector product ``f_grad_vjp`` of a nested derivative in the primal's file)."""
    keep = reachable(module, [fn.name for fn in roots])
    return [fn for fn in module.functions if fn.name in keep]


def emit_module(module: Module, mode: str, options: EmitOptions, command: str) -> EmittedModule:
    suffix, what, _ = MODES[mode]
    base = module.name + suffix
    sigs = signatures(module)
    cuda = options.target == "cuda"
    if cuda:  # functions that run on the device too: static, ADGEN_HD (not in the header)
        for fn in module.functions:
            if (fn.primal or fn.name) in options.device:
                params = [replace(p, ctype="adgen_dtape *") if p.source == ("tape",) else p
                          for p in sigs[fn.name].params]
                sigs[fn.name] = replace(sigs[fn.name], is_static=True, qualifier="ADGEN_HD inline",
                                        params=params)
    functions = _called(module, [fn for fn in module.functions if not sigs[fn.name].is_static])
    # C functions the user gives (@external): declared in the header, never defined here
    externals = [fn for fn in functions if fn.external is not None]
    functions = [fn for fn in functions if fn.external is None]
    env = _env()
    tape_counter = f"size_t {base}_tape_bytes(void)" if mode in TAPE_MODES else None
    public = [fn for fn in functions if not sigs[fn.name].is_static]
    tapes = taping(module)
    shared = parallel_adjoints(module)
    bodies = [emit_function(fn, sigs, module, options, tapes, fn.name in shared)
              for fn in functions]
    summary: list[str] = []
    for fn in public:
        summary.extend(describe(fn, sigs[fn.name], module))
    statics = [sigs[fn.name].prototype() for fn in functions if sigs[fn.name].is_static]
    ext = ".cu" if cuda else ".c"
    source = env.get_template("source.c.j2").render(
        filename=base + ext, what=what, source=module.file_name, version=__version__,
        command=command, summary=summary, header=base + ".h", static_prototypes=statics,
        functions=bodies, tape_counter=tape_counter, cuda=cuda)
    # the file's name as it is (model.h and Model.h of two modules need two guards), and never
    # the runtime's (ADGEN_adgen_runtime_H: a module named adgen_runtime is refused)
    guard = f"ADGEN_{base}_H"
    header = env.get_template("header.h.j2").render(
        filename=base + ".h", what=what, source=module.file_name, version=__version__,
        guard=guard, functions=[{"doc": describe(fn, sigs[fn.name], module),
                                 "prototype": sigs[fn.name].prototype()} for fn in public],
        externals=[{"doc": describe_external(fn, sigs[fn.name], module),
                    "prototype": replace(sigs[fn.name], is_static=False).prototype()}
                   for fn in externals],
        tape_counter=tape_counter)
    prototypes = [sigs[fn.name].prototype() for fn in public]
    if tape_counter is not None:
        prototypes.append(tape_counter)
    cdef = env.get_template("cdef.j2").render(prototypes=prototypes)
    return EmittedModule(EmittedFile(base + ext, source), EmittedFile(base + ".h", header), cdef,
                         sigs)
