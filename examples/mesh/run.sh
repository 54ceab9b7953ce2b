#!/usr/bin/env bash
# An emulated MANET: one network namespace per node on a bridge, traffic impaired with
# nftables (random loss, duplication), links cut and healed along an ns-2 mobility trace, every
# algorithm run through the async crate (mesh-node) against a fence-checking resource.
# Needs root, iproute2 and nftables (no sch_netem). Everything it makes is named mm-*; it is
# all removed on exit, error or Ctrl-C. `examples/mesh/run.sh --help` lists the options.
set -euo pipefail
cd "$(dirname "$0")/../.."

usage() {
  cat <<'EOF'
examples/mesh/run.sh [options]          (as root, after cargo build --release -p manet-mutex-mesh)

Runs each algorithm on N nodes, one network namespace each, against a fence-checking resource,
and prints one line per algorithm; exits 1 if any run failed, 2 on a bad option.

  --algorithms LIST   krl,krlf,prioritized,look-ahead,ra (default: all five)
  --nodes N           nodes, 2..200 (default 5)      --entries E  per node (default 50)
  --think MS          between entries (default 20)   --hold MS    in the CS (default 2)
  --loss PCT          random loss per node, % of mesh datagrams received (default 5)
  --dup PCT           duplicated mesh datagrams sent, % (default 2)
  --delay MIN-MAX     hold each mesh datagram sent MIN to MAX ms (uniform), so reordered: a
                      user-space delay queue (mesh-node delay) behind an iptables NFQUEUE rule,
                      one per node (needs iptables; default none)
  --trace FILE        ns-2 trace (none: static, every pair in range)
  --radius M          radio range (default 300)      --from S     trace start (default 0)
  --duration S        trace seconds (default 120)    --speedup X  trace s per wall s (default 4)
  --timeout S         per algorithm (default 60)
  --recovery          recovery on for the permission algorithms too (token ones: always)
  --diameter D        token recovery's hop bound across a connected part (default: 1 without
                      --trace, where every pair is in range; with --trace the most hops across
                      a connected part over the replayed trace, computed from it)
  --k K               krl/krlf: K tokens (nodes 0..K-1 hold one each at start); prioritized:
                      K resources; the resource has K units (default 1; ra and look-ahead: 1)
  --want H            prioritized: resources per request, 1..K (default 1)
  --crash N|holder    kill -9 node N, or a holder: the node the resource admitted last, at a
                      moment it is inside (from --crash-at seconds in); the resource is told,
                      and the killed node's entry (if inside) ends there
  --crash-at S        when to kill, s into the run (default 3)
  --restart MS        with --crash: start the killed node again MS ms after the kill, with the
                      same command line (its --state-dir, kept by every node): it must make
                      its --entries again (default: no restart; its entries are not required)
  --kills N           with --restart: N kills, each --crash-at s after the last restart
                      (default 1)
  --no-state          nodes keep no state directory, so a restart is not safe (to see what
                      the state directory buys: kill and restart node 0, KRL's first holder)
  --max-refused R     grants the resource may refuse (stale tokens, C6 after a crash) before
                      the run fails; default below
  --raise-pause P     token algorithms: height raises paced, MIN-MAX ms or off (default
                      10-200; docs/ALGORITHMS.md R15)
  --broadcast         token algorithms: discovery's hellos to the subnet's broadcast address
                      (10.77.0.255; nodes bind 0.0.0.0) instead of one to each peer
  --auth              a fresh random pre-shared key: every datagram HMAC-tagged (feature auth)
  --probe             can this machine run it? Creates and deletes a uniquely named namespace
                      with a veth pair and an nft table in it; prints `ok`, or one line with
                      the reason, and exits 1 (.ci/run skips the emulated MANET on that)
  --cleanup           only remove what a run killed with SIGKILL left behind
  -h, --help          this text

Verdict, per algorithm: FAIL on a fence violation or more than K units held at once (the
resource), a live node short of its entries (a killed node not restarted is excused), no
verdict from the resource, a kill or restart asked for that the run ended before, or more
refused grants than allowed. A refused grant is one the
lock gave but the resource's fences refused: a token of an older generation than one admitted
(recovery made it again while the old copy lived), or, for the permission algorithms, a fence
at or below one admitted for a node killed since (C6). Allowed: 0 without --trace (every pair
is in range, so a token made again while the old one lives means the recovery's bounds did
not hold: loss too high for the hop bound, or a --diameter too small, and the run says so);
with --trace, 10 % of the entries admitted (a partition lets one part make a lost token again
while the other still uses the old one, whose grants are refused until the parts meet; a rule
of thumb, not a bound). --max-refused R sets R instead.

Environment: MESH_NODE (the binary; default $CARGO_TARGET_DIR or target, release/mesh-node),
MESH_VERBOSE=1 (every node's SUMMARY line), MESH_KEEP=DIR (keep the logs, DIR/<algorithm>/).
One run at a time (a lock, /run/lock/mm-mesh.lock). A run killed with SIGKILL cannot clean up:
its nodes, resource and mobility loop exit by themselves within a second or so of run.sh's
death, and the next run (or --cleanup) removes its namespaces and work directory.
EOF
}

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

ALGS=krl,krlf,prioritized,look-ahead,ra N=5 ENTRIES=50 THINK=20 HOLD=2 LOSS=5 DUP=2
TRACE="" RADIUS=300 FROM=0 DURATION=120 SPEEDUP=4 TIMEOUT=60 RECOVERY=0 CRASH="" CLEANUP=0
BROADCAST=0 AUTH=0 DELAY="" PAUSE="" DIAMETER="" K=1 WANT=1 CRASH_AT=3 RESTART="" MAX_REFUSED=""
KILLS=1 STATE=1
BIN=${MESH_NODE:-${CARGO_TARGET_DIR:-target}/release/mesh-node}
bad() { echo "run.sh: $*" >&2; echo "(examples/mesh/run.sh --help lists the options)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --probe) probe; exit ;;
    --recovery) RECOVERY=1 ;; --cleanup) CLEANUP=1 ;; --broadcast) BROADCAST=1 ;; --auth) AUTH=1 ;;
    --no-state) STATE=0 ;;
    --algorithms | --nodes | --entries | --think | --hold | --loss | --dup | --delay | --trace | \
      --radius | --from | --duration | --speedup | --timeout | --crash | --crash-at | --restart | \
      --raise-pause | --diameter | --k | --want | --max-refused | --kills)
      [ $# -ge 2 ] || bad "$1 needs a value"
      case $1 in
        --algorithms) ALGS=$2 ;; --nodes) N=$2 ;; --entries) ENTRIES=$2 ;; --think) THINK=$2 ;;
        --hold) HOLD=$2 ;; --loss) LOSS=$2 ;; --dup) DUP=$2 ;; --delay) DELAY=$2 ;;
        --trace) TRACE=$2 ;; --radius) RADIUS=$2 ;; --from) FROM=$2 ;; --duration) DURATION=$2 ;;
        --speedup) SPEEDUP=$2 ;; --timeout) TIMEOUT=$2 ;; --crash) CRASH=$2 ;;
        --crash-at) CRASH_AT=$2 ;; --restart) RESTART=$2 ;; --raise-pause) PAUSE=$2 ;;
        --diameter) DIAMETER=$2 ;; --k) K=$2 ;; --want) WANT=$2 ;; --max-refused) MAX_REFUSED=$2 ;;
        --kills) KILLS=$2 ;;
      esac
      shift ;;
    *) bad "unknown option $1" ;;
  esac
  shift
