#!/usr/bin/env python3
"""The cost model against measurement: reads `gemmgen tune --json` files (benchmarks/data/*.json)
and prints, over every shape in them, how often the model's choice (each shape's first candidate)
was within 3% of the fastest candidate measured, its worst misses, and the prediction's error
(|predicted / measured - 1|) over every candidate that passed its check: median, 90th percentile
and worst. What docs/performance.md reports for the model; with --held-out N it reports only
every Nth shape (the part a fit leaves out).

    python3 scripts/model_report.py benchmarks/data/tune_h100_2026-11-26.json [--held-out 4]
"""
import argparse
import json


def load_shapes(paths):
    """Every shape of the files, as (device, shape) pairs, in file order."""
    shapes = []
    for path in paths:
        with open(path) as f:
            text = f.read()
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            # A tune run stopped mid-way (a time limit) leaves its last shape unfinished: read the
            # shapes before it. Each shape's object ends in "]}".
            cut = text.rfind(']}, {"m"')
            if cut < 0:
                raise SystemExit(f"{path} is not a tune --json file")
            data = json.loads(text[: cut + 2] + "]}")
            print(f"{path}: unfinished, read its {len(data['shapes'])} complete shapes")
        # each shape carries its file's dtypes and layout ("" is every operand K-major)
        common = {key: data.get(key, "") for key in ("dtype", "out", "layout")}
        shapes += [(data.get("device", "?"), dict(s, **common)) for s in data["shapes"]]
    return shapes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--held-out", type=int, default=1, help="report every Nth shape only (1: all)")
    args = parser.parse_args()
    shapes = load_shapes(args.files)[:: max(1, args.held_out)]
    ratios, errors = [], []
    for device, s in shapes:
        passed = [c for c in s["candidates"] if c["passed"] and c["ms"] > 0]
        if not passed:
            continue
        chosen = s["candidates"][0]
        fastest = min(passed, key=lambda c: c["ms"])
        ratio = chosen["ms"] / fastest["ms"] if chosen["passed"] else float("inf")
        ratios.append((ratio, s["m"], s["n"], s["k"]))
        errors += [abs(c["predicted_us"] / (c["ms"] * 1e3) - 1) for c in passed]
    if not ratios:
        raise SystemExit("model_report: no shape with a measured candidate")
    within = sum(1 for r in ratios if r[0] <= 1.03)
    errors.sort()
    print(f"shapes: {len(ratios)}, candidates measured: {len(errors)}")
    print(f"the model's choice within 3% of the fastest: {within} of {len(ratios)} ({100.0 * within / len(ratios):.0f}%)")
    print("worst choices: " + ", ".join(f"{m}x{n}x{k} {r:.2f}x" for r, m, n, k in sorted(ratios)[-5:][::-1]))
    pct = lambda q: errors[min(len(errors) - 1, int(q * len(errors)))]
    print(f"prediction error |predicted/measured - 1|: median {pct(0.5):.3f}, 90th percentile {pct(0.9):.3f}, "
          f"worst {errors[-1]:.3f}")


if __name__ == "__main__":
    main()
