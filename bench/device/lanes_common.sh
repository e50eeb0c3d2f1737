# Sourced by the visit scripts (visit_numbers.sh, visit_final.sh, visit_lean_final.sh, ...) after they
# set $OUT (a work folder under /tmp), $FINAL (the call's $OUT) and $repo: the box's setup and the helpers
# that make a scratch workspace, run one gate headless, keep the probe's raw results, run the suite in
# shards, and archive the work folder.
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
# snap: the work folder as $FINAL/<name>.tgz (made whole, then moved: a cut call returns the last one)
snap() { tar czf "$FINAL/t.tgz" -C /tmp "$(basename "$OUT")" && mv "$FINAL/t.tgz" "$FINAL/${ARCHIVE:-next}.tgz"; }
# ws NAME MODULE: a scratch workspace (the examples and the planted workloads), a git repo, trusted, a session
ws() {
  local d; d=$(mktemp -d "/tmp/ws-$1-XXXX"); cp -r "$repo/workloads" "$repo/csrc" "$d/"
  mkdir -p "$d/planted"; cp "$repo"/bench/device/planted/*.py "$d/planted/"
  printf '[workload]\nmodule = "%s"\n' "$2" > "$d/cockpit.toml"
  (cd "$d" && git init -q && git add -A && git -c user.email=c@c -c user.name=c commit -qm base)
  python3 -m cockpit --workspace "$d" trust allow > /dev/null  # our own copy: trusted, as `cockpit init` makes it
  python3 -m cockpit --workspace "$d" new "visit: $1" > /dev/null; echo "$d"
}
# toml WS TEXT: cockpit.toml replaced, and trusted again (a changed file asks again)
toml() { printf '%b' "$2" > "$1/cockpit.toml"; python3 -m cockpit --workspace "$1" trust allow > /dev/null; }
# gate WS NAME GATE: one gate, its --json kept, one line said
gate() {
  local t0=$(date +%s)
  timeout "${GATE_S:-240}" python3 -m cockpit --workspace "$1" gate "$3" --json > "$OUT/$2-$3.json" 2> "$OUT/$2-$3.log"
  echo "-- $2 $3 exit $? in $(( $(date +%s) - t0 )) s: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" "$OUT/$2-$3.json" 2>&1 | tail -1)"
}
# raw WS NAME: the probe's results (NVML samples included) and ncu's pages, gzipped
raw() { mkdir -p "$OUT/raw-$2"; cp "$1"/sessions/*/results/*.json "$1"/sessions/*/results/*.csv "$OUT/raw-$2/" 2>/dev/null; gzip -f "$OUT/raw-$2"/* 2>/dev/null; }
# suite N: the whole suite in N pytest processes side by side (the test files dealt out by size), each
# shard's last line and the failures; each shard's output in $OUT/suite-K.txt. It waits for its own
# shards only: a snapper loop runs beside it.
suite() {
  local n=$1 k i start files mine pids=()
  start=$(date +%s)
  mapfile -t files < <(ls -S tests/test_*.py)
  for ((k = 0; k < n; k++)); do
    mine=(); for ((i = k; i < ${#files[@]}; i += n)); do mine+=("${files[i]}"); done
    python3 -m pytest -q -p no:cacheprovider "${mine[@]}" > "$OUT/suite-$k.txt" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  echo "-- the suite in $n shards: $(( $(date +%s) - start )) s"
  for ((k = 0; k < n; k++)); do echo "shard $k: $(tail -1 "$OUT/suite-$k.txt")"; done
  grep -h -E "^(FAILED|ERROR) " "$OUT"/suite-*.txt | head -20
}
# begin_visit NAME: the call's $OUT kept as $FINAL, the work folder /tmp/o-NAME archived to $FINAL/NAME.tgz
# every 45 s (a call cut at its limit still returns the last archive); end_visit: the last archive
begin_visit() {
  FINAL=$OUT; OUT=/tmp/o-$1; ARCHIVE=$1; mkdir -p "$OUT"
  export XDG_CACHE_HOME=/tmp/cockpit-cache
  ( while sleep 45; do snap; done ) &
  snapper=$!
}
end_visit() { kill "$snapper" 2>/dev/null; snap; }
