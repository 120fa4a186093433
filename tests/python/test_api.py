"""The Python package over the C ABI, on the CPU: import, explain and emit (dense, grouped, FP8,
epilogues), every error path raising with its rule id, and tensors refused clearly, read through
__cuda_array_interface__ or DLPack (no GPU here; tests/python_gpu/torch_gpu_test.py runs the
functions against torch where there is one)."""

import ctypes
import unittest

import gemmgen
from gemmgen._tensors import DLTensor


class FakeDlpackTensor:
    """A tensor-like object exposing only __dlpack__ (as JAX's arrays do), its capsule built here:
    a DLManagedTensor (DLTensor, manager_ctx, deleter) never dereferenced on the host."""

    class _Managed(ctypes.Structure):
        _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    _NAME = b"dltensor"

    def __init__(self, shape, device_type=2, code=4, bits=16, strides=None):
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = (ctypes.c_int64 * len(shape))(*strides) if strides else None
        t = DLTensor()
        t.data, t.device.device_type, t.device.device_id, t.ndim = 0x20000, device_type, 0, len(shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64)) if strides else None
        self._managed = self._Managed(t, None, None)
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        new = ctypes.pythonapi.PyCapsule_New
        new.argtypes, new.restype = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p], ctypes.py_object
        return new(ctypes.addressof(self._managed), self._NAME, None)


class FakeCudaTensor:
    """A tensor-like object exposing __cuda_array_interface__ (as CuPy's and Numba's do)."""

    def __init__(self, rows, cols=None, typestr="<f2", strides=None, shape=None):
        self.__cuda_array_interface__ = {"shape": shape or (rows, cols), "typestr": typestr,
                                         "data": (0x10000, False), "strides": strides, "version": 3}


