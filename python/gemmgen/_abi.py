"""The C ABI (capi/gemmgen.h) as ctypes sees it: the library, its structs and its functions."""

import ctypes
import os

DTYPES = {"f16": 0, "bf16": 1, "f32": 2, "e4m3": 3, "e5m2": 4}
ARCHS = {"sm_90a": 0, "sm_100a": 1}
SOURCES = {"dense": 0, "masked": 1, "contiguous": 2, "varlen_k": 3}
SCALES = {"default": 0, "none": 1, "tensor": 2, "row": 3, "1x128": 4, "128x128": 5}
BIASES = {None: 0, "cols": 1, "rows": 2}
ACTIVATIONS = {None: 0, "relu": 1, "gelu": 2, "silu": 3}

USER_ERROR, CUDA_ERROR = 2, 4


class CProblem(ctypes.Structure):
    _fields_ = [
        ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
        ("in_", ctypes.c_int), ("out", ctypes.c_int),
        ("a_m_major", ctypes.c_int), ("b_n_major", ctypes.c_int), ("d_m_major", ctypes.c_int),
        ("lda", ctypes.c_int64), ("ldb", ctypes.c_int64), ("ldd", ctypes.c_int64),
        ("batch", ctypes.c_int64),
        ("stride_a", ctypes.c_int64), ("stride_b", ctypes.c_int64), ("stride_d", ctypes.c_int64),
        ("arch", ctypes.c_int),
        ("schedule", ctypes.c_char_p),
        ("source", ctypes.c_int),
        ("expected_m", ctypes.c_int64),
        ("alpha", ctypes.c_double), ("beta", ctypes.c_double),
        ("bias", ctypes.c_int), ("activation", ctypes.c_int),
        ("scale_a", ctypes.c_int), ("scale_b", ctypes.c_int),
        ("scale_a_k_major", ctypes.c_int), ("scale_b_mn_major", ctypes.c_int),
        ("schedule_text", ctypes.c_char_p),
    ]


class CTensors(ctypes.Structure):
    _fields_ = [(name, ctypes.c_void_p) for name in ("a", "b", "d", "c", "bias", "scale_a", "scale_b", "groups")]


def _library_path():
    explicit = os.environ.get("GEMMGEN_LIBRARY")
    if explicit:
        return explicit
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        # <prefix>/lib/python3/dist-packages/gemmgen or <prefix>/lib/gemmgen/python/gemmgen -> <prefix>/lib
        os.path.join(here, "..", "..", "..", "libgemmgen_c.so"),
        os.path.join(here, "..", "..", "libgemmgen_c.so"),
        os.path.join(here, "..", "..", "build", "capi", "libgemmgen_c.so"),  # the source tree's python/
    ]
    for c in candidates:
        if os.path.exists(c):
            return os.path.normpath(c)
    raise OSError("gemmgen: libgemmgen_c.so not found; set GEMMGEN_LIBRARY to its path (looked in: " +
                  ", ".join(os.path.normpath(c) for c in candidates) + ")")


def _declare(lib):
    problem_p = ctypes.POINTER(CProblem)
    lib.gg_problem_init.argtypes = [problem_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    lib.gg_problem_init.restype = None
    lib.gg_version.restype = ctypes.c_char_p
    lib.gg_last_error_rule.restype = ctypes.c_char_p
    lib.gg_last_error_message.restype = ctypes.c_char_p
    for name in ("gg_explain", "gg_emit"):
        f = getattr(lib, name)
        f.argtypes = [problem_p, ctypes.POINTER(ctypes.c_void_p)]
        f.restype = ctypes.c_int
    lib.gg_free.argtypes = [ctypes.c_void_p]
    lib.gg_free.restype = None
    lib.gg_gpu_available.restype = ctypes.c_int
    lib.gg_gemm.argtypes = [problem_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    lib.gg_gemm.restype = ctypes.c_int
    lib.gg_gemm_ex.argtypes = [problem_p, ctypes.POINTER(CTensors), ctypes.c_void_p]
    lib.gg_gemm_ex.restype = ctypes.c_int
    lib.gg_loaded_kernels.restype = ctypes.c_int64
    return lib


_lib = None


def lib():
    global _lib
    if _lib is None:
        _lib = _declare(ctypes.CDLL(_library_path()))
    return _lib
