#!/bin/bash
# A profile of what is left: the 304 path and the quota in its real shape,
# a release build (RESETCTL_BIN, default target/release/resetctl) pinned to
# CPU 0, wrk on CPU 1; perf record of the server for 8 s of each load.
# Usage: RESETCTL_BIN=… bench/profile.sh (needs perf, wrk, taskset, curl).
set -e
B=${RESETCTL_BIN:-target/release/resetctl}
D=$(mktemp -d)
$B --data-dir $D/data --now 2026-11-20T10:00:00.000Z seed >/dev/null
start() { taskset -c 0 $B --data-dir $D/data --log warn serve --listen 127.0.0.1:$1 "${@:2}" >/dev/null 2>&1 & echo $!; }
P1=$(start 18081 --no-rate-limit --flood-guard off)
P2=$(start 18082 --trust-proxy 127.0.0.1/32)
sleep 2
TAG=$(curl -s -D - -o /dev/null "http://127.0.0.1:18081/openapi/v1/records?page=1" | awk 'tolower($1)=="etag:"{print $2}' | tr -d '\r')
cat > $D/clients.lua <<'LUA'
local n = 0
request = function()
  n = n + 1
  local c = n % 1000000
  return wrk.format("GET", "/openapi/v1/records?page=1", {["X-Forwarded-For"] = "10." .. math.floor(c / 65536) .. "." .. (math.floor(c / 256) % 256) .. "." .. (c % 256)})
end
LUA
profile() { # name pid wrk-args...
  local name=$1 pid=$2; shift 2
  taskset -c 1 wrk -t1 -c32 -d12s "$@" > $D/$name.wrk 2>&1 &
  local w=$!
  sleep 2
  perf record -F 999 -g -p $pid -o $D/$name.data -- sleep 8 >/dev/null 2>&1
  wait $w
  echo "## $name"; grep "Requests/sec" $D/$name.wrk
  perf report -i $D/$name.data --stdio --no-children --sort dso 2>/dev/null | grep -E "^ +[0-9]" | head -6; perf report -i $D/$name.data --stdio --no-children --sort symbol --percent-limit 1.5 2>/dev/null | grep -E "^ +[0-9]" | sed -E "s/ +- +- *$//" | head -12
}
profile p304 $P1 -H "If-None-Match: $TAG" "http://127.0.0.1:18081/openapi/v1/records?page=1"
profile quota $P2 -s $D/clients.lua "http://127.0.0.1:18082/openapi/v1/records?page=1"
kill $P1 $P2
