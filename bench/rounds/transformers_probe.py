"""Runs a small transformers model with the attention provision chose.

provision --workload transformers -- python3 bench/rounds/transformers_probe.py
reads PROVISION_ATTN_IMPLEMENTATION (written by provision) and passes it to
transformers as attn_implementation, the way docs/WORKLOADS.md shows.  The
model is built from a config (random weights: no download), runs one
forward pass on the GPU, and prints what transformers really used.
"""
import json
import os
import sys
import time

import torch
import transformers

chosen = os.environ.get("PROVISION_ATTN_IMPLEMENTATION", "")
if not chosen:
    sys.exit("PROVISION_ATTN_IMPLEMENTATION is not set: run this under provision --workload transformers")

config = transformers.LlamaConfig(hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
                                  num_attention_heads=8, num_key_value_heads=8, vocab_size=1000)
model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation=chosen,
                                                      torch_dtype=torch.bfloat16).cuda().eval()
tokens = torch.randint(0, config.vocab_size, (2, 256), device="cuda")
start = time.perf_counter()
with torch.no_grad():
    logits = model(tokens).logits
torch.cuda.synchronize()
print(json.dumps({
    "PROVISION_ATTN_IMPLEMENTATION": chosen,
    "PROVISION_ATTENTION": os.environ.get("PROVISION_ATTENTION"),
    "model_attn_implementation": model.config._attn_implementation,
    "transformers": transformers.__version__,
    "torch": torch.__version__,
    "logits_shape": list(logits.shape),
    "finite": bool(torch.isfinite(logits).all()),
    "forward_ms": round((time.perf_counter() - start) * 1000, 1),
    "device": torch.cuda.get_device_name(0),
}))
