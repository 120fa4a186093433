"""The Python package against torch on the GPU (PyTorch required): gemm and gemm_nt on random bf16
and f16, ragged and decode shapes (one JIT for a decode loop M = 1..256 with expected_m), a strided
view's leading dimension, every layout through transposes, batches, the epilogue, a tensor read
through DLPack alone, the caller's non-default stream, ten calls captured in a CUDA graph and
replayed bit-identically, a split-K kernel on two streams at once and captured on a fresh stream;
grouped GEMM (contiguous, masked, variable K) against a loop of torch.matmul; FP8 with DeepGEMM's factors
(dense, contiguous, masked) against an fp64 reference over the dequantized operands and against
torch._scaled_mm's blockwise FP8 where this torch has it; and a cached call's host time. Exit 77
(skipped) without PyTorch or a GPU."""

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


def deepgemm_diff(x, ref):
    """DeepGEMM's metric: 1 - 2<x,y> / (|x|^2 + |y|^2)."""
    x, ref = x.double(), ref.double()
    return (1 - 2 * (x * ref).sum() / (x * x + ref * ref).sum()).item()


def quantize_1x128(x):
    """e4m3 rows and one fp32 factor per row and 128 of K (DeepGEMM's activations): (q, s [R, K/128])."""
    r, k = x.shape
    blocks = x.float().view(r, k // 128, 128)
    s = blocks.abs().amax(-1).clamp(min=1e-4) / 448.0
    return (blocks / s[..., None]).to(torch.float8_e4m3fn).view(r, k), s


def quantize_128x128(x):
    """e4m3 and one fp32 factor per 128 x 128 block (DeepGEMM's weights): (q, s [R/128, K/128])."""
    r, k = x.shape
    blocks = x.float().view(r // 128, 128, k // 128, 128)
    s = blocks.abs().amax(dim=(1, 3)).clamp(min=1e-4) / 448.0
    return (blocks / s[:, None, :, None]).to(torch.float8_e4m3fn).view(r, k), s


def dequantize(q, s, rows_per_factor):
    return q.double() * s.double().repeat_interleave(rows_per_factor, 0).repeat_interleave(128, 1)


def mn_major(s):
    """DeepGEMM's TMA-aligned MN-major factors: [K/128][rows rounded up to 4] storage, seen [rows, K/128]."""
    rows, kb = s.shape
    buf = torch.zeros(kb, (rows + 3) // 4 * 4, device=s.device, dtype=torch.float32)
    buf[:, :rows] = s.T
    return buf[:, :rows].T


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
        # expected_m: one kernel planned for 256 rows serves M = 1..256, so the loop JITs once
        b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        a_all = torch.randn(256, 4096, device="cuda", dtype=torch.bfloat16)
        d_all = torch.full((256, 4096), float("nan"), device="cuda", dtype=torch.bfloat16)
        before = gemmgen.loaded_kernels()
        for m in range(1, 257):
            gemmgen.gemm_nt(a_all[:m], b, out=d_all[:m], expected_m=256)
            if m in (1, 7, 64, 129, 256):
                torch.cuda.synchronize()
                self.assertLess(rel_err(d_all[:m], a_all[:m].double() @ b.double().T), 4e-3, "M=%d" % m)
        self.assertLessEqual(gemmgen.loaded_kernels() - before, 1)
        # without the hint each M is planned for itself (a shape no other test loads): report how
        # many kernels that took
        b = torch.randn(3072, 4096, device="cuda", dtype=torch.bfloat16)
        d_all = torch.full((256, 3072), float("nan"), device="cuda", dtype=torch.bfloat16)
        before = gemmgen.loaded_kernels()
        for m in range(1, 257):
            gemmgen.gemm_nt(a_all[:m], b, out=d_all[:m])
        torch.cuda.synchronize()
        self.assertLess(rel_err(d_all, a_all.double() @ b.double().T), 4e-3)
        print("decode loop M = 1..256: 1 kernel with expected_m; %d kernels planned per M"
              % (gemmgen.loaded_kernels() - before))

    def test_batches(self):
        for dtype, bound in ((torch.bfloat16, 4e-3), (torch.float16, 1e-3)):
            a = torch.randn(3, 200, 136, device="cuda", dtype=dtype)
            b = torch.randn(3, 136, 264, device="cuda", dtype=dtype)
            d = gemmgen.gemm(a, b)  # allocated through torch
            torch.cuda.synchronize()
            self.assertEqual(tuple(d.shape), (3, 200, 264))
            self.assertLess(rel_err(d, a.double() @ b.double()), bound)
            shared = torch.randn(136, 264, device="cuda", dtype=dtype)  # one b for every matrix
            d = torch.full((3, 200, 264), float("nan"), device="cuda", dtype=dtype)
            gemmgen.gemm(a, shared, out=d)
            torch.cuda.synchronize()
            self.assertLess(rel_err(d, a.double() @ shared.double()), bound)

    def test_epilogue(self):
        m, n, k = 1000, 1024, 512
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
        bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        d = gemmgen.gemm_nt(a, b, alpha=0.5, beta=2.0, c=c, bias=bias, activation="gelu")
        torch.cuda.synchronize()
        ref = torch.nn.functional.gelu(0.5 * (a.double() @ b.double().T) + 2.0 * c.double() + bias.double())
        self.assertLess(rel_err(d, ref), 4e-3)
        rows = torch.randn(m, device="cuda", dtype=torch.bfloat16)
        d = gemmgen.gemm_nt(a, b, bias=rows, bias_along="rows", activation="relu")
        torch.cuda.synchronize()
        self.assertLess(rel_err(d, torch.relu(a.double() @ b.double().T + rows.double()[:, None])), 4e-3)

    def test_schedule_text(self):
        # the caller's own schedule (v8's shape of one, four stages) in the text form
        sched = gemmgen.Schedule("tile 128 128 64\ninline cast\nmma 64 128 16 sm_90a\nbind k_o serial\n"
                                 "bind m_o block.y\nbind n_o block.x\ncache_read A tma\ncache_read B tma\n"
                                 "cache_write cast shared tma\ncircular_buffer k_o 4 3\n")
        a = torch.randn(1000, 512, device="cuda", dtype=torch.float16)
        b = torch.randn(768, 512, device="cuda", dtype=torch.float16)
        d = torch.full((1000, 768), float("nan"), device="cuda", dtype=torch.float16)
        gemmgen.gemm_nt(a, b, out=d, schedule=sched)
        torch.cuda.synchronize()
        self.assertLess(rel_err(d, a.double() @ b.double().T), 1e-3)

    def test_dlpack_only_tensor(self):
        class DlpackOnly:  # what a JAX array offers
            def __init__(self, t):
                self.t = t

            def __dlpack__(self, stream=None):
                return self.t.__dlpack__(stream=stream)

        a = torch.randn(300, 256, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(200, 256, device="cuda", dtype=torch.bfloat16)
        d = torch.full((300, 200), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemmgen.gemm_nt(DlpackOnly(a), DlpackOnly(b.T.contiguous().T), out=DlpackOnly(d))
        torch.cuda.synchronize()
        self.assertLess(rel_err(d, a.double() @ b.double().T), 4e-3)

    def test_grouped_contiguous(self):
        groups, n, k = 6, 768, 512
        sizes = [0, 130, 64, 1, 300, 17]
        offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), device="cuda", dtype=torch.int32)
        m = sum(sizes)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemmgen.m_grouped_gemm_nt_contiguous(a, b, d, offsets, expected_m=1024)
        torch.cuda.synchronize()
        ref = torch.cat([a[o:o + r].double() @ b[g].double().T for g, (o, r) in
                         enumerate(zip(offsets.tolist(), sizes))])
        self.assertLess(rel_err(d, ref), 4e-3)

    def test_grouped_masked(self):
        groups, m_max, n, k = 4, 256, 512, 384
        masked = torch.tensor([256, 3, 0, 130], device="cuda", dtype=torch.int32)
        a = torch.randn(groups, m_max, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
        d = torch.full((groups, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemmgen.m_grouped_gemm_nt_masked(a, b, d, masked, 128)
        torch.cuda.synchronize()
        for g, rows in enumerate(masked.tolist()):
            if rows:
                self.assertLess(rel_err(d[g, :rows], a[g, :rows].double() @ b[g].double().T), 4e-3, "group %d" % g)

    def test_grouped_varlen_k(self):
        # weight gradients: d[g] = a[o_g:o_g+1].T @ b[o_g:o_g+1], one kernel for every K
        groups, m, n = 4, 256, 384
        for sizes in ([512, 0, 130, 1000], [64, 64, 64, 64]):
            k = sum(sizes)
            offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), device="cuda", dtype=torch.int32)
            a = torch.randn(k, m, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            d = torch.full((groups, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            before = gemmgen.loaded_kernels()
            gemmgen.k_grouped_gemm_tn_contiguous(a, b, d, offsets)
            torch.cuda.synchronize()
            for g, (o, r) in enumerate(zip(offsets.tolist(), sizes)):
                if r == 0:
                    self.assertTrue(torch.equal(d[g], torch.zeros_like(d[g])), "an empty group stores zeros")
                else:
                    self.assertLess(rel_err(d[g], a[o:o + r].double().T @ b[o:o + r].double()), 4e-3, "group %d" % g)
        self.assertEqual(gemmgen.loaded_kernels() - before, 0)  # the second K reused the first's kernel

    def check_fp8(self, out, ref, what):
        ours, diff = rel_err(out, ref), deepgemm_diff(out, ref)
        self.assertLess(ours, 4e-3, "%s: relative Frobenius %g" % (what, ours))
        self.assertLess(diff, 1e-3, "%s: DeepGEMM's diff %g" % (what, diff))
        return ours

    def test_fp8_dense(self):
        for m, n, k in ((1000, 1536, 1024), (4096, 4096, 4096), (1, 2048, 7168)):
            a, sa = quantize_1x128(torch.randn(m, k, device="cuda"))
            b, sb = quantize_128x128(torch.randn(n, k, device="cuda"))
            d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            gemmgen.fp8_gemm_nt((a, mn_major(sa)), (b, sb), d)
            torch.cuda.synchronize()
            ref = dequantize(a, sa, 1) @ dequantize(b, sb, 128).T
            ours = self.check_fp8(d, ref, "%dx%dx%d" % (m, n, k))
            # K-major factors for a read the same
            d2 = gemmgen.fp8_gemm_nt((a, sa.contiguous()), (b, sb))
            torch.cuda.synchronize()
            self.assertTrue(torch.equal(d, d2), "%dx%dx%d: MN- and K-major factors differ" % (m, n, k))
            try:  # cuBLASLt's blockwise FP8 (CUDA 12.9+) through torch, where this torch takes it
                # torch's blockwise form: a's 1x128 factors outer-dim-major, b's 128x128 as b.T's
                lt = torch._scaled_mm(a, b.T, scale_a=sa.T.contiguous().T, scale_b=sb.T, out_dtype=torch.bfloat16)
                theirs = rel_err(lt, ref)
                print("fp8 %dx%dx%d: ours %.3g, torch._scaled_mm blockwise %.3g" % (m, n, k, ours, theirs))
                self.assertLessEqual(ours, max(2 * theirs, 1e-3))
            except (RuntimeError, TypeError, ValueError) as e:
                print("fp8 %dx%dx%d: ours %.3g; torch._scaled_mm blockwise not run here: %s"
                      % (m, n, k, ours, str(e).splitlines()[0][:160]))

    def test_fp8_grouped(self):
        groups, n, k = 4, 1024, 768
        sizes = [256, 0, 100, 384]
        m = sum(sizes)
        offsets = torch.tensor([0, 256, 256, 356, 740], device="cuda", dtype=torch.int32)
        a, sa = quantize_1x128(torch.randn(m, k, device="cuda"))
        bs = [quantize_128x128(torch.randn(n, k, device="cuda")) for _ in range(groups)]
        b = torch.stack([q for q, _ in bs])
        sb = torch.stack([s for _, s in bs])
        d = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemmgen.m_grouped_fp8_gemm_nt_contiguous((a, mn_major(sa)), (b, sb), d, offsets)
        torch.cuda.synchronize()
        deq_a = dequantize(a, sa, 1)
        ref = torch.cat([deq_a[o:o + r] @ dequantize(b[g], sb[g], 128).T for g, (o, r) in
                         enumerate(zip(offsets.tolist(), sizes))])
        self.check_fp8(d, ref, "contiguous FP8")
        m_max = 384
        masked = torch.tensor([384, 1, 0, 200], device="cuda", dtype=torch.int32)
        quant = [quantize_1x128(torch.randn(m_max, k, device="cuda")) for _ in range(groups)]
        a = torch.stack([q for q, _ in quant])
        sa = torch.stack([mn_major(s) for _, s in quant])  # [G, M, K/128], each group's MN-major
        d = torch.full((groups, m_max, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        gemmgen.m_grouped_fp8_gemm_nt_masked((a, sa), (b, sb), d, masked, expected_m=256)
        torch.cuda.synchronize()
        for g, rows in enumerate(masked.tolist()):
            if rows:
                ref = dequantize(a[g, :rows], quant[g][1][:rows], 1) @ dequantize(b[g], sb[g], 128).T
                self.check_fp8(d[g, :rows], ref, "masked FP8 group %d" % g)

    def test_split_k_on_two_streams_and_a_fresh_capture_stream(self):
        # 256 x 256 x 8192 plans split-K: partial sums and tickets in a workspace, one per stream
        self.assertIn("split", gemmgen.explain(gemmgen.Problem(256, 256, 8192)))
        a = torch.randn(256, 8192, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(256, 8192, device="cuda", dtype=torch.bfloat16)
        eager = gemmgen.gemm_nt(a, b)
        torch.cuda.synchronize()
        self.assertLess(rel_err(eager, a.double() @ b.double().T), 4e-3)
        streams = [torch.cuda.Stream(), torch.cuda.Stream()]
        outs = [[torch.empty_like(eager) for _ in range(20)] for _ in streams]
        for s in streams:
            s.wait_stream(torch.cuda.current_stream())
        for i in range(20):  # interleaved: the two streams' launches overlap
            for s, o in zip(streams, outs):
                with torch.cuda.stream(s):
                    gemmgen.gemm_nt(a, b, out=o[i])
        torch.cuda.synchronize()
        for o in outs:
            for x in o:
                self.assertTrue(torch.equal(x, eager))
        # torch's capture stream has never launched this kernel: its workspace is made mid-capture
        captured = torch.full_like(eager, float("nan"))
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            gemmgen.gemm_nt(a, b, out=captured)
        for _ in range(3):
            graph.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(captured, eager))

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
        # host time only: the calls queue behind a kernel that holds the GPU (torch.cuda._sleep)
        a = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        d = torch.empty(64, 4096, device="cuda", dtype=torch.bfloat16)
        gemmgen.gemm_nt(a, b, out=d)
        torch.cuda.synchronize()
        reps = 200
        torch.cuda._sleep(200_000_000)
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
