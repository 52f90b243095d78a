"""An NCCL all-reduce over every GPU, one process per GPU, as a training
job does it: run with `torchrun --nproc-per-node N bench/pod/nccl_allreduce.py
[MIB]` (through provision's handoff: `provision -- torchrun ...`).  Rank 0
prints the init time, whether the sum is right, and the bus bandwidth
(NCCL's own definition for all-reduce: 2 (n - 1) / n x bytes / time)."""
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    start = time.perf_counter()
    dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
    data = torch.full(((mib << 20) // 4,), float(rank + 1), device="cuda")
    dist.all_reduce(data)  # the first call also finishes NCCL's set-up
    torch.cuda.synchronize()
    init_s = time.perf_counter() - start
    expected = world * (world + 1) / 2
    right = bool(torch.all(data == expected).item())
    times = []
    for _ in range(10):
        data.fill_(float(rank + 1))
        torch.cuda.synchronize()
        begin = time.perf_counter()
        dist.all_reduce(data)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - begin)
    right = right and bool(torch.all(data == expected).item())
    times.sort()
    seconds = times[len(times) // 2]
    bus = 2 * (world - 1) / world * (mib << 20) / seconds / 1e9
    if rank == 0:
        print(f"nccl {'.'.join(map(str, torch.cuda.nccl.version()))} ranks={world} size={mib} MiB "
              f"init+first={init_s * 1e3:.0f} ms median={seconds * 1e3:.2f} ms bus_bandwidth={bus:.1f} GB/s "
              f"sum={'right' if right else 'WRONG'}", flush=True)
    dist.destroy_process_group()
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