done
# Every flag checked before anything starts.
uint() { # name value [min [max]]
  [[ "$2" =~ ^[0-9]+$ ]] || bad "$1 wants a whole number, not '$2'"
  [ -z "${3:-}" ] || [ "$2" -ge "$3" ] || bad "$1 must be at least $3, not $2"
  [ -z "${4:-}" ] || [ "$2" -le "$4" ] || bad "$1 must be at most $4, not $2"
}
num() { [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad "$1 wants a number, not '$2'"; }
uint --nodes "$N" 2 200; uint --entries "$ENTRIES" 1; uint --think "$THINK"; uint --hold "$HOLD"
uint --loss "$LOSS" 0 100; uint --dup "$DUP" 0 100; uint --timeout "$TIMEOUT" 1
uint --k "$K" 1; uint --want "$WANT" 1 "$K"; uint --crash-at "$CRASH_AT"; uint --kills "$KILLS" 1
num --radius "$RADIUS"; num --from "$FROM"; num --duration "$DURATION"; num --speedup "$SPEEDUP"
[[ ! "$SPEEDUP" =~ ^0+(\.0+)?$ ]] || bad "--speedup must be above 0"
[ -z "$DIAMETER" ] || uint --diameter "$DIAMETER" 1
[ -z "$MAX_REFUSED" ] || uint --max-refused "$MAX_REFUSED"
IFS=, read -ra ALGLIST <<<"$ALGS"
[ ${#ALGLIST[@]} -gt 0 ] || bad "--algorithms names none"
for alg in "${ALGLIST[@]}"; do
  case $alg in
    krl | krlf) [ "$K" -le "$N" ] || bad "--k $K: $alg needs a first holder per token ($N nodes)" ;;
    prioritized) ;;
    look-ahead | ra) [ "$K" = 1 ] || bad "--k $K: $alg has one resource (--k 1)" ;;
    *) bad "--algorithms: unknown algorithm '$alg' (krl, krlf, prioritized, look-ahead, ra)" ;;
  esac
