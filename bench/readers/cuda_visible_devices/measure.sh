#!/bin/bash
# Measures what CUDA makes of each CUDA_VISIBLE_DEVICES value on this machine
# (its first GPU's UUID fills in the UUID cases) and prints a table:
#   value <TAB> cuInit status <TAB> device count <TAB> UUIDs
# usage: bench/readers/cuda_visible_devices/measure.sh > table.tsv   (needs cc, a GPU)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
probe=$(mktemp)
cc -O1 -o "$probe" "$here/probe.c" -ldl
uuid=$(env -u CUDA_VISIBLE_DEVICES "$probe" | cut -f3 | cut -d, -f1)
hex=${uuid#GPU-}
upper=$(printf '%s' "$hex" | tr a-f A-F)
values=(
  "0" "1" "0,0" "0,1" "1,0" "0 1" "0a" "+0" "-0" "00" "000" " 0" "0 " " 0 , 1" "0," ",0" "0,,1" "-1" "0,-1" "-1,0"
  "0;1" "0x0" "0.0" "1e0" "a" "all" "none" "NoDevFiles" "void" "2" "0,2" "99999999999" "4294967296"
  "$uuid" "${uuid:0:8}" "${uuid:0:12}" "GPU-${upper}" "gpu-${hex}" "gpu-${hex:0:8}" "${hex}" "${hex:0:8}"
  "GPU-" "G" "GPU-zz" "0,${uuid}" "${uuid},0" "${uuid},${uuid}" "MIG-${uuid}" "MIG-GPU-${hex}/0/0"
  "0 ,1" "0	1" "${uuid} " " ${uuid}" "${uuid:0:10}zz" "${uuid}-extra"
)
printf 'value\tcuInit\tcount\tuuids\n'
for value in "${values[@]}"; do
    printf '%s\t' "$(printf '%s' "$value" | sed "s/$hex/<uuid>/g; s/${upper}/<UUID>/g; s/${hex:0:8}/<uuid8>/g; s/${hex:0:6}/<uuid6>/g; s/${hex:0:4}/<uuid4>/g; s/\t/\\\\t/g")"
    CUDA_VISIBLE_DEVICES="$value" "$probe" | sed "s/$uuid/GPU-<uuid>/g"
done
printf '(unset)\t'; env -u CUDA_VISIBLE_DEVICES "$probe" | sed "s/$uuid/GPU-<uuid>/g"
printf '(empty)\t'; CUDA_VISIBLE_DEVICES= "$probe" | sed "s/$uuid/GPU-<uuid>/g"
rm -f "$probe"