class Api(unittest.TestCase):
    def test_version(self):
        self.assertTrue(gemmgen.version())

    def test_explain_and_emit(self):
        text = gemmgen.explain(gemmgen.Problem(4096, 4096, 4096))
        self.assertIn("auto", text)
        self.assertIn("kernel sm_90a", text)
        source = gemmgen.emit(gemmgen.Problem(1000, 2048, 512, dtype="f16", schedule="v10"))
        self.assertIn("__global__", source)
        blackwell = gemmgen.emit(gemmgen.Problem(512, 512, 512, dtype="e4m3", arch="sm_100a", schedule="v8"))
        self.assertIn("tcgen05_mma_mxf8f6f4", blackwell)
        # groups, planned for expected_m; FP8 with its factors; the epilogue
        grouped = gemmgen.explain(gemmgen.Problem(8192, 4096, 7168, source="contiguous", batch=8, expected_m=4096))
        self.assertIn("contiguous", grouped)
        self.assertIn("M=4096", grouped)
        self.assertIn("masked", gemmgen.explain(gemmgen.Problem(256, 4096, 7168, source="masked", batch=4)))
        self.assertIn("varlen_k", gemmgen.explain(gemmgen.Problem(256, 512, 65536, source="varlen_k", batch=8)))
        fp8 = gemmgen.explain(gemmgen.Problem(4096, 4096, 4096, dtype="e4m3", scale_b="tensor"))
        self.assertIn("scales A per 1x128", fp8)
        self.assertIn("scales B per tensor", fp8)
        epilogue = gemmgen.explain(gemmgen.Problem(1024, 1024, 1024, beta=0.5, bias="rows", activation="silu"))
        self.assertIn("silu", epilogue)

    def test_signature_tables_are_bounded(self):
        table = {}
        for i in range(gemmgen._MAX_REMEMBERED + 10):
            gemmgen._remember(table, i, i)
        self.assertLessEqual(len(table), gemmgen._MAX_REMEMBERED)
        self.assertEqual(table[gemmgen._MAX_REMEMBERED + 9], gemmgen._MAX_REMEMBERED + 9)

    def test_schedule_from_text(self):
        v5 = gemmgen.Schedule("tile 128 128 64\ninline cast\nmma 64 128 16 sm_90a\nbind k_o serial\n"
                              "bind m_o block.y\nbind n_o block.x\ncache_read A tma\ncache_read B tma\n"
                              "cache_write cast shared tma\ncircular_buffer k_o 2 1\n")
        text = gemmgen.explain(gemmgen.Problem(1000, 1024, 512, dtype="f16", schedule=v5))
        self.assertIn("circular buffer 2 stage(s)", text)
        self.assertIn("M=1000 N=1024 K=512", text)
        self.assertIn("__global__", gemmgen.emit(gemmgen.Problem(1000, 1024, 512, schedule=v5)))
        self.assertEqual(v5, gemmgen.Schedule(v5.text))
        self.assertRaisesRule(gemmgen.CompileError, "parse-error",
                              lambda: gemmgen.explain(gemmgen.Problem(64, 64, 64, schedule=gemmgen.Schedule(
                                  "tile 128 128 64\nfrobnicate 3\n"))), "line 2: ")

    def assertRaisesRule(self, kind, rule, call, message=""):
        with self.assertRaises(kind) as caught:
            call()
        self.assertEqual(caught.exception.rule, rule)
        self.assertTrue(str(caught.exception))
        self.assertIn(message, str(caught.exception))

    def test_errors_carry_their_rule(self):
        self.assertRaisesRule(gemmgen.CompileError, "unknown-schedule",
                              lambda: gemmgen.emit(gemmgen.Problem(64, 64, 64, schedule="v99")))
        self.assertRaisesRule(gemmgen.CompileError, "unknown-dtype",
                              lambda: gemmgen.explain(gemmgen.Problem(64, 64, 64, dtype="f8")),
                              "dtype 'f8': legal are bf16, e4m3, e5m2, f16, f32")
        self.assertRaisesRule(gemmgen.CompileError, "unknown-arch",
                              lambda: gemmgen.explain(gemmgen.Problem(64, 64, 64, arch="sm_80")),
                              "arch 'sm_80': legal are sm_100a, sm_90a")
        self.assertRaisesRule(gemmgen.CompileError, "bad-leading-dim",
                              lambda: gemmgen.explain(gemmgen.Problem(64, 64, 256, lda=100)))
        self.assertRaisesRule(gemmgen.CompileError, "bad-epilogue",
                              lambda: gemmgen.explain(gemmgen.Problem(64, 64, 64, activation="tanh")),
                              "activation 'tanh': legal are")
        self.assertRaisesRule(gemmgen.CompileError, "bad-scale",
                              lambda: gemmgen.explain(gemmgen.Problem(64, 64, 64, dtype="e4m3", scale_a="1x64")),
                              "scale '1x64': legal are")
        self.assertRaisesRule(gemmgen.CompileError, "unknown-source",
                              lambda: gemmgen.explain(gemmgen.Problem(64, 64, 64, source="ragged")))
        self.assertRaisesRule(gemmgen.CompileError, "grouped-layout",
                              lambda: gemmgen.explain(gemmgen.Problem(64, 64, 64, source="masked", batch=2, ldd=80)))
        # a schedule that cannot hold the problem's tile
        self.assertRaisesRule(gemmgen.CompileError, "not-lowered",
                              lambda: gemmgen.emit(gemmgen.Problem(64, 64, 64, dtype="e4m3", arch="sm_100a",
                                                                   schedule="v2")))

    def test_tensors_refused_clearly(self):
        d = FakeCudaTensor(64, 64)
        self.assertRaisesRule(gemmgen.CompileError, "not-a-cuda-tensor", lambda: gemmgen.gemm_nt([1, 2], d, out=d),
                              "a: a list is not a CUDA tensor (it has neither __cuda_array_interface__ nor "
                              "__dlpack__; pass a PyTorch, CuPy or JAX array on the GPU)")
        self.assertRaisesRule(gemmgen.CompileError, "unknown-dtype",
                              lambda: gemmgen.gemm_nt(FakeCudaTensor(64, 64, "<f8"), d, out=d),
                              "a: element type <f8; legal are f16, bf16, f32, e4m3 and e5m2 (and int32 for group "
                              "arrays, float32 for FP8 factors)")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: gemmgen.gemm_nt(d, d),
                              "gemm_nt: out is required for tensors that are not PyTorch's")
        # a view with neither dimension contiguous (a transposed one is read in place)
        self.assertRaisesRule(gemmgen.CompileError, "tensor-layout",
                              lambda: gemmgen.gemm_nt(FakeCudaTensor(64, 64, strides=(256, 4)), d, out=d),
                              "a: neither dimension is contiguous (strides (256, 4) bytes); pass .contiguous()")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: gemmgen.gemm_nt(FakeCudaTensor(64, 32), FakeCudaTensor(64, 64), out=d),
                              "gemm_nt: a 64x32 f16, b 64x64 f16, out 64x64: need a [M,K], b [N,K] of one dtype and "
                              "out [M,N]")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: gemmgen.gemm(FakeCudaTensor(64, 32), FakeCudaTensor(64, 64), out=d),
                              "gemm: a 64x32 f16, b 64x64 f16, out 64x64: need a [M,K], b [K,N] of one dtype and "
                              "out [M,N]")
        # batches: 3-D tensors, out batched as the operands are
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: gemmgen.gemm_nt(FakeCudaTensor(0, shape=(3, 64, 64)), d, out=d),
                              "gemm_nt: a 3x64x64 f16, b 64x64 f16, out 64x64")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: gemmgen.gemm_nt(FakeCudaTensor(0, shape=(2, 2, 64, 64)), d, out=d),
                              "a: shape (2, 2, 64, 64); gemmgen takes 2-D tensors or 3-D batches of them")
        if not gemmgen.gpu_available():
            self.assertRaisesRule(gemmgen.CudaError, "cuda", lambda: gemmgen.gemm_nt(d, d, out=d),
                                  "gemm_nt: no GPU or no driver")
            # a column-major a (its transpose's memory) is taken; it gets as far as the GPU check
            self.assertRaisesRule(gemmgen.CudaError, "cuda",
                                  lambda: gemmgen.gemm(FakeCudaTensor(64, 64, strides=(2, 128)), d, out=d),
                                  "gemm: no GPU or no driver")

    def test_dlpack_tensors_are_read(self):
        d = FakeCudaTensor(64, 64, typestr="<V2")  # bf16
        # a DLPack bf16 [64, 64] on the GPU reads as a: it gets as far as the product's shape check
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: gemmgen.gemm_nt(FakeDlpackTensor((64, 32)), d, out=d),
                              "gemm_nt: a 64x32 bf16, b 64x64 bf16")
        a = FakeDlpackTensor((64, 64), strides=(1, 64))  # column-major: read in place
        if not gemmgen.gpu_available():
            self.assertRaisesRule(gemmgen.CudaError, "cuda", lambda: gemmgen.gemm_nt(a, d, out=d, stream=7))
            self.assertEqual(a.streams, [7])  # the producer is told the consumer's stream
        self.assertRaisesRule(gemmgen.CompileError, "not-a-cuda-tensor",
                              lambda: gemmgen.gemm_nt(FakeDlpackTensor((64, 64), device_type=1), d, out=d),
                              "a: a DLPack tensor on device type 1, not on the GPU (kDLCUDA, 2)")
        self.assertRaisesRule(gemmgen.CompileError, "unknown-dtype",
                              lambda: gemmgen.gemm_nt(FakeDlpackTensor((64, 64), code=5, bits=64), d, out=d),
                              "a: element type DLPack code 5, 64 bits, 1 lanes")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-layout",
                              lambda: gemmgen.gemm_nt(FakeDlpackTensor((64, 64), strides=(128, 2)), d, out=d),
                              "a: neither dimension is contiguous (strides (128, 2) elements)")

    def test_grouped_and_fp8_arguments_refused_clearly(self):
        e4m3 = lambda *shape: FakeCudaTensor(0, shape=shape, typestr="|u1")  # noqa: E731 (no FP8 typestr)
        bf16 = lambda *shape: FakeCudaTensor(0, shape=shape, typestr="<V2")  # noqa: E731
        i32 = lambda *shape: FakeCudaTensor(0, shape=shape, typestr="<i4")  # noqa: E731
        f32 = lambda *shape, strides=None: FakeCudaTensor(0, shape=shape, typestr="<f4", strides=strides)  # noqa
        contiguous = gemmgen.m_grouped_gemm_nt_contiguous
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: contiguous(bf16(512, 128), bf16(128, 128), bf16(512, 128), i32(5)),
                              "m_grouped_gemm_nt_contiguous: b has shape (128, 128); it is [groups, N, K]")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: contiguous(bf16(512, 128), bf16(4, 256, 128), bf16(512, 128), i32(5)),
                              "d has shape (512, 128); it is [512, 256]")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: contiguous(bf16(512, 128), bf16(4, 256, 128), bf16(512, 256), i32(4)),
                              "group_offsets is a contiguous int32 vector of 5 (groups + 1 row offsets); got i32 (4,)")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-layout",
                              lambda: contiguous(FakeCudaTensor(0, shape=(512, 128), typestr="<V2", strides=(512, 2)),
                                                 bf16(4, 256, 128), bf16(512, 256), i32(5)),
                              "m_grouped_gemm_nt_contiguous: a must be dense row-major (C-contiguous)")
        varlen = gemmgen.k_grouped_gemm_tn_contiguous
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: varlen(bf16(512, 128), bf16(500, 256), bf16(4, 128, 256), i32(5)),
                              "k_grouped_gemm_tn_contiguous: a has shape (512, 128) and b (500, 256); they are [K, M] "
                              "and [K, N] with one K")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: varlen(bf16(512, 128), bf16(512, 256), bf16(3, 128, 256), i32(5)),
                              "d has shape (3, 128, 256); it is [4, 128, 256]")
        masked = gemmgen.m_grouped_gemm_nt_masked
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: masked(bf16(512, 128), bf16(4, 256, 128), bf16(4, 512, 256), i32(4), 64),
                              "a has shape (512, 128); it is [groups, M, K]")
        # FP8 factors: their granularity from their shape, their major from their strides
        fp8 = gemmgen.fp8_gemm_nt
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: fp8((e4m3(256, 512), f32(256, 3)), e4m3(128, 512), bf16(256, 128)),
                              "sa: factors of shape (256, 3) for 256 rows and K=512; legal are [1] (per tensor), [256] "
                              "(per row), [256, 4] (per 1x128) and [2, 4] (per 128x128)")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-layout",
                              lambda: fp8((e4m3(250, 512), f32(250, 4, strides=(4, 1000))), e4m3(128, 512),
                                          bf16(250, 128)),
                              "sa: factors (250, 4) with strides (4, 1000) bytes; legal are K-major (contiguous) or "
                              "MN-major with columns 252 apart (DeepGEMM's TMA-aligned layout)")
        self.assertRaisesRule(gemmgen.CompileError, "unknown-dtype",
                              lambda: fp8((e4m3(256, 512), bf16(256, 4)), e4m3(128, 512), bf16(256, 128)),
                              "sa: FP8 factors are float32, not bf16")
        self.assertRaisesRule(gemmgen.CompileError, "tensor-shape",
                              lambda: fp8(bf16(256, 512), e4m3(128, 512), bf16(256, 128)),
                              "fp8_gemm_nt: a 256x512 bf16, b 128x512 e4m3")
        if not gemmgen.gpu_available():  # DeepGEMM's layouts are taken: as far as the GPU check
            self.assertRaisesRule(gemmgen.CudaError, "cuda",
                                  lambda: fp8((e4m3(250, 512), f32(250, 4, strides=(4, 1008))),
                                              (e4m3(128, 512), f32(1, 4)), bf16(250, 128)))


if __name__ == "__main__":
    unittest.main()
