# A run killed while it writes its outputs leaves no temporary files (issue
# #17 item 6). SIGTERM, SIGINT and SIGHUP remove a named temporary
# (NAME.tmp.PID, forced here with TIMERSIM_NO_TMPFILE=1) and then end the
# process as the signal would (exit status 128 + signal); by default the
# temporary is unnamed (O_TMPFILE), so even SIGKILL leaves nothing. Each run
# is long (minutes of work): the signal always lands mid-run, once the
# command has its temporary open.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

# Job control: background jobs get SIGINT like foreground ones (without it,
# bash starts them with SIGINT ignored).
set -m
here=$(pwd -P)
long=(--connections 20000 --duration 3000)

# has_temp PID MODE: PID has its output's temporary: a NAME.tmp.* file
# (named), or any open file in this directory (unnamed: /proc shows
# "DIR/#INODE (deleted)"; the old code's named temporary counts too).
has_temp() {
  local fd
  if [[ $2 == named ]]; then
    compgen -G '*.tmp.*' >/dev/null
    return
  fi
  for fd in /proc/"$1"/fd/*; do
    [[ $(readlink -- "$fd" 2>/dev/null) == "$here"/* ]] && return 0
  done
  return 1
}

# interrupt MODE SIGNAL COMMAND...: starts timersim COMMAND in the background,
# waits (bounded) for its temporary, sends SIGNAL, and checks the exit status
# and that no file is left behind.
interrupt() {
  local mode=$1 sig=$2 pid i status=0
  shift 2
  last_command="timersim $* ($mode temporary, SIG$sig)"
  out="" err=""
  if [[ $mode == named ]]; then
    TIMERSIM_NO_TMPFILE=1 "$timersim" "$@" >/dev/null 2>stderr.txt &
  else
    "$timersim" "$@" >/dev/null 2>stderr.txt &
  fi
  pid=$!
  for ((i = 0; i < 3000; i++)); do
    has_temp "$pid" "$mode" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  if ! has_temp "$pid" "$mode"; then
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" || true
    fail "never saw its temporary file"
  fi
  kill -"$sig" "$pid"
  wait "$pid" || status=$?
  err=$(<stderr.txt)
  rm -f stderr.txt
  local expected=$((128 + $(kill -l "$sig")))
  [[ $status -eq $expected ]] || fail "exit status $status, expected $expected"
  local left
  left=$(find . -mindepth 1)
  [[ -z $left ]] || fail "files left behind: $left"
}

for sig in TERM INT HUP; do
  interrupt named "$sig" compare "${long[@]}" -o out.json --events ev.csv
done
interrupt named TERM gen "${long[@]}" -o out.trace
interrupt unnamed TERM compare "${long[@]}" -o out.json --events ev.csv
interrupt unnamed KILL compare "${long[@]}" -o out.json --events ev.csv
interrupt unnamed KILL gen "${long[@]}" -o out.trace
