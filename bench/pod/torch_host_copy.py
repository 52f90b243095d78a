#!/usr/bin/env python3
"""The peer of provision's host-link check: pinned host <-> device copies of
the same size through PyTorch, timed with CUDA events (one untimed copy,
then the median of RUNS), printed as one JSON line per GPU.

    python3 bench/pod/torch_host_copy.py [--mib 32] [--runs 20]
"""
import argparse
import json
import statistics

import torch


def median_ms(copy, runs):
    copy()
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        copy()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    size = args.mib << 20
    for index in range(torch.cuda.device_count()):
        with torch.cuda.device(index):
            host = torch.empty(size, dtype=torch.uint8, pin_memory=True)
            device = torch.empty(size, dtype=torch.uint8, device="cuda")
            h2d = median_ms(lambda: device.copy_(host, non_blocking=True), args.runs)
            d2h = median_ms(lambda: host.copy_(device, non_blocking=True), args.runs)
            print(json.dumps({"bench": "torch_host_copy", "gpu": index, "mib": args.mib, "runs": args.runs,
                              "h2d_gb_per_s": size / (h2d * 1e-3) / 1e9, "d2h_gb_per_s": size / (d2h * 1e-3) / 1e9,
                              "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
