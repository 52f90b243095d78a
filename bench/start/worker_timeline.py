#!/usr/bin/env python3
"""The validation worker's timeline on one GPU, seen from outside: when each
line of its output arrives after the worker was started (ready, each check's
result, the host link, the host memory, done) and when it exits, for several
inputs, in turns, median of --rounds.  Where a start's time goes between the
GPU being open and `done`, without a profiler:

    bench/start/worker_timeline.py PROVISION [--gpu 0] [--rounds 7] [--settle-ms 300]

Each variant is a name and the worker's stdin; the variants are fixed below so
that runs on different machines compare.
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
    out = [("checks+links", every + links, {}), ("checks", every, {})]
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
    parser.add_argument("provision")
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--settle-ms", type=int, default=300)
    args = parser.parse_args()
    samples = {name: {} for name, _, _ in variants()}
    for _ in range(args.rounds + 1):  # the first round warms the driver's caches and is dropped
        for name, stdin, env in variants():
            time.sleep(args.settle_ms / 1e3)
            for key, value in run_once(args.provision, args.gpu, stdin, env).items():
                samples[name].setdefault(key, []).append(value)
    print(f"{args.rounds} rounds (after one dropped), GPU {args.gpu}; ms after the worker was started, medians")
    for name, _, _ in variants():
        parts = [f"{key} {statistics.median(values[1:]):.1f}" for key, values in samples[name].items()]
        print(f"- {name}: " + ", ".join(parts))


if __name__ == "__main__":
    sys.exit(main())
