#!/usr/bin/env python3
"""A second process that holds one GPU's memory, all but --leave-mib of it,
for showing what provision makes of a GPU another job has taken (its context
cannot be made, or barely): prints "ready free=MiB" once the memory is held,
then sleeps until killed or --seconds have passed."""
import argparse
import sys
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--leave-mib", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=300.0)
    args = parser.parse_args()
    torch.cuda.set_device(args.gpu)
    held = []
    chunk = 1 << 30
    while True:
        free, _ = torch.cuda.mem_get_info(args.gpu)
        want = free - (args.leave_mib << 20)
        if want <= 2 << 20:
            break
        # The caching allocator rounds up to 2 MiB; a chunk never takes more than is left to take.
        size = min(chunk, want - (2 << 20))
        try:
            held.append(torch.empty(size, dtype=torch.uint8, device=f"cuda:{args.gpu}"))
        except torch.OutOfMemoryError:
            if chunk == 2 << 20:
                break
            chunk //= 2
    free, total = torch.cuda.mem_get_info(args.gpu)
    print(f"ready free_mib={free >> 20} total_mib={total >> 20}", flush=True)
    time.sleep(args.seconds)


if __name__ == "__main__":
    sys.exit(main())
