"""The Python package over the C ABI, on the CPU: import, explain and emit, every error path
raising with its rule id, and tensors refused clearly (no GPU here; tests/gpu/python_gpu_test.py
runs gemm_nt against torch.matmul where there is one)."""

import unittest

import gemmgen


class FakeCudaTensor:
    """A tensor-like object exposing __cuda_array_interface__ (as CuPy's and Numba's do)."""

    def __init__(self, rows, cols, typestr="<f2", strides=None):
        self.__cuda_array_interface__ = {"shape": (rows, cols), "typestr": typestr, "data": (0x10000, False),
                                         "strides": strides, "version": 3}


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
        # a schedule that cannot hold the problem's tile
        self.assertRaisesRule(gemmgen.CompileError, "not-lowered",
                              lambda: gemmgen.emit(gemmgen.Problem(64, 64, 64, dtype="e4m3", arch="sm_100a",
                                                                   schedule="v2")))

    def test_tensors_refused_clearly(self):
        d = FakeCudaTensor(64, 64)
        self.assertRaisesRule(gemmgen.CompileError, "not-a-cuda-tensor", lambda: gemmgen.gemm_nt([1, 2], d, out=d),
                              "a: a list is not a CUDA tensor (it has no __cuda_array_interface__; pass a PyTorch, "
                              "CuPy or JAX array on the GPU)")
        self.assertRaisesRule(gemmgen.CompileError, "unknown-dtype",
                              lambda: gemmgen.gemm_nt(FakeCudaTensor(64, 64, "<i4"), d, out=d),
                              "a: element type <i4; legal are f16, bf16 and f32 here")
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
        if not gemmgen.gpu_available():
            self.assertRaisesRule(gemmgen.CudaError, "cuda", lambda: gemmgen.gemm_nt(d, d, out=d),
                                  "gemm_nt: no GPU or no driver")
            # a column-major a (its transpose's memory) is taken; it gets as far as the GPU check
            self.assertRaisesRule(gemmgen.CudaError, "cuda",
                                  lambda: gemmgen.gemm(FakeCudaTensor(64, 64, strides=(2, 128)), d, out=d),
                                  "gemm: no GPU or no driver")


if __name__ == "__main__":
    unittest.main()
