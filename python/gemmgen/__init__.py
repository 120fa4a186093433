"""gemmgen from Python: the C ABI (libgemmgen_c.so, capi/gemmgen.h) through ctypes.

Nothing outside the standard library is imported: a PyTorch tensor is read by duck typing, any
other through ``__cuda_array_interface__`` (CuPy, Numba, JAX) or DLPack (``__dlpack__``), so any of
them works and none is required. The library is found through ``GEMMGEN_LIBRARY`` (a path), else
beside this package in an install prefix (``<prefix>/lib``), else the build tree's ``build/capi``.

    import torch, gemmgen
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    d = gemmgen.gemm_nt(a, b)  # d = a @ b.T, allocated by torch

Functions follow DeepGEMM's conventions: ``gemm_nt`` (B given [N,K]), ``fp8_gemm_nt((a, sa), (b,
sb), d)``, ``m_grouped_gemm_nt_contiguous(a, b, d, group_offsets)``,
``m_grouped_gemm_nt_masked(a, b, d, masked_m, expected_m)`` and their FP8 forms; ``gemm`` is
``a @ b``. Every call launches on the caller's stream (PyTorch's current one when torch is
loaded) and, after a configuration's first call, allocates and synchronizes nothing, so CUDA graphs
capture it.
"""

import ctypes
import sys

from . import _abi
from ._errors import CompileError, CudaError, Error
from ._tensors import SIZES, strides_text, view

__all__ = ["CompileError", "CudaError", "Error", "Problem", "Schedule", "explain", "emit", "gemm", "gemm_nt", "fp8_gemm_nt",
           "m_grouped_gemm_nt_contiguous", "m_grouped_gemm_nt_masked", "m_grouped_fp8_gemm_nt_contiguous",
           "m_grouped_fp8_gemm_nt_masked", "k_grouped_gemm_tn_contiguous", "gpu_available", "loaded_kernels", "version"]


def _raise_last(status):
    lib = _abi.lib()
    rule = lib.gg_last_error_rule().decode()
    message = lib.gg_last_error_message().decode()
    raise (CompileError if status == _abi.USER_ERROR else CudaError if status == _abi.CUDA_ERROR else Error)(
        rule, message)


def _choice(table, value, what, rule=None):
    if value not in table:
        raise CompileError(rule or "unknown-" + what, "%s %r: legal are %s" % (what, value,
                                                                      ", ".join(sorted(str(k) for k in table))))
    return table[value]


