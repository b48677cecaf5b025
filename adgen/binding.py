"""Python callables over the compiled C: argument checks, NumPy arrays, results.

Arrays pass without copies: the C function gets a pointer into the NumPy
buffer.  Before the call every argument is checked (dtype, number of
dimensions, C-contiguity, writability of arrays the function writes, shapes
of tangents, overlap of a written array with another argument) and a bad
one raises ``TypeError``/``ValueError`` naming it, never a crash.
"""

from __future__ import annotations

import math

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .transpile.emit.signature import CSignature
from .transpile.ir.core import Function
from .transpile.ir.types import ArrayType, ScalarType, Type, VecType

NP_DTYPES = {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32}
INT_BITS = {"i64": 64, "i32": 32}
#: the values each C int type holds
INT_RANGE = {t: (-2 ** (b - 1), 2 ** (b - 1) - 1) for t, b in INT_BITS.items()}
#: the smallest magnitude a double rounds to infinity in single precision: FLT_MAX and half
#: its last place (3.4028235e38, FLT_MAX's own repr, is below it: it rounds to FLT_MAX)
F32_OVERFLOW = 2.0 ** 128 - 2.0 ** 103


class _Call:
    """Marshals one call of one generated C function."""

    def __init__(self, fn: Function, sig: CSignature, lib: Any, ffi: Any, written: set[str],
                 device: bool = False, fixed_nbdirs: int | None = None,
                 stack_per_direction: int = 0) -> None:
        self.fn = fn
        #: bytes of stack one direction may take in a vector call (its arrays [nbdirs], and
        #: its callees'; one level of a recursion)
        self.stack_per_direction = stack_per_direction
        self.sig = sig
        #: the number of directions the build fixed (``-DADGEN_NBDIRS=N``), if any
        self.fixed_nbdirs = fixed_nbdirs
        self.cfunc = getattr(lib, sig.name)
        self.lib = lib
        self.ffi = ffi
        self.written = written  # names of array parameters the function writes
        #: the CUDA target on a GPU: arrays are device pointers (``adgen/cuda.py``)
        self.device = device
        #: what each C parameter takes, worked out once: ``(kind, name, detail)`` with kind
        #: "directions" (the number of directions), "array" (detail: the C pointer type, no
        #: const), "vector" (the same, a scalar's directions), "scalar", "shape" (name: the
        #: array, detail: its axis) or "result" (name: the result, detail: (C element type,
        #: one per direction))
        self.plan = [self._planned(p) for p in sig.params]
        #: the tangent (adjoint) of each differentiated primal parameter or result, by the
        #: primal's name; and the primal parameters whose tangents are parameters here
        self.derived = {primal: name for name, primal in fn.tangent_of.items()}
        self.active = {fn.tangent_of[n] for n in fn.param_names if n in fn.tangent_of}
        #: the arrays the function writes, and their tangents
        self.written_derived = written | {self.derived[n] for n in written if n in self.derived}

    def _planned(self, p: Any) -> tuple[str, Any, Any]:
        kind, fn = p.source[0], self.fn
        if kind == "value":
            i = p.source[1]
            name, t = fn.param_names[i], fn.params[i].type
            if name == fn.nbdirs:
                return ("directions", name, None)
            if isinstance(t, ArrayType):
                return ("array", name, p.ctype.replace("const ", ""))
            if isinstance(t, VecType):
                return ("vector", name, p.ctype.replace("const ", ""))
            return ("scalar", name, None)
        if kind == "shape":
            return ("shape", fn.param_names[p.source[1]], p.source[2])
        r = fn.results[p.source[1]]
        elem = r.type.elem if isinstance(r.type, VecType) else r.type
        assert isinstance(elem, ScalarType)
        return ("result", r.name, (f"{elem.c_name}[]", isinstance(r.type, VecType)))

    def __call__(self, values: dict[str, Any], nbdirs: int | None = None) -> tuple[Any, dict[str, Any]]:
        """``values``: C parameter name -> Python value.  Returns (C return, out results)."""
        transfers = None
        if self.device:
            from .cuda import Transfers
            transfers = Transfers()
        try:  # (device copies made before a failure are freed too)
            args, outs = self.arguments(values, nbdirs, transfers)
            ret = self.cfunc(*args)
        finally:
            if transfers is not None:
                transfers.finish()
        return ret, self.results(outs)

    def arguments(self, values: dict[str, Any], nbdirs: int | None = None,
                  transfers: Any = None) -> tuple[list[Any], dict[str, Any]]:
        """The C arguments of a call with ``values`` (C parameter name -> Python value), for
        ``self.cfunc(*args)``, and the buffers of its out results (for ``results``).  On a
        GPU, ``transfers`` (a ``cuda.Transfers``, finished by the caller after the call)
        makes the device copies of NumPy arrays; with device arrays only, the arguments can be
        prepared once and the C function called many times (``benchmarks/gpu/run.py`` times
        kernels and launches so)."""
        ffi = self.ffi
        args: list[Any] = []
        outs: dict[str, Any] = {}
        arrays: dict[str, np.ndarray] = {}
        if self.device and transfers is None:
            raise TypeError(f"{self.sig.name}: a call on the GPU needs a cuda.Transfers")
        for kind, name, detail in self.plan:
            if kind == "scalar":
                args.append(values[name])
            elif kind == "array" or kind == "vector":
                arr = values[name]
                arrays[name] = arr
                if transfers is not None and kind == "array":
                    args.append(ffi.cast(detail, transfers.pointer(arr, name in self.written)))
                elif not isinstance(arr, np.ndarray):
                    raise TypeError(f"argument '{name}' is a device array "
                                    "(__cuda_array_interface__): this build runs on the host "
                                    "(the C target, or the CUDA emulation); pass a NumPy array")
                else:  # (a pointer into the buffer, which the cdata keeps alive)
                    args.append(ffi.from_buffer(detail, arr))
            elif kind == "shape":
                args.append(arrays[name].shape[detail])
            elif kind == "directions":
                if nbdirs is None:
                    args.append(values[name])
                    continue
                if self.fixed_nbdirs is not None and nbdirs != self.fixed_nbdirs:
                    raise ValueError(
                        f"{self.sig.name}: this build takes {self.fixed_nbdirs} "
                        f"directions (-DADGEN_NBDIRS={self.fixed_nbdirs}), got {nbdirs}")
                self._check_stack(nbdirs)
                args.append(nbdirs)
            else:
                ctype, vec = detail
                count = nbdirs if vec else 1
                buf = ffi.new(ctype, max(count or 1, 1))
                outs[name] = (buf, count, vec)
                args.append(buf)
        return args, outs

    def max_directions(self) -> int | None:
        """The most directions a call on this thread can take: their arrays in half of the
        stack the thread has left (None: no known bound)."""
        if not self.stack_per_direction:  # (no arrays of directions: the stack is not read)
            return None
        left = stack_left(self.lib)
        if left is None:
            return None
        return max(1, left // 2 // self.stack_per_direction)

    def _check_stack(self, nbdirs: int) -> None:
        """A call whose arrays of directions on the stack would overflow it (a segfault that
        ends the process: 1,000,000 directions of a function with three such arrays need
        24 MB) is refused.  A build that fixes the number of directions (``-DADGEN_NBDIRS=N``)
        takes no other count, so calls of fewer directions are no way out there: the advice
        is a build with a smaller N, or a thread with a larger stack."""
        most = self.max_directions()
        if most is not None and nbdirs > most:
            need, left = nbdirs * self.stack_per_direction, stack_left(self.lib)
            assert left is not None
            if self.fixed_nbdirs is not None:
                advice = (f"this build takes {self.fixed_nbdirs} directions per call "
                          f"(-DADGEN_NBDIRS={self.fixed_nbdirs}): rebuild with "
                          f"-DADGEN_NBDIRS={most} or less (adgen.jacobian and hessian then "
                          "make calls of that many), or make the call in a thread with a "
                          "larger stack (threading.stack_size before it starts; ulimit -s for "
                          "the main thread)")
            else:
                advice = ("make calls of fewer directions (adgen.jacobian(..., chunk=k)), or "
                          "raise the limit (ulimit -s, threading.stack_size)")
            raise ValueError(
                f"{self.sig.name}: {nbdirs} directions need up to {_mib(need)} of stack for the "
                f"tangents and adjoints the C function keeps there, over half of the "
                f"{_mib(left)} this thread has left: {advice}")

    def results(self, outs: dict[str, Any]) -> dict[str, Any]:
        """The out results of a call, from the buffers ``arguments`` made."""
        return {name: np.array(self.ffi.unpack(buf, count)) if vec else buf[0]
                for name, (buf, count, vec) in outs.items()}


def stack_left(lib: Any) -> int | None:
    """The bytes of stack the calling thread has left (None: unlimited), as the build's
    ``adgen_stack_left`` reads them (glibc: the thread's own stack, less what its callers
    use), else the whole stack ``stack_limit`` gives."""
    try:
        left = int(lib.adgen_stack_left())
    except AttributeError:  # (a build without the helper: the CUDA target)
        left = -1
    return left if left >= 0 else stack_limit()


def stack_limit() -> int | None:
    """The stack of the calling thread in bytes (None: unlimited): the process's limit for
    the main thread, else the size new threads get (threading.stack_size, by default the
    process's limit, as glibc gives threads)."""
    import resource
    import threading
    soft, _ = resource.getrlimit(resource.RLIMIT_STACK)
    limit = None if soft == resource.RLIM_INFINITY else soft
    if threading.current_thread() is not threading.main_thread():
        size = threading.stack_size()  # (which sets it to 0 as it reads it: put back)
        threading.stack_size(size)
        if size:
            return size
        # (glibc gives threads the process's limit; 2 MiB when it is unlimited, on x86-64)
        return limit if limit is not None else 2 << 20
    return limit


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def check_array(name: str, value: Any, t: ArrayType, writable: bool, what: str = "argument",
                shape: tuple[int, ...] | None = None) -> np.ndarray:
    dtype = NP_DTYPES[t.elem.name]
    ndim = t.ndim + (1 if t.vector else 0)
    if hasattr(value, "__cuda_array_interface__") and not isinstance(value, np.ndarray):
        return check_device_array(name, value, dtype, ndim, writable, what, shape)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{what} '{name}' must be a NumPy array of {np.dtype(dtype).name}, "
                        f"got {type(value).__name__}")
    if isinstance(value, np.ma.MaskedArray):  # the C reads the data, masked elements too
        raise TypeError(f"{what} '{name}' is a masked array, whose mask the compiled code "
                        "would ignore (pass value.filled(...) or value.data)")
    if value.dtype != dtype:
        raise TypeError(f"{what} '{name}' must have dtype {np.dtype(dtype).name}, got {value.dtype}")
    if value.ndim != ndim:
        raise ValueError(f"{what} '{name}' must have {ndim} dimension(s), got {value.ndim}")
    if not value.flags.c_contiguous:
        raise ValueError(f"{what} '{name}' must be C-contiguous (use numpy.ascontiguousarray)")
    if writable and not value.flags.writeable:
        raise ValueError(f"{what} '{name}' is written by the function but is read-only")
    if shape is not None and value.shape != shape:
        raise ValueError(f"{what} '{name}' must have shape {shape}, got {value.shape}")
    return value


