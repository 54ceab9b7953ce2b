#!/usr/bin/env bash
# An emulated MANET: one network namespace per node on a bridge, traffic impaired with
# nftables (random loss, duplication), links cut and healed along an ns-2 mobility trace, every
# algorithm run through the async crate (mesh-node) against a fence-checking resource.
# Needs root, iproute2 and nftables (no sch_netem). Everything it makes is named mm-*; it is
# all removed on exit, error or Ctrl-C.
#
#   examples/mesh/run.sh [options]          (after cargo build --release -p manet-mutex-mesh)
#     --algorithms krl,krlf,prioritized,look-ahead,ra   (default: all five)
#     --nodes N         nodes (default 5)             --entries E   per node (default 50)
#     --think MS        between entries (default 20)  --hold MS     in the CS (default 2)
#     --loss PCT        random loss per node, % of mesh datagrams received (default 5)
#     --dup PCT         duplicated mesh datagrams sent, % (default 2)
#     --delay MIN-MAX   hold each mesh datagram sent MIN to MAX ms (uniform), so reordered:
#                       a user-space delay queue (mesh-node delay) behind an iptables NFQUEUE
#                       rule, one per node (needs iptables; default none)
#     --trace FILE      ns-2 trace (none: static, fully connected)
#     --radius M        radio range (default 300)     --from S      trace start (default 0)
#     --duration S      trace seconds (default 120)   --speedup X   trace s per wall s (default 4)
#     --timeout S       per algorithm (default 60)    --recovery    recovery on (token: always)
#     --crash N         kill -9 node N mid-run (its entries are then not required)
#     --raise-pause P   token algorithms: height raises paced, MIN-MAX ms or off (default
#                       10-200; docs/ALGORITHMS.md R15)
#     --broadcast       token algorithms: discovery's hellos to the subnet's broadcast address
#                       (10.77.0.255; nodes bind 0.0.0.0) instead of one to each peer
#     --auth            a fresh random pre-shared key: every datagram HMAC-tagged (feature auth)
#   examples/mesh/run.sh --probe   can this machine run it? Creates and deletes a uniquely
#     named namespace with a veth pair and an nft table in it; prints `ok`, or one line with
#     the reason, and exits 1 (.ci/run skips the emulated MANET on that).
#   Environment: MESH_NODE (the binary; default $CARGO_TARGET_DIR or target, release/mesh-node),
#     MESH_VERBOSE=1 (every node's SUMMARY line), MESH_KEEP=DIR (keep the logs, DIR/<algorithm>/).
#   examples/mesh/run.sh --cleanup  only remove what a run killed with SIGKILL left behind
# One run at a time (a lock, /run/lock/mm-mesh.lock). A run killed with SIGKILL cannot clean
# up: its nodes, resource and mobility loop exit by themselves within a second or so of
# run.sh's death, and the next run (or --cleanup) removes its namespaces and work directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

probe() {
  local ns="mm-probe-$$-$RANDOM" err tool
  for tool in ip nft; do
    command -v "$tool" >/dev/null 2>&1 ||
      { echo "$tool not found ($([ $tool = ip ] && echo iproute2 || echo nftables) missing)"; return 1; }
  done
  if ! err=$(ip netns add "$ns" 2>&1); then
    echo "cannot create a network namespace (uid $(id -u)): ip netns add: ${err//$'\n'/; }"
    return 1
  fi
  if ! err=$(ip -n "$ns" link add mm-pa type veth peer name mm-pb 2>&1); then
    ip netns del "$ns" 2>/dev/null || true
    echo "cannot create a veth pair in a network namespace: ip link add: ${err//$'\n'/; }"
    return 1
  fi
  if ! err=$(ip netns exec "$ns" nft add table ip mm-probe 2>&1 &&
    ip netns exec "$ns" nft delete table ip mm-probe 2>&1); then
    ip netns del "$ns" 2>/dev/null || true
    echo "cannot create an nftables table in a network namespace: nft: ${err//$'\n'/; }"
    return 1
  fi
  if ! err=$(ip netns del "$ns" 2>&1); then
    echo "cannot delete the network namespace $ns: ${err//$'\n'/; }"
    return 1
  fi
  echo ok
}
if [ "${1:-}" = --probe ]; then probe; exit; fi

