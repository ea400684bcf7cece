#!/usr/bin/env bash
# Differential run through Node's own runner: the difffuzz generator's
# timer scripts, each run by `node tl.js` and by `tljs tl.js` (release
# builds of the example and of tljs expected in $CARGO_TARGET_DIR or
# target/). A script whose outputs differ is rerun 4 times on node: if node
# disagrees with itself it is counted unstable (timing-sensitive), else it
# is a difference, listed with its seed.
#
# Usage: js/scripts/difftl.sh [FIRST_SEED [COUNT [SIZE]]]
# Build first: cargo build --release -p timerloop-js && cargo build --release --example difffuzz
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
tl=$root/fixtures/node/tl.js
tljs=$target/release/tljs
gen=$target/release/examples/difffuzz
first=${1:-7000000}; count=${2:-400}; size=${3:-30}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; cd "$work"
same=0; differ=0; unstable=0
for seed in $(seq "$first" $((first + count - 1))); do
  "$gen" --print --seed "$seed" --size "$size" > s.tl 2>/dev/null || continue
  a=$(timeout 20 node "$tl" s.tl 2>/dev/null; echo "status=$?")
  b=$(timeout 20 "$tljs" "$tl" s.tl 2>/dev/null; echo "status=$?")
  if [ "$a" == "$b" ]; then same=$((same + 1)); continue; fi
  stable=1
  for _ in 1 2 3 4; do
    c=$(timeout 20 node "$tl" s.tl 2>/dev/null; echo "status=$?")
    [ "$c" == "$a" ] || stable=0
  done
  if [ $stable = 1 ]; then differ=$((differ + 1)); echo "differs: seed $seed"
  else unstable=$((unstable + 1)); fi
done
echo "same=$same differ=$differ node-unstable=$unstable"
[ $differ = 0 ]
