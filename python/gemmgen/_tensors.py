"""Reading a framework's tensor without importing the framework: a PyTorch tensor by duck typing
(its __cuda_array_interface__ refuses bf16 and FP8), else ``__cuda_array_interface__`` (CuPy,
Numba, JAX), else DLPack (``__dlpack__``: JAX, TensorFlow, PaddlePaddle, MXNet).

A view is a tuple (pointer, shape, strides in elements, dtype name, strides as given, their unit);
the last two only make messages."""

import ctypes

from ._errors import CompileError

_TORCH_DTYPES = {"torch.float16": "f16", "torch.bfloat16": "bf16", "torch.float32": "f32",
                 "torch.float8_e4m3fn": "e4m3", "torch.float8_e5m2": "e5m2", "torch.int32": "i32",
                 "torch.uint8": "u8"}
# __cuda_array_interface__ typestrs (it has no name for bf16 or FP8)
_TYPESTRS = {"<f2": "f16", "<f4": "f32", "<V2": "bf16", "<i4": "i32", "|u1": "u8"}
SIZES = {"f16": 2, "bf16": 2, "f32": 4, "e4m3": 1, "e5m2": 1, "i32": 4, "u8": 1}

_torch_dtype_names = {}  # torch dtype object -> our name (str() of a dtype costs a microsecond)


def _unknown_dtype(name, what):
    return CompileError("unknown-dtype", "%s: element type %s; legal are f16, bf16, f32, e4m3 and e5m2 (and int32 "
                        "for group arrays, float32 for FP8 factors)" % (name, what))


def _torch_view(t, name):
    dtype = _torch_dtype_names.get(t.dtype)
    if dtype is None:
        dtype = _TORCH_DTYPES.get(str(t.dtype))
        if dtype is None:
            raise _unknown_dtype(name, t.dtype)
        _torch_dtype_names[t.dtype] = dtype
    if not t.is_cuda:
        raise CompileError("not-a-cuda-tensor", "%s: a tensor on %s, not on the GPU" % (name, t.device))
    strides = t.stride()
    return t.data_ptr(), tuple(t.shape), strides, dtype, strides, "elements"


def _contiguous_strides(shape):
    """The strides (elements) of a dense row-major (C-contiguous) tensor of `shape`."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _interface_view(t, iface, name):
    shape = tuple(iface["shape"])
    dtype = _TYPESTRS.get(iface["typestr"])
    if dtype is None:
        raise _unknown_dtype(name, iface["typestr"])
    size = SIZES[dtype]
    given = iface.get("strides")
    if given is None:  # C-contiguous
        return iface["data"][0], shape, _contiguous_strides(shape), dtype, None, "C-contiguous"
    if any(s % size for s in given):
        raise CompileError("tensor-layout", "%s: strides %s bytes are not whole %s elements" % (name, tuple(given),
                                                                                                 dtype))
    return iface["data"][0], shape, tuple(s // size for s in given), dtype, tuple(given), "bytes"


# DLPack's C structs (dlpack.h): a legacy "dltensor" capsule holds a DLManagedTensor, whose first
# member is the DLTensor.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CUDA, _DL_CUDA_MANAGED = 2, 13
# (code, bits) -> our name: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLFloat8_e4m3fn 10,
# kDLFloat8_e5m2 12 (DLPack 1.1's codes)
_DL_DTYPES = {(2, 16): "f16", (4, 16): "bf16", (2, 32): "f32", (10, 8): "e4m3", (12, 8): "e5m2", (0, 32): "i32",
              (1, 8): "u8"}

_capsule_pointer = None


def _dlpack_view(t, name, stream):
    global _capsule_pointer
    if _capsule_pointer is None:
        f = ctypes.pythonapi.PyCapsule_GetPointer
        f.argtypes, f.restype = [ctypes.py_object, ctypes.c_char_p], ctypes.c_void_p
        _capsule_pointer = f
    try:  # the producer orders its work before ours on `stream` (1: CUDA's legacy default stream)
        capsule = t.__dlpack__(stream=stream or 1)
    except TypeError:
        capsule = t.__dlpack__()
    # The capsule is left unconsumed: its destructor releases the producer's reference when it goes.
    tensor = DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))
    if tensor.device.device_type not in (_DL_CUDA, _DL_CUDA_MANAGED):
        raise CompileError("not-a-cuda-tensor", "%s: a DLPack tensor on device type %d, not on the GPU (kDLCUDA, 2)"
                           % (name, tensor.device.device_type))
    dtype = _DL_DTYPES.get((tensor.dtype.code, tensor.dtype.bits)) if tensor.dtype.lanes == 1 else None
    if dtype is None:
        raise _unknown_dtype(name, "DLPack code %d, %d bits, %d lanes" % (tensor.dtype.code, tensor.dtype.bits,
                                                                          tensor.dtype.lanes))
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    # NULL strides: C-contiguous
    strides = tuple(tensor.strides[i] for i in range(tensor.ndim)) if tensor.strides else _contiguous_strides(shape)
    return (tensor.data or 0) + tensor.byte_offset, shape, strides, dtype, strides, "elements"


def view(t, name, stream=None):
    """The view of a CUDA tensor, or CompileError not-a-cuda-tensor."""
    if hasattr(t, "data_ptr") and hasattr(t, "is_cuda") and hasattr(t, "stride"):
        return _torch_view(t, name)
    iface = getattr(t, "__cuda_array_interface__", None)
    if iface is not None:
        return _interface_view(t, iface, name)
    if hasattr(t, "__dlpack__"):
        return _dlpack_view(t, name, stream)
    raise CompileError("not-a-cuda-tensor", "%s: a %s is not a CUDA tensor (it has neither __cuda_array_interface__ "
                       "nor __dlpack__; pass a PyTorch, CuPy or JAX array on the GPU)" % (name, type(t).__name__))


def strides_text(v):
    """A view's strides as the caller gave them, for messages."""
    return v[5] if v[4] is None else "%s %s" % (tuple(v[4]), v[5])