def check_device_array(name: str, value: Any, dtype: Any, ndim: int, writable: bool, what: str,
                       shape: tuple[int, ...] | None) -> Any:
    """The checks of ``check_array`` for a device array (``__cuda_array_interface__``)."""
    iface = value.__cuda_array_interface__
    got = np.dtype(iface["typestr"])
    if got != np.dtype(dtype):
        raise TypeError(f"{what} '{name}' must have dtype {np.dtype(dtype).name}, got {got}")
    if len(iface["shape"]) != ndim:
        raise ValueError(f"{what} '{name}' must have {ndim} dimension(s), got "
                         f"{len(iface['shape'])}")
    strides = iface.get("strides")
    if strides is not None:
        expected, step = [], got.itemsize
        for n in reversed(iface["shape"]):
            expected.insert(0, step)
            step *= n
        if tuple(strides) != tuple(expected):
            raise ValueError(f"{what} '{name}' must be C-contiguous")
    if writable and iface["data"][1]:
        raise ValueError(f"{what} '{name}' is written by the function but is read-only")
    if shape is not None and tuple(iface["shape"]) != shape:
        raise ValueError(f"{what} '{name}' must have shape {shape}, got {tuple(iface['shape'])}")
    return value


def _memory(a: Any) -> tuple[int, int]:
    """(first byte, byte count) of an array, on the host or the device."""
    iface = getattr(a, "__cuda_array_interface__", None)
    if iface is not None and not isinstance(a, np.ndarray):
        count = int(np.prod(iface["shape"])) * np.dtype(iface["typestr"]).itemsize
        return int(iface["data"][0]), count
    return int(a.ctypes.data), int(a.nbytes)


