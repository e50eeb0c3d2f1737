#!/usr/bin/env bash
# The third example session: the profile's "register-limited, L1/shared-memory bound" verdict
# answered by hand (32 query rows per warp without spills), then `cockpit tune` for the H100's
# own D=128 tile. Driven through the cockpit's CLI on a lent GPU box over two chained visits:
#   A  capture_launch.sh (the build gate's recordings for the tests); new session (the two
#      earlier example sessions copied in, for history) + telemetry track; Environment: env;
#      Baseline: build, correctness, bench with the kernel before the fix (.carry/kv/base);
#      Profile: profile; Fix: the new csrc committed, `cockpit tune` started detached
#   B  wait for the tune; Evaluate: build, correctness, bench; Document: NOTES, PATTERN, end;
#      history
# Every stage leaves its log and the session (gate logs trimmed) in $OUT.
set -u
: "${OUT:?set OUT}" "${STAGE:?set STAGE=A|B}"
ws=/tmp/fix-ws
. bench/device/session_common.sh
log="$OUT/stage-$STAGE.txt"
{
case "$STAGE" in
A)
  mkdir -p "$OUT/launch" && OUT="$OUT/launch" bash tests/fixtures/gpu/capture_launch.sh 2>&1 | tail -4
  rm -rf "$ws"; mkdir -p "$ws/csrc" "$ws/sessions"
  cp .carry/kv/base/attention.cu .carry/kv/base/attention.h csrc/binding.cpp csrc/README.md "$ws/csrc/"
  cp -r patterns cockpit.toml "$ws/"
  cp -r sessions/2026* "$ws/sessions/"
  (cd "$ws" && git init -q && git add -A && git -c user.email=e@x -c user.name=engineer commit -qm "start")
  c new "32 query rows per warp without spills: answer the profile's register verdict, then tune the H100's tile"
  setsid nohup python3 -m cockpit --workspace "$ws" telemetry track > "$ws/track.log" 2>&1 &
  gate env
  c phase next
  gate build
  gate correctness
  gate bench
  notes "${NOTES_A:-}"
  c phase next
  gate profile
  notes "${NOTES_P:-}"
  c phase next
  cp csrc/attention.cu "$ws/csrc/attention.cu"
  (cd "$ws" && git add csrc && git -c user.email=e@x -c user.name=engineer commit -qm "csrc: 32 rows per warp, loads that keep no hoisted addresses, FlashAttention-2's tiles")
  python3 - "$ws/cockpit.toml" <<'PY'
import os, re, sys
p = sys.argv[1]; s = open(p).read()
# The profile says registers and shared memory: search around 32 rows per warp, Q from shared memory.
s = re.sub(r"budget_min = \d+", "budget_min = " + os.environ.get("BUDGET", "7"), s)
s = re.sub(r"q_regs = \[true, false\]", "q_regs = [false]", s)
s = re.sub(r"block_n = \[16, 32, 64, 128, 256\]", "block_n = [32, 64, 128]", s)
s = re.sub(r"warps = \[2, 4, 8, 16\]", "warps = [2, 4, 8]", s)
open(p, "w").write(s)
PY
  (cd "$ws" && git -c user.email=e@x -c user.name=engineer commit -qam "tune: the space the profile points at")
  c tune --dry-run 2>&1 | tail -6
  setsid nohup python3 -m cockpit --workspace "$ws" tune --json > "$ws/tune.json" 2> "$ws/tune.log" &
  sleep 20; tail -3 "$ws/tune.log"
  ;;
B)
  end=$(( $(date +%s) + ${WAIT:-420} ))
  while pgrep -f "cockpit --workspace $ws tune" > /dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
  pgrep -f "cockpit --workspace $ws tune" > /dev/null && echo "tune still running" || { echo "tune finished"; grep -v "^cockpit tune: tuning:" "$ws/tune.log" | tail -30; }
  if [ -f "$ws/csrc/tuned_config.h" ]; then
    (cd "$ws" && git add csrc && git -c user.email=e@x -c user.name=engineer commit -qm "csrc: the tune gate's kept configuration")
  fi
  c phase next
  gate build
  gate correctness
  gate bench
  notes "${NOTES_E:-}"
  c phase next
  [ -n "${PATTERN:-}" ] && eval "c pattern new $PATTERN"
  c end --reason "${REASON:-session done}"
  c history
  ;;
esac
} 2>&1 | tee "$log"
rm -rf /tmp/fix-out; mkdir -p /tmp/fix-out
cp -r "$(ls -d "$ws"/sessions/*/ | tail -1)" /tmp/fix-out/ 2>/dev/null
find /tmp/fix-out -name '*.log' -size +64k | while read -r f; do { head -200 "$f"; echo "[... cut by fix_session.sh: the full log is $(wc -l < "$f") lines ...]"; tail -200 "$f"; } > "$f.cut" && mv "$f.cut" "$f"; done
find /tmp/fix-out \( -name '*.so' -o -name '*.ncu-rep' -o -name '*.o' \) -delete
cp "$ws"/tune.json "$ws"/tune.log "$ws"/csrc/tuned_config.h /tmp/fix-out/ 2>/dev/null
tar -C /tmp/fix-out -czf "$OUT/fix-session-$STAGE.tgz" .
[ -d "$OUT/launch" ] && tar -C "$OUT" -czf "$OUT/launch.tgz" launch && rm -rf "$OUT/launch"
