#!/usr/bin/env bash
# The measurement run behind docs/PERFORMANCE.md, for a lent GPU machine that
# has no Rust toolchain. Build here, then carry target/gpu/ across:
#
#   benches/device_run.sh build          # fills target/gpu/ with release binaries
#   benches/device_run.sh run OUT_DIR    # on the GPU machine (after registering the ICD)
#
# `run` writes everything into OUT_DIR: device list, `filterctl bench` tables
# (text and JSON) on the NVIDIA GPU and on PoCL, criterion output, and the
# test suite run against the GPU.
set -u
cmd=${1:-}
case "$cmd" in
build)
  set -e
  cargo build --release
  cargo bench --no-run
  cargo test --release --no-run || echo "warning: test binaries did not build"
  rm -rf target/gpu && mkdir -p target/gpu
  cp target/release/filterctl target/gpu/
  # Newest binary of each bench/test target.
  for f in $(ls -t target/release/deps/engine-* | grep -v '\.d$' | head -1); do cp "$f" target/gpu/criterion-engine; done
  for name in ops fallback image_io gaussian tune demosaic; do
    f=$(ls -t target/release/deps/${name}-* 2>/dev/null | grep -v '\.d$' | head -1)
    [ -n "$f" ] && cp "$f" "target/gpu/test-${name}"
  done
  strip target/gpu/* 2>/dev/null || true
  ls -la target/gpu
  ;;
run)
  OUT=${2:?OUT_DIR}
  B=target/gpu
  export FILTERCTL_CACHE_DIR=$(mktemp -d)
  log=$OUT/results.txt
  {
    echo "## date"; date -u
    echo "## nvidia-smi"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.mem --format=csv
    echo "## devices"; $B/filterctl devices
  } >"$log" 2>&1
  for t in f32:1 u8:1 f32:4 u8:4; do
    ty=${t%:*}; ch=${t#*:}
    echo "## bench gpu 8192x8192 $ty x$ch" >>"$log"
    $B/filterctl --device gpu bench --ops transpose,minmax,normalize --size 8192x8192 --type "$ty" --channels "$ch" --iters 30 >>"$log" 2>&1
  done
  $B/filterctl --device gpu bench --size 8192x8192 --type f32 --channels 1 --iters 20 --json >"$OUT/bench-gpu-f32.json" 2>>"$log"
  for sg in 2 8 32; do
    for ch in 1 4; do
      echo "## bench gpu gaussian sigma $sg 8192x8192 f32 x$ch" >>"$log"
      $B/filterctl --device gpu bench --ops gaussian --sigma "$sg" --size 8192x8192 --type f32 --channels "$ch" --iters 20 --no-cpu >>"$log" 2>&1
    done
    echo "## bench pocl gaussian sigma $sg 3840x2160 f32 x1" >>"$log"
    $B/filterctl --device portable bench --ops gaussian --sigma "$sg" --size 3840x2160 --type f32 --channels 1 --iters 3 --no-cpu >>"$log" 2>&1
  done
  for size in 3840x2160 1920x1080; do
    for ch in 1 4; do
      echo "## bench gpu gaussian sigma 8 $size f32 x$ch" >>"$log"
      $B/filterctl --device gpu bench --ops gaussian --sigma 8 --size "$size" --type f32 --channels "$ch" --iters 20 --no-cpu >>"$log" 2>&1
    done
  done
  # Per-pass kernel times of the block-parallel and row-scan passes.
  echo "## gaussian pass times, 8192x8192 gray sigma 8" >>"$log"
  RUST_LOG=clfilter=debug $B/filterctl --device gpu bench --ops gaussian --sigma 8 --size 8192x8192 --iters 3 --no-cpu 2>&1 | grep -E "gaussian (blk|row_local)" | tail -4 >>"$log"
  if $B/filterctl tune --help >/dev/null 2>&1; then
    echo "## tune gpu" >>"$log"
    $B/filterctl --device gpu tune --ops gaussian,transpose --sizes 256x256,1920x1080,3840x2160,8192x8192 >>"$log" 2>&1
    $B/filterctl --device gpu tune --show --json >"$OUT/tuning-gpu.json" 2>>"$log"
  fi
  if $B/filterctl variants 2>/dev/null | grep -q demosaic; then
    echo "## bench gpu demosaic 8192x8192 u8" >>"$log"
    $B/filterctl --device gpu bench --ops demosaic --size 8192x8192 --type u8 --channels 1 --iters 20 --no-cpu >>"$log" 2>&1
  fi
  echo "## bench pocl 8192x8192 f32 x1" >>"$log"
  $B/filterctl --device portable bench --ops transpose,minmax,normalize --size 8192x8192 --type f32 --channels 1 --iters 5 --no-cpu >>"$log" 2>&1
  echo "## tests against the GPU" >>"$log"
  for t in $B/test-*; do
    FILTERCTL_DEVICE=gpu FILTERCTL_REQUIRE_OPENCL=1 "$t" >>"$log" 2>&1; echo "$t exit $?" >>"$log"
  done
  echo "## criterion gpu 8192x8192 f32" >"$OUT/criterion.txt"
  FILTERCTL_DEVICE=gpu CLFILTER_BENCH_SIZE=8192x8192 $B/criterion-engine --bench --warm-up-time 1 --measurement-time 3 >>"$OUT/criterion.txt" 2>&1
  echo "## demo" >>"$log"
  $B/filterctl --device gpu demo --out "$(mktemp -d)" >>"$log" 2>&1
  ;;
*)
  echo "usage: $0 build | run OUT_DIR" >&2
  exit 2
  ;;
esac
