#!/bin/bash
# One device session for the TF32 GEMM: SASS counts, correctness, timings.
# Usage (repository root, build-tf32/dev carried): bench/wgmma_dev/run_gemm_device.sh [test|bench|all]
set -u
bin=${BIN:-build-tf32/dev/gemm_tf32_dev}
out=${OUT:-/tmp}
mode=${1:-all}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass $bin > $out/gemm.sass
  for kernel in $(grep -o 'Function : [^ ]*gemm_tf32[^ ]*' $out/gemm.sass | awk '{print $3}'); do
    awk -v k="$kernel" '/Function :/ {on = index($0, k) > 0} on' $out/gemm.sass > $out/k.sass
    echo "$(echo $kernel | sed 's/.*detail//' | cut -c1-90): $(grep -c HGMMA $out/k.sass) HGMMA, $(grep -c 'HMMA' $out/k.sass) HMMA, $(grep -cE 'LDS|LDSM' $out/k.sass) LDS*, $(grep -c STS $out/k.sass) STS, $(grep -cE 'LDGSTS' $out/k.sass) LDGSTS, $(grep -c UTMALDG $out/k.sass) UTMALDG, $(grep -cE 'SYNCS' $out/k.sass) SYNCS, $(grep -cE ' BAR' $out/k.sass) BAR, $(grep -cE 'LDL|STL' $out/k.sass) LDL/STL"
  done
fi
if [ "$mode" != bench ]; then
  timeout 300 $bin test 2>&1 | tee $out/test.log
  echo "test exit: ${PIPESTATUS[0]}"
fi
if [ "$mode" != test ]; then
  timeout 200 $bin bench 20 2>&1 | tee $out/bench.log
fi