done
[ "$WANT" = 1 ] || [ "$ALGS" = prioritized ] || bad "--want $WANT: prioritized only (--algorithms prioritized)"
if [ -n "$CRASH" ] && [ "$CRASH" != holder ]; then uint --crash "$CRASH" 0 "$((N - 1))"; fi
if [ -n "$RESTART" ]; then
  uint --restart "$RESTART"
  [ -n "$CRASH" ] || bad "--restart starts a killed node again: give --crash too"
fi
[ "$KILLS" = 1 ] || [ -n "$RESTART" ] || bad "--kills $KILLS: more than one kill needs --crash and --restart"
[ -z "$TRACE" ] || [ -r "$TRACE" ] || bad "--trace $TRACE: no such file"
[ -z "$PAUSE" ] || [[ "$PAUSE" =~ ^(off|[0-9]+-[0-9]+)$ ]] || bad "--raise-pause MIN-MAX or off, not $PAUSE"
if [ -n "$DELAY" ]; then
  [[ "$DELAY" =~ ^([0-9]+)-([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] ||
    bad "--delay MIN-MAX in ms, MIN <= MAX (e.g. 1-20), not $DELAY"
  DELAY_MIN=${BASH_REMATCH[1]} DELAY_MAX=${BASH_REMATCH[2]}
  [ "$CLEANUP" = 1 ] || command -v iptables >/dev/null || bad "--delay needs iptables (NFQUEUE)"
fi
[ "$CLEANUP" = 1 ] || [ -x "$BIN" ] || bad "$BIN missing: cargo build --release -p manet-mutex-mesh"
command -v nft >/dev/null && command -v ip >/dev/null || bad "needs nft and ip (nftables, iproute2)"
if [ -n "$TRACE" ] && [ "$CLEANUP" = 0 ]; then
  # The trace read, and the diameter it gives, before anything starts.
  TRACE_DIAMETER=$("$BIN" links --trace "$TRACE" --nodes "$N" --radius "$RADIUS" --from "$FROM" \
    --duration "$DURATION" --speedup "$SPEEDUP" --diameter 2>&1) || bad "--trace: $TRACE_DIAMETER"
  DIAMETER=${DIAMETER:-$TRACE_DIAMETER}
fi
DIAMETER=${DIAMETER:-1}

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

echo "k $K$([ "$WANT" = 1 ] || echo ", $WANT per request"); token recovery's diameter $DIAMETER hops"
printf '\n%-12s %8s %9s %7s %7s %6s %4s %5s %5s %5s %9s %9s %s\n' algorithm entries entries/s \
  violat refused supers held lost regen excl dgram_out dgram_in result
FAIL=0
for alg in "${ALGLIST[@]}"; do
  rec=""
  case $alg in krl | krlf | prioritized) rec=--recovery ;; look-ahead | ra) [ "$RECOVERY" = 1 ] && rec=--recovery ;; esac
  res_flags=(--k "$K")
  case $alg in
    prioritized) [ "$K" = 1 ] || res_flags+=(--distinct) ;;
    look-ahead | ra) res_flags+=(--permission) ;;
  esac
  for ((i = 0; i < N; i++)); do ip netns exec "mm-n$i" nft flush set ip mm cut; done
  ip netns exec mm-res "$BIN" resource --listen "$RES_ADDR:$RES_PORT" "${res_flags[@]}" \
    >"$WORK/res.out" 2>"$WORK/res.err" 9>&- &
  RES=$!; PIDS+=("$RES")
  MOB=""
  if [ -s "$WORK/links" ]; then mobility 9>&- & MOB=$!; PIDS+=("$MOB"); fi
  NODES=() OUT=()
  # Node i's process, started with the same command line each time; its output to $2.
  start_node() {
    STATE_DIR=()
    [ "$STATE" = 0 ] || STATE_DIR=(--state-dir "$WORK/state/$alg/n$1")
    ip netns exec "mm-n$1" "$BIN" node --id "$1" --algorithm "$alg" --peers "$PEERS" \
      --resource "$RES_ADDR:$RES_PORT" --entries "$ENTRIES" --think "$THINK" --hold "$HOLD" \
      --diameter "$DIAMETER" --k "$K" --want "$WANT" $rec ${STATE_DIR[@]+"${STATE_DIR[@]}"} \
      ${EXTRA[@]+"${EXTRA[@]}"} >"$2" 2>"${2%.out}.err" 9>&- &
    NODES[$1]=$! OUT[$1]=$2
    PIDS+=($!)
  }
  sleep 0.2
  start=$(date +%s.%N)
  for ((i = 0; i < N; i++)); do start_node "$i" "$WORK/n$i.out"; done
  # Kills made, the last node killed, when the next kill is due (s into the run), a restart
  # due (epoch s), restarts made per node, and one note per kill.
  kills=0 crashed="" next_kill=$CRASH_AT restart_due="" KNOTES=()
  RESTARTS=()
  for ((i = 0; i < N; i++)); do RESTARTS[i]=0; done
  deadline=$(($(date +%s) + TIMEOUT))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    done_count=0
    for ((i = 0; i < N; i++)); do
      if [ "$i" = "$crashed" ] && [ -z "$RESTART" ]; then
        done_count=$((done_count + 1))
      elif grep -q '^DONE' "${OUT[$i]}"; then
        done_count=$((done_count + 1))
      fi
    done
    # Done when every node required is, with the kills (and restarts) asked for made.
    [ "$done_count" = "$N" ] && [ -z "$restart_due" ] && { [ -z "$CRASH" ] || [ "$kills" = "$KILLS" ]; } && break
    now=$(date +%s.%N)
    since=$(awk -v a="$start" -v b="$now" 'BEGIN { printf "%.3f", b - a }')
    # --crash: SIGKILL node CRASH (or a holder) --crash-at s in (and as long after each
    # restart, --kills times), holding or waiting, whatever it was doing; the resource is told.
    if [ -n "$CRASH" ] && [ "$kills" -lt "$KILLS" ] && [ -z "$restart_due" ] &&
      awk -v a="$since" -v c="$next_kill" 'BEGIN { exit !(a >= c) }'; then
      victim=$CRASH
      # holder: the last node the resource admitted that has not left (waited for up to 1 s;
      # then the last node admitted: with a short --hold nobody may be inside when polled).
      [ "$CRASH" != holder ] || victim=$(awk -F'[ =]' -v late="$(awk -v a="$since" -v c="$next_kill" \
        'BEGIN { print (a >= c + 1) }')" '/^ENTER/ { inside[$3] = 1; last = $3 }
        /^LEAVE/ { delete inside[$3] } END { if (last in inside || (late && last != "")) print last }' \
        "$WORK/res.out")
      if [ -n "$victim" ]; then
        kill -9 "${NODES[$victim]}" 2>/dev/null || true
        { wait "${NODES[$victim]}"; } 2>/dev/null || true # (no "Killed" line from the shell)
        killed_at=$(date +%s.%N)
        crashed=$victim kills=$((kills + 1))
        ip netns exec mm-res "$BIN" tell --to "$RES_ADDR:$RES_PORT" "crashed $victim" 9>&- ||
          echo "($alg: the resource was not told of the kill)" >&2
        KNOTES+=("node $victim at $(awk -v a="$start" -v b="$killed_at" 'BEGIN { printf "%.1f", b - a }') s")
        [ -z "$RESTART" ] || restart_due=$(awk -v a="$killed_at" -v r="$RESTART" 'BEGIN { printf "%.3f", a + r / 1000 }')
      fi
    fi
    # --restart: the killed node again, same command line, same state directory.
    if [ -n "$restart_due" ] && awk -v a="$restart_due" -v b="$now" 'BEGIN { exit !(b >= a) }'; then
      RESTARTS[crashed]=$((RESTARTS[crashed] + 1))
      start_node "$crashed" "$WORK/n$crashed.r${RESTARTS[crashed]}.out"
      restart_due=""
      next_kill=$(awk -v a="$start" -v b="$(date +%s.%N)" -v c="$CRASH_AT" 'BEGIN { printf "%.3f", b - a + c }')
    fi
    sleep 0.1
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
  rget() { sed -n "s/^RESOURCE.* $1=\([0-9.+-]*\).*/\1/p" "$WORK/res.out"; }
  entries=$(rget entries) viol=$(rget violations)
  stale=$(rget stale) after_crash=$(rget after_crash)
  refused=$((${stale:-0} + ${after_crash:-0}))
  allowed=${MAX_REFUSED:-$([ -n "$TRACE" ] && echo $((${entries:-0} / 10)) || echo 0)}
  short=""
  for ((i = 0; i < N; i++)); do
    [ "$i" = "$crashed" ] && [ -z "$RESTART" ] && continue
    grep -q '^DONE' "${OUT[$i]}" || short="$short $i"
  done
  result=ok
  if [ -z "$entries" ]; then result="FAIL(no resource verdict)"
  elif [ "$viol" != 0 ]; then result="FAIL(violations)"
  elif [ -n "$short" ]; then result="FAIL(short:$short)"
  elif [ "$refused" -gt "$allowed" ]; then result="FAIL(refused $refused > $allowed allowed)"
  elif [ -n "$CRASH" ] && [ "$kills" != "$KILLS" ]; then result="FAIL(killed $kills of $KILLS: the run ended first)"
  elif [ -n "$restart_due" ]; then result="FAIL(not restarted before the end)"; fi
  [ "$result" = ok ] || FAIL=1
  printf '%-12s %8s %9.1f %7s %7s %6s %4s %5s %5s %5s %9s %9s %s\n' "$alg" "${entries:-?}" \
    "$(awk -v e="${entries:-0}" -v t="$elapsed" 'BEGIN { print e / t }')" "${viol:-?}" "$refused" \
    "$(rget superseded)" "$(rget max_held)" "$(sum lost)" "$(sum regenerated)" "$(sum excluded)" \
    "$(sum datagrams_out)" "$(sum datagrams_in)" "$result"
  if [ "$kills" -gt 0 ]; then
    note="killed with SIGKILL: $(IFS=,; echo "${KNOTES[*]}" | sed 's/,/, /g') (inside: $(rget crashed_inside));"
    note="$note longest from a kill to the next entry of another node: $(rget stall_s) s"
    if [ -n "$RESTART" ]; then
      made=""
      for ((i = 0; i < N; i++)); do
        [ "${RESTARTS[i]}" = 0 ] ||
          made="$made, node $i: ${RESTARTS[i]}x, $(grep -ho '^DONE.* entries=[0-9]*' "${OUT[$i]}" | sed 's/.*entries=//' || true) entries after the last"
      done
      note="$note; restarted ${RESTART} ms after each kill$made"
    fi
    echo "  ($note)"
  fi
  if [ "$result" != ok ] || [ -n "${MESH_VERBOSE:-}" ]; then
    grep -h VIOLATION "$WORK/res.err" | head -5 >&2 || true
    grep -h '^RESOURCE' "$WORK/res.out" >&2 || true
    for f in "$WORK"/n*.out; do grep -h '^SUMMARY' "$f" >&2 || echo "$(basename "$f" .out): no summary: $(tail -2 "${f%.out}.err")" >&2; done
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