def check_scalar(name: str, value: Any, t: Type, what: str = "argument",
                 function: str = "") -> Any:
    """``value`` as the C parameter ``name`` of type ``t`` takes it; ``function`` names the
    function in the message of a value out of range."""
    assert isinstance(t, ScalarType)
    if type(value) is float and t.name == "f64":  # (the common case, first)
        return value
    if t.is_bool:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{what} '{name}' must be a bool, got {type(value).__name__}")
        return bool(value)
    if t.is_int:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{what} '{name}' must be an int, got {type(value).__name__}")
        value = int(value)
        low, high = INT_RANGE[t.name]
        if not low <= value <= high:
            raise OverflowError(f"{function + ': ' if function else ''}{what} '{name}' = "
                                f"{_shown(value)} does not fit a {INT_BITS[t.name]}-bit int "
                                f"({t.name})")
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        raise TypeError(f"{what} '{name}' must be a float, got {type(value).__name__}")
    try:
        out = float(value)
    except OverflowError:
        out = math.inf
    if math.isinf(out) and not (isinstance(value, (float, np.floating)) and math.isinf(value)) \
            or t.name == "f32" and math.isfinite(out) and abs(out) >= F32_OVERFLOW:
        # (C converts a double beyond a float's range to no value it defines)
        raise OverflowError(f"{function + ': ' if function else ''}{what} '{name}' = "
                            f"{_shown(value) if isinstance(value, int) else value} does not fit "
                            f"a float ({t.name})") from None
    return out


def float_array(value: Any, dtype: Any, label: str, copy: bool = False) -> np.ndarray:
    """``value`` as a C-contiguous array of ``dtype`` (a new one when ``copy``); for float32,
    a finite value beyond its range (which the conversion makes inf) is an ``OverflowError``
    naming ``label``, as it is for a scalar; values that are not numbers are a ``TypeError``
    naming it."""
    if type(value) is np.ndarray and not copy and value.ndim and value.dtype == dtype and \
            value.flags.c_contiguous:  # (what the conversion below returns as it is)
        return value
    src = np.asarray(value)
    if not (np.issubdtype(src.dtype, np.number) or src.dtype in (np.bool_, object)):
        raise TypeError(f"{label} must hold numbers, not {_what(value, src)}")
    if src.dtype == object:  # (Python ints beyond 64 bits: their floats)
        try:  # (NumPy makes None NaN)
            if any(v is None for v in src.flat):
                raise TypeError
            src = src.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{label} must hold numbers, not {_what(value, src)}") from None
        except OverflowError:
            raise OverflowError(f"{label} holds an int too large for a float") from None
    if dtype is np.float32 and src.dtype != np.float32 and src.size and \
            np.issubdtype(src.dtype, np.number):
        with np.errstate(invalid="ignore", over="ignore"):
            big = np.isfinite(src) & (np.abs(src.astype(np.float64)) >= F32_OVERFLOW)
        if big.any():
            raise OverflowError(f"{label} holds {float(src[big].flat[0])!r}, which does not "
                                "fit a float (f32)")
    if copy:  # (at least one dimension, as ascontiguousarray gives)
        return np.array(src, dtype=dtype, order="C", ndmin=1)
    return np.ascontiguousarray(src, dtype=dtype)


