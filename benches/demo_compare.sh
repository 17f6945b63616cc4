#!/usr/bin/env bash
# Byte-for-byte comparison of `filterctl demo` outputs from two binaries
# (issue 16: the reshaping must not change any output).
#
#   benches/demo_compare.sh BEFORE_BIN AFTER_BIN [DEVICE...]
#
# For each DEVICE (default: cpu auto), runs
#   BIN --device DEVICE demo --out DIR
# with both binaries, each with its own empty FILTERCTL_CACHE_DIR (so neither
# reads the other's program binaries or tuning results), then compares every
# output file by sha256. Prints one line per file (same / DIFFERENT / only in
# before / only in after) and a summary.
#
# Exit status: 0 when every device produced the same set of files with the
# same bytes; 1 when any file differs, a file exists on one side only, or a
# demo run fails; 2 on a usage error. Set KEEP=1 to keep the work folder
# (its path is printed), for looking at the differing files.
set -u
export LC_ALL=C

usage() {
  sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

[ $# -ge 2 ] || usage
before=$1
after=$2
shift 2
devices=("$@")
[ ${#devices[@]} -gt 0 ] || devices=(cpu auto)

for bin in "$before" "$after"; do
  if [ ! -x "$bin" ]; then
    echo "demo_compare: not an executable: $bin" >&2
    exit 2
  fi
done
command -v sha256sum >/dev/null || { echo "demo_compare: sha256sum not found" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/demo_compare.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "work folder: $work"
else
  trap 'rm -rf "$work"' EXIT
fi

# sha256 of every file under $1, as "HASH  relative/path", sorted by path.
hashes() {
  (cd "$1" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum) | sed 's#  \./#  #'
}

status=0
total_same=0
total_bad=0
for dev in "${devices[@]}"; do
  echo "== device $dev"
  for side in before after; do
    bin=$before
    [ "$side" = after ] && bin=$after
    out="$work/$dev/$side/out"
    mkdir -p "$out" "$work/$dev/$side/cache"
    if ! FILTERCTL_CACHE_DIR="$work/$dev/$side/cache" "$bin" --device "$dev" demo --out "$out" \
      >"$work/$dev/$side/log" 2>&1; then
      echo "FAILED   $side: $bin --device $dev demo (log below)"
      sed 's/^/    /' "$work/$dev/$side/log"
      status=1
    fi
    hashes "$out" >"$work/$dev/$side/sha256"
  done

  # One line per file in either set: PATH, before's and after's sha256 ('-' when
  # absent), tab-separated. (sha256sum lines are 64 hex digits, 2 spaces, the path.)
  join -t $'\t' -a1 -a2 -e - -o 0,1.2,2.2 -j1 \
    <(awk '{print substr($0, 67) "\t" substr($0, 1, 64)}' "$work/$dev/before/sha256" | sort -t $'\t' -k1,1) \
    <(awk '{print substr($0, 67) "\t" substr($0, 1, 64)}' "$work/$dev/after/sha256" | sort -t $'\t' -k1,1) \
    >"$work/$dev/joined"

  n=0
  while IFS=$'\t' read -r path hb ha; do
    n=$((n + 1))
    if [ "$hb" = - ]; then
      echo "ONLY IN AFTER   $dev/$path"
      total_bad=$((total_bad + 1))
      status=1
    elif [ "$ha" = - ]; then
      echo "ONLY IN BEFORE  $dev/$path"
      total_bad=$((total_bad + 1))
      status=1
    elif [ "$hb" = "$ha" ]; then
      echo "same       $dev/$path  ${hb:0:16}"
      total_same=$((total_same + 1))
    else
      echo "DIFFERENT  $dev/$path  before ${hb:0:16} after ${ha:0:16}"
      total_bad=$((total_bad + 1))
      status=1
    fi
  done <"$work/$dev/joined"
  if [ "$n" -eq 0 ]; then
    echo "NO FILES   $dev: neither binary wrote any output"
    status=1
  fi
done

if [ "$status" -eq 0 ]; then
  echo "demo_compare: identical: $total_same files on ${devices[*]}"
else
  echo "demo_compare: NOT identical: $total_same same, $total_bad different or missing (devices: ${devices[*]})"
fi
exit "$status"
