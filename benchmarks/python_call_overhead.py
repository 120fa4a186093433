"""Host time of a cached call, split: the C++ side alone (gg_gemm through ctypes with a prebuilt
problem struct) against the whole Python call (gemm_nt: tensors read, struct looked up, stream
looked up), and the Python side's parts. On a GPU machine with PyTorch:
GEMMGEN_LIBRARY=build/capi/libgemmgen_c.so PYTHONPATH=python python3 benchmarks/python_call_overhead.py"""
import ctypes, time, torch, gemmgen
a = torch.randn(64, 4096, device="cuda", dtype=torch.bfloat16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
d = torch.empty(64, 4096, device="cuda", dtype=torch.bfloat16)
gemmgen.gemm_nt(a, b, out=d); torch.cuda.synchronize()
lib = gemmgen._c()
p = gemmgen.Problem(64, 4096, 4096, "bf16", "bf16")._c()
pa, pb, pd = a.data_ptr(), b.data_ptr(), d.data_ptr()
def timed(f, reps=500):
    for _ in range(20): f()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps): f()
    us = (time.perf_counter() - t) / reps * 1e6
    torch.cuda.synchronize()
    return us
raw = timed(lambda: lib.gg_gemm(ctypes.byref(p), pa, pb, pd, 0))
full = timed(lambda: gemmgen.gemm_nt(a, b, out=d))
stream = timed(lambda: gemmgen._torch_stream(torch))
view = timed(lambda: (gemmgen._view(a, "a"), gemmgen._view(b, "b"), gemmgen._view(d, "out")))
build = timed(lambda: gemmgen.Problem(64, 4096, 4096, "bf16", "bf16")._c())
print("host us per cached call: gg_gemm alone %.1f, gemm_nt %.1f; of the Python side: torch stream lookup %.1f, "
      "three tensor reads %.1f, problem struct %.1f" % (raw, full, stream, view, build))
