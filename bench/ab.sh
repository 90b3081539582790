#!/bin/bash
# Before/after on one path: two resetctl binaries served in turn from the
# same data dir (server on CPU 0, wrk on CPU 1, 2 s warm-up, 5 s measured),
# alternating BEFORE, AFTER, BEFORE, AFTER so drift shows as spread.
#
#   bench/ab.sh BEFORE_BIN AFTER_BIN DATA_DIR PATH [HEADER]
#
# e.g. bench/ab.sh /tmp/before/resetctl target/release/resetctl /tmp/data \
#        '/openapi/v1/records?page=1' 'If-None-Match: "…"'
# Quota and flood guard off: the server itself is measured. Needs wrk, taskset.
set -eu
before="$1" after="$2" data="$3" path="$4" header="${5:-}"
port=18080
for side in before after before after; do
  bin="$before"; [ "$side" = after ] && bin="$after"
  taskset -c 0 "$bin" --data-dir "$data" serve --listen "127.0.0.1:$port" \
    --no-rate-limit --flood-guard off --log error >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
  args=(-t1 -c32)
  [ -n "$header" ] && args+=(-H "$header")
  taskset -c 1 wrk "${args[@]}" -d2s "http://127.0.0.1:$port$path" >/dev/null
  rate=$(taskset -c 1 wrk "${args[@]}" -d5s "http://127.0.0.1:$port$path" | awk '/Requests\/sec/ {print $2}')
  echo "$side $rate"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
