#!/bin/bash
# One device session: correctness, variant timings, SASS check, SDPA baselines.
# Usage (repository root): bench/wgmma_dev/run_device.sh [bench|test|all]
set -u
bin=build-wgmma/attention_wgmma_dev
out=${OUT:-/tmp}
mode=${1:-all}  # all | test | bench | bench2 (test, then the benchmark twice)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
if command -v cuobjdump >/dev/null; then
  echo "SASS: $(cuobjdump -sass $bin | grep -c HGMMA) HGMMA, $(cuobjdump -sass $bin | grep -cE 'LDL|STL') LDL/STL"
fi
if [ "$mode" != bench ]; then
  timeout 180 $bin test 2>&1 | tee $out/test.log | grep -vE " ok$"
  echo "test exit: ${PIPESTATUS[0]}"
fi
if [ "$mode" != test ]; then
  timeout 180 $bin bench 2>&1 | tee $out/bench.log
  [ "$mode" = bench2 ] && timeout 180 $bin bench 2>&1 | tee $out/bench2.log
fi
if [ "$mode" = all ]; then
  PYTHONUNBUFFERED=1 timeout 120 python3 bench/wgmma_dev/sdpa_bench.py 2>&1 | tee $out/sdpa.log
fi
