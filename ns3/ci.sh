#!/usr/bin/env bash
# CI scenario of the ns-3 module: build (ns3/build.sh), then run every algorithm on a few
# nodes for a few simulated seconds over 802.11b ad hoc, and check from the CSV that nodes
# entered, that the fence-checking resource saw no violation and (no faults, no recovery)
# no overlap, and that no call of the C interface failed. Exits non-zero otherwise.
#
#   ns3/ci.sh               # build + run
#   NS3_SKIP_BUILD=1 ns3/ci.sh   # run an already built program
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
out_dir="${NS3_BUILD_DIR:-$target/ns3}"
prog="$out_dir/manet-mutex-sim"

if [ -z "${NS3_SKIP_BUILD:-}" ]; then
  "$here/build.sh"
fi
[ -x "$prog" ] || { echo "ns3/ci.sh: no $prog (run ns3/build.sh)" >&2; exit 1; }

csv_dir="$out_dir/ci"
mkdir -p "$csv_dir"
fail=0
start=$(date +%s)
printf '%-16s %8s %8s %10s %10s %8s %8s %10s %8s %10s\n' algorithm routing entries mean_wait p99_wait msgs/cs core/cs hops/cs viol overlaps
# 4 nodes at random in a 35 m square (every pair within the 51 m range), 10 s, 2 requests/s
# per node, 10 ms critical sections; the permission algorithms over AODV and OLSR.
run() {
  local alg="$1" routing="$2"; shift 2
  local csv="$csv_dir/$alg-$routing.csv"
  if ! timeout 60 "$prog" --algorithm="$alg" --routing="$routing" --nodes=4 --area=35 \
      --time=10 --lambda=2 --cs=0.01 --seed=1 --csv="$csv" "$@" 2>"$csv.log"; then
    echo "ns3/ci.sh: $alg/$routing failed:" >&2; cat "$csv.log" >&2; fail=1; return
  fi
  # The run's row (node = all): columns by name.
  awk -F, -v alg="$alg" -v routing="$routing" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $col["node"] == "all" {
      printf "%-16s %8s %8d %10s %10s %8s %8s %10s %8d %10d\n", $col["algorithm"], routing,
        $col["cs_entries"], $col["mean_wait"], $col["p99_wait"], $col["messages_per_cs"],
        $col["core_messages_per_cs"], $col["hops_per_cs"], $col["violations"], $col["overlaps"]
      bad = ""
      if ($col["cs_entries"] + 0 <= 0) bad = bad " no entries;"
      if ($col["violations"] + 0 != 0) bad = bad " fence violations;"
      if ($col["overlaps"] + 0 != 0) bad = bad " overlaps;"
      if ($col["ffi_errors"] + 0 != 0) bad = bad " C interface errors;"
      if (bad != "") { print "ns3/ci.sh: " alg "/" routing ":" bad > "/dev/stderr"; exit 1 }
      seen = 1
    }
    END { if (!seen) { print "ns3/ci.sh: " alg ": no row node=all" > "/dev/stderr"; exit 1 } }
  ' "$csv" || fail=1
}
run krl none --k=2
run krlf none --k=1
run prioritized none --k=2
run look-ahead aodv
run ra aodv
run ra olsr
end=$(date +%s)
echo "ns3/ci.sh: scenarios ran in $((end - start)) s; CSVs in $csv_dir"
if [ "$fail" != 0 ]; then echo "ns3/ci.sh: FAILED" >&2; exit 1; fi
echo "ns3/ci.sh: ok"
