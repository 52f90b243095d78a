#!/usr/bin/env python3
"""The worker's open against the floor's, each alone (no NVML beside it):
`bench/startup_floor --no-nvml` (its child's cuInit and context, one kernel)
and `provision __check-worker --gpu 0` given no checks, in shuffled turns,
350 ms apart, medians of ROUNDS after one dropped round:

    bench/start/open_alone.py ROUNDS FLOOR PROVISION [PROVISION...]

For the floor, `cuinit` and `ready` are its own figures (ms after its
start); for a worker, `ready` is when its ready line arrived, `loaded` when
the process began and `open_ms` its own time to ready, all after the spawn.
"""
import random
import re
import statistics
import subprocess
import sys
import time


def floor(path):
    out = subprocess.run([path, "--no-nvml"], capture_output=True, text=True, check=True).stdout
    figures = dict(re.findall(r"(\w+)=(-?[\d.]+)", out))
    return {"cuinit": float(figures["cuinit"]), "ready": float(figures["ready0"])}


def worker(path):
    spawned = time.monotonic_ns()
    process = subprocess.Popen([path, "__check-worker", "--gpu", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    process.stdin.write("\n")  # no checks: open the GPU, say ready, end
    process.stdin.flush()
    line = process.stdout.readline()
    arrived = time.monotonic_ns()
    process.stdin.close()
    process.wait()
    loaded = int(re.search(r"loaded_ns = (\d+)", line).group(1))
    return {"ready": (arrived - spawned) / 1e6, "loaded": (loaded - spawned) / 1e6,
            "open_ms": float(re.search(r"open_ms = ([\d.]+)", line).group(1))}


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, floor_path, builds = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    names = ["floor"] + builds
    figures = {}
    for round_ in range(rounds + 1):
        random.shuffle(names)
        for name in names:
            time.sleep(0.35)  # the last one's teardown
            result = floor(floor_path) if name == "floor" else worker(name)
            if round_ > 0:
                for key, value in result.items():
                    figures.setdefault(name, {}).setdefault(key, []).append(value)
    for name, each in sorted(figures.items()):
        print(name + ": " + ", ".join(f"{key} {statistics.median(values):.1f}" for key, values in each.items()))


if __name__ == "__main__":
    main()
