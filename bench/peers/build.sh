#!/usr/bin/env bash
# Build peers_bench: timersim's wheel code from a checkout, the peers from vendor/.
#
#   build.sh [TIMERSIM_CHECKOUT] [OUT_DIR]
#
# TIMERSIM_CHECKOUT (or $TIMERSIM_SRC): a timersim source tree; every .cpp under its
# wheel/ is compiled here with the same flags as everything else (the wheels are
# not header-only: arm/cancel/collect live in wheel/*/*.cpp, meson's
# libtimersim_wheel.a).
# OUT_DIR (or $OUT_DIR, default ${TMPDIR:-/tmp}/peers-bench-build): where the
# objects and the binary go; the binary's path is printed last.
#
# One set of flags for every queue: g++ -std=c++20 $FLAGS for C++ (timersim,
# ratas, seastar::timer_set, the 4-ary heap, the harness), gcc $FLAGS for
# timeout.c (it is C: it does not compile as C++). FLAGS defaults to
# "-O3 -DNDEBUG" (no -march, like the project's release build); EXTRA_FLAGS is
# appended to it, e.g. EXTRA_FLAGS=-flto to let timersim's out-of-line arm()
# and cancel() inline the way the header-only peers do.
#
# timersim's copy (bench/peers/): the peers' sources are not copied into the
# repository; PEERS_VENDOR names their vendor/ directory (default: vendor/
# beside this script, else /work/shared/peers/vendor on the project's VM).
# HARNESS (default: peers_bench.cpp beside this script) is the harness to build,
# one translation unit: timersim's copy includes its parts (peers_*.hpp) from
# beside it, so they are compiled with it and need no line of their own here;
# HARNESS=/work/shared/peers/peers_bench.cpp builds the shared harness, which
# names the wheels by their paths before wheel/ had folders
# (wheel/modern_wheel.hpp): OUT_DIR/include/wheel/ gets a one-line header at
# each such path that includes the header where it now lives.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vendor=${PEERS_VENDOR:-$here/vendor}
[ -d "$vendor" ] || vendor=/work/shared/peers/vendor
[ -d "$vendor/ratas" ] || { echo "build.sh: no peers' vendor/ at $vendor (set PEERS_VENDOR)" >&2; exit 1; }
src=${1:-${TIMERSIM_SRC:-}}
[ -n "$src" ] || { echo "usage: build.sh TIMERSIM_CHECKOUT [OUT_DIR]" >&2; exit 2; }
src=$(cd "$src" && pwd)
out=${2:-${OUT_DIR:-${TMPDIR:-/tmp}/peers-bench-build}}
mkdir -p "$out"
harness=${HARNESS:-$here/peers_bench.cpp}
# Every .cpp under the checkout's wheel/ is compiled (the queues' out-of-line code).
mapfile -t wheel_srcs < <(find "$src/wheel" -name '*.cpp' | sort)
((${#wheel_srcs[@]} > 0)) || { echo "build.sh: no .cpp under $src/wheel" >&2; exit 1; }
# The flat paths of a harness written before wheel/ had folders.
mkdir -p "$out/include/wheel"
while IFS= read -r header; do
  rel=${header#"$src"/}
  flat=$out/include/wheel/$(basename "$header")
  [ -e "$src/wheel/$(basename "$header")" ] || printf '#include "%s"\n' "$rel" > "$flat"
done < <(find "$src/wheel" -mindepth 2 -name '*.hpp' | sort)
# Such a harness also makes timersim's queues without a Config, from before
# every queue was given its HZ (no HZ is assumed): in a copy under OUT_DIR,
# each is given HZ=1000 (the harness counts jiffies, never seconds), and the
# copy must differ from it in exactly those three lines.
if grep -q 'timersim::ModernWheel w;' "$harness"; then
  sed -e 's/timersim::ModernWheel w;/timersim::ModernWheel w{timersim::ModernWheel::Config{.hz = 1000}};/' \
      -e 's/timersim::HeapQueue w;/timersim::HeapQueue w{timersim::HeapQueue::Config{.hz = 1000}};/' \
      -e 's/timersim::ClassicWheel::Config c;/timersim::ClassicWheel::Config c{.hz = 1000};/' \
      "$harness" > "$out/peers_bench_given_hz.cpp"
  [ "$(diff "$harness" "$out/peers_bench_given_hz.cpp" | grep -c '^>')" = 3 ] ||
    { echo "build.sh: unexpected harness (the HZ fix did not apply to exactly 3 lines)" >&2; exit 1; }
  harness=$out/peers_bench_given_hz.cpp
fi
flags=(${FLAGS:--O3 -DNDEBUG} ${EXTRA_FLAGS:-})
# ratas is C++11 and names its constructors "TimerEvent<CBType>(...)", which C++20
# rejects (CWG 2237). The only change: those two declarators become "TimerEvent(",
# in a copy under OUT_DIR; vendor/ratas/timer-wheel.h stays as published.
mkdir -p "$out/include/ratas"
sed 's/TimerEvent<CBType>(/TimerEvent(/' "$vendor/ratas/timer-wheel.h" > "$out/include/ratas/timer-wheel.h"
[ "$(diff "$vendor/ratas/timer-wheel.h" "$out/include/ratas/timer-wheel.h" | grep -c '^>')" = 2 ] ||
  { echo "build.sh: unexpected ratas header (the C++20 fix did not apply to exactly 2 lines)" >&2; exit 1; }
timeout_defs=(-DTIMEOUT_DISABLE_INTERVALS -DTIMEOUT_DISABLE_RELATIVE_ACCESS -DTIMEOUT_DISABLE_CALLBACKS)
cxx=(g++ -std=c++20 "${flags[@]}" "${timeout_defs[@]}"
     -I"$src" -I"$out/include" -I"$vendor" -I"$vendor/seastar/include" -I"$vendor/seastar-shim")
pids=()
wheel_objs=()
for f in "${wheel_srcs[@]}"; do
  o="$out/wheel_$(basename "$f" .cpp).o"; wheel_objs+=("$o")
  "${cxx[@]}" -c "$f" -o "$o" & pids+=($!)
done
gcc "${flags[@]}" "${timeout_defs[@]}" -I"$vendor/timeout" -c "$vendor/timeout/timeout.c" -o "$out/timeout.o" & pids+=($!)
"${cxx[@]}" -c "$harness" -o "$out/peers_bench.o" & pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
"${cxx[@]}" "$out"/peers_bench.o "${wheel_objs[@]}" "$out"/timeout.o \
  -o "$out/peers_bench"
echo "$out/peers_bench"
