#!/usr/bin/env python3
"""PyTorch's own kernels at the shapes bench/kernel_bench times: scaled dot
product attention through each SDPA backend (FlashAttention-2, memory
efficient, cuDNN), the TF32 matrix product through cuBLAS, and the fp8
(e4m3) matrix product through torch._scaled_mm with per-tensor scales.

Timed the same way as kernel_bench: CUDA events around each call after
warm-up, median of the runs, rotating over enough input sets that the L2
cannot hold them.  One JSON object per line on stdout; progress on stderr.
"""
import argparse
import json
import math
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
}
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def emit(record):
    print(json.dumps(record), flush=True)


def input_sets(set_bytes):
    """Enough sets to exceed four times the L2, at least two, within a
    quarter of the free device memory (the rule kernel_bench uses)."""
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)
    free, _ = torch.cuda.mem_get_info()
    wanted = min(max(math.ceil(4 * l2 / set_bytes), 2), 16)
    return max(1, min(wanted, free // 4 // set_bytes))


def time_calls(call, sets, warmup, runs):
    for i in range(warmup):
        call(i % sets)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(runs):
        start.record()
        call(i % sets)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return {"median_ms": times[len(times) // 2], "min_ms": times[0], "max_ms": times[-1]}


def bench_attention(args):
    for head_dim in args.head_dims:
        for seq_len in args.seq_lens:
            for dtype_name, dtype in DTYPES.items():
                shape = (args.batch, args.heads, seq_len, head_dim)
                tensor_bytes = math.prod(shape) * 2
                sets = input_sets(4 * tensor_bytes)
                generator = torch.Generator(device="cuda").manual_seed(seq_len * 1000 + head_dim)
                inputs = [
                    [torch.randn(shape, device="cuda", dtype=dtype, generator=generator) for _ in range(3)]
                    for _ in range(sets)
                ]
                for causal in (False, True):
                    flops = 4 * args.batch * args.heads * seq_len * seq_len * head_dim * (0.5 if causal else 1.0)
                    for backend_name, backend in BACKENDS.items():
                        record = {
                            "bench": "attention", "path": f"sdpa.{backend_name}", "dtype": dtype_name,
                            "batch": args.batch, "heads": args.heads, "seq_len": seq_len,
                            "head_dim": head_dim, "causal": causal, "input_sets": sets, "runs": args.runs,
                        }

                        def call(i):
                            q, k, v = inputs[i]
                            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

                        try:
                            with sdpa_kernel(backend):
                                out = call(0)
                                if not torch.isfinite(out).all():
                                    raise RuntimeError("non-finite output")
                                del out
                                record.update(time_calls(call, sets, args.warmup, args.runs))
                            record["tflops"] = flops / (record["median_ms"] * 1e-3) / 1e12
                            print(f"attention sdpa.{backend_name:9} {dtype_name} s{seq_len:<6} d{head_dim:<4} "
                                  f"{'causal' if causal else 'non-causal':10} {record['median_ms']:8.3f} ms "
                                  f"{record['tflops']:7.1f} TFLOP/s", file=sys.stderr, flush=True)
                        except RuntimeError as error:
                            record["error"] = str(error).splitlines()[0][:200]
                            print(f"attention sdpa.{backend_name} {dtype_name} s{seq_len} d{head_dim}: "
                                  f"{record['error']}", file=sys.stderr, flush=True)
                        emit(record)
                del inputs
                torch.cuda.empty_cache()


def bench_gemm(args):
    torch.backends.cuda.matmul.allow_tf32 = True
    for size in args.gemm_sizes:
        sets = input_sets(3 * size * size * 4)
        generator = torch.Generator(device="cuda").manual_seed(size)
        inputs = [
            [torch.randn(size, size, device="cuda", generator=generator) for _ in range(2)]
            + [torch.empty(size, size, device="cuda")]
            for _ in range(sets)
        ]

        # c = a·bᵀ, the layout of provision's TF32 GEMM.
        def call(i):
            a, b, c = inputs[i]
            torch.matmul(a, b.t(), out=c)

        record = {"bench": "gemm", "path": "cublas.tf32", "m": size, "n": size, "k": size,
                  "input_sets": sets, "runs": args.runs}
        record.update(time_calls(call, sets, args.warmup, args.runs))
        record["tflops"] = 2 * size**3 / (record["median_ms"] * 1e-3) / 1e12
        print(f"gemm cublas.tf32 {size}^3 {record['median_ms']:8.3f} ms {record['tflops']:7.1f} TFLOP/s",
              file=sys.stderr, flush=True)
        emit(record)
        del inputs
        torch.cuda.empty_cache()


def bench_scaled_mm(args):
    """c = (a @ b.T) * scale_a * scale_b in fp32 from e4m3 operands: the
    product provision's gemm.fp8 kernels compute.  _scaled_mm wants the second
    operand column-major, so b is stored [n, k] and passed transposed, as
    provision's kernels read it.  use_fast_accum=False (the default) promotes
    the tensor cores' partial sums to fp32 as provision's kernels do; True
    lets them accumulate in the tensor cores' own precision."""
    major, minor = torch.cuda.get_device_capability(0)
    if (major, minor) < (8, 9) or not hasattr(torch, "_scaled_mm"):
        print("gemm_fp8: torch._scaled_mm needs compute capability 8.9 or newer", file=sys.stderr, flush=True)
        return
    scale_a = torch.tensor(0.5, device="cuda")
    scale_b = torch.tensor(1.5, device="cuda")
    for size in args.gemm_sizes:
        sets = input_sets(2 * size * size + 4 * size * size)
        generator = torch.Generator(device="cuda").manual_seed(size + 8)
        inputs = [
            [torch.randn(size, size, device="cuda", generator=generator).to(torch.float8_e4m3fn) for _ in range(2)]
            + [torch.empty(size, size, device="cuda")]
            for _ in range(sets)
        ]
        for fast in (False, True):
            def call(i):
                a, b, c = inputs[i]
                out = torch._scaled_mm(a, b.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.float32,
                                       use_fast_accum=fast)
                return out[0] if isinstance(out, tuple) else out  # torch < 2.4 returned (out, amax)

            record = {"bench": "gemm_fp8", "path": "scaled_mm.e4m3" + (".fast_accum" if fast else ""),
                      "m": size, "n": size, "k": size, "input_sets": sets, "runs": args.runs}
            try:
                reference = (inputs[0][0].float() @ inputs[0][1].float().t()) * 0.75
                error = ((call(0) - reference).abs().max() / reference.abs().max()).item()
                record["max_rel_error"] = error
                record.update(time_calls(call, sets, args.warmup, args.runs))
                record["tflops"] = 2 * size**3 / (record["median_ms"] * 1e-3) / 1e12
                print(f"gemm_fp8 {record['path']} {size}^3 {record['median_ms']:8.3f} ms "
                      f"{record['tflops']:7.1f} TFLOP/s  error {error:.2e}", file=sys.stderr, flush=True)
            except RuntimeError as failure:
                record["error"] = str(failure).splitlines()[0][:200]
                print(f"gemm_fp8 {record['path']} {size}^3: {record['error']}", file=sys.stderr, flush=True)
            emit(record)
        del inputs
        torch.cuda.empty_cache()


def main():
    def numbers(text):
        return [int(x) for x in text.split(",") if x]

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--seq-lens", type=numbers, default=[2048, 4096, 16384])
    parser.add_argument("--head-dims", type=numbers, default=[64, 128])
    parser.add_argument("--gemm-sizes", type=numbers, default=[4096, 8192])
    parser.add_argument("--parts", default="attention,gemm,fp8",
                        help="comma-separated: attention, gemm (TF32), fp8 (torch._scaled_mm)")
    args = parser.parse_args()

    emit({"bench": "versions", "torch": torch.__version__, "cuda": torch.version.cuda,
          "cudnn": torch.backends.cudnn.version(), "device": torch.cuda.get_device_name(0)})
    parser_parts = set(args.parts.split(","))
    if "attention" in parser_parts:
        bench_attention(args)
    if "gemm" in parser_parts:
        bench_gemm(args)
    if "fp8" in parser_parts:
        bench_scaled_mm(args)


if __name__ == "__main__":
    main()
