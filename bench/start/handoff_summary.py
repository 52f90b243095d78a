#!/usr/bin/env python3
"""The handoff's summary from bench/start/interleave's --raw files (one per
set of GPUs): what `provision -- W` adds over W alone, against the detached
floor; --check against the floor and --no-validate against nvidia-smi (naming
the GPUs, and where it ran, reading the same health signals); and
the C workload's phases alone and behind provision.

  handoff_summary.py RAW.json ..."""
import json
import statistics
import sys


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


def main():
    print("| GPUs | measure | median ms | against | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for path in sys.argv[1:]:
        label = "GPU 0" if "gpu0" in path else "every GPU"
        wall, figures = medians(json.load(open(path)))
        floor = wall.get("floor-detached")
        for workload in ("c", "torch"):
            alone, behind = wall.get(f"{workload}-alone"), wall.get(f"{workload}-behind-provision")
            if alone and behind and floor:
                adds = behind - alone
                print(f"| {label} | `provision -- {workload}` adds | {adds:.1f} | floor detached {floor:.1f} | "
                      f"{adds / floor:.2f}x |")
        if "c-after-teardown" in wall and "c-alone" in wall and floor:
            adds = wall["c-after-teardown"] - wall["c-alone"]
            print(f"| {label} | `provision --check`, its workers gone, then c: adds | {adds:.1f} | floor detached "
                  f"{floor:.1f} | {adds / floor:.2f}x |")
        if floor and "check" in wall:
            print(f"| {label} | `--check` | {wall['check']:.1f} | floor detached {floor:.1f} | "
                  f"{wall['check'] / floor:.2f}x |")
        peers = (("nvidia-smi", "nvidia-smi"), ("nvidia-smi-health", "nvidia-smi reading the health signals"))
        for peer, words in peers:
            if "no-validate" in wall and peer in wall:
                print(f"| {label} | `--check --no-validate` | {wall['no-validate']:.1f} | {words} "
                      f"{wall[peer]:.1f} | {wall['no-validate'] / wall[peer]:.2f}x |")
        alone, behind = figures.get("c-alone", {}), figures.get("c-behind-provision", {})
        if alone and behind:
            # The workload's own clock starts at its exec: behind provision, after provision's own time.
            for key in sorted(set(alone) & set(behind)):
                if key.endswith("cuinit") or "ready" in key:
                    print(f"| {label} | C workload's {key} (from its start) | {behind[key]:.1f} | alone "
                          f"{alone[key]:.1f} | +{behind[key] - alone[key]:.1f} ms |")


if __name__ == "__main__":
    main()
