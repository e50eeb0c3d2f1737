# Sourced by real_session.sh and fix_session.sh (after they set $ws, the workspace on the box):
# the GPU box's setup and the helpers that drive the cockpit's CLI there.
. tests/fixtures/gpu/capture_common.sh
export PATH=/usr/local/cuda/bin:$PATH
c() { python3 -m cockpit --workspace "$ws" "$@"; }
# One gate, --json kept in the workspace; prints the time, the exit code, the status and summary.
gate() { c gate "$1" --json > "$ws/last-$1.json" 2> "$ws/last-$1.log"; echo "$(date +%T) $1: exit $? $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['status'], '-', d['summary'])" "$ws/last-$1.json" 2>&1 | tail -1)"; }
# A timestamped line at the end of the latest session's SESSION.md (its Log section is last).
note() { printf '\n- %s %s\n' "$(date +%H:%M)" "$1" >> "$(ls -d "$ws"/sessions/*/ | tail -1)SESSION.md"; }
notes() { [ -n "${1:-}" ] && while IFS= read -r line; do [ -n "$line" ] && note "$line"; done <<< "$1"; }
