#!/usr/bin/env bash
# The learning-loop example session (examples/sessions/20261129-*), driven through the cockpit's CLI
# on a lent GPU box: a row softmax as first written (bench/device/loop/softmax_first.cu: one warp
# per row, each lane a contiguous slice of it) in a workspace of its own, with workloads/softmax's
# binding and declaration unchanged.
#   Environment: env; Baseline: build, correctness, bench; Profile: profile, its fix said.
#   Then only when the profile's one fix is about how the warp's loads use their sectors (the defect
#   planted): Fix: that one change committed (lanes interleaved along the row, nothing else);
#   Evaluate: build, correctness, bench (keep or revert against the first bench); Document: a
#   pattern naming ncu's rule, end, history, pattern list.
#   A profile that names another fix stops there: the workspace is archived for a second visit.
#   OUT=... bash bench/device/loop_session.sh
set -u
: "${OUT:?set OUT}"
repo=$PWD
ws=/tmp/loop-ws
. bench/device/session_common.sh
export XDG_CACHE_HOME=/tmp/cockpit-cache
commit() { (cd "$ws" && git add -A && git -c user.email=e@x -c user.name=engineer commit -qm "$1"); }
{
  nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
  rm -rf "$ws"; mkdir -p "$ws/workloads/softmax"
  cp workloads/softmax/softmax.h workloads/softmax/binding.cpp workloads/softmax/softmax.py "$ws/workloads/softmax/"
  cp bench/device/loop/softmax_first.cu "$ws/workloads/softmax/softmax.cu"
  printf '[workload]\nmodule = "workloads/softmax/softmax.py"\n' > "$ws/cockpit.toml"
  printf 'build/\n' > "$ws/.gitignore"
  (cd "$ws" && git init -q)
  commit "softmax: a first version, one warp per row"
  c trust allow
  c new "Row softmax, first version: baseline, profile, the one fix it names, evaluate"
  setsid nohup python3 -m cockpit --workspace "$ws" telemetry track > "$ws/track.log" 2>&1 &
  gate env
  c phase next
  gate build
  gate correctness
  gate bench
  note "Baseline: the first version against torch.softmax; next the profile, and only the fix it names."
  c phase next
  gate profile
  python3 - "$ws/last-profile.json" <<'PY' | tee "$ws/fix.txt"
import json, sys
from cockpit.analysis.fix_payoff import Predicted
r = json.load(open(sys.argv[1])).get("result") or {}
fix = r.get("fix") or (r.get("raw") or {}).get("fix") or {}
p = Predicted.of_fix(fix.get("line", ""), fix.get("estimates", []), "")
print("FIX", fix.get("line"))
print("RULE", p.rule or "")
print("ESTIMATES", fix.get("estimates"))
PY
  if ! grep -qiE "coalesc|sector|access pattern|uncoalesced" "$ws/fix.txt"; then
    echo "STOP: the profile names another fix; the workspace is archived for a second visit"
  else
    rule=$(sed -n 's/^RULE //p' "$ws/fix.txt")
    note "Profile: ${rule:-the decision tree} — the warp's loads use a sliver of each sector. The one fix: lanes interleaved along the row."
    c phase next
    python3 - "$ws/workloads/softmax/softmax.cu" <<'PY'
import re, sys
p = sys.argv[1]; s = open(p).read()
s = re.sub(r"  // This lane's slice of the row\.\n.*?const int end = [^\n]*\n", "", s, flags=re.S)
s = s.replace("for (int i = begin; i < end; ++i)", "for (int i = lane; i < cols; i += 32)")
s = s.replace("Each lane takes its own contiguous slice of the row:\n// lane l reads elements [l * per_lane, (l + 1) * per_lane). That is the defect the session's\n// profile is asked about: at each load the 32 lanes of a warp touch 32 different sectors.",
              "The lanes are interleaved along the row:\n// lane l reads elements l, l + 32, ...: at each load the warp reads one contiguous run.")
s = s.replace("a slice per lane", "lanes interleaved")
assert "begin" not in s and "per_lane" not in s, "the fix did not apply"
open(p, "w").write(s)
PY
    commit "softmax: lanes interleaved along the row (lane l reads l, l+32, ...), the profile's one fix"
    c phase next
    gate build
    gate correctness
    gate bench
    note "Evaluate: the same grid after the one fix; the bench's decision is against the first version's bench."
    c phase next
    c pattern new "Interleave a warp's lanes along the row" \
      --problem "Each lane of a warp read its own contiguous slice of the row, so every load touched 32 sectors and used a few bytes of each; ncu's ${rule:-memory} rule named it." \
      --when "A warp or block walks a row (softmax, layer norm, reductions) and ncu's ${rule:-memory} rule or the L1 sectors per request say the loads are not coalesced." \
      --solution "Let lane l take elements l, l + 32, ... (or vectors l, l + 32, ...) so each load is one contiguous run; keep the rest of the kernel as it is and bench again." \
      --time-saved 20
    c end --reason "the profile's one fix made and kept"
    c history
    c pattern list
  fi
} 2>&1 | tee "$OUT/loop.txt"
pkill -f "cockpit --workspace $ws telemetry" 2>/dev/null
cp "$ws"/last-*.json "$ws"/last-*.log "$ws/fix.txt" "$OUT/" 2>/dev/null
find "$ws/sessions" -name '*.log' -size +64k | while read -r f; do { head -200 "$f"; echo "[... cut by loop_session.sh: the full log is $(wc -l < "$f") lines ...]"; tail -200 "$f"; } > "$f.cut" && mv "$f.cut" "$f"; done
tar -C "$ws" -czf "$OUT/loop-ws.tgz" --exclude=build --exclude='*.so' --exclude='*.o' --exclude='*.ncu-rep' .
