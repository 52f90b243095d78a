#!/usr/bin/env python3
"""Where the handoff's cost goes, run by run: provision's workers' lines
(their timeline, steady_clock) set beside the workload's own clock
(bench exec_floor with FLOOR_CLOCK=1), against the comparator (exec_floor
exec), in shuffled rounds with a quiet pause before each:

    bench/start/handoff_anatomy.py PROVISION EXEC_FLOOR [--rounds 15] [--settle-ms 300] [--seed 1]
        [--variant NAME=ENV...]

For each run of `provision -- W`: when W entered main (provision's whole
time before the exec), W's cuInit and contexts, and, in a build with the
test hooks (PROVISION_FAULT_INJECTION), when the last worker said `done`; for `exec_floor exec W` the same from the
comparator's side.  A --variant NAME=K=V,K=V runs provision with those
environment settings as another command.  Prints a Markdown table of medians
(min-max), then every run of each command, so that a bimodal one shows.
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import tempfile
import time

NUMBER = re.compile(r"(\w+)=(-?[0-9]+(?:\.[0-9]+)?)")


def figures(text):
    return {key: float(value) for key, value in NUMBER.findall(text)}


def worker_lines(path):
    """(ms, pid, way, text) for each line the workers logged."""
    lines = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 4)
                if len(parts) == 5:
                    lines.append((int(parts[0]) / 1e6, parts[1], parts[3], parts[4]))
    except FileNotFoundError:
        pass
    return lines


def run_one(command, env, timeline):
    if timeline and os.path.exists(timeline):
        os.unlink(timeline)
    started = time.monotonic() * 1e3
    done = subprocess.run(command, shell=True, env=env, capture_output=True, text=True)
    ended = time.monotonic() * 1e3
    row = {"wall_ms": ended - started}
    if done.returncode != 0:
        row["failed"] = f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] }"
        return row
    w = figures(done.stdout)
    row.update({k: w[k] for k in ("nvml_ms", "cuInit_ms", "contexts_ms", "total_ms") if k in w})
    if "entered_at_ms" in w:
        row["w_entered_after_ms"] = w["entered_at_ms"] - started
        row["w_exit_after_work_ms"] = ended - w["done_at_ms"]
    if timeline:
        lines = worker_lines(timeline)
        dones = [ms for ms, _, way, text in lines if way == "out" and text.startswith("done")]
        readys = [ms for ms, _, way, text in lines if way == "out" and text.startswith("ready")]
        if readys:
            row["worker_ready_after_ms"] = max(readys) - started
        if dones:
            row["worker_done_after_ms"] = max(dones) - started
            if "entered_at_ms" in w:
                row["done_to_w_entered_ms"] = w["entered_at_ms"] - max(dones)
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("provision")
    parser.add_argument("exec_floor")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--settle-ms", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--command", action="append", default=[],
                        help="NAME=SHELL COMMAND, run beside the others ({P}: provision, {W}: the workload)")
    parser.add_argument("--reference", help="another comparator binary with an `exec` mode, run beside ours")
    args = parser.parse_args()
    floor = args.exec_floor
    timeline = os.path.join(tempfile.mkdtemp(), "timeline")
    base = dict(os.environ, FLOOR_CLOCK="1")
    behind = dict(base, PROVISION_TEST_WORKER_TIMELINE=timeline)
    commands = {
        "alone": (floor, base, None),
        "comparator": (f"{floor} exec {floor}", base, None),
        "provision": (f"{args.provision} -- {floor}", behind, timeline),
    }
    if args.reference:
        commands["reference"] = (f"{args.reference} exec {floor}", base, None)
    for variant in args.variant:
        name, _, settings = variant.partition("=")
        env = dict(behind)
        for setting in filter(None, settings.split(",")):
            key, _, value = setting.partition("=")
            env[key] = value
        commands[name] = (f"{args.provision} -- {floor}", env, timeline)
    for extra in args.command:
        name, _, command = extra.partition("=")
        commands[name] = (command.replace("{P}", args.provision).replace("{W}", floor), behind, timeline)
    order = list(commands)
    rng = random.Random(args.seed)
    rows = {name: [] for name in order}
    for round_index in range(args.warmup + args.rounds):
        rng.shuffle(order)
        for name in order:
            time.sleep(args.settle_ms / 1e3)
            command, env, path = commands[name]
            row = run_one(command, env, path)
            if round_index >= args.warmup:
                rows[name].append(row)
    keys = ["wall_ms", "w_entered_after_ms", "worker_ready_after_ms", "worker_done_after_ms", "done_to_w_entered_ms",
            "cuInit_ms", "contexts_ms", "total_ms", "w_exit_after_work_ms"]
    # The workers' columns need the test hooks (a build with PROVISION_FAULT_INJECTION); a release build has none.
    keys = [key for key in keys if any(key in row for rs in rows.values() for row in rs)]
    print("| command | " + " | ".join(keys) + " |")
    print("| --- " * (len(keys) + 1) + "|")
    for name in commands:
        cells = []
        for key in keys:
            values = [row[key] for row in rows[name] if key in row]
            cells.append(f"{statistics.median(values):.1f} ({min(values):.0f}-{max(values):.0f})" if values else "")
        failed = [row["failed"] for row in rows[name] if "failed" in row]
        print(f"| {name} | " + " | ".join(cells) + " |" + (f" {len(failed)} failed: {failed[0]}" if failed else ""))
    print()
    for name in commands:
        print(f"{name}: " + "; ".join(
            " ".join(f"{key.replace('_ms', '')}={row[key]:.0f}" for key in keys if key in row) for row in rows[name]))


if __name__ == "__main__":
    main()
