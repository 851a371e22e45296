# meson install puts timersim and timersim-plot in bin and the man page
# timersim.1 (generated from the help texts by help2man) in man1; the
# installed binary finds its plot script next to itself. Installs into a
# temporary DESTDIR from the build directory of the binary under test.
# shellcheck source=tests/cli/common.bash
source "$(dirname -- "${BASH_SOURCE[0]}")/common.bash"

build=$(dirname -- "$(dirname -- "$timersim")")
if [[ ! -f $build/meson-private/coredata.dat ]]; then
  echo "SKIP: $timersim is not in a meson build directory; install not checked"
  exit 0
fi

dest=$(mktemp -d)
trap 'rm -rf -- "$dest"' EXIT
# --no-rebuild: install what the build made; never start a build from a test.
if ! log=$(meson install -C "$build" --destdir "$dest" --no-rebuild 2>&1); then
  echo "meson install failed:"
  printf '%s\n' "$log"
  exit 1
fi

installed() {
  local found
  found=$(find "$dest" -path "*/$1" -type f)
  # Called in $(...): the complaint goes to stderr, and set -e ends the test.
  [[ -n $found && $(wc -l <<<"$found") -eq 1 ]] || {
    echo "meson install did not install exactly one $1; it installed:"
    (cd "$dest" && find . -type f)
    exit 1
  } >&2
  printf '%s\n' "$found"
}

bin=$(installed bin/timersim)
plot=$(installed bin/timersim-plot)
[[ -x $bin && -x $plot ]] || { echo "installed programs are not executable"; exit 1; }
cmp -s "$plot" "$(dirname -- "$0")/../../scripts/plot" || { echo "timersim-plot is not scripts/plot"; exit 1; }
"$bin" --version | grep -Eq '^timersim [0-9]' || { echo "installed timersim does not run"; exit 1; }

if command -v help2man >/dev/null; then
  man=$(installed share/man/man1/timersim.1)
  grep -q '^\.TH TIMERSIM "1"' "$man" || { echo "timersim.1 is not a man page"; exit 1; }
  # Every command is documented with its options, not only listed.
  for command in compare run levels explain step; do
    grep -q "^\.SS $command\$" "$man" || { echo "timersim.1 has no section for $command"; exit 1; }
  done
  grep -q 'cost-callback-ns' "$man" || { echo "timersim.1 lacks compare's options"; exit 1; }
  # What a man page reader looks for besides the options.
  for section in 'EXIT STATUS' ENVIRONMENT FILES 'SEE ALSO'; do
    grep -q "^\.SH \"\?$section\"\?\$" "$man" || { echo "timersim.1 has no $section section"; exit 1; }
  done
else
  echo "SKIP: help2man is not installed (apt-get install help2man); the man page is not built"
fi
