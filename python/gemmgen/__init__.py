"""gemmgen from Python: the C ABI (libgemmgen_c.so, capi/gemmgen.h) through ctypes.

Nothing outside the standard library is imported: tensors are read through
``__cuda_array_interface__`` (PyTorch, CuPy, JAX and Numba expose it), so any of them works and
none is required. The library is found through ``GEMMGEN_LIBRARY`` (a path), else beside this
package in an install prefix (``<prefix>/lib``), else the build tree's ``build/capi``.

    import torch, gemmgen
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    d = torch.empty(4096, 4096, device="cuda", dtype=torch.bfloat16)
    gemmgen.gemm_nt(a, b, out=d)  # d = a @ b.T
"""

import ctypes
import os
import sys

__all__ = ["CompileError", "CudaError", "Error", "Problem", "explain", "emit", "gemm", "gemm_nt", "gpu_available",
           "version"]

_DTYPES = {"f16": 0, "bf16": 1, "f32": 2, "e4m3": 3, "e5m2": 4}
_ARCHS = {"sm_90a": 0, "sm_100a": 1}
# __cuda_array_interface__ typestrs of the element types the ABI takes
_TYPESTRS = {"<f2": "f16", "<f4": "f32", "<V2": "bf16"}


class Error(Exception):
    """A gemmgen failure: ``rule`` names the rule (docs/errors.md), ``str()`` is the message."""

    def __init__(self, rule, message):
        super().__init__(message)
        self.rule = rule


class CompileError(Error):
    """gemmgen refused the problem or schedule (a user error)."""


class CudaError(Error):
    """CUDA refused a launch, or there is no GPU."""


