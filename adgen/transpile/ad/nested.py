"""Derivatives taken inside a module: ``grad(f)(...)`` and ``jvp(f, ...)`` (nested AD).

The frontend lowers each to a call of a new function (``f_grad``, ``f_grad_x``,
``f_jvp``, recorded in ``Module.nested``).  This pass builds those functions
from the AD transforms' own output, before anything else sees the module:

- ``f_grad`` is ``f_b`` (reverse mode, with respect to the chosen parameters)
  with the adjoint of the result fixed to 1 and the parameters' adjoints
  returned instead of incremented;
- ``f_jvp`` is ``f_d`` (forward mode, with respect to every float scalar
  parameter), which already returns the value and its tangent.

They become ordinary (``static``) functions of the module, in primal mode, so
every later mode differentiates them like code the user wrote: the tangent of
``f_grad`` is forward over reverse, its adjoint reverse over reverse.  A nested
derivative may itself contain one (``grad(g)`` where ``g`` calls
``grad(f)``): the functions are built innermost first.  The derivatives of
``f``'s callees that come along are renamed ``f_grad_q_b`` and so on, so that
they never meet the module's own ``q_b`` in a derivative file.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..emit.names import DERIVATIVE_SUFFIXES, SPLIT_SUFFIXES
from ..frontend.diagnostics import AdgenError
from ..ir.builder import Builder
from ..ir.core import (
    LOOPS, Call, Function, Module, Nested, Pop, Push, Region, Result, Return, Value,
)
from ..ir.types import ArrayType, ScalarType
from ..ir.walk import calls, calls_and_rules, reachable, substitute

if TYPE_CHECKING:
    from ..frontend.diagnostics import Diagnostics
    from ..pipeline import PassLog


def expand_nested(module: Module, diags: "Diagnostics") -> None:
    """Add the function of every nested derivative to ``module`` (innermost first)."""
    taken = {fn.name: f"this module defines '{fn.name}'" for fn in module.functions}
    for fn in module.functions:  # the C functions of the externals, and their adjoint's halves
        ext = fn.external
        if ext is not None:
            c_names = [ext.name, ext.tangent, ext.adjoint,
                       *(ext.name + s for s in SPLIT_SUFFIXES)]
            taken |= {c: f"'{c}' is a C function of the external function "
                         f"'{ext.function}'" for c in c_names if c}
    for spec in module.nested.values():
        for name in [spec.name] + [spec.name + s for s in DERIVATIVE_SUFFIXES]:
            if name in taken:
                raise AdgenError(spec.loc, f"{_spelled(spec)} is computed by a function "
                                           f"named '{spec.name}', and {taken[name]} (rename "
                                           "that one)")
    pending = dict(module.nested)
    while pending:
        ready = [s for s in pending.values()
                 if not (_reached(module, s.callee) & set(pending))]
        if not ready:
            spec = next(iter(pending.values()))
            raise AdgenError(spec.loc, f"{_spelled(spec)} is taken inside '{spec.callee}' "
                                       "itself, directly or through calls (a function cannot "
                                       "call its own derivative)")
        for spec in ready:
            module.functions += _build(module, spec, diags)
            del pending[spec.name]


def _spelled(spec: Nested) -> str:
    if spec.kind == "jvp":
        return f"jvp({spec.callee}, ...)"
    return f"grad({spec.callee})"


def _reached(module: Module, name: str) -> set[str]:
    """``name`` and every function it calls, directly or not (nested ones by name only), and
    the custom derivatives of those (``f_grad_vjp``, ``@custom_vjp``, ``@custom_jvp``): their
    derivatives call them."""
    return reachable(module, [name], calls_and_rules)


def _build(module: Module, spec: Nested, diags: "Diagnostics") -> list[Function]:
    """The functions of one nested derivative: its own, then the derivatives of callees it
    calls, renamed after it."""
    from ..analysis.activity import Request, analyze, written_params
    from ..pipeline import (
        PassLog, adjoint_module, finish_module, simplify_module, single_exit_form,
    )
    from . import forward

    reached = _reached(module, spec.callee)
    sub = Module(module.name, module.path,
                 [copy.deepcopy(fn) for fn in module.functions if fn.name in reached],
                 module.source_lines)
    target = sub.function(spec.callee)
    written = written_params(target, sub)
    if written:
        p = target.param_names[min(written)]
        raise AdgenError(spec.loc, f"{_spelled(spec)} of a function that writes its "
                                   f"array '{p}' is not supported (take derivatives of "
                                   "functions that only read their arrays)")
    simplify_module(sub)
    log = PassLog()
    request = {spec.callee: Request(set(spec.wrt), {0}, set())}
    if spec.kind == "grad":
        single = single_exit_form(sub, log)
        derived = adjoint_module(copy.deepcopy(single), request, "reverse", diags, log)
        if _taped(derived):
            # recompute rather than store what the loops' adjoints need, where that avoids the
            # tape: a tape-free f_grad can itself be differentiated in reverse mode
            for fn in single.functions:
                for op in fn.walk():
                    if isinstance(op, LOOPS) and not op.directive:
                        op.directive = "recompute"
            untaped = adjoint_module(single, request, "reverse", diags, log)
            if not _taped(untaped):
                derived = untaped
        entry = spec.callee + "_b"
    else:
        derived = forward.differentiate(sub, analyze(sub, request), vector=False)
        finish_module(derived, "forward", log)
        entry = spec.callee + "_d"
    prepare = (lambda fn: _gradient(fn, spec, target)) if spec.kind == "grad" else \
        (lambda fn: _place_tangents(module, fn, spec, target))
    out = _adopt(module, derived, entry, spec.name, prepare)
    if spec.kind == "grad" and _taped(derived):
        # its own adjoint would reverse a tape: give it one built from the hvp of f instead
        vjp = _vjp_functions(module, spec, target, single, diags, log)
        out[0].custom_adjoint = vjp[0].name
        out += vjp
    return out


def _adopt(module: Module, derived: Module, entry: str, name: str,
           prepare: Callable[[Function], None]) -> list[Function]:
    """The functions of ``derived`` that ``entry`` reaches, as static primal functions of the
    module: ``entry`` named ``name`` (and first), the others ``name_`` + their own name;
    ``prepare`` turns ``entry`` into what the calls expect, before its derivative
    bookkeeping (``tangent_of``...) is dropped."""
    own = {fn.name for fn in module.functions}
    out: list[Function] = []
    kept: list[Function] = []
    renamed: dict[str, str] = {}
    reached = _reached(derived, entry)
    for fn in derived.functions:
        if fn.mode == "primal" and fn.name in own or fn.name not in reached:
            continue  # a primal helper (the module's own function serves), or unused
        if fn.external is not None:  # a declaration of the user's C function: kept as is
            if fn.name not in own:
                kept.append(fn)
            continue
        renamed[fn.name] = name if fn.name == entry else f"{name}_{fn.name}"
        out.insert(0 if fn.name == entry else len(out), fn)
    names = {fn: renamed[fn.name] for fn in out}
    head = next(fn for fn in out if fn.name == entry)
    if any(isinstance(op, Call) and op.callee == entry for fn in out for op in fn.walk()):
        # a recursive f calls f_b itself (a joint sweep): those calls keep f_b's convention,
        # which ``prepare`` changes, through a copy of it as it is
        twin = copy.deepcopy(head)
        out.append(twin)
        names[twin] = renamed[entry] = f"{name}_{entry}"
    tape_params = {names[fn] for fn in out if fn.tape == "param"}
    for fn in out:
        for op in fn.walk():
            if isinstance(op, Call) and op.callee in renamed:
                op.callee = renamed[op.callee]
        if fn is head:
            prepare(fn)
        if fn.tape == "local" and not any(
                isinstance(op, (Push, Pop)) or isinstance(op, Call) and op.callee in tape_params
                for op in fn.walk()):
            fn.tape = None  # no tape: and no tape size to report either
        fn.name = fn.primal = names[fn]
        fn.is_static = True
        fn.mode = "primal"
        fn.tangent_of, fn.adjoint_of = {}, {}
        fn.increments = []  # a g_b called in a forward sweep (ad/joint.py): results returned
    return out + kept


def _vjp_functions(module: Module, spec: Nested, target: Function, single: Module,
                   diags: "Diagnostics", log: "PassLog") -> list[Function]:
    """The adjoint of ``f_grad`` when ``f``'s adjoint keeps a tape, which the reverse
    transform cannot reverse: ``f_grad_vjp``, a custom adjoint (as by ``@custom_vjp``) built
    from the hvp of ``f`` (``f_b_d``, tangent over adjoint).  The adjoint of the gradient
    g_k = df/dx_k (k in argnums) with adjoints gb_k is, for every float parameter x_i,
    sum_k gb_k d2f/dx_k dx_i = (H v)_i with v = gb on the argnums and 0 elsewhere: one call
    of ``f_b_d`` along v, with ``retb`` = 1."""
    from ..analysis.activity import Request, analyze, differentiable
    from ..pipeline import adjoint_module, finish_module, hvp_requests
    from . import forward

    floats = {i for i, p in enumerate(target.params) if differentiable(p)}
    request = {spec.callee: Request(floats, {0}, set())}
    adjoint = adjoint_module(copy.deepcopy(single), request, "reverse", diags, log, early=False)
    hvp = forward.differentiate(adjoint, analyze(adjoint, hvp_requests(adjoint)), vector=False)
    finish_module(hvp, "hvp", log)
    entry = hvp.function(spec.callee + "_b_d")
    name = spec.name + "_vjp"
    tangent_of, adjoint_of = dict(entry.tangent_of), dict(entry.adjoint_of)
    results = [r.name for r in entry.results]

    def plain(fn: Function) -> None:
        fn.increments = []  # results returned, not added to

    helpers = _adopt(module, hvp, entry.name, f"{name}_{entry.name}", plain)
    # the custom adjoint: (f's arguments, with a shadow after each float array; gb_k) ->
    # the adjoint of each float scalar parameter
    params: list[Value] = []
    names: list[str] = []
    value: dict[str, Value] = {}
    shadow: dict[str, Value] = {}
    for p, pname in zip(target.params, target.param_names, strict=True):
        params.append(Value(p.type, pname))
        names.append(pname)
        value[pname] = params[-1]
        if isinstance(p.type, ArrayType) and p.type.elem.is_float:
            params.append(Value(p.type, pname + "b"))
            names.append(pname + "b")
            shadow[pname] = params[-1]
    gb: dict[str, Value] = {}
    for i in spec.wrt:
        pname = target.param_names[i]
        params.append(Value(target.params[i].type, pname + "bb"))
        names.append(pname + "bb")
        gb[pname] = params[-1]
    body = Region(params)
    b = Builder(body, spec.loc)

    def like(array: Value, what: str) -> Value:
        t = array.type
        assert isinstance(t, ArrayType)
        return b.zeros([b.dim(array, k) for k in range(t.ndim)], t, array.name + what)

    args: list[Value] = []
    for n in entry.param_names:
        if n in value:
            args.append(value[n])
        elif adjoint_of.get(n) == "return":
            args.append(b.const(1.0, target.results[0].type))  # retb
        elif n in adjoint_of:  # an array's adjoint: not wanted, a scratch array
            args.append(like(value[adjoint_of[n]], "b_unused"))
        elif tangent_of[n] in value:  # the direction: gb on the argnums, 0 elsewhere
            p = value[tangent_of[n]]
            args.append(gb[p.name] if p.name in gb else  # type: ignore[index]
                        like(p, "d") if isinstance(p.type, ArrayType) else b.const(0.0, p.type))
        else:  # the tangent of an array's adjoint: H v for that array, into its shadow
            args.append(shadow[adjoint_of[tangent_of[n]]])
    outs = b.call(helpers[0].name, args, [r.type for r in entry.results],
                  [r.name for r in entry.results])
    by_result = dict(zip(results, outs, strict=True))
    hv: list[Value] = []
    out_results: list[Result] = []
    for p, pname in zip(target.params, target.param_names, strict=True):
        if not (isinstance(p.type, ScalarType) and p.type.is_float):
            continue
        found = [r for r in results if adjoint_of.get(tangent_of.get(r, "")) == pname]
        hv.append(by_result[found[0]] if found else b.const(0.0, p.type))
        out_results.append(Result(pname + "b", p.type))
    body.ops.append(Return(hv, [], spec.loc))
    vjp = Function(name, body, out_results, spec.loc, primal=name, param_names=names,
                   returns_tuple=len(out_results) > 1, is_static=True)
    return [vjp] + helpers


def _taped(module: Module) -> bool:
    return any(isinstance(op, Push) for fn in module.functions for op in fn.walk())


def _gradient(fn: Function, spec: Nested, target: Function) -> None:
    """``f_b`` -> ``f_grad``: the adjoint of the result is 1, the adjoints of the chosen
    parameters are returned (not incremented), 0 for one the result does not depend on."""
    k = next(i for i, n in enumerate(fn.param_names) if fn.tangent_of.get(n) == "return")
    retb = fn.params[k]
    ret = fn.body.terminator
    assert isinstance(ret, Return)
    b = Builder(fn.body, fn.loc)
    one = b.const(1.0, retb.type)
    fn.body.ops.insert(0, fn.body.ops.pop())  # built at the end: move it first
    substitute(fn, {retb: one})
    del fn.params[k], fn.param_names[k]
    adjoint = {fn.tangent_of[r.name]: v for r, v in zip(fn.results, ret.operands, strict=True)
               if r.name in fn.tangent_of}
    values, results = [], []
    for i in spec.wrt:
        name = target.param_names[i]
        v = adjoint.get(name)
        if v is None:  # the result does not depend on it
            v = b.const(0.0, target.params[i].type)
            fn.body.ops.insert(0, fn.body.ops.pop())
        values.append(v)
        results.append(Result(name + "b", v.type))
    ret.operands = values
    fn.results = results
    fn.increments = []
    fn.returns_tuple = len(values) > 1


def _place_tangents(module: Module, fn: Function, spec: Nested, target: Function) -> None:
    """The calls pass the arguments, then the tangents of the float parameters; ``f_d`` takes
    each tangent right after its argument, and none for a parameter that is not active."""
    index = {n: i for i, n in enumerate(target.param_names)}
    slot = {i: k for k, i in enumerate(spec.wrt)}
    order = [index[n] if n in index else len(target.params) + slot[index[fn.tangent_of[n]]]
             for n in fn.param_names]
    for caller in module.functions:
        for op in caller.walk():
            if isinstance(op, Call) and op.callee == spec.name:
                op.operands = [op.operands[k] for k in order]


def check_reverse(module: Module, needs: set[str], vector: bool) -> None:
    """The reverse transform does not reverse pushes and pops: it refuses a nested derivative
    whose code keeps a tape and that no custom adjoint replaces (``f_grad_vjp`` replaces a
    taping ``grad(f)`` in scalar reverse mode; the vector adjoint uses no custom adjoint),
    located at the ``grad(f)``/``jvp(f, ...)``.  In scalar reverse mode that is a ``jvp`` of
    a function that takes ``grad`` of a taping one: its tangent keeps the adjoint's tape."""
    from .reverse import adjoint_only

    needs = needs - adjoint_only(module, vector=vector)
    for fn in module.functions:
        if fn.name not in needs or not any(isinstance(op, (Push, Pop)) for op in fn.walk()):
            continue
        spec = next((s for s in module.nested.values()
                     if fn.name == s.name or fn.name.startswith(s.name + "_")), None)
        if spec is None or (spec.kind == "grad" and not vector):
            continue  # scalar reverse: the functions of a taping grad(f) are f_grad_vjp's
        if spec.kind == "jvp":
            raise AdgenError(spec.loc, f"{'vector ' if vector else ''}reverse mode through "
                                       f"{_spelled(spec)} is not supported: its tangent keeps "
                                       f"the tape of an adjoint {spec.callee} takes (a grad of "
                                       "a function with loops or calls) (use forward mode "
                                       "outside)")
        raise AdgenError(spec.loc, f"vector reverse mode through {_spelled(spec)} is not "
                                   f"supported: {spec.callee}'s adjoint keeps a tape (values its "
                                   f"loops or calls save) (use jvp({spec.callee}, ...) inside, "
                                   "or scalar reverse or forward mode outside)")


def check_external(module: Module, needs: set[str]) -> None:
    """A derivative of ``grad(f)`` / ``jvp(f, ...)`` where ``f`` reaches an ``@external``
    function would need a second derivative of the C function, which the user does not give:
    refused, located at the ``grad``/``jvp``."""
    by_name = {fn.name: fn for fn in module.functions}
    for spec in module.nested.values():
        for fn in module.functions:
            if fn.name not in needs or not (fn.name == spec.name or
                                            fn.name.startswith(spec.name + "_")):
                continue
            c = next((by_name[n] for n in calls(fn) if n in by_name and
                      by_name[n].external is not None and by_name[n].mode != "primal"), None)
            if c is not None:
                assert c.external is not None
                raise AdgenError(spec.loc, f"a derivative of {_spelled(spec)} would need a "
                                           "second derivative of the external C function "
                                           f"'{c.external.name}' (external C functions give "
                                           "first derivatives only: take grad/jvp of it only in "
                                           "functions that are not differentiated)")
