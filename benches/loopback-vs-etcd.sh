#!/usr/bin/env bash
# Acquire latency (median, p99) and entries per second on loopback: the tokio crate's lock
# (KRL, prioritized, look-ahead, Ricart-Agrawala), then etcd's v3 lock on a 3-member cluster
# on this machine, each with 5 client processes, measured by the same program
# (crates/tokio/examples/loopback_bench.rs). A benchmark, not run by CI; results in
# docs/PERFORMANCE.md ("Lock latency on loopback vs etcd").
#
#   benches/loopback-vs-etcd.sh                  # every algorithm, then etcd
#   ONLY=ours benches/loopback-vs-etcd.sh        # skip etcd
#   ONLY=etcd benches/loopback-vs-etcd.sh        # etcd alone
#   ENTRIES=200 HOLD_MS=1 PROCESSES=5 benches/loopback-vs-etcd.sh   # the defaults
#   DATA_ROOT=/dev/shm ONLY=etcd benches/loopback-vs-etcd.sh   # etcd's data on tmpfs: no disk
#                                                              # behind its fsyncs
#
# Needs etcd and etcdctl on PATH for the etcd part (Debian: apt-get install etcd-server
# etcd-client; measured with 3.4.23). The members listen on 127.0.0.1 ports 32379/32380,
# 32479/32480 and 32579/32580, keep their data under a fresh $DATA_ROOT/etcd-bench.XXXXXX
# (DATA_ROOT defaults to /tmp), and are killed and their data removed when the script ends,
# however it ends.
set -euo pipefail

ENTRIES=${ENTRIES:-200}
HOLD_MS=${HOLD_MS:-1}
PROCESSES=${PROCESSES:-5}
ONLY=${ONLY:-all}
DATA_ROOT=${DATA_ROOT:-/tmp}
case "$ONLY" in all | ours | etcd) ;; *) echo "ONLY: all, ours or etcd" >&2; exit 2 ;; esac

cd "$(dirname "$0")/.."
cargo build --release -p manet-mutex-tokio --example loopback_bench -j2
bench="${CARGO_TARGET_DIR:-target}/release/examples/loopback_bench"
common=(--processes "$PROCESSES" --entries "$ENTRIES" --hold-ms "$HOLD_MS")

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -sr), $PROCESSES processes x $ENTRIES entries, hold $HOLD_MS ms"
header=(--header)
if [ "$ONLY" != etcd ]; then
    for algorithm in krl prioritized look-ahead ricart-agrawala; do
        "$bench" --algorithm "$algorithm" "${common[@]}" "${header[@]}"
        header=()
    done
fi
[ "$ONLY" = ours ] && exit 0

command -v etcd >/dev/null && command -v etcdctl >/dev/null \
    || { echo "etcd and etcdctl are needed (apt-get install etcd-server etcd-client)" >&2; exit 1; }
dir=$(mktemp -d "$DATA_ROOT/etcd-bench.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cluster=""
for i in 1 2 3; do
    cluster+="${cluster:+,}m$i=http://127.0.0.1:32$((i + 2))80"
done
endpoints=""
for i in 1 2 3; do
    client=127.0.0.1:32$((i + 2))79
    endpoints+="${endpoints:+,}$client"
    etcd --name "m$i" --data-dir "$dir/m$i" \
        --listen-client-urls "http://$client" --advertise-client-urls "http://$client" \
        --listen-peer-urls "http://127.0.0.1:32$((i + 2))80" \
        --initial-advertise-peer-urls "http://127.0.0.1:32$((i + 2))80" \
        --initial-cluster "$cluster" --initial-cluster-state new \
        --initial-cluster-token loopback-bench >"$dir/m$i.log" 2>&1 &
    pids+=($!)
done
for _ in $(seq 100); do
    etcdctl --endpoints "$endpoints" endpoint health >/dev/null 2>&1 && break
    sleep 0.2
done
etcdctl --endpoints "$endpoints" endpoint health
etcdctl --endpoints "$endpoints" endpoint status -w table
echo "# etcd data under $dir ($(df --output=fstype "$dir" | tail -1))"
"$bench" --algorithm etcd --etcd "$endpoints" "${common[@]}" "${header[@]}"