class _Problem(ctypes.Structure):
    _fields_ = [
        ("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64),
        ("in_", ctypes.c_int), ("out", ctypes.c_int),
        ("a_m_major", ctypes.c_int), ("b_n_major", ctypes.c_int), ("d_m_major", ctypes.c_int),
        ("lda", ctypes.c_int64), ("ldb", ctypes.c_int64), ("ldd", ctypes.c_int64),
        ("batch", ctypes.c_int64),
        ("stride_a", ctypes.c_int64), ("stride_b", ctypes.c_int64), ("stride_d", ctypes.c_int64),
        ("arch", ctypes.c_int),
        ("schedule", ctypes.c_char_p),
    ]


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


_lib = None


def _c():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(_library_path())
        lib.gg_problem_init.argtypes = [ctypes.POINTER(_Problem), ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
        lib.gg_problem_init.restype = None
        lib.gg_version.restype = ctypes.c_char_p
        lib.gg_last_error_rule.restype = ctypes.c_char_p
        lib.gg_last_error_message.restype = ctypes.c_char_p
        for name in ("gg_explain", "gg_emit"):
            f = getattr(lib, name)
            f.argtypes = [ctypes.POINTER(_Problem), ctypes.POINTER(ctypes.c_void_p)]
            f.restype = ctypes.c_int
        lib.gg_free.argtypes = [ctypes.c_void_p]
        lib.gg_free.restype = None
        lib.gg_gpu_available.restype = ctypes.c_int
        lib.gg_gemm.argtypes = [ctypes.POINTER(_Problem), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                ctypes.c_void_p]
        lib.gg_gemm.restype = ctypes.c_int
        _lib = lib
    return _lib


def _raise_last(status):
    lib = _c()
    rule = lib.gg_last_error_rule().decode()
    message = lib.gg_last_error_message().decode()
    raise (CompileError if status == 2 else CudaError if status == 4 else Error)(rule, message)


def _choice(table, value, what):
    if value not in table:
        raise CompileError("unknown-" + what, "%s %r: legal are %s" % (what, value, ", ".join(sorted(table))))
    return table[value]


class Problem:
    """D[M,N] = A[M,K] * B[N,K]^T: sizes, types, layouts (``a_m_major``: A stored [K,M];
    ``b_n_major``: B stored [K,N]; ``d_m_major``: D column-major), leading dimensions (0: dense),
    a batch, the target and the schedule (None or "auto": the planner's; a built-in such as "v10")."""

    def __init__(self, m, n, k, dtype="bf16", out_dtype=None, a_m_major=False, b_n_major=False,
                 d_m_major=False, lda=0, ldb=0, ldd=0, batch=1, stride_a=-1, stride_b=-1, stride_d=-1,
                 arch="sm_90a", schedule=None):
        self.m, self.n, self.k = m, n, k
        self.dtype = dtype
        self.out_dtype = out_dtype or ("bf16" if dtype in ("e4m3", "e5m2") else dtype)
        self.a_m_major, self.b_n_major, self.d_m_major = a_m_major, b_n_major, d_m_major
        self.lda, self.ldb, self.ldd = lda, ldb, ldd
        self.batch = batch
        self.stride_a, self.stride_b, self.stride_d = stride_a, stride_b, stride_d
        self.arch = arch
        self.schedule = schedule

    def _c(self):
        p = _Problem()
        _c().gg_problem_init(ctypes.byref(p), self.m, self.n, self.k)
        p.in_ = _choice(_DTYPES, self.dtype, "dtype")
        p.out = _choice(_DTYPES, self.out_dtype, "dtype")
        p.a_m_major, p.b_n_major, p.d_m_major = int(self.a_m_major), int(self.b_n_major), int(self.d_m_major)
        p.lda, p.ldb, p.ldd = self.lda, self.ldb, self.ldd
        p.batch = self.batch
        p.stride_a, p.stride_b, p.stride_d = self.stride_a, self.stride_b, self.stride_d
        p.arch = _choice(_ARCHS, self.arch, "arch")
        p.schedule = self.schedule.encode() if self.schedule else None
        return p


def _text(function, problem):
    p = problem._c()
    out = ctypes.c_void_p()
    status = function(ctypes.byref(p), ctypes.byref(out))
    if status != 0:
        _raise_last(status)
    try:
        return ctypes.string_at(out.value).decode()
    finally:
        _c().gg_free(out)


def explain(problem):
    """The plan's loop nests, resources and checks, as ``gemmgen explain`` prints them."""
    return _text(_c().gg_explain, problem)


def emit(problem):
    """The standalone CUDA source of the plan's kernel, as ``gemmgen emit`` writes it."""
    return _text(_c().gg_emit, problem)


def version():
    return _c().gg_version().decode()


def gpu_available():
    return bool(_c().gg_gpu_available())


_TORCH_DTYPES = {"torch.float16": "f16", "torch.bfloat16": "bf16", "torch.float32": "f32"}
_SIZES = {"f16": 2, "bf16": 2, "f32": 4}


_torch_dtype_names = {}  # torch dtype object -> our name (str() of a dtype costs a microsecond)


def _torch_view(t, name):
    """A PyTorch tensor read by duck typing (its __cuda_array_interface__ refuses bf16): no import."""
    dtype = _torch_dtype_names.get(t.dtype)
    if dtype is None:
        dtype = _TORCH_DTYPES.get(str(t.dtype))
        if dtype is None:
            raise CompileError("unknown-dtype", "%s: element type %s; legal are f16, bf16 and f32 here"
                               % (name, t.dtype))
        _torch_dtype_names[t.dtype] = dtype
    if not t.is_cuda:
        raise CompileError("not-a-cuda-tensor", "%s: a tensor on %s, not on the GPU" % (name, t.device))
    shape, strides = t.shape, t.stride()
    if len(shape) != 2:
        raise CompileError("tensor-shape", "%s: shape %s; gemmgen takes 2-D tensors" % (name, tuple(shape)))
    return t.data_ptr(), shape[0], shape[1], strides[0], strides[1], dtype, "%s elements" % (strides,)


def _view(t, name):
    """(pointer, rows, cols, row stride, column stride (elements), dtype, strides as given) of a 2-D
    CUDA tensor: a PyTorch tensor's, or any other's from __cuda_array_interface__."""
    if all(hasattr(t, a) for a in ("data_ptr", "stride", "is_cuda", "dtype", "dim")):
        return _torch_view(t, name)
    iface = getattr(t, "__cuda_array_interface__", None)
    if iface is None:
        raise CompileError("not-a-cuda-tensor", "%s: a %s is not a CUDA tensor (it has no __cuda_array_interface__; "
                           "pass a PyTorch, CuPy or JAX array on the GPU)" % (name, type(t).__name__))
    shape = tuple(iface["shape"])
    if len(shape) != 2:
        raise CompileError("tensor-shape", "%s: shape %s; gemmgen takes 2-D tensors" % (name, shape))
    dtype = _TYPESTRS.get(iface["typestr"])
    if dtype is None:
        raise CompileError("unknown-dtype", "%s: element type %s; legal are f16, bf16 and f32 here"
                           % (name, iface["typestr"]))
    size = _SIZES[dtype]
    strides = iface.get("strides")
    rows, cols = shape
    if strides is None:  # C-contiguous
        return iface["data"][0], rows, cols, cols, 1, dtype, "C-contiguous"
    if strides[0] % size or strides[1] % size:
        raise CompileError("tensor-layout", "%s: strides %s bytes are not whole %s elements" % (name, strides, dtype))
    return iface["data"][0], rows, cols, strides[0] // size, strides[1] // size, dtype, "%s bytes" % (tuple(strides),)


def _majors(view, name):
    """How a [rows, cols] view lies: (cols contiguous, leading dimension), the leading dimension the
    distance between its stored rows (0 where dense)."""
    _, rows, cols, row_stride, col_stride, _, given = view
    if col_stride == 1 or cols == 1:
        return True, (0 if row_stride == cols or rows == 1 else row_stride)
    if row_stride == 1 or rows == 1:
        return False, (0 if col_stride == rows else col_stride)
    raise CompileError("tensor-layout", "%s: neither dimension is contiguous (strides %s); pass .contiguous()"
                       % (name, given))


_problems = {}  # a call's signature -> its C problem struct


def _torch_stream(torch):
    """PyTorch's current stream on the current device, as a raw handle: torch's own private getter
    where it has one (what Triton calls; torch.cuda.current_stream() costs several microseconds),
    else the public API."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(torch.cuda.current_device())
    return torch.cuda.current_stream().cuda_stream


def _launch(av, bv_nk, dv, b_k_contiguous, b_ld, schedule, arch, stream, what, b_given, b_wanted):
    """One product: `bv_nk` is B as gemmgen reads it, [N,K]; `b_given` and `b_wanted` name b's shape
    as the caller passed it and as it must be, for messages."""
    pa, m, k, _, _, dtype, _ = av
    pb, n, kb, _, _, dtype_b, _ = bv_nk
    pd, md, nd, _, _, out_dtype, _ = dv
    if dtype_b != dtype or kb != k or (md, nd) != (m, n):
        raise CompileError("tensor-shape", "%s: a %dx%d %s, b %s %s, out %dx%d: need a [M,K], b %s of one dtype and "
                           "out [M,N]" % (what, m, k, dtype, b_given, dtype_b, md, nd, b_wanted))
    a_k_contiguous, lda = _majors(av, "a")
    d_rows_contiguous, ldd = _majors(dv, "out")
    if not gpu_available():
        raise CudaError("cuda", "%s: no GPU or no driver" % what)
    if stream is None and "torch" in sys.modules:  # the caller's current stream, as PyTorch's own ops use it
        stream = _torch_stream(sys.modules["torch"])
    # One C problem per signature, built once (a cached call's host time is mostly this side's).
    key = (m, n, k, dtype, out_dtype, a_k_contiguous, b_k_contiguous, d_rows_contiguous, lda, b_ld, ldd, arch, schedule)
    p = _problems.get(key)
    if p is None:
        p = Problem(m, n, k, dtype, out_dtype, a_m_major=not a_k_contiguous, b_n_major=not b_k_contiguous,
                    d_m_major=not d_rows_contiguous, lda=lda, ldb=b_ld, ldd=ldd, arch=arch, schedule=schedule)._c()
        _problems[key] = p
    status = _c().gg_gemm(ctypes.byref(p), pa, pb, pd, stream or 0)
    if status != 0:
        _raise_last(status)


def gemm(a, b, out, schedule=None, arch="sm_90a", stream=None):
    """out[M,N] = a[M,K] @ b[K,N] on CUDA tensors of one dtype (f16, bf16, f32 accumulating in fp32;
    out f16, bf16 or f32), each row- or column-major as its strides say (a transposed view is read
    in place), leading dimensions from the strides. ``out`` is required: gemmgen allocates nothing.
    ``stream``: a CUDA stream handle (int); by default PyTorch's current stream when torch is loaded,
    else the default stream."""
    av, bv, dv = _view(a, "a"), _view(b, "b"), _view(out, "out")
    # b [K,N] as gemmgen's B [N,K]: b's rows (k) contiguous means B N-major
    pb, kb, n, row_stride, col_stride, dtype_b, given = bv
    b_nk = (pb, n, kb, col_stride, row_stride, dtype_b, given)
    b_k_contiguous, ldb = _majors(b_nk, "b")
    _launch(av, b_nk, dv, b_k_contiguous, ldb, schedule, arch, stream, "gemm", "%dx%d" % (kb, n), "[K,N]")


def gemm_nt(a, b, out, schedule=None, arch="sm_90a", stream=None):
    """out[M,N] = a[M,K] @ b[N,K].T (DeepGEMM's NT orientation), layouts as gemm's."""
    av, bv, dv = _view(a, "a"), _view(b, "b"), _view(out, "out")
    b_k_contiguous, ldb = _majors(bv, "b")
    _launch(av, bv, dv, b_k_contiguous, ldb, schedule, arch, stream, "gemm_nt", "%dx%d" % (bv[1], bv[2]), "[N,K]")


