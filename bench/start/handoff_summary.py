#!/usr/bin/env python3
"""The handoff's summary from bench/start/interleave's --raw files (one per
set of GPUs), as the targets name its ratios: what `provision -- W` adds over
W alone against what the comparator (`exec_floor exec W`) adds, for each
workload measured; `--check` against `exec_floor detached`; `--check
--no-validate` against nvidia-smi reading the same health signals; then the
workload's own phases (its clock starts at its exec) behind each, where the
rest goes.

  handoff_summary.py RAW.json ..."""
import json
import statistics
import sys

TARGET = 1.10


def medians(raw):
    runs = {}
    for run in raw:
        runs.setdefault(run["command"], []).append(run)
    wall = {name: statistics.median(r["wall_ms"] for r in rs) for name, rs in runs.items()}
    figures = {}
    for name, rs in runs.items():
        keys = set().union(*(r.get("figures", {}).keys() for r in rs))
        figures[name] = {k: statistics.median(r["figures"][k] for r in rs if k in r.get("figures", {})) for k in keys}
    return wall, figures


def row(label, measure, value, against, base):
    ratio = value / base
    verdict = "met" if ratio <= TARGET else "above"
    print(f"| {label} | {measure} | {value:.1f} | {against} {base:.1f} | {ratio:.2f}x ({verdict}) |")


def main():
    print(f"| GPUs | measure | median ms | against | ratio (target {TARGET:.2f}x) |")
    print("| --- | --- | --- | --- | --- |")
    phases = []
    for path in sys.argv[1:]:
        label = "GPU 0" if "gpu0" in path else "every GPU"
        wall, figures = medians(json.load(open(path)))
        for workload in ("w", "c", "torch"):
            alone = wall.get(f"{workload}-alone")
            behind = wall.get(f"{workload}-behind-provision")
            comparator = wall.get(f"{workload}-behind-comparator")
            if alone and behind and comparator:
                row(label, f"`provision -- {workload}` adds", behind - alone, "`exec_floor exec` adds",
                    comparator - alone)
        if "check" in wall and "floor-detached" in wall:
            row(label, "`--check`", wall["check"], "`exec_floor detached`", wall["floor-detached"])
        if "no-validate" in wall and "nvidia-smi-health" in wall:
            row(label, "`--check --no-validate`", wall["no-validate"], "nvidia-smi reading the same fields",
                wall["nvidia-smi-health"])
        for key in ("nvml_ms", "cuInit_ms", "contexts_ms", "total_ms"):
            cells = [figures.get(f"w-{way}", {}).get(key) for way in ("alone", "behind-comparator", "behind-provision")]
            if all(cell is not None for cell in cells):
                phases.append((label, key, cells))
    if phases:
        print()
        print("| GPUs | w's phase (from its exec) | alone | behind the comparator | behind provision |")
        print("| --- | --- | --- | --- | --- |")
        for label, key, cells in phases:
            print(f"| {label} | {key} | " + " | ".join(f"{cell:.1f}" for cell in cells) + " |")


if __name__ == "__main__":
    main()
