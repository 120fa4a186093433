"""gemmgen.gemm_nt (the Python package over the C ABI) against torch.matmul (cuBLAS) and against
the C++ gg::gemm path alone (gg_gemm through ctypes with a prebuilt problem: no tensor reads, no
Python-side lookup) in the same process: bf16 at 4096^3 and 8192^3, random data, warm-up, 30 runs
interleaved, medians of CUDA event times (which include each call's host time before its launch).
On a GPU machine with PyTorch:
GEMMGEN_LIBRARY=build/capi/libgemmgen_c.so PYTHONPATH=python python3 benchmarks/python_vs_torch.py"""
import ctypes
import statistics

import torch

import gemmgen
from gemmgen import _abi

for n in (4096, 8192):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    d = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    p = gemmgen.Problem(n, n, n)._c()
    stream = gemmgen._stream(None)
    pa, pb, pd = a.data_ptr(), b.data_ptr(), d.data_ptr()
    calls = {
        "gemmgen.gemm_nt": lambda: gemmgen.gemm_nt(a, b, out=d),
        "C++ (gg_gemm)": lambda: _abi.lib().gg_gemm(ctypes.byref(p), pa, pb, pd, stream),
        "torch.matmul": lambda: torch.matmul(a, b.T),
    }
    for _ in range(3):
        for f in calls.values():
            f()
    torch.cuda.synchronize()
    times = {name: [] for name in calls}
    for _ in range(30):
        for name, f in calls.items():
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            f()
            e.record()
            torch.cuda.synchronize()
            times[name].append(s.elapsed_time(e))
    med = {name: statistics.median(t) for name, t in times.items()}
    tf = {name: 2 * n**3 / ms / 1e9 for name, ms in med.items()}
    ref = a.double() @ b.double().T
    gemmgen.gemm_nt(a, b, out=d)
    err = ((d.double() - ref).norm() / ref.norm()).item()
    print("%d^3 bf16: gemmgen.gemm_nt %.1f TFLOP/s, C++ gg_gemm %.1f (Python/C++ %.4f), torch.matmul %.1f "
          "(ratio to torch %.3f), rel err %.2e" % (
              n, tf["gemmgen.gemm_nt"], tf["C++ (gg_gemm)"], tf["gemmgen.gemm_nt"] / tf["C++ (gg_gemm)"],
              tf["torch.matmul"], tf["gemmgen.gemm_nt"] / tf["torch.matmul"], err))
