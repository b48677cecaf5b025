"""Names an adgen module imports so that it also runs unchanged in CPython.

    from adgen import Array, f64, i64, zeros

In CPython these are thin aliases: ``Array[f64]`` is a NumPy array
annotation, ``zeros`` is ``numpy.zeros``, ``prange`` is ``range``.  The
transpiler reads them as types and intrinsics; it never imports this file.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np


class f64(float):
    """64-bit float scalar (same as ``float``)."""


class f32(float):
    """32-bit float scalar."""


class i64(int):
    """64-bit integer scalar (same as ``int``)."""


class i32(int):
    """32-bit integer scalar."""


class Array:
    """C-contiguous NumPy array annotation: ``Array[f64]``, ``Array[f64, 2]`` (up to 4-D)."""

    def __class_getitem__(cls, item: Any) -> Any:
        return np.ndarray


def zeros(shape: Any, dtype: Any = np.float64) -> np.ndarray:
    """A new array of zeros, as ``numpy.zeros``."""
    return np.zeros(shape, dtype=dtype)


def custom_vjp(adjoint: Any) -> Any:
    """``@custom_vjp(f_adjoint)`` on ``f``: reverse mode uses ``f_adjoint`` (a function of the
    module, written in the subset) as the adjoint of ``f`` instead of differentiating its body.
    In CPython the decorator returns ``f`` unchanged."""

    def decorate(fn: Any) -> Any:
        return fn

    return decorate


def custom_jvp(tangent: Any) -> Any:
    """``@custom_jvp(f_tangent)`` on ``f``: forward mode uses ``f_tangent`` (a function of the
    module, written in the subset, with the signature of ``f_d``: each parameter followed by
    its tangent if it is a float, returning the results and then the tangents of the float
    results) instead of differentiating the body of ``f``.  In CPython the decorator returns
    ``f`` unchanged."""

    def decorate(fn: Any) -> Any:
        return fn

    return decorate


def grad(fn: Any, argnums: int | tuple[int, ...] = 0) -> Any:
    """``grad(f)(x, y)``: the gradient of ``f``'s float result with respect to the parameter
    ``argnums`` (an index, default 0: one value) or parameters (a tuple of indices: a tuple),
    as JAX's ``grad``.  Generated code calls ``f_grad``, built from ``f``'s adjoint.  In
    CPython it builds ``f``'s module with adgen (reverse mode, cached) and calls the adjoint,
    so that the module still runs unchanged."""

    def gradient(*args: Any) -> Any:
        compiled, args = _compiled(fn, "reverse", args)
        _, grads = compiled.vjp(args, 1.0)
        if isinstance(argnums, tuple):
            return tuple(_float(grads[i]) for i in argnums)
        return _float(grads[argnums])

    return gradient


def jvp(fn: Any, primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[float, float]:
    """``y, yd = jvp(f, (x, n), (xd, None))``: ``f``'s value and its derivative in the direction
    of the tangents (one per parameter, None for those that are not floats), as JAX's ``jvp``.
    Generated code calls ``f_jvp`` (``f``'s tangent); in CPython the tangent built by adgen
    (forward mode, cached)."""
    compiled, primals = _compiled(fn, "forward", tuple(primals))
    value, tangent = compiled.jvp(primals, tuple(tangents))
    return float(value), _float(tangent)


def _float(v: Any) -> float:
    return 0.0 if v is None else float(v)


#: the function of each build (by file, mode, name, the file's mtime and size, precision)
_BUILT: dict[tuple[str, str, str, int, int, str], Any] = {}
#: the source file of a function (by the file name of its code)
_PATHS: dict[str, str] = {}
#: the types of the parameters of a function, as its module spells them (by the same key)
_TYPES: dict[tuple[str, str, str, int, int], list[Any]] = {}


def _compiled(fn: Any, mode: str, args: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """``fn`` of its module built by adgen in ``mode`` (once per process; on disk, adgen's build
    cache), and ``args`` (what it is called with) as that build takes them.  The build is in
    single precision when a float32 array is given where the module's own precision takes
    float64, as the module's arrays are when ``adgen --check --precision f32`` runs it; a
    float array of the other precision (``zeros`` makes float64 arrays) is then passed as a
    copy in the build's (``fn`` only reads its arrays)."""
    # (called once per grad or jvp that CPython runs, in loops: the work of a call whose
    # arguments are no float arrays is a stat of the file and three dictionary lookups)
    path = _PATHS.get(fn.__code__.co_filename)  # (code objects of two files may be equal)
    if path is None:
        import inspect
        path = inspect.getsourcefile(fn)
        if path is None:
            raise TypeError(f"grad/jvp of {fn!r}: not a function of an adgen module")
        _PATHS[fn.__code__.co_filename] = path
    # the file as it is now: edited and reloaded in this process, it is built again (its
    # first build was used, the derivative of the old text)
    stat = os.stat(path)
    here = (path, mode, fn.__name__, stat.st_mtime_ns, stat.st_size)
    arrays = [i for i, a in enumerate(args)
              if isinstance(a, np.ndarray) and a.dtype in (np.float32, np.float64)]
    if not arrays:
        compiled = _BUILT.get((*here, "f64"))
        if compiled is not None:
            return compiled, args
    from .api import load, transpile
    from .binding import NP_DTYPES, float_array
    from .transpile.ir.types import ArrayType

    if here not in _TYPES:  # (the parameters' types as the module spells them: no compiler)
        own = transpile(path, modes=(), functions=[fn.__name__]).module.function(fn.__name__)
        _TYPES[here] = [p.type for p in own.params]
    types = _TYPES[here]
    single = len(args) == len(types) and any(
        args[i].dtype == np.float32 and isinstance(types[i], ArrayType) and
        types[i].elem.name == "f64" for i in arrays)
    key = (*here, "f32" if single else "f64")
    if key not in _BUILT:
        _BUILT[key] = getattr(load(path, modes=(mode,), functions=[fn.__name__],
                                   precision="f32" if single else "f64"), fn.__name__)
    compiled = _BUILT[key]
    if len(args) != len(compiled.param_types):
        return compiled, args  # (the call says what is wrong)
    return compiled, tuple(
        float_array(a, NP_DTYPES[t.elem.name], f"{fn.__name__}: argument '{name}'")
        if i in arrays and isinstance(t, ArrayType) and t.elem.is_float else a
        for i, (a, t, name) in enumerate(zip(args, compiled.param_types, compiled.param_names)))


def external(source: str, *, name: str, tangent: str | None = None,
             adjoint: str | None = None) -> Any:
    """``@external("f.c", name="f_c", tangent="f_c_d", adjoint="f_c_b")`` on ``f``: generated
    code calls the C function ``f_c`` defined in ``f.c`` (a path relative to the module) where
    ``f`` is called, and its tangent ``f_c_d`` / adjoint ``f_c_b`` in the derivatives, with the
    C signatures of adgen's own ``f_d`` / ``f_b`` (docs/generated-code.md).  The body of ``f``
    is its meaning in CPython: adgen neither compiles nor differentiates it, and ``adgen
    --check`` compares the C functions with it.  In CPython the decorator returns ``f``
    unchanged."""

    def decorate(fn: Any) -> Any:
        return fn

    return decorate


def prange(*args: int) -> range:
    """A loop whose iterations are independent; ``range`` in CPython."""
    return range(*args)


__all__ = ["Array", "custom_jvp", "custom_vjp", "external", "f32", "f64", "grad", "i32", "i64",
           "jvp", "prange", "zeros"]
