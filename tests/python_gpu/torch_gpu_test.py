"""gemmgen.gemm and gemm_nt against torch on the GPU (PyTorch required): random bf16 and f16,
ragged and decode shapes (one JIT for every M of a configuration), a strided view's leading
dimension, every layout through transposes, the caller's non-default stream, ten calls captured in
a CUDA graph and replayed bit-identically, and a cached call's host time. Exit 77 (skipped) without
PyTorch or a GPU."""

import sys
import time
import unittest

try:
    import torch
except ImportError:  # pragma: no cover - the CPU machines have no torch
    torch = None

import gemmgen


def rel_err(x, ref):
    x, ref = x.double(), ref.double()
    return ((x - ref).norm() / ref.norm()).item()


class TorchGpu(unittest.TestCase):
    def check(self, m, n, k, dtype, bound):
        a = torch.randn(m, k, device="cuda", dtype=dtype)
        b = torch.randn(n, k, device="cuda", dtype=dtype)
        d = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)  # poisoned
        gemmgen.gemm_nt(a, b, out=d)
        torch.cuda.synchronize()
        ref = a.double() @ b.double().T
        ours, cublas = rel_err(d, ref), rel_err(a @ b.T, ref)
        self.assertLess(ours, bound, "%dx%dx%d %s: %g" % (m, n, k, dtype, ours))
        self.assertLessEqual(ours, max(2 * cublas, 1e-6), "%dx%dx%d: ours %g, torch %g" % (m, n, k, ours, cublas))

    def test_random_against_torch(self):
        for m, n, k in [(4096, 4096, 4096), (300, 200, 136), (1, 4096, 4096), (1000, 1000, 1000)]:
            self.check(m, n, k, torch.bfloat16, 4e-3)
            self.check(m, n, k, torch.float16, 1e-3)

    def test_decode_loop_one_kernel(self):
        b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        for m in (1, 7, 64, 128, 256):
            a = torch.randn(m, 4096, device="cuda", dtype=torch.bfloat16)
            d = torch.empty(m, 4096, device="cuda", dtype=torch.bfloat16)
            gemmgen.gemm_nt(a, b, out=d)
            torch.cuda.synchronize()
            self.assertLess(rel_err(d, a.double() @ b.double().T), 4e-3)

    def test_strided_rows(self):
        base = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)
        a = base[:, :512]  # rows 1024 apart
        b = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
        d = torch.empty(512, 256, device="cuda", dtype=torch.bfloat16)
        gemmgen.gemm_nt(a, b, out=d)
        torch.cuda.synchronize()
        self.assertLess(rel_err(d, a.double() @ b.double().T), 4e-3)
        with self.assertRaises(gemmgen.CompileError) as caught:
            gemmgen.gemm_nt(base[:, ::2], b, out=d)  # neither dimension contiguous
        self.assertEqual(caught.exception.rule, "tensor-layout")

    def test_four_layouts_through_transposes(self):
        # a @ b with a and b each row- or column-major (a transposed view read in place), and a
        # column-major out: every combination against torch.
        m, n, k = 520, 264, 200
        for dtype, bound in ((torch.bfloat16, 4e-3), (torch.float16, 1e-3)):
            for a_t in (False, True):
                for b_t in (False, True):
                    for out_t in (False, True):
                        a = torch.randn(k, m, device="cuda", dtype=dtype).T if a_t else \
                            torch.randn(m, k, device="cuda", dtype=dtype)
                        b = torch.randn(n, k, device="cuda", dtype=dtype).T if b_t else \
                            torch.randn(k, n, device="cuda", dtype=dtype)
                        d = torch.full((n, m), float("nan"), device="cuda", dtype=dtype).T if out_t else \
                            torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
                        gemmgen.gemm(a, b, out=d)
                        torch.cuda.synchronize()
                        err = rel_err(d, a.double() @ b.double())
                        self.assertLess(err, bound, "a^T %s b^T %s out^T %s %s: %g" % (a_t, b_t, out_t, dtype, err))

    def test_caller_stream(self):
        a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
        d = torch.empty(2048, 2048, device="cuda", dtype=torch.bfloat16)
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            gemmgen.gemm_nt(a, b, out=d)  # torch's current stream: s
        s.synchronize()
        self.assertLess(rel_err(d, a.double() @ b.double().T), 4e-3)

    def test_cuda_graph_replays_bit_identically(self):
        # ten cached calls captured on torch's capture stream, replayed: the same bits as eagerly
        shapes = [(m, 4096, 4096) for m in (1, 16, 64, 128, 256, 512, 1000, 2048, 3000, 4096)]
        ins = [(torch.randn(m, k, device="cuda", dtype=torch.bfloat16), torch.randn(n, k, device="cuda",
                dtype=torch.bfloat16)) for m, n, k in shapes]
        eager = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for m, n, _ in shapes]
        captured = [torch.full_like(e, float("nan")) for e in eager]
        for (a, b), d in zip(ins, eager):  # the first calls compile and load
            gemmgen.gemm_nt(a, b, out=d)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for (a, b), d in zip(ins, captured):
                gemmgen.gemm_nt(a, b, out=d)
        graph.replay()
        torch.cuda.synchronize()
        for e, c in zip(eager, captured):
            self.assertTrue(torch.equal(e, c))

    def test_overhead(self):
        a = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        d = torch.empty(64, 4096, device="cuda", dtype=torch.bfloat16)
        gemmgen.gemm_nt(a, b, out=d)
        torch.cuda.synchronize()
        reps = 200
        start = time.perf_counter()
        for _ in range(reps):
            gemmgen.gemm_nt(a, b, out=d)
        host_us = (time.perf_counter() - start) / reps * 1e6
        torch.cuda.synchronize()
        print("gemm_nt host time per cached call: %.1f us" % host_us)


if __name__ == "__main__":
    if torch is None or not torch.cuda.is_available():
        print("no PyTorch or no GPU: skipped")
        sys.exit(77)
    unittest.main()
