#!/usr/bin/env bash
# Soak: mixed load on the hostile sim fleet for a while; goroutines, open
# files (connections) and RSS are sampled every minute and must stay flat.
# Loopback only. Needs wrk and curl.
# Usage: sim/load/soak.sh [seconds] [connections]
set -euo pipefail
cd "$(dirname "$0")/../.."
DUR=${1:-600}
CONNS=${2:-16}
OUT=${OUT:-$PWD/out/soak}
GATE=127.0.0.1:18910
for tool in wrk curl; do
  command -v "$tool" >/dev/null || { echo "soak.sh: $tool is not installed" >&2; exit 2; }
done
rm -rf "$OUT" && mkdir -p "$OUT/data"
go build -o "$OUT/searxgate" ./cmd/searxgate

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

"$OUT/searxgate" sim --n 40 --mix hostile --seed 1 --port 19700 --write-directory "$OUT/instances.json" >"$OUT/sim.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$OUT/instances.json" ] && break; sleep 0.05; done
# Default budgets and deadline; only the per-client limit is lifted, since
# the load comes from one address.
"$OUT/searxgate" serve --listen $GATE --directory "$OUT/instances.json" --allow-private \
  --data "$OUT/data" --client-rate 0 --log-level warn >"$OUT/gate.log" 2>&1 &
gate=$!
pids+=($gate)
for _ in $(seq 100); do curl -sf "http://$GATE/healthz" >/dev/null && break; sleep 0.05; done

sample() { # elapsed
  local m; m=$(curl -s "http://$GATE/metrics")
  printf '%s\t%s\t%s\t%s\n' "$1" \
    "$(awk '/^searxgate_goroutines /{print $2}' <<<"$m")" \
    "$(ls /proc/$gate/fd | wc -l)" \
    "$(awk '/VmRSS/{print $2}' /proc/$gate/status)"
}
echo -e "elapsed_s\tgoroutines\topen_fds\trss_kb" >"$OUT/samples.tsv"
sample 0 >>"$OUT/samples.tsv"
wrk -t1 -c"$CONNS" -d"${DUR}s" --latency -s sim/load/mixed.lua "http://$GATE" >"$OUT/wrk.txt" &
wrkpid=$!
pids+=($wrkpid)
for ((t = 60; t <= DUR; t += 60)); do
  sleep 60
  sample "$t" >>"$OUT/samples.tsv"
done
wait "$wrkpid" || true
sleep 6 # let the last searches and hedge losers end
sample "$((DUR + 6))-idle" >>"$OUT/samples.tsv"
cat "$OUT/wrk.txt"
curl -s "http://$GATE/metrics" | grep -E '^searxgate_searches_total' >"$OUT/searches.txt" || true
cat "$OUT/searches.txt"
column -t "$OUT/samples.tsv"
