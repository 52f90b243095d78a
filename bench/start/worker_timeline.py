#!/usr/bin/env python3
"""The validation worker's timeline on one GPU, seen from outside: when each
line of its output arrives after the worker was started (ready, each check's
result, the host link, the host memory, done) and when it exits, for several
inputs, in turns, median of --rounds.  Where a start's time goes between the
GPU being open and `done`, without a profiler:

    bench/start/worker_timeline.py PROVISION [PROVISION...] [--only V,...] [--gpu 0] [--rounds 7] [--settle-ms 300]

Each variant is a name and the worker's stdin; the variants are fixed below so
that runs on different machines compare (--only picks some).  Several builds
take turns within each round, so that they meet the same machine.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

CHECKS = ["attention.fp16", "attention.bf16", "gemm.tf32", "gemm.fp8", "gemm.fp8.wgmma"]


def host_link(mib):
    return f"host-link {mib << 20} 3\n"


def variants():
    every = "\n".join(CHECKS) + "\n\n"
    links = host_link(32) + "host-memory\n"
    out = [("nothing", "\n", {}), ("checks+links", every + links, {}), ("checks", every, {})]
    out += [(f"checks+host-link {mib} MiB+host-memory", every + host_link(mib) + "host-memory\n", {})
            for mib in (16, 8, 4)]
    out += [(name, name + "\n\n", {}) for name in CHECKS + ["attention.bf16.wgmma"]]
    out += [(f"fp8+host-link {mib} MiB", "gemm.fp8\n\n" + host_link(mib), {}) for mib in (32, 8)]
    out.append(("fp8+host-memory", "gemm.fp8\n\nhost-memory\n", {}))
    return out


def label(line):
    if line.startswith("ready"):
        return "ready"
    if line.startswith("done"):
        return "done"
    if line.startswith("host_link"):
        return "host_link"
    if line.startswith("host_memory"):
        return "host_memory"
    m = re.search(r'name = "([^"]+)"', line)
    return m.group(1) if m else line.split(" ")[0]


def run_once(provision, gpu, stdin, extra_env):
    # As provision starts it: the GPU alone visible, so its cuInit opens that one.
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu), **extra_env)
    start = time.perf_counter()
    worker = subprocess.Popen([provision, "__check-worker", "--gpu", "0", "--as", str(gpu)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True, bufsize=1)
    worker.stdin.write(stdin)
    worker.stdin.close()
    times = {}
    for line in worker.stdout:
        times[label(line)] = (time.perf_counter() - start) * 1e3
        m = re.search(r"wall_ms = ([0-9.e+-]+)", line)
        if m:
            times[label(line) + " (device half)"] = float(m.group(1))
        for figure in ("h2d_gb_per_s", "d2h_gb_per_s", "generation", "waited_ms"):  # the host link's; done's
            m = re.search(figure + r" = ([0-9.e+-]+)", line)
            if m:
                times[figure] = float(m.group(1))
    worker.wait()
    times["exit"] = (time.perf_counter() - start) * 1e3
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("provision", nargs="+")
    parser.add_argument("--only", default="", help="comma-separated variant names (default: all)")
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--settle-ms", type=int, default=300)
    args = parser.parse_args()
    chosen = [v for v in variants() if not args.only or v[0] in args.only.split(",")]
    if not chosen:
        parser.error(f"--only names no variant (known: {', '.join(v[0] for v in variants())})")
    samples = {(build, name): {} for build in args.provision for name, _, _ in chosen}
    for _ in range(args.rounds + 1):  # the first round warms the driver's caches and is dropped
        for name, stdin, env in chosen:
            for build in args.provision:
                time.sleep(args.settle_ms / 1e3)
                for key, value in run_once(build, args.gpu, stdin, env).items():
                    samples[(build, name)].setdefault(key, []).append(value)
    print(f"{args.rounds} rounds (after one dropped), GPU {args.gpu}; ms after the worker was started, medians")
    for build in args.provision:
        if len(args.provision) > 1:
            print(f"{build}:")
        for name, _, _ in chosen:
            parts = [f"{key} {statistics.median(values[1:]):.1f}" for key, values in samples[(build, name)].items()]
            print(f"- {name}: " + ", ".join(parts))

if __name__ == "__main__":
    sys.exit(main())
