#!/usr/bin/env bash
# One device visit: kernel versions and knob sets side by side against SDPA FLASH
# (bench/kernel_variants.py). VARIANTS holds one --variant argument per line; output in $OUT.
set -u
: "${OUT:?set OUT}"
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi -L
args=()
while IFS= read -r v; do [ -n "$v" ] && args+=(--variant "$v"); done <<< "${VARIANTS:?set VARIANTS}"
python3 bench/kernel_variants.py "${args[@]}" --json "$OUT/variants.json" ${ONLY:+--only "$ONLY"} \
  2> "$OUT/variants.log" | tee "$OUT/variants.txt"
tail -5 "$OUT/variants.log"
