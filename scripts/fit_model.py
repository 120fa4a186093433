#!/usr/bin/env python3
"""Fits the cost model's rates (ModelRates in schedules/auto_schedule.h) to `gemmgen tune --json`
measurements and reports what the fit buys on shapes it did not see.

Every Nth shape (--held-out N, as scripts/model_report.py takes them) is held out; the rest train.
The fit minimises the mean squared log ratio of predicted to measured time over the training
shapes' measured candidates (or, --objective regret, the mean log of the time the model's choice
takes over the fastest measured candidate's), by coordinate descent over the rates in log space (each rate tried at
a few multiples, the best kept, round after round until none improves). Predictions come from
`gemmgen model`, so the fit runs the C++ model itself, not a copy of it. Reported for the current
and the fitted rates, on the held-out shapes: how often the model's choice among the measured
candidates (the lowest predicted time) was within 3% of the fastest measured, and the prediction
error. Deterministic: the same data give the same fit.

    python3 scripts/fit_model.py --gemmgen build/tools/gemmgen/gemmgen benchmarks/data/*.json \\
        [--held-out 4] [--rounds 4] [--write fitted_rates.txt]
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_report import load_shapes  # noqa: E402

STEPS = (0.5, 0.7, 0.85, 1.18, 1.4, 2.0)


def read_rates(text):
    rates = {}
    for line in text.splitlines():
        words = line.split("#")[0].split()
        if len(words) == 2:
            rates[words[0]] = float(words[1])
    return rates


def rates_text(rates):
    return "".join(f"{name} {value:.6g}\n" for name, value in rates.items())


class Model:
    """The C++ model over every candidate line, one `gemmgen model` run per set of rates."""

    def __init__(self, gemmgen, lines, scratch):
        self.gemmgen, self.scratch = gemmgen, scratch
        self.configs = os.path.join(scratch, "configs.txt")
        with open(self.configs, "w") as f:
            f.write("".join(line + "\n" for line in lines))

    def run(self, *args):
        done = subprocess.run([self.gemmgen, "model", *args], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"gemmgen model failed: {done.stderr.strip()}")
        return done.stdout

    def defaults(self):
        return read_rates(self.run("--print-rates"))

    def predict(self, rates):
        path = os.path.join(self.scratch, "rates.txt")
        with open(path, "w") as f:
            f.write(rates_text(rates))
        return [float(v) for v in self.run("--configs", self.configs, "--rates", path).split()]


def candidate_lines(shapes):
    """Each shape's candidates that `gemmgen model` can predict: (shape index, candidate, line)."""
    out = []
    for index, (_, s) in enumerate(shapes):
        if s.get("layout"):
            continue  # the model command plans K-major operands only
        for c in s["candidates"]:
            if "params" not in c:
                continue
            swapped = 1 if c.get("swapped") else 0
            out.append((index, c, f"{s['m']} {s['n']} {s['k']} {s['dtype'] or 'bf16'} {s['out'] or 'bf16'} "
                                  f"{swapped} {c['params']}"))
    return out


def measured(c):
    return c["passed"] and c["ms"] > 0


def score(entries, predicted, shapes_in):
    """(squared log error mean, choices within 3%, shapes, median |predicted/measured - 1|, regret) over
    shapes_in; the regret is the mean log of the chosen candidate's time over the fastest's (a choice
    that failed or was not timed counts as the slowest timed one)."""
    by_shape = {}
    squared, errors = [], []
    for (index, c, _), p in zip(entries, predicted):
        if index not in shapes_in:
            continue
        by_shape.setdefault(index, []).append((p, c))
        if measured(c):
            ratio = p / (c["ms"] * 1e3)
            squared.append(math.log(ratio) ** 2)
            errors.append(abs(ratio - 1))
    within = 0
    shapes = 0
    regret = 0.0
    for items in by_shape.values():
        timed = [c for _, c in items if measured(c)]
        if not timed:
            continue
        shapes += 1
        chosen = min(items, key=lambda item: item[0])[1]  # the first of equal predictions, as tune lists them
        fastest = min(c["ms"] for c in timed)
        within += measured(chosen) and chosen["ms"] <= 1.03 * fastest
        regret += math.log((chosen["ms"] if measured(chosen) else max(c["ms"] for c in timed)) / fastest)
    errors.sort()
    median = errors[len(errors) // 2] if errors else float("nan")
    return (sum(squared) / max(1, len(squared)), within, shapes, median, regret / max(1, shapes))


def loss_of(objective, result):
    """What the descent minimises: the prediction error, or the choices' regret (the error a tenth as
    much, so equal choices prefer better predictions)."""
    return result[0] if objective == "error" else result[4] + 0.1 * result[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+")
    parser.add_argument("--gemmgen", required=True, help="the gemmgen binary whose model is fitted")
    parser.add_argument("--held-out", type=int, default=4, help="hold out every Nth shape (default 4)")
    parser.add_argument("--rounds", type=int, default=4, help="coordinate descent rounds at most (default 4)")
    parser.add_argument("--write", help="write the fitted rates to this file ('name value' lines)")
    parser.add_argument("--objective", choices=("error", "regret"), default="error",
                        help="minimise the squared log prediction error (default), or the time the model's "
                             "choices lose against the fastest measured candidate")
    args = parser.parse_args()
    shapes = load_shapes(args.files)
    held = set(range(0, len(shapes), max(1, args.held_out)))
    train = set(range(len(shapes))) - held
    entries = candidate_lines(shapes)
    if not entries or not train:
        raise SystemExit("fit_model: no candidates to fit")
    with tempfile.TemporaryDirectory() as scratch:
        model = Model(args.gemmgen, [line for _, _, line in entries], scratch)
        current = model.defaults()
        rates = dict(current)
        best = loss_of(args.objective, score(entries, model.predict(rates), train))
        for _ in range(args.rounds):
            improved = False
            for name in rates:
                for step in STEPS:
                    trial = dict(rates, **{name: rates[name] * step})
                    loss = loss_of(args.objective, score(entries, model.predict(trial), train))
                    if loss < best * (1 - 1e-9):
                        best, rates, improved = loss, trial, True
            if not improved:
                break
        before_train = score(entries, model.predict(current), train)
        after_train = score(entries, model.predict(rates), train)
        before = score(entries, model.predict(current), held)
        after = score(entries, model.predict(rates), held)
    print(f"shapes: {len(shapes)} ({len(train)} train, {len(held)} held out: every {args.held_out}th)")
    print(f"training: squared log error {before_train[0]:.4f} -> {after_train[0]:.4f}, median error "
          f"{before_train[3]:.3f} -> {after_train[3]:.3f}, choice within 3% {before_train[1]} -> {after_train[1]} "
          f"of {after_train[2]}, regret {before_train[4]:.4f} -> {after_train[4]:.4f}")
    print(f"held out: squared log error {before[0]:.4f} -> {after[0]:.4f}, median error {before[3]:.3f} -> "
          f"{after[3]:.3f}, choice within 3% {before[1]} -> {after[1]} of {after[2]}, regret {before[4]:.4f} -> "
          f"{after[4]:.4f}")
    for name, value in rates.items():
        if value != current[name]:
            print(f"  {name}: {current[name]:.4g} -> {value:.4g}")
    if args.write:
        with open(args.write, "w") as f:
            f.write("# fitted by scripts/fit_model.py to " + " ".join(os.path.basename(p) for p in args.files) + "\n")
            f.write(rates_text(rates))


if __name__ == "__main__":
    main()
