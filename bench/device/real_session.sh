#!/usr/bin/env bash
# The example session, driven through the cockpit's own CLI on a lent GPU box, over several device
# visits (each <= 10 min; the machine stays warm between chained calls, and the background
# processes with it). STAGE picks the visit:
#   a  new session + headless telemetry track; Environment: env gate; Baseline: build,
#      correctness, bench (and bench/kernel_check.py --skip-speed for the scale cases)
#   b  NOTES appended to SESSION.md; Profile: profile gate; Fix: `cockpit tune` (15 min budget)
#      started detached
#   c  wait for the tune (WAIT seconds)
#   r  on a fresh machine (a lent one goes back after 30 min held): the workspace restored from
#      .carry/real-ws-full.tgz (stage c's snapshot of it), the track restarted, `cockpit tune
#      --resume` in the foreground
#   d  Evaluate: build, correctness, bench, profile with the kept winner
#   e  NOTES; Document; end (report); a second short session (baseline template); history
# Every stage leaves its log and the workspace's sessions (gate logs trimmed) in $OUT.
set -u
: "${OUT:?set OUT}" "${STAGE:?set STAGE=a|b|c|d|e}"
ws=/tmp/real-ws
. bench/device/session_common.sh
log="$OUT/stage-$STAGE.txt"
{
case "$STAGE" in
a)
  rm -rf "$ws"; mkdir -p "$ws"; cp -r csrc patterns cockpit.toml "$ws/"
  (cd "$ws" && git init -q && git add -A && git -c user.email=e@x -c user.name=engineer commit -qm "start")
  c new "Reach SDPA's FLASH backend with the attention kernel on an H100: baseline, profile, one fix, evaluate"
  setsid nohup python3 -m cockpit --workspace "$ws" telemetry track > "$ws/track.log" 2>&1 &
  (python3 bench/kernel_check.py --skip-speed > "$ws/kernel_check.txt" 2>&1; echo "exit $?" >> "$ws/kernel_check.txt") &
  kc=$!
  gate env
  c phase next
  gate build
  gate correctness
  wait $kc; tail -12 "$ws/kernel_check.txt"
  gate bench
  ;;
b)
  notes "${NOTES:-}"
  c phase next
  gate profile
  c phase next
  setsid nohup python3 -m cockpit --workspace "$ws" tune --budget "${BUDGET:-15}" --json > "$ws/tune.json" 2> "$ws/tune.log" &
  sleep "${WAIT:-400}"; tail -5 "$ws/tune.log"; c status
  ;;
c)
  end=$(( $(date +%s) + ${WAIT:-560} ))
  while pgrep -f "cockpit --workspace $ws tune" > /dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 5; done
  pgrep -f "cockpit --workspace $ws tune" > /dev/null && echo "tune still running" || { echo "tune finished"; tail -30 "$ws/tune.log"; }
  c status
  ;;
r)
  rm -rf "$ws"; tar -C /tmp -xzf .carry/real-ws-full.tgz
  setsid nohup python3 -m cockpit --workspace "$ws" telemetry track >> "$ws/track.log" 2>&1 &
  c tune --resume --json > "$ws/tune-resume.json" 2> "$ws/tune-resume.log"; echo "tune --resume: exit $?"
  grep -v "^cockpit tune: tuning:" "$ws/tune-resume.log" | tail -40
  if [ -f "$ws/csrc/tuned_config.h" ]; then
    (cd "$ws" && git add csrc && git -c user.email=e@x -c user.name=engineer commit -qm "csrc: the tune gate's kept configuration")
  fi
  ;;
d)
  c phase next
  gate build
  gate correctness
  gate bench
  gate profile
  ;;
e)
  notes "${NOTES:-}"
  c phase next
  [ -n "${PATTERN:-}" ] && eval "c pattern new $PATTERN"
  c end --reason "${REASON:-session done}"
  sleep 6
  c new --template baseline "Second look the next day: does the tuned kernel hold on a fresh run?"
  setsid nohup python3 -m cockpit --workspace "$ws" telemetry track > "$ws/track2.log" 2>&1 &
  gate env
  c phase next
  gate bench
  [ -n "${NOTES2:-}" ] && note "$NOTES2"
  c end --reason "baseline re-check done"
  c history
  ;;
esac
} 2>&1 | tee "$log"
# The sessions, gate logs cut to their first and last 200 lines (the full ones stay on the box).
rm -rf /tmp/real-out; mkdir -p /tmp/real-out
cp -r "$ws/sessions" /tmp/real-out/ 2>/dev/null
find /tmp/real-out -name '*.log' -size +64k | while read -r f; do { head -200 "$f"; echo "[... cut by real_session.sh: the full log is $(wc -l < "$f") lines ...]"; tail -200 "$f"; } > "$f.cut" && mv "$f.cut" "$f"; done
find /tmp/real-out \( -name '*.so' -o -name '*.ncu-rep' -o -name '*.o' \) -delete
cp "$ws"/tune.json "$ws"/tune.log "$ws"/kernel_check.txt "$ws"/csrc/tuned_config.h /tmp/real-out/ 2>/dev/null
tar -C /tmp/real-out -czf "$OUT/real-session-$STAGE.tgz" .