def _what(value: Any, array: np.ndarray) -> str:
    """What a value that is not numbers is, for a message: itself, or its elements' type."""
    text = repr(value)
    return text if len(text) <= 40 else f"an array of {array.dtype}"


def _shown(value: int) -> str:
    """An int for a message: its digits, or its size when they are many."""
    return str(value) if abs(value) < 10 ** 24 else f"an int of {abs(value).bit_length()} bits"


def is_sequence(value: Any) -> bool:
    """A tuple or list (of arguments, tangents or adjoints), or a 1-d array of them; not a
    string."""
    if type(value) is tuple or type(value) is list:  # (the common case, first)
        return True
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes)) or \
        isinstance(value, np.ndarray) and value.ndim == 1


def check_overlap(arrays: dict[str, np.ndarray], written: set[str]) -> None:
    names = list(arrays)
    for a_i, a in enumerate(names):
        for b in names[a_i + 1:]:
            if a not in written and b not in written:
                continue
            x, y = arrays[a], arrays[b]
            if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
                shared = np.may_share_memory(x, y)
            else:
                (p, n), (q, m) = _memory(x), _memory(y)
                shared = p < q + m and q < p + n
            if shared:
                w = a if a in written else b
                raise ValueError(f"arrays '{a}' and '{b}' overlap and '{w}' is written by the "
                                 "function (pass separate arrays)")


def _all_zero(value: Any) -> bool:
    """Whether ``value`` is numbers that are all zero (a number, a sequence or an array of
    them): a tangent or adjoint that adds nothing, which an argument or result that is not
    differentiated may be given as well as None, in every mode."""
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):
        return False
    return a.dtype.kind in "biuf" and not np.any(a != 0)


def _zero_or_none(value: Any) -> bool:
    return value is None or _all_zero(value)