ALGS=krl,krlf,prioritized,look-ahead,ra N=5 ENTRIES=50 THINK=20 HOLD=2 LOSS=5 DUP=2
TRACE="" RADIUS=300 FROM=0 DURATION=120 SPEEDUP=4 TIMEOUT=60 RECOVERY=0 CRASH="" CLEANUP=0
BROADCAST=0 AUTH=0 DELAY="" PAUSE=""
BIN=${MESH_NODE:-${CARGO_TARGET_DIR:-target}/release/mesh-node}
while [ $# -gt 0 ]; do
  case $1 in
    --algorithms) ALGS=$2; shift ;; --nodes) N=$2; shift ;; --entries) ENTRIES=$2; shift ;;
    --think) THINK=$2; shift ;; --hold) HOLD=$2; shift ;; --loss) LOSS=$2; shift ;;
    --dup) DUP=$2; shift ;; --delay) DELAY=$2; shift ;; --trace) TRACE=$2; shift ;; --radius) RADIUS=$2; shift ;;
    --from) FROM=$2; shift ;; --duration) DURATION=$2; shift ;; --speedup) SPEEDUP=$2; shift ;;
    --timeout) TIMEOUT=$2; shift ;; --recovery) RECOVERY=1 ;; --crash) CRASH=$2; shift ;;
    --raise-pause) PAUSE=$2; shift ;;
    --cleanup) CLEANUP=1 ;; --broadcast) BROADCAST=1 ;; --auth) AUTH=1 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ "$CLEANUP" = 1 ] || [ -x "$BIN" ] || { echo "$BIN missing: cargo build --release -p manet-mutex-mesh" >&2; exit 2; }
