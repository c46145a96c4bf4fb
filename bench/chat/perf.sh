#!/bin/bash
# Where each chat bench server spends its CPU, kernel included: runs `node dist/bench/run.js chat`
# (build first: npm run build) and records each server with `perf record -g` for 8 s of its
# fan-out, starting 4 s in. Needs perf (linux-perf). Read with:
#   perf report -i <dir>/<server>.data --children --sort symbol -g none
set -euo pipefail
out=${1:-/tmp/chat-perf}
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
rm -rf "$out"; mkdir -p "$out"
cd "$(dirname "$0")/../.."
node dist/bench/run.js chat > "$out/bench.txt" 2>&1 &
bench=$!
for side in baselines/chat-socketio-node.js servers/chat.js; do
  label="socket.io on node:http (baseline): 2000 clients"
  [ "$side" = servers/chat.js ] && label="edge (socket.io on uWS): 2000 clients"
  until grep -qF "$label" "$out/bench.txt"; do sleep 0.2; kill -0 $bench 2>/dev/null || { cat "$out/bench.txt"; exit 1; }; done
  pid=$(pgrep -f "$side" | head -1)
  sleep 4
  perf record -F 999 -g -p "$pid" -o "$out/$(basename "$side" .js).data" -- sleep 8 > /dev/null 2>&1
done
wait $bench
tail -8 "$out/bench.txt"
echo "profiles in $out"
