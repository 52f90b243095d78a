# PyTorch SDPA baselines for the shapes of the wgmma kernel's benchmark.
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

def median_ms(fn, iters):
    for _ in range(3):
        fn()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[len(times) // 2]

print(f"{'backend':<16} {'seq':>6} {'mask':>6} {'ms':>9} {'TFLOP/s':>9}")
for s in (2048, 4096, 16384):
    q, k, v = (torch.randn(4, 16, s, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    for name, backend in (("flash2", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
        for causal in (False, True):
            if causal and s == 2048:
                continue
            with sdpa_kernel(backend):
                ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), 10 if s >= 16384 else 30)
            flops = 4 * 4 * 16 * s * s * 128 / (2 if causal else 1)
            print(f"{name:<16} {s:>6} {'causal' if causal else 'full':>6} {ms:9.3f} {flops / ms / 1e9:9.1f}")
