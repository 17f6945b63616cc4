#!/usr/bin/env bash
# The counts in docs/RELIABILITY.md: runs tests/fault_campaign.rs (the real
# `filterctl` on mutated files, cut streams, hostile specs and arguments,
# non-finite pixels and injected output and cache faults) and prints its
# table: inputs tried, faults injected, runs, panics, inputs lost, wrong
# outputs silently accepted.
#
#   benches/reliability.sh            # scale 10 (about 6,000 runs), seed fixed
#   benches/reliability.sh 20 12345   # scale 20, another seed
#
# CI runs the same campaign at scale 2 as part of `cargo test`. Then the
# property tests with many more cases (see docs/QUALITY.md, "Fuzzing").
set -euo pipefail
scale=${1:-10}
seed=${2:-}
cd "$(dirname "$0")/.."
export FAULT_SCALE="$scale"
if [ -n "$seed" ]; then export FAULT_SEED="$seed"; fi
cargo test --release --test fault_campaign -- --nocapture 2>&1 |
  sed -n '/^fault campaign/,/^$/p'
