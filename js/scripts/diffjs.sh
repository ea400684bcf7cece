#!/usr/bin/env bash
# Differential run of generated JavaScript: js/scripts/genjs.js writes a
# plain Node timer program per seed; each runs on node and on tljs (release
# build expected in $CARGO_TARGET_DIR or target/). Equal stdout and status:
# identical. Otherwise node runs it 4 more times and tljs 2 more, twice,
# 2 s apart: if node disagrees with itself, or a run of one side prints
# what the other printed, the program is unstable (timing-sensitive on
# this machine, which other jobs load, and nice -n 10 leaves a process
# waiting tens of ms behind them); else it is a difference (a tljs that
# varies but never prints node's output among them), listed with its
# seed (reproduce: node js/scripts/genjs.js SEED SIZE > p.js). The exit
# status fails on any difference, or on more than half unstable.
#
# Usage: js/scripts/diffjs.sh [FIRST_SEED [COUNT [SIZE]]]
# Build first: cargo build --release -p timerloop-js (or set TLJS=path).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
tljs=${TLJS:-$target/release/tljs}
gen=$root/js/scripts/genjs.js
first=${1:-1}; count=${2:-200}; size=${3:-25}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
same=0; differ=0; unstable=0
for seed in $(seq "$first" $((first + count - 1))); do
  node "$gen" "$seed" "$size" > p.js || { echo "genjs failed: seed $seed"; exit 2; }
  a=$(timeout 20 node p.js 2>/dev/null; echo "status=$?")
  b=$(timeout 20 "$tljs" p.js 2>/dev/null; echo "status=$?")
  if [ "$a" == "$b" ]; then same=$((same + 1)); continue; fi
  # Two rounds, 2 s apart (a burst of load passes): node 4 runs, tljs 2.
  # Unstable (timing-sensitive here): node disagrees with itself, or some
  # run of one side prints what the other printed. A tljs that disagrees
  # with itself but never prints node's output is a difference.
  node_varies=0; crossed=0
  for round in 1 2; do
    [ $round = 2 ] && sleep 2
    for _ in 1 2 3 4; do
      c=$(timeout 20 node p.js 2>/dev/null; echo "status=$?")
      [ "$c" != "$a" ] && node_varies=1
      [ "$c" == "$b" ] && crossed=1
    done
    for _ in 1 2; do
      c=$(timeout 20 "$tljs" p.js 2>/dev/null; echo "status=$?")
      [ "$c" == "$a" ] && crossed=1
    done
    [ $node_varies = 1 ] || [ $crossed = 1 ] && break
  done
  if [ $node_varies = 0 ] && [ $crossed = 0 ]; then differ=$((differ + 1)); echo "differs: seed $seed"
  else unstable=$((unstable + 1)); echo "unstable: seed $seed"; fi
done
echo "identical=$same different=$differ unstable=$unstable"
# Unstable programs prove nothing either way: more than half is a failure.
[ $differ = 0 ] && [ $((unstable * 2)) -le "$count" ]
