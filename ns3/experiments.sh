#!/usr/bin/env bash
# The papers' experiments, scaled down, on ns-3 (802.11b, real MAC and routing) beside the
# idealised simulator (crates/sim `simulate`) on the same workloads. Writes CSVs into
# $OUT (default target/ns3/experiments): krl-ns3.csv, krl-ideal.csv, la-ns3.csv, la-ideal.csv.
#
#   ns3/experiments.sh            # build first (ns3/build.sh), then both grids
#   NS3_SKIP_BUILD=1 ns3/experiments.sh krl    # only the KRL grid; `la` for look-ahead
#   OUT=target/ns3/experiments-relaxed ns3/experiments.sh krl-relaxed
#                                  # the KRL grid with quieter link sessions and discovery
#   ns3/experiments.sh krlf-pause  # KRLF, quieter sessions, load 0.1, idle pauses 0..200 ms
#   ns3/experiments.sh krl30       # the KRL grid at the papers' 30 nodes (k = 3), quieter
#                                  # sessions (as krl-relaxed), seeds $SEEDS (default 1 2 3),
#                                  # one whole grid per seed (simulate: as many seeds, 1..n); a seed is not started when the
#                                  # last one's wall time would take the grid past $BUDGET
#                                  # seconds (default 2700). Writes krl30-ns3.csv, krl30-ideal.csv.
#
# KRL section 6 (scaled): 12 nodes, k = 3, connectivity ~20% and ~80% (random placement in a
# 180 m and a 68 m square with the 51 m radio range), static, load 1e-2, 1e-1, 1 requests per
# node per time unit, where a time unit is the critical section (10 ms): lambda = 1, 10, 100 /s.
# 20 simulated seconds per run, one seed. krl30: the same at 30 nodes in the same two squares
# (the connectivity of a random placement depends on the square and the range, not the nodes).
# Look-ahead section V (scaled): hosts 4, 8, 12, 16, 20, territory 178.5 m * sqrt(hosts / 20) and
# speed 5.1 m/s (the paper's 700 m and 20 m/s scaled by the range, 51/200), moving 100% or
# 10% of the time (pause 0 or 9 * the mean leg time), lambda 0.05 /s, cs 0.1 s, over OLSR,
# REQUEST resent after 2 s (the idealised routed simulator's setting); 60 entries' worth of
# requests per run (hosts * 0.05 * time = 240, as the idealised simulator's max_time), 2 seeds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$repo/$target" ;; esac
prog="${NS3_BUILD_DIR:-$target/ns3}/manet-mutex-sim"
out="${OUT:-$target/ns3/experiments}"
which="${1:-all}"
case "$which" in all|krl|krl-relaxed|krl30|krlf-pause|la) ;; *) echo "usage: ns3/experiments.sh [all|krl|krl-relaxed|krl30|krlf-pause|la]" >&2; exit 2 ;; esac
# krl-relaxed: keepalive 1 s (driver default 0.1), link liveness 4 s (0.4), hello every 0.5 s
# (0.1): the defaults saturate 802.11b at 12 nodes (see ns3/README.md).
session=()
[ "$which" != krl-relaxed ] && [ "$which" != krl30 ] || session=(--keepalive=1 --liveness=4 --hello=0.5)
[ -n "${NS3_SKIP_BUILD:-}" ] || "$here/build.sh"
[ -x "$prog" ] || { echo "ns3/experiments.sh: no $prog" >&2; exit 1; }
mkdir -p "$out"
simulate() { (cd "$repo" && cargo run -q --release -j1 -p manet-mutex-sim --example simulate -- --threads 1 "$@"); }

# Append one run's `node=all` row to $1 (header once).
append() {
  local csv="$1" tmp="$2"
  if [ ! -s "$csv" ]; then head -n1 "$tmp" > "$csv"; fi
  awk -F, 'NR > 1 && $10 == "all"' "$tmp" >> "$csv"
}

start=$(date +%s)
if [ "$which" = all ] || [ "$which" = krl ] || [ "$which" = krl-relaxed ]; then
  csv="$out/krl-ns3.csv"; rm -f "$csv"
  for alg in krl krlf; do
    for conn in 0.2:180 0.8:68; do
      area="${conn#*:}"
      for lambda in 1 10 100; do
        "$prog" --algorithm=$alg --nodes=12 --k=3 --area="$area" --time=20 --warmup=2 \
          --lambda=$lambda --cs=0.01 --seed=1 "${session[@]}" --per-node=false --csv="$out/run.csv"
        append "$csv" "$out/run.csv"
      done
    done
  done
  simulate --algorithm all --nodes 12 --k 3 --connectivity 0.2,0.8 --mobility 0 \
    --load 0.01,0.1,1 --seeds 1 --csv > "$out/krl-ideal.csv"
