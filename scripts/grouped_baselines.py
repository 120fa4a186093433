#!/usr/bin/env python3
"""Baselines for grouped GEMM on the lent GPU (PyTorch, bf16): torch._grouped_mm and a loop of
matmuls (one per group) over the shapes gpu_session.sh's contiguous part times with gemmgen, and
(`pointer`) over the pointer-array shapes of its pointer part, each group in tensors of its own,
so the issue's baselines are measured on the same machine and day. Prints TFLOP/s (median of 30
timed runs after 5 warm-ups, CUDA events). Usage: grouped_baselines.py [contiguous|pointer]..."""
import random
import statistics

import torch


def timed(fn, reps=30, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def sizes_of(groups, rows, fill):
    if fill == "even":
        return [rows // groups] * groups
    rng = random.Random(int(fill.split(":")[1]))
    cuts = sorted(rng.randint(0, rows) for _ in range(groups - 1))
    edges = [0] + cuts + [rows]
    return [edges[i + 1] - edges[i] for i in range(groups)]


def pointer_array():
    # Groups in tensors of their own (what a pointer array addresses): a loop of matmuls, and
    # torch._grouped_mm over the same products stacked (its 3-D form needs one tensor).
    for groups, m, n, k in ((8, 4096, 4096, 7168), (64, 256, 4096, 7168), (8, 4096, 7168, 2048)):
        a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(groups)]
        b = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(groups)]
        flops = 2.0 * groups * m * n * k

        def loop():
            for g in range(groups):
                torch.matmul(a[g], b[g].t())

        line = f"pointer baseline {groups} x {m}x{n}x{k}: loop {flops / timed(loop) / 1e9:.0f} TFLOP/s"
        try:
            a3, b3 = torch.stack(a), torch.stack(b).transpose(-2, -1)
            ms = timed(lambda: torch._grouped_mm(a3, b3))
            line += f", torch._grouped_mm (stacked) {flops / ms / 1e9:.0f} TFLOP/s"
        except Exception as e:  # noqa: BLE001 - report and go on
            line += f", torch._grouped_mm failed: {str(e)[:120]}"
        print(line, flush=True)


def main():
    import sys
    torch.manual_seed(0)
    print("device", torch.cuda.get_device_name(), "torch", torch.__version__)
    parts = sys.argv[1:] or ["contiguous"]
    if "pointer" in parts:
        pointer_array()
    if "contiguous" not in parts:
        return
    for n, k in ((4096, 7168), (7168, 2048)):
        for groups, rows, fill in ((4, 32768, "even"), (8, 32768, "even"), (64, 16384, "random:7"), (64, 16384, "random:8")):
            sizes = sizes_of(groups, rows, fill)
            a = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16)
            ends = torch.tensor(list(__import__("itertools").accumulate(sizes)), device="cuda", dtype=torch.int32)
            flops = 2.0 * rows * n * k
            starts = [0] + ends.tolist()[:-1]

            def loop():
                for g in range(groups):
                    if sizes[g]:
                        torch.matmul(a[starts[g]:starts[g] + sizes[g]], b[g].t())

            line = f"baseline {groups}x{rows} {fill} N={n} K={k}: loop {flops / timed(loop) / 1e9:.0f} TFLOP/s"
            try:
                bt = b.transpose(-2, -1)
                ms = timed(lambda: torch._grouped_mm(a, bt, offs=ends))
                line += f", torch._grouped_mm {flops / ms / 1e9:.0f} TFLOP/s"
            except Exception as e:  # noqa: BLE001 - report and go on
                line += f", torch._grouped_mm failed: {str(e)[:120]}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
