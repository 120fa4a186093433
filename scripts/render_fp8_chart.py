#!/usr/bin/env python3
"""Bar chart (SVG) of a `gemmgen bench` table: our TFLOP/s beside the baseline's, per shape, drawn
from a saved log (`gemmgen bench --plot` draws the ratio alone, during the run).

usage: scripts/render_fp8_chart.py BENCH_LOG OUT.svg TITLE

BENCH_LOG holds the markdown table `gemmgen bench` prints (lines `| MxNxK | label | schedule |
config | TFLOP/s | baseline TFLOP/s | ratio | ...`); the first table in the file is drawn.
"""
import re
import sys


def read_rows(path):
    rows = []
    for line in open(path):
        m = re.match(r"\| (\d+x\d+x\d+) \|[^|]*\|[^|]*\|[^|]*\| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", line)
        if m:
            rows.append((m.group(1), float(m.group(2)), float(m.group(3)), float(m.group(4))))
        elif rows and not line.startswith("|"):
            break  # the first table only
    return rows


def render(rows, title):
    width, height, left, right, top, bottom = 900, 420, 60, 880, 30, 310
    top_value = max(max(r[1], r[2]) for r in rows)
    scale_max = 250 * (int(top_value / 250) + 1)
    y = lambda v: bottom - (bottom - top) * v / scale_max
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="11">', f'<text x="{left}" y="18" font-size="13">{title}</text>']
    for v in range(0, scale_max + 1, 250):
        out.append(f'<line x1="{left}" x2="{right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    slot = (right - left) / len(rows)
    bar = slot * 0.38
    for i, (shape, ours, base, ratio) in enumerate(rows):
        x = left + 2 + i * slot
        out.append(f'<rect x="{x:.1f}" y="{y(ours):.1f}" width="{bar:.1f}" height="{bottom - y(ours):.1f}" fill="#1f77b4"/>')
        out.append(f'<rect x="{x + bar + 1:.1f}" y="{y(base):.1f}" width="{bar:.1f}" height="{bottom - y(base):.1f}" '
                   f'fill="#ff7f0e"/>')
        out.append(f'<text x="{x + bar:.1f}" y="{min(y(ours), y(base)) - 3:.1f}" text-anchor="middle" '
                   f'font-size="9">{ratio:.2f}</text>')
        out.append(f'<text transform="translate({x + bar:.1f},{bottom + 8:.1f}) rotate(60)" font-size="10">{shape}</text>')
    out.append(f'<rect x="{right - 250}" y="36" width="10" height="10" fill="#1f77b4"/>'
               f'<text x="{right - 235}" y="45">gemmgen (ratio above the pair)</text>')
    out.append(f'<rect x="{right - 250}" y="52" width="10" height="10" fill="#ff7f0e"/>'
               f'<text x="{right - 235}" y="61">baseline, same process</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    rows = read_rows(sys.argv[1])
    if not rows:
        sys.exit(f"{sys.argv[1]}: no `gemmgen bench` table")
    open(sys.argv[2], "w").write(render(rows, sys.argv[3]))


if __name__ == "__main__":
    main()