command -v nft >/dev/null && command -v ip >/dev/null || { echo "needs nft and ip" >&2; exit 2; }
[ "$N" -ge 2 ] && [ "$N" -le 200 ] || { echo "--nodes 2..200" >&2; exit 2; }
if [ -n "$DELAY" ]; then
  [[ "$DELAY" =~ ^([0-9]+)-([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] ||
    { echo "--delay MIN-MAX in ms, MIN <= MAX (e.g. 1-20), not $DELAY" >&2; exit 2; }
  DELAY_MIN=${BASH_REMATCH[1]} DELAY_MAX=${BASH_REMATCH[2]}
  command -v iptables >/dev/null || { echo "--delay needs iptables (NFQUEUE)" >&2; exit 2; }
fi

PORT=7000 RES_ADDR=10.77.0.254 RES_PORT=7999
addr() { echo "10.77.0.$(($1 + 1))"; }

# One run at a time: the names are fixed. The lock's descriptor (9) is closed for every child.
mkdir -p /run/lock
exec 9>/run/lock/mm-mesh.lock
flock -n 9 || { echo "another run.sh holds /run/lock/mm-mesh.lock" >&2; exit 2; }
# Namespaces of ours with no run.sh left holding the lock: a run killed with SIGKILL.
remove_namespaces() { # with every process still inside
  local ns p
  for ns in $(ip netns list | awk '$1 ~ /^mm-(n[0-9]+|res|hub)$/ { print $1 }'); do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null # the bridge, veth ends and nft tables in it go with it
  done
}
if ip netns list | grep -Eq '^mm-(n[0-9]+|res|hub)( |$)'; then
  echo "note: removing the namespaces of an earlier run that did not clean up:" \
    "$(ip netns list | awk '$1 ~ /^mm-(n[0-9]+|res|hub)$/ { printf "%s ", $1 }')" >&2
  remove_namespaces
fi
rm -rf /tmp/mm-mesh.?????? # work directories of such runs
[ "$CLEANUP" = 0 ] || exit 0

WORK=$(mktemp -d /tmp/mm-mesh.XXXXXX)
PIDS=() DELAYERS=()
cleanup() {
  set +e
  trap '' INT TERM
  PIDS+=(${DELAYERS[@]+"${DELAYERS[@]}"})
  [ ${#PIDS[@]} = 0 ] || exec 2>/dev/null # (no shell "Killed" line per child)
  # Stop each child first so that it starts nothing more (the mobility loop's sleep and nft
  # calls are its children), then kill its children and it.
  for p in "${PIDS[@]}"; do kill -STOP "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    pkill -9 -P "$p" 2>/dev/null
    kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
  remove_namespaces
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "run.sh: SIGINT: cleaning up" >&2; exit 130' INT
trap 'echo "run.sh: SIGTERM: cleaning up" >&2; exit 143' TERM

# The hub namespace holds the bridge; each node namespace a veth to it. nft tables live in
# the node namespaces and go with them.
ip netns add mm-hub
ip -n mm-hub link add mm-br0 type bridge
ip -n mm-hub link set mm-br0 up
plug() { # namespace, address, hub-side name
  ip netns add "$1"
  ip -n "$1" link set lo up
  ip link add "$3" netns mm-hub type veth peer name eth0 netns "$1"
  ip -n mm-hub link set "$3" master mm-br0 up
  ip -n "$1" addr add "$2/24" dev eth0
  ip -n "$1" link set eth0 up
}
plug mm-res "$RES_ADDR" mm-vres
nft_rules() { # namespace, with duplication (1/0)
  local out=""
  [ "$2" = 1 ] && out="chain out { type filter hook output priority 0; udp dport $PORT numgen random mod 100 < $DUP dup to ip daddr; }"
  ip netns exec "$1" nft -f - <<EOF
table ip mm {
  set cut { type ipv4_addr; }
  chain in {
    type filter hook input priority 0;
    udp dport $PORT ip saddr @cut drop
    udp dport $PORT numgen random mod 100 < $LOSS drop
  }
  $out
}
EOF
}
for ((i = 0; i < N; i++)); do
  plug "mm-n$i" "$(addr "$i")" "mm-v$i"
  # Loss on the mesh port as received, duplication as sent (nf_dup: a copy to the same
  # address); the resource's reports are never impaired. Set `cut`: the peers out of range.
  if [ "$DUP" -gt 0 ] && ! nft_rules "mm-n$i" 1 2>"$WORK/nft.err"; then
    echo "note: nft duplication unavailable ($(head -1 "$WORK/nft.err")): loss only" >&2
    DUP=0
  fi
  [ "$DUP" -gt 0 ] || nft_rules "mm-n$i" 0
  # --delay: every mesh datagram sent goes through this namespace's delay queue (bypassed
  # whenever no queue process is bound, so nothing is lost at the start or end).
  if [ -n "$DELAY" ]; then
    ip netns exec "mm-n$i" iptables -A OUTPUT -p udp --dport "$PORT" -j NFQUEUE --queue-num 0 \
      --queue-bypass 2>"$WORK/ipt.err" ||
      { echo "--delay: iptables refused the NFQUEUE rule: $(head -1 "$WORK/ipt.err")" >&2; exit 2; }
    ip netns exec "mm-n$i" "$BIN" delay --queue 0 --min-ms "$DELAY_MIN" --max-ms "$DELAY_MAX" \
      --seed "$i" >"$WORK/d$i.out" 2>"$WORK/d$i.err" 9>&- &
    DELAYERS+=($!)
  fi
done

EXTRA=()
[ -z "$PAUSE" ] || EXTRA+=(--raise-pause "$PAUSE")
[ "$BROADCAST" = 0 ] || EXTRA+=(--bind "0.0.0.0:$PORT" --broadcast "10.77.0.255:$PORT")
if [ "$AUTH" = 1 ]; then
  (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$WORK/key")
  EXTRA+=(--key-file "$WORK/key")
fi
PEERS=$(for ((i = 0; i < N; i++)); do printf '%s%d=%s:%d' "$([ "$i" = 0 ] || echo ,)" "$i" "$(addr "$i")" "$PORT"; done)
if [ -n "$TRACE" ]; then
  "$BIN" links --trace "$TRACE" --nodes "$N" --radius "$RADIUS" --from "$FROM" \
    --duration "$DURATION" --speedup "$SPEEDUP" >"$WORK/links"
  echo "mobility: $TRACE, nodes 0..$((N - 1)), radius $RADIUS m, trace ${FROM}s+${DURATION}s at x$SPEEDUP:" \
    "$(grep -c ' down$' "$WORK/links") cuts, $(grep -c ' up$' "$WORK/links") heals"
else
  : >"$WORK/links"
fi

# Cut (down) or heal (up) the pair a-b: each end's namespace drops the other's datagrams.
link() { # a b up|down
  local op=add
  [ "$3" = up ] && op=delete
  ip netns exec "mm-n$1" nft "$op" element ip mm cut "{ $(addr "$2") }" 2>/dev/null || true
  ip netns exec "mm-n$2" nft "$op" element ip mm cut "{ $(addr "$1") }" 2>/dev/null || true
}
mobility() { # replays $WORK/links in wall time, then loops over it again
  local t0 now t a b what parent=$$
  while kill -0 "$parent" 2>/dev/null; do # (not past a run.sh killed with SIGKILL)
    t0=$(date +%s.%N)
    while read -r t a b what; do
      now=$(date +%s.%N)
      sleep "$(awk -v a="$t0" -v b="$t" -v c="$now" 'BEGIN { d = a + b - c; print (d > 0 ? d : 0) }')"
      kill -0 "$parent" 2>/dev/null || exit 0
      link "$a" "$b" "$what"
    done <"$WORK/links"
    # Heal everything before the next round so that it starts from the trace's first links.
    for ((a = 0; a < N; a++)); do ip netns exec "mm-n$a" nft flush set ip mm cut; done
  done
}

printf '\n%-12s %8s %9s %7s %6s %6s %5s %6s %6s %9s %9s %s\n' algorithm entries entries/s \
  violat stale supers lost regen excl dgram_out dgram_in result
FAIL=0
IFS=, read -ra ALGLIST <<<"$ALGS"
for alg in "${ALGLIST[@]}"; do
  rec=""
  case $alg in krl | krlf | prioritized) rec=--recovery ;; look-ahead | ra) [ "$RECOVERY" = 1 ] && rec=--recovery ;; esac
  for ((i = 0; i < N; i++)); do ip netns exec "mm-n$i" nft flush set ip mm cut; done
  ip netns exec mm-res "$BIN" resource --listen "$RES_ADDR:$RES_PORT" >"$WORK/res.out" 2>"$WORK/res.err" 9>&- &
  RES=$!; PIDS+=("$RES")
  MOB=""
  if [ -s "$WORK/links" ]; then mobility 9>&- & MOB=$!; PIDS+=("$MOB"); fi
  NODES=()
  sleep 0.2
  start=$(date +%s.%N)
  for ((i = 0; i < N; i++)); do
    ip netns exec "mm-n$i" "$BIN" node --id "$i" --algorithm "$alg" --peers "$PEERS" \
      --resource "$RES_ADDR:$RES_PORT" --entries "$ENTRIES" --think "$THINK" --hold "$HOLD" \
      $rec ${EXTRA[@]+"${EXTRA[@]}"} >"$WORK/n$i.out" 2>"$WORK/n$i.err" 9>&- &
    NODES+=($!); PIDS+=($!)
  done
  crashed=""
  deadline=$(($(date +%s) + TIMEOUT))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    done_count=0
    for ((i = 0; i < N; i++)); do
      [ "$i" = "$crashed" ] || grep -q '^DONE' "$WORK/n$i.out" && done_count=$((done_count + 1))
    done
    [ "$done_count" = "$N" ] && break
    # --crash: SIGKILL node CRASH 3 s in (holding or waiting, whatever it was doing).
    if [ -n "$CRASH" ] && [ -z "$crashed" ] && [ "$(date +%s)" -ge $((deadline - TIMEOUT + 3)) ]; then
      kill -9 "${NODES[$CRASH]}" 2>/dev/null || true
      { wait "${NODES[$CRASH]}"; } 2>/dev/null || true # (no "Killed" line from the shell)
      crashed=$CRASH
      echo "($alg: node $CRASH killed with SIGKILL)" >&2
    fi
    sleep 0.2
  done
  elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  for ((i = 0; i < N; i++)); do kill -TERM "${NODES[$i]}" 2>/dev/null || true; done
  for ((i = 0; i < N; i++)); do wait "${NODES[$i]}" 2>/dev/null || true; done
  [ -n "$MOB" ] && { kill "$MOB" 2>/dev/null; wait "$MOB" 2>/dev/null || true; }
  kill -TERM "$RES" 2>/dev/null; wait "$RES" 2>/dev/null || true
  PIDS=()
  # MESH_KEEP=DIR: keep each algorithm's logs (nodes' DONE/SUMMARY, the resource's ENTER lines
  # and RESOURCE verdict) in DIR/<algorithm>/.
  if [ -n "${MESH_KEEP:-}" ]; then mkdir -p "$MESH_KEEP/$alg" && cp "$WORK"/*.out "$WORK"/*.err "$MESH_KEEP/$alg/"; fi
  sum() { grep -ho "^SUMMARY.* $1=[0-9]*" "$WORK"/n*.out | sed "s/.* $1=//" | awk '{ s += $1 } END { print s + 0 }'; }
  rget() { sed -n "s/^RESOURCE.* $1=\([0-9]*\).*/\1/p" "$WORK/res.out"; }
  entries=$(rget entries) viol=$(rget violations)
  short=""
  for ((i = 0; i < N; i++)); do
    [ "$i" = "$crashed" ] && continue
    grep -q '^DONE' "$WORK/n$i.out" || short="$short $i"
  done
  result=ok
  if [ -z "$entries" ]; then result="FAIL(no resource verdict)"
  elif [ "$viol" != 0 ]; then result="FAIL(violations)"
  elif [ -n "$short" ]; then result="FAIL(short:$short)"; fi
  [ "$result" = ok ] || FAIL=1
  printf '%-12s %8s %9.1f %7s %6s %6s %5s %6s %6s %9s %9s %s\n' "$alg" "${entries:-?}" \
    "$(awk -v e="${entries:-0}" -v t="$elapsed" 'BEGIN { print e / t }')" "${viol:-?}" "$(rget stale)" "$(rget superseded)" \
    "$(sum lost)" "$(sum regenerated)" "$(sum excluded)" "$(sum datagrams_out)" "$(sum datagrams_in)" "$result"
  if [ "$result" != ok ] || [ -n "${MESH_VERBOSE:-}" ]; then
    grep -h VIOLATION "$WORK/res.err" | head -5 >&2 || true
    for ((i = 0; i < N; i++)); do grep -h '^SUMMARY' "$WORK/n$i.out" >&2 || echo "node $i: no summary: $(tail -2 "$WORK/n$i.err")" >&2; done
  fi
done
if [ ${#DELAYERS[@]} -gt 0 ]; then
  for p in "${DELAYERS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${DELAYERS[@]}"; do wait "$p" 2>/dev/null || FAIL=1; done
  DELAYERS=()
  dsum() { grep -ho "^DELAY.* $1=[0-9.]*" "$WORK"/d*.out | sed "s/.* $1=//" | awk '{ s += $1 } END { print s + 0 }'; }
  held=$(dsum held)
  [ "$held" -gt 0 ] || { echo "delay: no datagram went through the delay queues: $(cat "$WORK"/d*.err | head -3)" >&2; FAIL=1; }
  echo "delay ${DELAY_MIN}-${DELAY_MAX} ms: $held mesh datagrams held (all algorithms), $(dsum reordered) overtook an earlier one"
fi
exit "$FAIL"
