#!/usr/bin/env bash
# Keep N cores busy (default: all of them, `nproc`) until killed: the test suite must pass on a
# loaded box, so CI runs it beside this. Each spinner is a shell busy loop (no Python, no
# extra packages); killing this script (TERM, INT or HUP) ends every spinner it started, and the
# spinners stop by themselves within a second once this script or whatever started it is gone
# (killed with -9: no trap runs), so no hog outlives its run.
#   scripts/cpu-hog.sh [N] & hog=$!; trap 'kill "$hog"' EXIT
set -euo pipefail
n=${1:-$(nproc)}
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
  echo "cpu-hog: N must be a positive number of cores, not '$n' (e.g. scripts/cpu-hog.sh 2)" >&2
  exit 2
fi
spinners=()
for _ in $(seq "$n"); do
  (trap - TERM INT HUP
   while kill -0 "$$" 2>/dev/null && kill -0 "$PPID" 2>/dev/null; do for _ in {1..20000}; do :; done; done) &
  spinners+=("$!")
done
stop() { kill "${spinners[@]}" 2>/dev/null || true; }
trap 'stop; exit 0' TERM INT HUP
trap stop EXIT
wait
