#!/usr/bin/env bash
# A new user's first minutes, in a real terminal (tmux at 120x40, a socket of its own): an empty folder,
# Enter, ↓, r; a bracketed paste of two lines in the editor; a sentence, Escape 1 s later and j at once;
# a paste outside the editor; E, y, r, and typing into the ended session's editor. Prints what the
# screen and the files say after each step, and PASS/FAIL for each check.
#   bash bench/newcomer_tmux.sh [COLSxROWS]
set -u
size=${1:-120x40}; cols=${size%x*}; rows=${size#*x}
py=${PYTHON:-python3}
w=$(mktemp -d /tmp/newcomer-XXXX); sock=newcomer-$$
t() { tmux -L "$sock" "$@"; }
screen() { t capture-pane -p -t c; }
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fi; }
t new-session -d -s c -x "$cols" -y "$rows" "cd $w && $py -m cockpit; echo EXIT=\$?; sleep 600"
trap 't kill-server 2>/dev/null; rm -rf "$w"' EXIT
sleep 6
t send-keys -t c Enter; sleep 2; t send-keys -t c Down; sleep 0.5; t send-keys -t c r; sleep 2
check "empty folder, Enter, ↓, r: the app is up and names cockpit init" \
  '! screen | grep -q "EXIT=" && screen | grep -q "cockpit init"'
t send-keys -t c Tab; sleep 0.5
t send-keys -t c -l $'\e[200~PASTE-A\nPASTE-B\e[201~'; sleep 1
t send-keys -t c -l " check the timer"; sleep 1; t send-keys -t c Escape; t send-keys -t c j; sleep 1.5
md=$(ls "$w"/sessions/*/SESSION.md)
t send-keys -t c -l $'\e[200~OUTSIDE\nTHE EDITOR\e[201~'; sleep 1.5
check "a bracketed paste lands once, with its line break" \
  '[ "$(grep -c "PASTE-A" "$md")" = 1 ] && grep -q "^PASTE-B check the timer$" "$md"'
check "a sentence, Escape 1 s later, then j: j typed nowhere, the selection moved" \
  '! grep -q "timerj" "$md" && screen | grep -q "Gate: correctness"'
check "a paste outside the editor is refused with a hint and lands nowhere" \
  '! grep -q OUTSIDE "$md"'
t send-keys -t c E; sleep 0.7; t send-keys -t c y; sleep 2; t send-keys -t c r; sleep 1.5
t send-keys -t c Tab; sleep 0.5; t send-keys -t c -l "after the end"; sleep 2
journal=$(ls "$w"/sessions/*/journal.jsonl)
check "E, y, r: no gate starts; nothing but app_* after session_ended" \
  "$py -c 'import json,sys; t=[json.loads(l)[\"type\"] for l in open(sys.argv[1])]; i=t.index(\"session_ended\"); sys.exit(any(not x.startswith(\"app_\") for x in t[i+1:]))' $journal"
check "the ended session's editor took nothing" '! grep -q "after the end" "$md"'
echo "--- the screen"; screen
echo "--- SESSION.md's Log"; sed -n '/^## Log/,$p' "$md"
echo "--- the journal"; cut -c1-110 "$journal"
echo "--- the workspace"; (cd "$w" && find . -maxdepth 2 | sort)
