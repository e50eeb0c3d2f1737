# Sourced by the two-lane visit scripts (visit_issue32.sh, visit_next.sh) after they set $OUT (a work
# folder under /tmp), $FINAL (the call's $OUT) and $repo: the box's setup and the helpers that make a
# scratch workspace, run one gate headless, keep the probe's raw results, and archive the work folder.
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
mapfile -t uuids < <(nvidia-smi --query-gpu=uuid --format=csv,noheader)
# snap: the work folder as $FINAL/<name>.tgz (made whole, then moved: a cut call returns the last one)
snap() { tar czf "$FINAL/t.tgz" -C /tmp "$(basename "$OUT")" && mv "$FINAL/t.tgz" "$FINAL/${ARCHIVE:-next}.tgz"; }
# ws NAME MODULE: a scratch workspace (the examples and the planted workloads), a git repo, a session
ws() {
  local d; d=$(mktemp -d "/tmp/ws-$1-XXXX"); cp -r "$repo/workloads" "$repo/csrc" "$d/"
  mkdir -p "$d/planted"; cp "$repo"/bench/device/planted/*.py "$d/planted/"
  printf '[workload]\nmodule = "%s"\n' "$2" > "$d/cockpit.toml"
  (cd "$d" && git init -q && git add -A && git -c user.email=c@c -c user.name=c commit -qm base)
  python3 -m cockpit --workspace "$d" new "visit: $1" > /dev/null; echo "$d"
}
# gate WS NAME GATE: one gate, its --json kept, one line said
gate() {
  local t0=$(date +%s)
  timeout "${GATE_S:-240}" python3 -m cockpit --workspace "$1" gate "$3" --json > "$OUT/$2-$3.json" 2> "$OUT/$2-$3.log"
  echo "-- $2 $3 exit $? in $(( $(date +%s) - t0 )) s: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" "$OUT/$2-$3.json" 2>&1 | tail -1)"
}
# raw WS NAME: the probe's results (NVML samples included) and ncu's pages, gzipped
raw() { mkdir -p "$OUT/raw-$2"; cp "$1"/sessions/*/results/*.json "$1"/sessions/*/results/*.csv "$OUT/raw-$2/" 2>/dev/null; gzip -f "$OUT/raw-$2"/* 2>/dev/null; }
