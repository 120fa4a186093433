"""Host time of a cached call, split: the C++ side alone (gg_gemm through ctypes with a prebuilt
problem struct) against the whole Python call (gemm_nt: tensors read, struct looked up, stream
looked up), and the Python side's parts. On a GPU machine with PyTorch:
GEMMGEN_LIBRARY=build/capi/libgemmgen_c.so PYTHONPATH=python python3 benchmarks/python_call_overhead.py"""
import ctypes
import time

import torch

import gemmgen
from gemmgen import _abi, _tensors

a = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
d = torch.empty(64, 4096, device="cuda", dtype=torch.bfloat16)
gemmgen.gemm_nt(a, b, out=d)
torch.cuda.synchronize()
lib = _abi.lib()
p = gemmgen.Problem(64, 4096, 4096, "bf16", "bf16")._c()
pa, pb, pd = a.data_ptr(), b.data_ptr(), d.data_ptr()
stream = gemmgen._stream(None)


def timed(f, reps=1000):
    """Host microseconds per call: the best of five batches (a noisy host inflates a batch, never
    shrinks it), each queued behind a kernel that holds the GPU (torch.cuda._sleep), so no launch
    waits for the GPU and what is timed is the host's own work."""
    for _ in range(50):
        f()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        torch.cuda._sleep(200_000_000)  # about 0.1 s of GPU time
        t = time.perf_counter()
        for _ in range(reps // 5):
            f()
        best = min(best, (time.perf_counter() - t) / (reps // 5) * 1e6)
        torch.cuda.synchronize()
    return best


raw = timed(lambda: lib.gg_gemm(ctypes.byref(p), pa, pb, pd, stream))
full = timed(lambda: gemmgen.gemm_nt(a, b, out=d))
launch = timed(lambda: torch.matmul(a, b.T, out=d))
stream_us = timed(lambda: gemmgen._stream(None))
view = timed(lambda: (_tensors.view(a, "a"), _tensors.view(b, "b"), _tensors.view(d, "out")))
print("host us per cached call (best of 5 batches): gg_gemm alone %.1f, gemmgen.gemm_nt %.1f, torch.matmul(out=) "
      "%.1f; of the Python side: torch stream lookup %.1f, three tensor reads %.1f"
      % (raw, full, launch, stream_us, view))
