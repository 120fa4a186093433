"""gemmgen.gemm_nt (the Python package over the C ABI) against torch.matmul (cuBLAS) in the same
process: bf16 at 4096^3 and 8192^3, random data, warm-up, 30 runs interleaved, medians of CUDA
event times (which include each call's host time before its launch). On a GPU machine with
PyTorch:  GEMMGEN_LIBRARY=build/capi/libgemmgen_c.so PYTHONPATH=python python3 benchmarks/python_vs_torch.py"""
import statistics, torch, gemmgen
for n in (4096, 8192):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    d = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        gemmgen.gemm_nt(a, b, out=d); torch.matmul(a, b.T)
    torch.cuda.synchronize()
    ours, theirs = [], []
    for _ in range(30):
        for f, rec in ((lambda: gemmgen.gemm_nt(a, b, out=d), ours), (lambda: torch.matmul(a, b.T), theirs)):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); f(); e.record(); torch.cuda.synchronize(); rec.append(s.elapsed_time(e))
    mo, mt = statistics.median(ours), statistics.median(theirs)
    tf = lambda ms: 2 * n**3 / ms / 1e9
    err = ((d.double() - (a.double() @ b.double().T)).norm() / (a.double() @ b.double().T).norm()).item()
    print("%d^3 bf16: gemmgen.gemm_nt %.1f TFLOP/s, torch.matmul %.1f TFLOP/s, ratio %.3f, rel err %.2e" % (n, tf(mo), tf(mt), mt / mo, err))