fi
if [ "$which" = krl30 ]; then
  csv="$out/krl30-ns3.csv"; rm -f "$csv"
  budget="${BUDGET:-2700}"; last=0
  for seed in ${SEEDS:-1 2 3}; do
    t0=$(date +%s)
    if [ $(( t0 - start + last )) -gt "$budget" ]; then
      echo "ns3/experiments.sh: seed $seed not started ($(( t0 - start )) s spent, the last seed took $last s, budget $budget s)" >&2
      break
    fi
    for alg in krl krlf; do
      for conn in 0.2:180 0.8:68; do
        area="${conn#*:}"
        for lambda in 1 10 100; do
          "$prog" --algorithm=$alg --nodes=30 --k=3 --area="$area" --time=20 --warmup=2 \
            --lambda=$lambda --cs=0.01 --seed=$seed "${session[@]}" --per-node=false --csv="$out/run.csv"
          append "$csv" "$out/run.csv"
        done
      done
    done
    last=$(( $(date +%s) - t0 ))
    echo "ns3/experiments.sh: krl30 seed $seed took $last s" >&2
    nseeds=$(( ${nseeds:-0} + 1 ))
  done
  simulate --algorithm all --nodes 30 --k 3 --connectivity 0.2,0.8 --mobility 0 \
    --load 0.01,0.1,1 --seeds "${nseeds:-1}" --csv > "$out/krl30-ideal.csv"
fi
if [ "$which" = krlf-pause ]; then
  # KRLF with quieter sessions at load 0.1 (lambda 10/s), the idle token held 0 (the paper),
  # 5 ms (the driver's default, in krl-relaxed), 50 ms, 200 ms before it is forwarded.
  csv="$out/krlf-pause-ns3.csv"; rm -f "$csv"
  for conn in 0.2:180 0.8:68; do
    area="${conn#*:}"
    for pause in 0 0.05 0.2; do
      "$prog" --algorithm=krlf --nodes=12 --k=3 --area="$area" --time=20 --warmup=2 \
        --lambda=10 --cs=0.01 --seed=1 --keepalive=1 --liveness=4 --hello=0.5 \
        --idle-pause=$pause --per-node=false --csv="$out/run.csv"
      awk -F, -v p=$pause 'NR == 1 { print $0 ",idle_pause"; next } { print $0 "," p }' \
        "$out/run.csv" > "$out/run2.csv"
      append "$csv" "$out/run2.csv"
    done
  done
  rm -f "$out/run2.csv"
fi
if [ "$which" = all ] || [ "$which" = la ]; then
  csv="$out/la-ns3.csv"; rm -f "$csv"
  for alg in look-ahead ra; do
    for hosts in 4 8 12 16 20; do
      side=$(awk -v h=$hosts 'BEGIN { printf "%.1f", 178.5 * sqrt(h / 20) }')
      leg=$(awk -v s="$side" 'BEGIN { printf "%.2f", 0.5214 * s / 5.1 }')
      for moving in 1 0.1; do
        pause=$(awk -v l="$leg" -v f=$moving 'BEGIN { printf "%.2f", l * (1 - f) / f }')
        # 4 * 60 entries' worth of time, like the idealised simulator's max_time.
        time=$(awk -v h=$hosts 'BEGIN { printf "%d", 5 + 4 * 60 / (h * 0.05) }')
        for seed in 1 2; do
        "$prog" --algorithm=$alg --nodes=$hosts --routing=olsr --area="$side" --mobility=rwp \
          --min-speed=5.1 --speed=5.1 --pause="$pause" --time="$time" --warmup=5 \
          --lambda=0.05 --cs=0.1 --retransmit=2 --seed=$seed --per-node=false --csv="$out/run.csv"
        append "$csv" "$out/run.csv"
        done
      done
    done
  done
  simulate --algorithm look-ahead --hosts 4,8,12,16,20 --load 0.05 --mobility 1,0.1 --entries 60 \
    --seeds 2 --csv > "$out/la-ideal.csv"
fi
rm -f "$out/run.csv"
echo "ns3/experiments.sh: done in $(( $(date +%s) - start )) s; CSVs in $out" >&2
