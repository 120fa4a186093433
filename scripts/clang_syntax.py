#!/usr/bin/env python3
"""Every C++ source of the build, parsed by clang++-14 with the build's own flags (-fsyntax-only):
a plain `cmake --build` must work with clang 14 as well as with the g++ that CI compiles with, and
the two disagree on some C++17 (clang 14 refuses a structured binding read inside a lambda, which
doctest's CAPTURE and CHECK_MESSAGE are). Exit 77 (skipped) without clang++-14.

    python3 scripts/clang_syntax.py build/compile_commands.json [-j N]
"""
import argparse
import concurrent.futures
import json
import shlex
import shutil
import subprocess
import sys


def clang_command(entry, clang):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, skip = [clang], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        else:
            out.append(a)
    # (runtime/CMakeLists.txt adds this for clang builds: the embedded device headers are one raw
    # string over the standard's 64 KB minimum; these commands come from the g++ build)
    return out + ["-fsyntax-only", "-Wno-overlength-strings"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("compile_commands")
    parser.add_argument("-j", type=int, default=2)
    args = parser.parse_args()
    clang = shutil.which("clang++-14")
    if clang is None:
        print("clang++-14 not found: skipped")
        return 77
    with open(args.compile_commands) as f:
        entries = [e for e in json.load(f) if e["file"].endswith(".cpp")]

    def check(entry):
        done = subprocess.run(clang_command(entry, clang), cwd=entry["directory"], capture_output=True, text=True)
        return entry["file"], done.returncode, done.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
        for path, code, err in pool.map(check, entries):
            if code != 0 or "warning:" in err:
                failed += 1
                print(f"clang++-14: {path}\n{err}")
    print(f"clang++-14 -fsyntax-only: {len(entries) - failed} of {len(entries)} sources clean")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