class AdgenFunction:
    """A module function: call it for the primal, ``.jvp`` for tangents, ``.vjp``/``.grad`` for
    adjoints."""

    def __init__(self, name: str, calls: dict[str, _Call], target: str = "c") -> None:
        self.__name__ = name
        self.name = name
        self.target = target
        self._calls = calls
        self._primal = calls["primal"]
        self._forward = calls.get("forward")
        self._vector = calls.get("vector-forward")
        self._reverse = calls.get("reverse")
        self._vector_reverse = calls.get("vector-reverse")
        self._hvp = calls.get("hvp")
        self._vector_hvp = calls.get("vector-hvp")
        fn = self._primal.fn
        self.param_names = list(fn.param_names)
        self.param_types = [p.type for p in fn.params]
        self._array_params = [(name, t) for name, t in zip(self.param_names, self.param_types,
                                                           strict=True)
                              if isinstance(t, ArrayType)]

    def __repr__(self) -> str:
        return f"<adgen function {self.name}({', '.join(self.param_names)})>"

    def not_loaded(self, *modes: str) -> RuntimeError:
        """The error of a method whose modes were not loaded (one of ``modes`` would do)."""
        if self.target == "cuda" and all(m.startswith("vector-") for m in modes):
            return RuntimeError(f"{self.name}: the vector modes are not supported on the CUDA "
                                "target yet (load the module for target='c')")
        return RuntimeError(f"{self.name}: load the module with modes including "
                            + " or ".join(f"'{m}'" for m in modes))

    def _values(self, args: Sequence[Any], written: set[str], what: str = "") -> dict[str, Any]:
        """The checked C values of ``args``; ``what`` names the method (``f.jvp``) that was
        given ``args`` as one tuple."""
        if what and not is_sequence(args):
            raise TypeError(f"{what}: args must be the tuple of the {len(self.param_names)} "
                            f"argument(s) ({', '.join(self.param_names)}), got "
                            f"{type(args).__name__}")
        if len(args) != len(self.param_names):
            raise TypeError(f"{self.name}() takes {len(self.param_names)} argument(s) "
                            f"({', '.join(self.param_names)}), got {len(args)}")
        values: dict[str, Any] = {}
        arrays: dict[str, np.ndarray] = {}
        for name, t, a in zip(self.param_names, self.param_types, args, strict=True):
            if isinstance(t, ArrayType):
                values[name] = arrays[name] = check_array(name, a, t, name in written)
            else:
                values[name] = check_scalar(name, a, t, function=self.name)
        if len(arrays) > 1:
            check_overlap(arrays, written)
        return values

    def _package(self, ret: Any, outs: dict[str, Any], call: _Call) -> Any:
        fn = call.fn
        if call.sig.c_return is not None:
            outs = {fn.results[call.sig.c_return].name: ret, **outs}
        primal = [outs[r.name] for r in self._primal.fn.results]
        if not primal:
            return None
        return tuple(primal) if self._primal.fn.returns_tuple else primal[0]

    def __call__(self, *args: Any) -> Any:
        values = self._values(args, self._primal.written)
        ret, outs = self._primal(values)
        return self._package(ret, outs, self._primal)

    def _check_tangents(self, call: _Call | None, tangents: Sequence[Any], nbdirs: int | None,
                        what: str, mode: str) -> _Call:
        """The call of ``mode`` (or why there is none), one tangent per argument, at least one
        direction in vector modes."""
        if call is None:
            raise self.not_loaded(mode)
        if not is_sequence(tangents):
            raise TypeError(f"{what}: tangents must be a tuple with one entry per argument "
                            f"({', '.join(self.param_names)}), None where not differentiated; "
                            f"got {type(tangents).__name__}")
        if len(tangents) != len(self.param_names):
            raise TypeError(f"{what}: give one tangent per argument ({len(self.param_names)}), "
                            f"None where not differentiated; got {len(tangents)}")
        if nbdirs is not None and nbdirs < 1:
            raise ValueError(f"{what}: tangents need at least one direction (their last axis "
                             "is empty)")
        return call

    def _tangent_call(self, call: _Call | None, args: Sequence[Any], tangents: Sequence[Any],
                      nbdirs: int | None) -> tuple[Any, Any]:
        vector = nbdirs is not None
        what = f"{self.name}.jvp" + ("_vec" if vector else "")
        call = self._check_tangents(call, tangents, nbdirs, what,
                                    "vector-forward" if vector else "forward")
        values = self._values(args, call.written, what)
        tangent_name, active = call.derived, call.active
        for name, t, tan in zip(self.param_names, self.param_types, tangents, strict=True):
            if name not in active:
                if not _zero_or_none(tan):
                    raise ValueError(f"{self.name}: argument '{name}' is not differentiated "
                                     "(not a float, or outside --wrt); pass None as its tangent")
                continue
            tname = tangent_name[name]
            if isinstance(t, ArrayType):
                shape = values[name].shape + ((nbdirs,) if nbdirs is not None else ())
                if tan is None:
                    tan = np.zeros(shape, dtype=NP_DTYPES[t.elem.name])
                elif name in call.written or hasattr(tan, "__cuda_array_interface__"):
                    tt = ArrayType(t.elem, t.ndim, vector=nbdirs is not None)
                    tan = check_array(tname, tan, tt, name in call.written, "tangent", shape)
                else:
                    given = tan  # (for its shape: ascontiguousarray makes a 0-d value (1,))
                    tan = float_array(tan, NP_DTYPES[t.elem.name],
                                      f"{self.name}: the tangent of '{name}'")
                    if tan.shape != shape:
                        raise ValueError(f"tangent of '{name}' must have shape {shape}, "
                                         f"got {np.shape(given)}")
                values[tname] = tan
            elif nbdirs is not None:
                dtype = NP_DTYPES[t.name if isinstance(t, ScalarType) else "f64"]
                given = np.shape(tan)
                tan = np.zeros(nbdirs, dtype=dtype) if tan is None else \
                    float_array(tan, dtype, f"{self.name}: the tangent of '{name}'")
                if tan.shape != (nbdirs,):
                    raise ValueError(f"tangent of '{name}' must have shape ({nbdirs},), "
                                     f"got {given}")
                values[tname] = tan
            else:
                values[tname] = 0.0 if tan is None else check_scalar(tname, tan, t, "tangent",
                                                                     self.name)
        check_overlap({k: v for k, v in values.items() if isinstance(v, np.ndarray)},
                      call.written_derived)
        ret, outs = call(values, nbdirs)
        value = self._package(ret, outs, call)
        primal_results = self._primal.fn.results
        tangent_results = []
        for r in primal_results:
            tname = tangent_name.get(r.name)
            tangent_results.append(outs[tname] if tname is not None else None)
        if not primal_results:
            return value, None
        tangent = tuple(tangent_results) if self._primal.fn.returns_tuple else tangent_results[0]
        return value, tangent

    def jvp(self, args: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
        """``(value, tangent of the value)``; tangents of written arrays are updated in place."""
        return self._tangent_call(self._forward, args, tangents, None)

    def jvp_vec(self, args: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
        """Many directions in one sweep: every tangent has a trailing axis of directions."""
        what = f"{self.name}.jvp_vec"
        call = self._check_tangents(self._vector, tangents, None, what, "vector-forward")
        nbdirs = self._directions(what, self._tangent_entries(call, tangents))
        if nbdirs is None:
            raise ValueError(f"{what}: at least one tangent must be given")
        return self._tangent_call(self._vector, args, tangents, nbdirs)

    def _tangent_entries(self, call: _Call, tangents: Sequence[Any]) -> dict[str, Any]:
        """The tangents that give a vector call its number of directions: those of the
        differentiated arguments, and any other that is not zeros (refused later)."""
        active = set(call.fn.tangent_of.values())
        return {f"the tangent of '{n}'": tan
                for n, tan in zip(self.param_names, tangents, strict=True)
                if n in active or not _all_zero(tan)}

    @staticmethod
    def _directions(what: str, entries: dict[str, Any]) -> int | None:
        """The number of directions of a vector call: the last extent of the first entry
        that is not None (each has a trailing axis of directions)."""
        for label, entry in entries.items():
            if entry is None:
                continue
            shape = np.shape(entry)
            if not shape:
                raise ValueError(f"{what}: {label} needs a trailing axis of directions "
                                 f"(shape (nbdirs,) for a scalar), got {type(entry).__name__}")
            return int(shape[-1])
        return None

    # -- reverse mode ------------------------------------------------------------------
    def _adjoint_call(self, call: _Call | None, args: Sequence[Any], ybar: Any,
                      out_bars: dict[str, Any] | None, nbdirs: int | None) -> tuple[Any, Any]:
        if call is None:
            mode = "vector-reverse" if nbdirs is not None else "reverse"
            raise self.not_loaded(mode)
        what = f"{self.name}.vjp" + ("_vec" if nbdirs is not None else "")
        if nbdirs is not None and nbdirs < 1:
            raise ValueError(f"{what}: adjoints need at least one direction (their last axis "
                             "is empty)")
        values = self._values(args, call.written, what)
        grads = self._adjoint_inputs(call, call.derived, values, ybar, out_bars, nbdirs, what)
        ret, outs = call(values, nbdirs)
        value = self._package(ret, outs, call)
        return value, self._adjoint_outputs(call.derived, grads, outs)

    def _adjoint_inputs(self, call: _Call, adjoint_name: dict[str, str], values: dict[str, Any],
                        ybar: Any, out_bars: dict[str, Any] | None, nbdirs: int | None,
                        what: str) -> dict[str, np.ndarray]:
        """Put the output adjoints (``ybar``, ``out_bars``) and zeroed input adjoint arrays in
        ``values``; ``adjoint_name`` maps primal names to adjoint names.  Returns the adjoint
        arrays by primal name."""
        extra = (nbdirs,) if nbdirs is not None else ()
        primal_fn = self._primal.fn
        results = primal_fn.results
        if not results and ybar is not None:
            raise ValueError(f"{what}: {self.name} returns nothing; pass None as ybar")
        self._check_out_bars(what, out_bars)
        if primal_fn.returns_tuple:  # None: no adjoint for any of the returned values
            bars = [None] * len(results) if ybar is None else self._tuple_bars(what, ybar)
        else:
            bars = [ybar]
        if primal_fn.returns_tuple and ybar is not None and len(bars) != len(results):
            raise ValueError(f"{what}: ybar needs one entry per returned value ({len(results)}), "
                             f"got {len(bars)}")
        for r, bar in zip(results, bars, strict=False):
            aname = adjoint_name.get(r.name)
            if aname is None:
                if not _zero_or_none(bar):
                    raise ValueError(f"{what}: the result '{r.name}' is not differentiated "
                                     "(not a float, or outside --of); pass None as its adjoint")
                continue
            t = r.type
            if nbdirs is not None:
                dtype = NP_DTYPES[t.name if isinstance(t, ScalarType) else "f64"]
                given = np.shape(bar)
                bar = np.zeros(nbdirs, dtype=dtype) if bar is None else \
                    float_array(bar, dtype, f"{what}: the adjoint of '{r.name}'")
                if bar.shape != (nbdirs,):
                    raise ValueError(f"{what}: the adjoint of '{r.name}' must have shape "
                                     f"({nbdirs},), got {given}")
                values[aname] = bar
            else:
                values[aname] = 0.0 if bar is None else check_scalar(aname, bar, t, "adjoint",
                                                                     self.name)
        out_bars = dict(out_bars or {})
        grads: dict[str, Any] = {}
        # (without out_bars, only the array parameters have anything to do here)
        for name, t in zip(self.param_names, self.param_types, strict=True) if out_bars else \
                self._array_params:
            aname = adjoint_name.get(name)
            given = out_bars.pop(name, None)
            if given is not None and name not in call.written:
                raise ValueError(f"{what}: out_bars names '{name}', which {self.name} does not "
                                 "write")
            if aname is None or not isinstance(t, ArrayType):
                if given is not None and not _all_zero(given):  # (an integer array, ...)
                    raise ValueError(f"{what}: out_bars names '{name}', whose contents on exit "
                                     "are not differentiated (not a float array, or outside "
                                     "--of); leave it out")
                continue
            if given is not None and aname in call.fn.unneeded_tangents:
                if not _all_zero(given):
                    raise ValueError(f"{what}: out_bars names '{name}', whose contents on exit "
                                     "are not differentiated (outside --of, and no dependent "
                                     "reads them); leave it out")
                given = None  # (zeros of any shape: nothing to add, as for other arrays)
            shape = values[name].shape + extra
            bar = np.zeros(shape, dtype=NP_DTYPES[t.elem.name])
            if given is not None:
                g = np.asarray(given)
                if g.shape != shape:
                    raise ValueError(f"{what}: out_bars['{name}'] must have shape {shape}, "
                                     f"got {g.shape}")
                bar[...] = float_array(g, bar.dtype.type, f"{what}: out_bars['{name}']")
            values[aname] = grads[name] = bar
        if out_bars:
            raise ValueError(f"{what}: out_bars names '{next(iter(out_bars))}', which is not an "
                             f"array argument of {self.name}")
        return grads

    def _tuple_bars(self, what: str, ybar: Any) -> list[Any]:
        """The entries of ``ybar`` for a function returning a tuple."""
        if not (is_sequence(ybar) or isinstance(ybar, np.ndarray) and ybar.ndim > 0):
            raise TypeError(f"{what}: {self.name} returns a tuple: give ybar as a tuple with one "
                            f"entry per returned value ({len(self._primal.fn.results)}), None "
                            f"where not differentiated; got {type(ybar).__name__}")
        return list(ybar)

    @staticmethod
    def _check_out_bars(what: str, out_bars: Any) -> None:
        if out_bars is not None and not isinstance(out_bars, Mapping):
            raise TypeError(f"{what}: out_bars must be a dict from the name of an array the "
                            f"function writes to its adjoint, got {type(out_bars).__name__}")

    def _adjoint_outputs(self, named: dict[str, str], arrays: dict[str, np.ndarray],
                         outs: dict[str, Any]) -> tuple[Any, ...]:
        """One entry per argument: its adjoint array, its scalar adjoint (``named`` maps primal
        names to adjoint names) from ``outs``, or None."""
        out: list[Any] = []
        for name, t in zip(self.param_names, self.param_types, strict=True):
            if name not in named:
                out.append(None)
            elif isinstance(t, ArrayType):
                out.append(arrays[name])
            else:
                out.append(outs[named[name]])
        return tuple(out)

    def vjp(self, args: Sequence[Any], ybar: Any,
            out_bars: dict[str, Any] | None = None) -> tuple[Any, tuple[Any, ...]]:
        """``(value, grads)``: ``grads`` has one entry per argument (None where not
        differentiated), the adjoint of the argument's value on entry for the output
        adjoint ``ybar`` (one per returned value for a tuple) and ``out_bars`` (adjoints of
        the arrays the function writes, zero if not given)."""
        return self._adjoint_call(self._reverse, args, ybar, out_bars, None)

    def vjp_vec(self, args: Sequence[Any], ybar: Any,
                out_bars: dict[str, Any] | None = None) -> tuple[Any, tuple[Any, ...]]:
        """Many adjoint directions in one sweep: ``ybar`` (and ``out_bars``, and the grads)
        have a trailing axis of directions."""
        what = f"{self.name}.vjp_vec"
        self._check_out_bars(what, out_bars)
        # (not the zeros of a result or an array without an adjoint, an int, an integer
        # array: they may have any shape; anything else there is refused below)
        adjoints = set(self._vector_reverse.fn.tangent_of.values()) if self._vector_reverse \
            else set()
        results = self._primal.fn.results
        if self._primal.fn.returns_tuple and ybar is not None:
            bars = {f"the adjoint of returned value {k}": bar
                    for k, bar in enumerate(self._tuple_bars(what, ybar))
                    if k >= len(results) or results[k].name in adjoints or not _all_zero(bar)}
        elif not results or results[0].name in adjoints or not _all_zero(ybar):
            bars = {"the adjoint of the returned value": ybar}
        else:
            bars = {}
        bars |= {f"out_bars['{n}']": bar for n, bar in (out_bars or {}).items()
                 if n in adjoints or not _all_zero(bar)}
        nbdirs = self._directions(what, bars)
        if nbdirs is None:
            raise ValueError(f"{what}: at least one adjoint must be given")
        return self._adjoint_call(self._vector_reverse, args, ybar, out_bars, nbdirs)

    # -- second order ------------------------------------------------------------------------
    def hvp(self, args: Sequence[Any], tangents: Sequence[Any], ybar: Any = 1.0,
            out_bars: dict[str, Any] | None = None) -> tuple[Any, ...]:
        """The Hessian-vector product ``H v`` of ``ybar . f`` at ``args`` for the direction
        ``v = tangents`` (one entry per argument, None where not differentiated), by the
        tangent of the adjoint (``f_b_d``).  One entry per argument, aligned with ``args``, None
        where not differentiated.  ``ybar`` and ``out_bars`` weight the outputs as in ``vjp``
        (the default 1.0 gives the Hessian of a function returning one float)."""
        return self._hvp_call(self._hvp, args, tangents, ybar, out_bars, None)

    def hvp_vec(self, args: Sequence[Any], tangents: Sequence[Any], ybar: Any = 1.0,
                out_bars: dict[str, Any] | None = None) -> tuple[Any, ...]:
        """Many directions in one sweep (``f_b_dv``): every tangent, and every entry of the
        result, has a trailing axis of directions."""
        what = f"{self.name}.hvp_vec"
        call = self._check_tangents(self._vector_hvp, tangents, None, what, "vector-hvp")
        nbdirs = self._directions(what, self._tangent_entries(call, tangents))
        if nbdirs is None:
            raise ValueError(f"{what}: at least one tangent must be given")
        return self._hvp_call(self._vector_hvp, args, tangents, ybar, out_bars, nbdirs)

    def _hvp_call(self, call: _Call | None, args: Sequence[Any], tangents: Sequence[Any],
                  ybar: Any, out_bars: dict[str, Any] | None,
                  nbdirs: int | None) -> tuple[Any, ...]:
        what = f"{self.name}.hvp" + ("_vec" if nbdirs is not None else "")
        call = self._check_tangents(call, tangents, nbdirs, what,
                                    "vector-hvp" if nbdirs is not None else "hvp")
        extra = () if nbdirs is None else (nbdirs,)
        values = self._values(args, call.written, what)
        fn = call.fn
        adjoint_named = {p: a for a, p in fn.adjoint_of.items()}
        adjoints = self._adjoint_inputs(call, adjoint_named, values, ybar, out_bars, None, what)
        tangent_named = call.derived
        for name, t, tan in zip(self.param_names, self.param_types, tangents, strict=True):
            tname = tangent_named.get(name)
            if tname is None or tname not in fn.param_names:
                if not _zero_or_none(tan):
                    raise ValueError(f"{what}: argument '{name}' is not differentiated "
                                     "(not a float, or outside --wrt); pass None as its tangent")
                continue
            shape = (values[name].shape if isinstance(t, ArrayType) else ()) + extra
            elem = t.elem if isinstance(t, ArrayType) else t
            assert isinstance(elem, ScalarType)
            if shape == ():
                values[tname] = 0.0 if tan is None else check_scalar(tname, tan, t, "tangent",
                                                                     self.name)
                continue
            given = np.shape(tan)
            tan = np.zeros(shape, dtype=NP_DTYPES[elem.name]) if tan is None else \
                float_array(tan, NP_DTYPES[elem.name],  # a copy: never written
                            f"{self.name}: the tangent of '{name}'", copy=True)
            if tan.shape != shape:
                raise ValueError(f"tangent of '{name}' must have shape {shape}, got {given}")
            values[tname] = tan
        # the tangents of the adjoint arrays: zero, incremented by f_b_d
        hv_arrays: dict[str, np.ndarray] = {}
        for name, adjoint in adjoints.items():
            aname = adjoint_named[name]
            hv_arrays[aname] = np.zeros(adjoint.shape + extra, dtype=adjoint.dtype)
            if aname in tangent_named:
                values[tangent_named[aname]] = hv_arrays[aname]
        _, outs = call(values, nbdirs)
        hv: list[Any] = []
        for name, t in zip(self.param_names, self.param_types, strict=True):
            aname = adjoint_named.get(name)
            if aname is None:
                hv.append(None)
            elif isinstance(t, ArrayType):
                hv.append(hv_arrays[aname])
            elif aname in tangent_named:
                hv.append(outs[tangent_named[aname]])
            else:  # no tangent of the adjoint: the gradient does not depend on the inputs
                hv.append(0.0 if nbdirs is None else np.zeros(nbdirs))
        return tuple(hv)

    def hessian(self, *args: Any) -> np.ndarray:
        """The Hessian of a function returning one float, as an ``(n, n)`` array over its
        differentiated arguments flattened in order (a scalar is one entry, an array its
        elements in C order): one ``hvp_vec`` call with the n unit directions when the module
        was loaded with ``vector-hvp`` (with ``-DADGEN_NBDIRS=N``, calls of N directions),
        else one ``hvp`` call per column."""
        fn = self._primal.fn
        if fn.returns_tuple or len(fn.results) != 1 or not (
                isinstance(fn.results[0].type, ScalarType) and fn.results[0].type.is_float):
            raise TypeError(f"{self.name}.hessian needs a function returning one float; use hvp")
        call = self._vector_hvp or self._hvp
        if call is None:
            raise self.not_loaded("vector-hvp", "hvp")
        self._return_differentiated("hessian", call)
        # the arguments checked as a call checks them (their count, contiguous arrays, written
        # ones writable and apart), before the copies each column is computed at
        self._values(args, self._primal.written)
        tangent_of = call.fn.tangent_of
        active = [i for i, n in enumerate(self.param_names) if n in tangent_of.values()]
        sizes = [int(np.size(args[i])) for i in active]
        n = sum(sizes)
        if n == 0:  # no differentiated element (empty arrays): an empty Hessian
            return np.zeros((0, 0))
        # the unit directions, split by argument: argument i gets rows off..off+size of eye(n)
        eye = np.eye(n)
        seeds: list[Any] = [None] * len(args)
        off = 0
        for i, size in zip(active, sizes, strict=True):
            block = eye[off:off + size]
            seeds[i] = block.reshape(np.shape(args[i]) + (n,)) if isinstance(args[i], np.ndarray) \
                else block[0]
            off += size
        h = np.zeros((n, n))
        if self._vector_hvp is not None:
            # a build that fixes the number of directions (-DADGEN_NBDIRS) takes them that
            # many at a time, the last call padded with zero directions; else as many as the
            # stack holds
            step = self._vector_hvp.fixed_nbdirs or \
                min(n, self._vector_hvp.max_directions() or n)
            for start in range(0, n, step):
                width = min(step, n - start)

                def cut(seed: Any) -> Any:
                    if seed is None:
                        return None
                    part = np.asarray(seed)[..., start:start + width]
                    pad = np.zeros(part.shape[:-1] + (step - width,))
                    return np.ascontiguousarray(np.concatenate([part, pad], axis=-1))

                hv = self.hvp_vec([a.copy() if isinstance(a, np.ndarray) else a for a in args],
                                  [cut(seed) for seed in seeds])
                h[:, start:start + width] = np.concatenate(
                    [np.asarray(hv[i], dtype=np.float64).reshape(-1, step) for i in active]
                )[:, :width]
            return h
        for col in range(n):
            column = [None if s is None else np.ascontiguousarray(np.asarray(s)[..., col])
                      if isinstance(args[i], np.ndarray) else float(np.asarray(s)[col])
                      for i, s in enumerate(seeds)]
            hv = self.hvp([a.copy() if isinstance(a, np.ndarray) else a for a in args], column)
            h[:, col] = np.concatenate([np.ravel(np.asarray(hv[i], dtype=np.float64))
                                        for i in active])
        return h

    def grad(self, *args: Any) -> tuple[Any, ...]:
        """The gradient of a scalar return value: ``vjp(args, 1.0)[1]``."""
        fn = self._primal.fn
        if fn.returns_tuple or len(fn.results) != 1 or not (
                isinstance(fn.results[0].type, ScalarType) and fn.results[0].type.is_float):
            raise TypeError(f"{self.name}.grad needs a function returning one float; use vjp")
        self._return_differentiated("grad", self._reverse)
        return self.vjp(args, 1.0)[1]

    def _return_differentiated(self, what: str, call: _Call | None) -> None:
        """A ``TypeError`` when the module was loaded with an ``of`` leaving out the return
        value: there is no gradient (Hessian) of it (vjp spoke of an adjoint to pass as None)."""
        if call is not None and "return" not in call.fn.tangent_of.values() and \
                "return" not in call.fn.adjoint_of.values():
            raise TypeError(f"{self.name}.{what}: the return value is not among the dependents "
                            "(the module was loaded with an of= that leaves out 'return'); use "
                            "vjp with out_bars")
