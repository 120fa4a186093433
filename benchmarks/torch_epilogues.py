# What a PyTorch user runs after the GEMM, timed alone and after torch.matmul (8192^3, bf16).
import torch, torch.nn.functional as F
torch.manual_seed(0)
n = 8192
a = torch.randn(n, n, device='cuda', dtype=torch.bfloat16)
b = torch.randn(n, n, device='cuda', dtype=torch.bfloat16)
pre = torch.randn(n, n, device='cuda', dtype=torch.bfloat16)
bias = torch.randn(n, device='cuda', dtype=torch.bfloat16)
def t(fn, reps=30):
    for _ in range(3): fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); times.append(s.elapsed_time(e))
    times.sort(); return times[len(times)//2]
d = a @ b.t()
cases = {
  'matmul': lambda: a @ b.t(),
  'gelu(tanh)': lambda: F.gelu(d, approximate='tanh'),
  'gelu_backward(tanh)': lambda: torch.ops.aten.gelu_backward(d, pre, approximate='tanh'),
  'relu_backward (threshold_backward)': lambda: torch.ops.aten.threshold_backward(d, pre, 0.0),
  'silu_backward': lambda: torch.ops.aten.silu_backward(d, pre),
  'bias+gelu (two kernels)': lambda: F.gelu(d + bias, approximate='tanh'),
  'matmul then gelu': lambda: F.gelu(a @ b.t(), approximate='tanh'),
  'matmul then gelu_backward': lambda: torch.ops.aten.gelu_backward(a @ b.t(), pre, approximate='tanh'),
}
flop = 2 * n ** 3
for k, f in cases.items():
    ms = t(f)
    print(f"{k:40s} {ms:.4f} ms" + (f"  {flop / ms / 1e9:.1f} TFLOP/s" if 'matmul' in k else f"  {3 * n * n * 2 / ms / 1e6 if 'backward' in k else 2 * n * n * 2 / ms / 1e6:.0f} GB/s"))
