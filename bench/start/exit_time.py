#!/usr/bin/env python3
"""When a command's last output arrives and when it ends: the time a process
spends after its report is out (its exit, the libraries' teardown), which a
whole-command timing cannot separate from its work.  Commands take turns,
round after round, with a pause before each:

    bench/start/exit_time.py [--rounds 15] [--settle-ms 300] NAME=COMMAND ...

Prints, per command, the medians of: the last byte of stdout, stdout's end
of file (the process closed it: normally its exit), and its exit status
reaped, in ms after the start."""
import argparse
import os
import statistics
import subprocess
import time


def run_once(command):
    start = time.perf_counter()
    child = subprocess.Popen(command, shell=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    last = start
    while True:
        chunk = os.read(child.stdout.fileno(), 65536)
        if not chunk:
            break
        last = time.perf_counter()
    eof = time.perf_counter()
    child.wait()
    ended = time.perf_counter()
    return [(t - start) * 1e3 for t in (last, eof, ended)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--settle-ms", type=float, default=300)
    parser.add_argument("commands", nargs="+")
    args = parser.parse_args()
    commands = dict(c.split("=", 1) for c in args.commands)
    times = {name: [] for name in commands}
    for round_index in range(args.rounds + 1):
        for name, command in commands.items():
            time.sleep(args.settle_ms / 1e3)
            figures = run_once(command)
            if round_index > 0:  # the first round warms the caches
                times[name].append(figures)
    print(f"{args.rounds} rounds after one warm-up, {args.settle_ms:g} ms pause before each\n")
    print("| command | last output | stdout closed | exited | after the last output |")
    print("| --- | --- | --- | --- | --- |")
    for name, runs in times.items():
        last, eof, ended = (statistics.median(run[i] for run in runs) for i in range(3))
        after = statistics.median(run[2] - run[0] for run in runs)
        print(f"| {name} | {last:.1f} | {eof:.1f} | {ended:.1f} | {after:.1f} |")


if __name__ == "__main__":
    main()
