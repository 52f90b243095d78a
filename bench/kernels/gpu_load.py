#!/usr/bin/env python3
"""A second process that keeps the GPU busy, for showing what provision's
throughput verdict says on a shared GPU: bf16 matrix products of 8192³ in
a loop through PyTorch, until killed or --seconds have passed.  Prints
"ready" on stdout once the first products have run, and at exit the
products per second it achieved on stderr."""
import argparse
import sys
import time

import torch


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--size", type=int, default=8192)
    args = parser.parse_args()
    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    c = torch.empty_like(a)
    for _ in range(3):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    print("ready", flush=True)
    done, start = 0, time.perf_counter()
    end = start + args.seconds
    try:
        while time.perf_counter() < end:
            for _ in range(10):
                torch.matmul(a, b, out=c)
            torch.cuda.synchronize()
            done += 10
    except KeyboardInterrupt:
        pass
    elapsed = time.perf_counter() - start
    print(f"gpu_load: {done} products in {elapsed:.1f} s, "
          f"{2 * args.size ** 3 * done / elapsed / 1e12:.0f} TFLOP/s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