class Schedule:
    """A schedule in gemmgen's text form (what ``gemmgen print`` writes; dsl/schedule_text.h): its
    directives schedule the problem it is passed with (``schedule=`` of a call or a ``Problem``).
    The file's ``problem`` line keeps its orientation only (sizes and types are the call's); its
    ``epilogue`` lines apply where the call names no epilogue. Errors name the file's line."""

    def __init__(self, text):
        self.text = text

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls(f.read())

    def __eq__(self, other):
        return isinstance(other, Schedule) and other.text == self.text

    def __hash__(self):
        return hash(self.text)

    def __repr__(self):
        return "gemmgen.Schedule(%d directive lines)" % sum(
            1 for line in self.text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


class Problem:
    """D[M,N] = activation(alpha * A[M,K] * B[N,K]^T + beta * C + bias): sizes, types, layouts
    (``a_m_major``: A stored [K,M]; ``b_n_major``: B stored [K,N]; ``d_m_major``: D column-major),
    leading dimensions (0: dense), a batch (the group count for a grouped ``source``), the target,
    the schedule (None or "auto": the planner's; a built-in such as "v10"; a ``Schedule``), ``expected_m`` (plan for
    that many rows, serve every M), the epilogue (``bias``: "cols" or "rows"; ``activation``:
    "relu", "gelu", "silu") and FP8 factors' granularities ("default": the target's recipe)."""

    def __init__(self, m, n, k, dtype="bf16", out_dtype=None, a_m_major=False, b_n_major=False,
                 d_m_major=False, lda=0, ldb=0, ldd=0, batch=1, stride_a=-1, stride_b=-1, stride_d=-1,
                 arch="sm_90a", schedule=None, source="dense", expected_m=0, alpha=1.0, beta=0.0, bias=None,
                 activation=None, scale_a="default", scale_b="default", scale_a_k_major=False,
                 scale_b_mn_major=False):
        self.m, self.n, self.k = m, n, k
        self.dtype = dtype
        self.out_dtype = out_dtype or ("bf16" if dtype in ("e4m3", "e5m2") else dtype)
        self.a_m_major, self.b_n_major, self.d_m_major = a_m_major, b_n_major, d_m_major
        self.lda, self.ldb, self.ldd = lda, ldb, ldd
        self.batch = batch
        self.stride_a, self.stride_b, self.stride_d = stride_a, stride_b, stride_d
        self.arch = arch
        self.schedule = schedule
        self.source = source
        self.expected_m = expected_m
        self.alpha, self.beta = alpha, beta
        self.bias, self.activation = bias, activation
        self.scale_a, self.scale_b = scale_a, scale_b
        self.scale_a_k_major, self.scale_b_mn_major = scale_a_k_major, scale_b_mn_major

    def _c(self):
        p = _abi.CProblem()
        _abi.lib().gg_problem_init(ctypes.byref(p), self.m, self.n, self.k)
        p.in_ = _choice(_abi.DTYPES, self.dtype, "dtype")
        p.out = _choice(_abi.DTYPES, self.out_dtype, "dtype")
        p.a_m_major, p.b_n_major, p.d_m_major = int(self.a_m_major), int(self.b_n_major), int(self.d_m_major)
        p.lda, p.ldb, p.ldd = self.lda, self.ldb, self.ldd
        p.batch = self.batch
        p.stride_a, p.stride_b, p.stride_d = self.stride_a, self.stride_b, self.stride_d
        p.arch = _choice(_abi.ARCHS, self.arch, "arch")
        # the struct keeps the bytes it is given alive (ctypes holds c_char_p's object)
        if isinstance(self.schedule, Schedule):
            p.schedule_text = self.schedule.text.encode()
        else:
            p.schedule = self.schedule.encode() if self.schedule else None
        p.source = _choice(_abi.SOURCES, self.source, "source")
        p.expected_m = self.expected_m
        p.alpha, p.beta = self.alpha, self.beta
        p.bias = _choice(_abi.BIASES, self.bias, "bias", "bad-epilogue")
        p.activation = _choice(_abi.ACTIVATIONS, self.activation, "activation", "bad-epilogue")
        p.scale_a = _choice(_abi.SCALES, self.scale_a, "scale", "bad-scale")
        p.scale_b = _choice(_abi.SCALES, self.scale_b, "scale", "bad-scale")
        p.scale_a_k_major, p.scale_b_mn_major = int(self.scale_a_k_major), int(self.scale_b_mn_major)
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
        _abi.lib().gg_free(out)


def explain(problem):
    """The plan's loop nests, resources and checks, as ``gemmgen explain`` prints them."""
    return _text(_abi.lib().gg_explain, problem)


def emit(problem):
    """The standalone CUDA source of the plan's kernel, as ``gemmgen emit`` writes it."""
    return _text(_abi.lib().gg_emit, problem)


def version():
    return _abi.lib().gg_version().decode()


_gpu = None


def gpu_available():
    global _gpu
    if not _gpu:  # a GPU found stays found; none found is asked again
        _gpu = bool(_abi.lib().gg_gpu_available())
    return _gpu


def loaded_kernels():
    """How many kernels this process has loaded (each JIT-compiled or read from the disk cache)."""
    return _abi.lib().gg_loaded_kernels()


# ---- tensors as matrices -------------------------------------------------------------------------

def _matrices(v, name, batched=True):
    """(pointer, batch, batch stride (None for 2-D), rows, cols, row stride, col stride) of a 2-D
    view, or of a 3-D one's matrices."""
    shape, strides = v[1], v[2]
    if len(shape) == 2:
        return v[0], 1, None, shape[0], shape[1], strides[0], strides[1]
    if len(shape) == 3 and batched:
        return v[0], shape[0], strides[0], shape[1], shape[2], strides[1], strides[2]
    raise CompileError("tensor-shape", "%s: shape %s; gemmgen takes 2-D tensors%s" % (
        name, tuple(shape), " or 3-D batches of them" if batched else ""))


def _majors(rows, cols, row_stride, col_stride, name, v):
    """How a [rows, cols] matrix lies: (cols contiguous, leading dimension), the leading dimension
    the distance between its stored rows (0 where dense)."""
    if col_stride == 1 or cols == 1:
        return True, (0 if row_stride == cols or rows == 1 else row_stride)
    if row_stride == 1 or rows == 1:
        return False, (0 if col_stride == rows else col_stride)
    raise CompileError("tensor-layout", "%s: neither dimension is contiguous (strides %s); pass .contiguous()"
                       % (name, strides_text(v)))


def _dense(v, name, what):
    """Refuses a view that is not dense row-major (C-contiguous)."""
    step = 1
    for extent, stride in zip(reversed(v[1]), reversed(v[2])):
        if extent != 1 and stride != step:
            raise CompileError("tensor-layout", "%s: %s must be dense row-major (C-contiguous); strides %s for shape "
                               "%s; pass .contiguous()" % (what, name, strides_text(v), tuple(v[1])))
        step *= extent


def _need(ok, what, message):
    if not ok:
        raise CompileError("tensor-shape", "%s: %s" % (what, message))


_current_stream = None  # PyTorch's current-stream getter, made once torch is loaded


def _torch_stream_getter():
    """torch's own raw getters where it has them (what Triton calls; torch.cuda.current_stream()
    costs microseconds), else the public API."""
    global _current_stream
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    device = getattr(torch._C, "_cuda_getDevice", None)
    if raw is not None and device is not None:
        _current_stream = lambda: raw(device())  # noqa: E731
    else:
        _current_stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    return _current_stream


def _stream(stream):
    """The stream a call launches on: the caller's, else PyTorch's current one when torch is
    loaded, else the default stream (0)."""
    if stream is not None:
        return stream
    getter = _current_stream or _torch_stream_getter()
    return getter() if getter is not None else 0


_TORCH_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32"}


def _allocate(like, shape, dtype, what):
    """An output for a caller who passed none: through the caller's framework (PyTorch), never ours."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(like, torch.Tensor):
        raise CompileError("tensor-shape", "%s: out is required for tensors that are not PyTorch's (gemmgen "
                           "allocates only through the caller's framework)" % what)
    return torch.empty(shape, dtype=getattr(torch, _TORCH_NAMES[dtype]), device=like.device)


def _check_gpu(what):
    if not gpu_available():
        raise CudaError("cuda", "%s: no GPU or no driver" % what)


_problems = {}  # a call's signature -> its C problem struct
_MAX_REMEMBERED = 4096  # signatures each table keeps; a serving loop of ever new shapes starts it over


def _remember(table, key, value):
    if len(table) >= _MAX_REMEMBERED:
        table.clear()
    table[key] = value


def _c_problem(key, fields):
    """The C problem for a call's signature, built once (a cached call's host time is mostly this
    side's)."""
    p = _problems.get(key)
    if p is None:
        p = Problem(**fields)._c()
        _remember(_problems, key, p)
    return p


def _launch(p, a, b, d, stream, ex=False, c=0, bias=0, scale_a=0, scale_b=0, groups=0):
    """gg_gemm for A, B and D alone; gg_gemm_ex where there is more (FP8 operands always: gg_gemm
    refuses them)."""
    lib = _abi.lib()
    if ex or c or bias or scale_a or scale_b or groups:
        t = _abi.CTensors(a, b, d, c or None, bias or None, scale_a or None, scale_b or None, groups or None)
        status = lib.gg_gemm_ex(ctypes.byref(p), ctypes.byref(t), stream)
    else:
        status = lib.gg_gemm(ctypes.byref(p), a, b, d, stream)
    if status != 0:
        _raise_last(status)


def _epilogue_tensor(t, name, stream, what):
    if t is None:
        return 0, None
    v = view(t, name, stream)
    return v[0], v


_torch_calls = {}  # a PyTorch call's signature (the tensors' metadata and the options) -> its C problem


def _product(what, a, b, out, b_kn, out_dtype, schedule, arch, stream, expected_m, alpha, beta, c, bias,
             bias_along, activation):
    if out is not None and c is None and bias is None:
        # PyTorch tensors seen before with this metadata: their C problem is known, and only their
        # addresses are read (a cached call's host time is mostly this side's)
        try:
            key = (a.dtype, a.shape, a.stride(), a.is_cuda, b.dtype, b.shape, b.stride(), b.is_cuda, out.dtype,
                   out.shape, out.stride(), out.is_cuda, b_kn, schedule, arch, expected_m, alpha, beta, activation)
        except (AttributeError, TypeError):
            key = None
        if key is not None:
            known = _torch_calls.get(key)
            if known is not None:
                status = _abi.lib().gg_gemm(known, a.data_ptr(), b.data_ptr(), out.data_ptr(), _stream(stream))
                if status != 0:
                    _raise_last(status)
                return out
    else:
        key = None
    stream = _stream(stream)
    av, bv = view(a, "a", stream), view(b, "b", stream)
    pa, batch_a, sa, m, k, a_rs, a_cs = _matrices(av, "a")
    pb, batch_b, sb, br, bc, b_rs, b_cs = _matrices(bv, "b")
    # B as gemmgen reads it, [N,K]: b [K,N] is its transpose
    n, kb, b_rs, b_cs = (bc, br, b_cs, b_rs) if b_kn else (br, bc, b_rs, b_cs)
    dtype = av[3]
    batch = max(batch_a, batch_b)
    if out is None:
        out = _allocate(a, (batch, m, n) if sa is not None or sb is not None else (m, n), out_dtype or dtype, what)
    dv = view(out, "out", stream)
    pd, batch_d, sd, md, nd, d_rs, d_cs = _matrices(dv, "out")
    if bv[3] != dtype or kb != k or (md, nd) != (m, n) or batch_d != batch or batch_a not in (1, batch) or \
            batch_b not in (1, batch) or (batch > 1 and sd is None):
        raise CompileError("tensor-shape", "%s: a %s %s, b %s %s, out %s: need a [M,K], b %s of one dtype and out "
                           "[M,N] (batches: [batch, ...] each, a or b 2-D for one matrix shared by all)" % (
                               what, "x".join(map(str, av[1])), dtype, "x".join(map(str, bv[1])), bv[3],
                               "x".join(map(str, dv[1])), "[K,N]" if b_kn else "[N,K]"))
    a_k_contiguous, lda = _majors(m, k, a_rs, a_cs, "a", av)
    b_k_contiguous, ldb = _majors(n, k, b_rs, b_cs, "b", bv)
    d_rows_contiguous, ldd = _majors(m, n, d_rs, d_cs, "out", dv)

    def batch_stride(s, broadcastable):
        if batch == 1:
            return -1
        return 0 if s is None or (broadcastable and s == 0) else s

    strides = (batch_stride(sa, True), batch_stride(sb, True), batch_stride(sd, False))
    pc, cv = _epilogue_tensor(c, "c", stream, what)
    pbias, _ = _epilogue_tensor(bias, "bias", stream, what)
    if cv is not None and tuple(cv[1]) != tuple(dv[1]):
        raise CompileError("tensor-shape", "%s: c has shape %s; it is laid out as out, %s" % (
            what, tuple(cv[1]), tuple(dv[1])))
    _check_gpu(what)
    out_name = dv[3]
    signature = (m, n, k, dtype, out_name, a_k_contiguous, b_k_contiguous, d_rows_contiguous, lda, ldb, ldd, batch,
                 strides, arch, schedule, expected_m, alpha, beta, bias is not None and bias_along, activation)
    p = _c_problem(signature, dict(
        m=m, n=n, k=k, dtype=dtype, out_dtype=out_name, a_m_major=not a_k_contiguous, b_n_major=not b_k_contiguous,
        d_m_major=not d_rows_contiguous, lda=lda, ldb=ldb, ldd=ldd, batch=batch, stride_a=strides[0],
        stride_b=strides[1], stride_d=strides[2], arch=arch, schedule=schedule, expected_m=expected_m, alpha=alpha,
        beta=beta, bias=bias_along if bias is not None else None, activation=activation))
    _launch(p, pa, pb, pd, stream, c=pc, bias=pbias)
    if key is not None and all(hasattr(t, "data_ptr") for t in (a, b, out)):  # PyTorch's: the fast path next time
        _remember(_torch_calls, key, ctypes.byref(p))
    return out


def gemm(a, b, out=None, *, out_dtype=None, schedule=None, arch="sm_90a", stream=None, expected_m=0, alpha=1.0,
         beta=0.0, c=None, bias=None, bias_along="cols", activation=None):
    """out[M,N] = activation(alpha * a[M,K] @ b[K,N] + beta * c + bias) on CUDA tensors of one
    dtype (f16, bf16, f32 accumulating in fp32; out f16, bf16 or f32), each row- or column-major
    as its strides say (a transposed view is read in place), leading dimensions from the strides.
    3-D tensors are batches ([batch, M, K] ...; a 2-D a or b is shared by every matrix). ``out``:
    allocated through PyTorch when None and a is a torch tensor, else required. ``stream``: a CUDA
    stream handle (int); by default PyTorch's current stream when torch is loaded, else the default
    stream. ``expected_m``: plan the kernel for that many rows and serve every M with it (one JIT
    for a decode loop). ``bias``: a vector of out's dtype, one value per column of out
    (``bias_along="cols"``) or per row ("rows"); ``activation``: "relu", "gelu" or "silu"."""
    return _product("gemm", a, b, out, True, out_dtype, schedule, arch, stream, expected_m, alpha, beta, c, bias,
                    bias_along, activation)


def gemm_nt(a, b, out=None, *, out_dtype=None, schedule=None, arch="sm_90a", stream=None, expected_m=0, alpha=1.0,
            beta=0.0, c=None, bias=None, bias_along="cols", activation=None):
    """out[M,N] = a[M,K] @ b[N,K].T (DeepGEMM's NT orientation); everything else as ``gemm``."""
    return _product("gemm_nt", a, b, out, False, out_dtype, schedule, arch, stream, expected_m, alpha, beta, c,
                    bias, bias_along, activation)


# ---- FP8 -----------------------------------------------------------------------------------------

def _round4(x):
    return (x + 3) // 4 * 4


def _scale(t, name, rows, k, groups, a_operand, stream, what):
    """(granularity, other major, pointer) of an operand's fp32 factors, read from their shape and
    strides: [] or [1] per tensor, [rows] per row, [rows, ceil(K/128)] per 1x128 and
    [ceil(rows/128), ceil(K/128)] per 128x128, the 2-D ones K-major (contiguous) or MN-major
    (DeepGEMM's TMA-aligned: columns round_up(rows, 4) apart); `groups` > 0: one such set per
    group, [groups, ...], one after another."""
    if t is None:
        return "none", False, 0
    v = view(t, name, stream)
    if v[3] != "f32":
        raise CompileError("unknown-dtype", "%s: FP8 factors are float32, not %s" % (name, v[3]))
    shape, strides = tuple(v[1]), tuple(v[2])
    if groups:
        _need(len(shape) >= 1 and shape[0] == groups, what, "%s has shape %s; it holds one set of factors per group, "
              "[%d, ...]" % (name, shape, groups))
        group_stride, shape, strides = strides[0], shape[1:], strides[1:]
    kb, rb = (k + 127) // 128, (rows + 127) // 128
    if len(shape) <= 1 and (shape in ((), (1,))):
        granularity, major_k, count = "tensor", True, 1
    elif len(shape) == 1 and shape == (rows,):
        _need(strides == (1,) or rows == 1, what, "%s: per-row factors must be contiguous" % name)
        granularity, major_k, count = "row", True, rows
    elif len(shape) == 2 and shape in ((rows, kb), (rb, kb)):
        granularity = "1x128" if shape == (rows, kb) else "128x128"
        r = shape[0]
        if kb == 1:
            major_k = not a_operand  # one column: both majors read the same factors; take the default
        elif strides[1] == 1 and (strides[0] == kb or r == 1):
            major_k = True
        elif strides[0] == 1 and strides[1] == _round4(r):
            major_k = False
        else:
            raise CompileError("tensor-layout", "%s: factors %s with strides %s; legal are K-major (contiguous) or "
                               "MN-major with columns %d apart (DeepGEMM's TMA-aligned layout)" % (
                                   name, shape, strides_text(v), _round4(r)))
        count = r * kb if major_k else kb * _round4(r)
    else:
        raise CompileError("tensor-shape", "%s: factors of shape %s for %d rows and K=%d; legal are [1] (per tensor), "
                           "[%d] (per row), [%d, %d] (per 1x128) and [%d, %d] (per 128x128)%s" % (
                               name, shape, rows, k, rows, rows, kb, rb, kb, ", each after [groups]" if groups else ""))
    if groups > 1:
        _need(group_stride == count, what, "%s: one group's factors are %d apart, not %d (dense, one group after "
              "another)" % (name, group_stride, count))
    return granularity, (major_k if a_operand else not major_k), v[0]


def _fp8_name(dtype):
    """An FP8 operand's element type: raw bytes (uint8; __cuda_array_interface__ has no FP8 name)
    read as e4m3."""
    return "e4m3" if dtype == "u8" else dtype


def _fp8_pair(x, name):
    if isinstance(x, (tuple, list)):
        if len(x) != 2:
            raise CompileError("tensor-shape", "%s: an FP8 operand is (tensor, factors); got %d items" % (name, len(x)))
        return x[0], x[1]
    return x, None


def fp8_gemm_nt(a, b, out=None, *, out_dtype="bf16", schedule=None, arch="sm_90a", stream=None, expected_m=0):
    """DeepGEMM's fp8_gemm_nt: out[M,N] = (a * sa)[M,K] @ (b * sb)[N,K].T with a and b e4m3 (or
    e5m2) and K-major, each given with its fp32 factors as ``(tensor, factors)`` (a bare tensor: a
    factor of 1). DeepGEMM's recipe is sa per 1x128 ([M, ceil(K/128)], MN-major TMA-aligned or
    K-major) and sb per 128x128 ([ceil(N/128), ceil(K/128)]); per tensor and per row work too (see
    ``_scale``). ``out``: bf16 by default (f16, f32), allocated through PyTorch when None."""
    stream = _stream(stream)
    a, sa_t = _fp8_pair(a, "a")
    b, sb_t = _fp8_pair(b, "b")
    av, bv = view(a, "a", stream), view(b, "b", stream)
    pa, _, _, m, k, a_rs, a_cs = _matrices(av, "a", batched=False)
    pb, _, _, n, kb, b_rs, b_cs = _matrices(bv, "b", batched=False)
    if out is None:
        out = _allocate(a, (m, n), out_dtype, "fp8_gemm_nt")
    dv = view(out, "out", stream)
    pd, _, _, md, nd, d_rs, d_cs = _matrices(dv, "out", batched=False)
    dtype, dtype_b = _fp8_name(av[3]), _fp8_name(bv[3])
    if dtype not in ("e4m3", "e5m2") or dtype_b != dtype or kb != k or (md, nd) != (m, n):
        raise CompileError("tensor-shape", "fp8_gemm_nt: a %dx%d %s, b %dx%d %s, out %dx%d: need e4m3 (or e5m2) a "
                           "[M,K] and b [N,K] and out [M,N]" % (m, k, dtype, n, kb, dtype_b, md, nd))
    a_k, lda = _majors(m, k, a_rs, a_cs, "a", av)
    b_k, ldb = _majors(n, k, b_rs, b_cs, "b", bv)
    d_rows, ldd = _majors(m, n, d_rs, d_cs, "out", dv)
    ga, a_other, psa = _scale(sa_t, "sa", m, k, 0, True, stream, "fp8_gemm_nt")
    gb, b_other, psb = _scale(sb_t, "sb", n, k, 0, False, stream, "fp8_gemm_nt")
    _check_gpu("fp8_gemm_nt")
    key = ("fp8", m, n, k, dtype, dv[3], a_k, b_k, d_rows, lda, ldb, ldd, arch, schedule, expected_m, ga, a_other,
           gb, b_other)
    p = _c_problem(key, dict(m=m, n=n, k=k, dtype=dtype, out_dtype=dv[3], a_m_major=not a_k, b_n_major=not b_k,
                             d_m_major=not d_rows, lda=lda, ldb=ldb, ldd=ldd, arch=arch, schedule=schedule,
                             expected_m=expected_m, scale_a=ga, scale_b=gb, scale_a_k_major=a_other,
                             scale_b_mn_major=b_other))
    _launch(p, pa, pb, pd, stream, ex=True, scale_a=psa, scale_b=psb)
    return out


# ---- groups --------------------------------------------------------------------------------------

def _grouped(what, source, a, b, d, group_array, expected_m, fp8, out_dtype, schedule, arch, stream):
    """DeepGEMM's grouped layouts: contiguous, a [M,K] and d [M,N] shared by the groups, offsets
    [groups + 1]; masked, a [G,M,K] and d [G,M,N], rows in use [groups]; b [G,N,K] for both."""
    stream = _stream(stream)
    sa_t = sb_t = None
    if fp8:
        a, sa_t = _fp8_pair(a, "a")
        b, sb_t = _fp8_pair(b, "b")
    av, bv = view(a, "a", stream), view(b, "b", stream)
    masked = source == "masked"
    _need(len(av[1]) == (3 if masked else 2), what, "a has shape %s; it is %s" % (
        tuple(av[1]), "[groups, M, K]" if masked else "[M, K] (every group's rows, one group after another)"))
    _need(len(bv[1]) == 3, what, "b has shape %s; it is [groups, N, K]" % (tuple(bv[1]),))
    groups, n, k = bv[1]
    m = av[1][-2]
    _need(av[1][-1] == k and (not masked or av[1][0] == groups), what, "a has shape %s and b %s; they share K%s" % (
        tuple(av[1]), tuple(bv[1]), " and the group count" if masked else ""))
    d_shape = (groups, m, n) if masked else (m, n)
    if d is None:
        d = _allocate(a, d_shape, out_dtype if fp8 else (out_dtype or av[3]), what)
    dv = view(d, "d", stream)
    _need(tuple(dv[1]) == d_shape, what, "d has shape %s; it is %s" % (tuple(dv[1]), list(d_shape)))
    for v, name in ((av, "a"), (bv, "b"), (dv, "d")):
        _dense(v, name, what)
    gv = view(group_array, "masked_m" if masked else "group_offsets", stream)
    count = groups if masked else groups + 1
    _need(gv[3] == "i32" and tuple(gv[1]) == (count,) and (count == 1 or gv[2][0] == 1), what,
          "%s is a contiguous int32 vector of %d (%s); got %s %s" % (
              "masked_m" if masked else "group_offsets", count,
              "each group's rows in use" if masked else "groups + 1 row offsets", gv[3], tuple(gv[1])))
    ga = gb = "none"
    a_other = b_other = False
    psa = psb = 0
    dtype = _fp8_name(av[3]) if fp8 else av[3]
    if fp8:
        _need(dtype in ("e4m3", "e5m2") and _fp8_name(bv[3]) == dtype, what,
              "a and b are e4m3 (or e5m2); got %s and %s" % (av[3], bv[3]))
        ga, a_other, psa = _scale(sa_t, "sa", m, k, groups if masked else 0, True, stream, what)
        gb, b_other, psb = _scale(sb_t, "sb", n, k, groups, False, stream, what)
    else:
        _need(bv[3] == av[3], what, "a and b have one dtype; got %s and %s" % (av[3], bv[3]))
    _check_gpu(what)
    key = (source, m, n, k, groups, dtype, dv[3], arch, schedule, expected_m, ga, a_other, gb, b_other)
    p = _c_problem(key, dict(m=m, n=n, k=k, dtype=dtype, out_dtype=dv[3], batch=groups, arch=arch,
                             schedule=schedule, source=source, expected_m=expected_m, scale_a=ga, scale_b=gb,
                             scale_a_k_major=a_other, scale_b_mn_major=b_other))
    _launch(p, av[0], bv[0], dv[0], stream, ex=True, scale_a=psa, scale_b=psb, groups=gv[0])
    return d


def m_grouped_gemm_nt_contiguous(a, b, d, group_offsets, expected_m=0, *, schedule=None, arch="sm_90a",
                                 stream=None):
    """DeepGEMM's m_grouped_gemm_nt_contiguous (a mixture-of-experts forward): for each group g,
    d[o_g:o_{g+1}] = a[o_g:o_{g+1}] @ b[g].T with a [M,K], b [G,N,K], d [M,N] dense and o =
    group_offsets (int32 [G+1], nondecreasing, on the device: read by the kernel, so a CUDA graph
    replays with new offsets). ``expected_m``: plan for that many rows, one kernel for every M.
    ``d`` None: allocated through PyTorch."""
    return _grouped("m_grouped_gemm_nt_contiguous", "contiguous", a, b, d, group_offsets, expected_m, False, None,
                    schedule, arch, stream)


def m_grouped_gemm_nt_masked(a, b, d, masked_m, expected_m=0, *, schedule=None, arch="sm_90a", stream=None):
    """DeepGEMM's m_grouped_gemm_nt_masked (a mixture-of-experts decode step): for each group g,
    d[g, :masked_m[g]] = a[g, :masked_m[g]] @ b[g].T with a [G,M,K], b [G,N,K], d [G,M,N] dense and
    masked_m int32 [G] on the device. A group's last tile is stored whole (its rows past masked_m[g]
    get a's rows there times b); rows of d past that tile are untouched."""
    return _grouped("m_grouped_gemm_nt_masked", "masked", a, b, d, masked_m, expected_m, False, None, schedule, arch,
                    stream)


def k_grouped_gemm_tn_contiguous(a, b, d, group_offsets, *, schedule=None, arch="sm_90a", stream=None):
    """Variable-K groups (QuACK's varlen_k, a mixture-of-experts layer's weight gradients): for each
    group g, d[g] = a[o_g:o_{g+1}].T @ b[o_g:o_{g+1}] with a [K,M] and b [K,N] dense row-major (every
    group's tokens, one group after another), d [G,M,N] dense and o = group_offsets (int32 [G+1],
    nondecreasing, on the device). One kernel serves every K and every set of offsets; a group with
    no tokens stores zeros. ``d`` None: allocated through PyTorch."""
    what = "k_grouped_gemm_tn_contiguous"
    stream = _stream(stream)
    av, bv, gv = view(a, "a", stream), view(b, "b", stream), view(group_offsets, "group_offsets", stream)
    _need(len(av[1]) == 2 and len(bv[1]) == 2 and av[1][0] == bv[1][0], what, "a has shape %s and b %s; they are "
          "[K, M] and [K, N] with one K" % (tuple(av[1]), tuple(bv[1])))
    _need(gv[3] == "i32" and len(gv[1]) == 1 and gv[1][0] >= 2 and (gv[1][0] == 1 or gv[2][0] == 1), what,
          "group_offsets is a contiguous int32 vector of groups + 1 offsets along K; got %s %s" % (gv[3],
                                                                                              tuple(gv[1])))
    _need(bv[3] == av[3], what, "a and b have one dtype; got %s and %s" % (av[3], bv[3]))
    k, m = av[1]
    n = bv[1][1]
    groups = gv[1][0] - 1
    if d is None:
        d = _allocate(a, (groups, m, n), av[3], what)
    dv = view(d, "d", stream)
    _need(tuple(dv[1]) == (groups, m, n), what, "d has shape %s; it is %s" % (tuple(dv[1]), [groups, m, n]))
    for v, name in ((av, "a"), (bv, "b"), (dv, "d")):
        _dense(v, name, what)
    _check_gpu(what)
    key = ("varlen_k", m, n, k, groups, av[3], dv[3], arch, schedule)
    p = _c_problem(key, dict(m=m, n=n, k=k, dtype=av[3], out_dtype=dv[3], batch=groups, arch=arch,
                             schedule=schedule, source="varlen_k"))
    _launch(p, av[0], bv[0], dv[0], stream, ex=True, groups=gv[0])
    return d


def m_grouped_fp8_gemm_nt_contiguous(a, b, d, group_offsets, expected_m=0, *, out_dtype="bf16", schedule=None,
                                     arch="sm_90a", stream=None):
    """``m_grouped_gemm_nt_contiguous`` on FP8 ``(tensor, factors)`` pairs: sa [M, ceil(K/128)]
    for the shared a, sb [G, ceil(N/128), ceil(K/128)] (DeepGEMM's)."""
    return _grouped("m_grouped_fp8_gemm_nt_contiguous", "contiguous", a, b, d, group_offsets, expected_m, True,
                    out_dtype, schedule, arch, stream)


def m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m=0, *, out_dtype="bf16", schedule=None,
                                 arch="sm_90a", stream=None):
    """``m_grouped_gemm_nt_masked`` on FP8 ``(tensor, factors)`` pairs: sa [G, M, ceil(K/128)],
    sb [G, ceil(N/128), ceil(K/128)] (DeepGEMM's)."""
    return _grouped("m_grouped_fp8_gemm_nt_masked", "masked", a, b, d, masked_m, expected_m, True, out_dtype,
                    schedule, arch, stream)
