#!/usr/bin/env python3
"""Writes benchmarks/model_shapes.txt: the shapes the cost model's data set is measured on
(`gemmgen tune --shapes benchmarks/model_shapes.txt --json ...` on an H100), spanning M, N and K
from 1 to 16384: squares, LLM projections (prefill and decode), ragged sizes (some with rows TMA
cannot address, which are staged), long K, short K and skinny M. Deterministic: the ragged sizes
come from a seeded generator, so rerunning the script rewrites the same file.

    python3 scripts/model_shapes.py > benchmarks/model_shapes.txt
"""
import random

shapes = []


def add(m, n, k, label):
    if (m, n, k) not in [(s[0], s[1], s[2]) for s in shapes]:
        shapes.append((m, n, k, label))


for s in (256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384):
    add(s, s, s, "square")
# Transformer linear layers: tokens x out x in, for hidden sizes and their MLP widths.
models = {"llama-8b": (4096, 14336), "llama-70b": (8192, 28672), "deepseek-v3": (7168, 18432), "qwen-14b": (5120, 13824)}
for name, (hidden, ffn) in models.items():
    for tokens in (1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384):
        if tokens in (1, 16, 128, 1024, 8192) or name == "llama-8b":
            add(tokens, ffn, hidden, name + " mlp up")
        if tokens in (16, 256, 4096, 16384) or name == "llama-8b":
            add(tokens, hidden, ffn, name + " mlp down")
        if tokens in (64, 2048) or name == "llama-8b":
            add(tokens, 3 * hidden, hidden, name + " qkv")
rng = random.Random(31)
for _ in range(50):
    m, n, k = (int(10 ** rng.uniform(2, 4)) for _ in range(3))
    add(m, n, k, "ragged")
for m in (128, 256, 512, 1024, 2048):
    for n in (1024, 4096):
        add(m, n, 16384 if m < 1024 else 8192, "long k")
    add(m, 2048, 32768 if m <= 512 else 16384, "long k")
for m, n in ((4096, 4096), (8192, 8192), (16384, 4096), (2048, 16384)):
    for k in (64, 128, 256, 512):
        add(m, n, k, "short k")
for m in (1, 2, 4, 8, 32):
    for n, k in ((1024, 1024), (4096, 4096), (16384, 4096), (4096, 16384)):
        add(m, n, k, "skinny")
for n, k in ((4096, 4096), (8192, 1024)):
    add(n, 16, k, "skinny n")
print("# The cost model's data set shapes (scripts/model_shapes.py writes this file): M N K label")
for m, n, k, label in shapes:
    print(m, n, k, label)
