"""Device memory for the Python binding of the CUDA target, through the CUDA runtime.

A generated CUDA function takes device pointers.  The binding passes an object
with ``__cuda_array_interface__`` (CuPy, PyTorch, Numba) as its pointer, and
copies a NumPy array to the device before the call and back after it when the
function writes it (slower: two transfers per call).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import glob
import os
from typing import Any

import numpy as np

H2D, D2H = 1, 2  # cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost


class CudaError(RuntimeError):
    """A CUDA runtime call failed (no GPU, no driver, out of memory...)."""


@functools.lru_cache(maxsize=1)
def runtime() -> ctypes.CDLL:
    """libcudart, from the CUDA toolkit nvcc belongs to (or the library path)."""
    names = [ctypes.util.find_library("cudart")]
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            names += sorted(glob.glob(os.path.join(root, "lib*", "libcudart.so*")))
    for name in names:
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                continue
    raise CudaError("the CUDA runtime (libcudart) was not found: install the CUDA toolkit, or "
                    "load the module with emulate=True to run it on the CPU")


def _check(status: int, what: str) -> None:
    if status != 0:
        lib = runtime()
        lib.cudaGetErrorString.restype = ctypes.c_char_p
        message = lib.cudaGetErrorString(status).decode()
        raise CudaError(f"{what} failed: {message}")


def device_count() -> int:
    """The number of GPUs the CUDA runtime sees (0 when there is no GPU or no runtime)."""
    try:
        lib = runtime()
    except CudaError:
        return 0
    count = ctypes.c_int(0)
    return count.value if lib.cudaGetDeviceCount(ctypes.byref(count)) == 0 else 0


def gpu_problem() -> str | None:
    """Why the kernels cannot run on a GPU here (no CUDA runtime, no driver or one too old
    for the runtime, no GPU), or None when they can."""
    try:
        lib = runtime()
    except CudaError:
        return "the CUDA runtime (libcudart) was not found"
    count = ctypes.c_int(0)
    status = lib.cudaGetDeviceCount(ctypes.byref(count))
    if status != 0:
        lib.cudaGetErrorString.restype = ctypes.c_char_p
        return f"cudaGetDeviceCount failed: {lib.cudaGetErrorString(status).decode()}"
    return None if count.value > 0 else "the CUDA runtime sees no GPU"


def interface_pointer(value: Any) -> int | None:
    """The device pointer of an object with ``__cuda_array_interface__``, else None."""
    iface = getattr(value, "__cuda_array_interface__", None)
    return None if iface is None else int(iface["data"][0])


class Transfers:
    """The device copies of the NumPy arrays of one call."""

    def __init__(self) -> None:
        self.copies: list[tuple[np.ndarray, ctypes.c_void_p, bool]] = []

    def pointer(self, value: Any, written: bool) -> int:
        """A device pointer for ``value``: its own, or that of a copy made now."""
        ptr = interface_pointer(value)
        if ptr is not None:
            return ptr
        array = np.ascontiguousarray(value)
        lib = runtime()
        dev = ctypes.c_void_p()
        _check(lib.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(max(array.nbytes, 1))),
               "cudaMalloc")
        self.copies.append((value, dev, written))
        _check(lib.cudaMemcpy(dev, ctypes.c_void_p(array.ctypes.data),
                              ctypes.c_size_t(array.nbytes), H2D), "cudaMemcpy to the device")
        return int(dev.value or 0)

    def finish(self) -> None:
        """Copy the written arrays back and free every copy."""
        lib = runtime()
        try:
            for array, dev, written in self.copies:
                if written:
                    _check(lib.cudaMemcpy(ctypes.c_void_p(array.ctypes.data), dev,
                                          ctypes.c_size_t(array.nbytes), D2H),
                           "cudaMemcpy from the device")
        finally:
            for _, dev, _ in self.copies:
                lib.cudaFree(dev)
            self.copies = []
