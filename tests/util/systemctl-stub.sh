#!/bin/bash
# The systemctl of tests/deployment_as_pasted.rs and tests/package.rs, bind-mounted over
# /usr/bin/systemctl inside the test's throwaway root (never installed on the
# host). It records every call in /run/systemctl-stub/calls and does for the
# units the guide installed in /etc/systemd/system (or the package in
# /lib/systemd/system) what systemd would do for
# the guide's commands: a Type=exec service runs its ExecStart= in the
# background as its User=, a Type=notify one too, with `start` returning once
# it says READY=1 on NOTIFY_SOCKET (its .socket unit is not emulated: serve
# binds `listen` itself, as without one), a Type=oneshot service runs ExecStart= and
# ExecStartPost= to completion (so `start` fails when they fail), each with
# the unit's UMask= (no other setting of the unit is applied), `stop`
# ends a running service with SIGTERM; timers are only recorded (nothing
# here waits an hour), and so are sockets. `reload` runs a service's
# ExecReload= lines; `reload nginx` starts nginx when it is not running.
# Everything else (daemon-reload, list-timers) is recorded and succeeds.
set -u
state=/run/systemctl-stub
mkdir -p "$state"
echo "$*" >> "$state/calls"

verb=${1:-}
shift || true
now=no
units=()
for arg in "$@"; do
	case $arg in
	--now) now=yes ;;
	-*) ;;
	*) units+=("$arg") ;;
	esac
done

# The value of KEY= in a unit file, with systemd's %% and $$ turned into % and $.
setting() {
	sed -n "s/^$2=//p" "$1" | sed -e 's/%%/%/g' -e 's/\$\$/$/g'
}

# A unit installed by hand (/etc/systemd/system) or by the package (/lib/systemd/system).
unit_file() {
	local file=/etc/systemd/system/$1
	[ -f "$file" ] || file=/lib/systemd/system/$1
	if [ ! -f "$file" ]; then
		echo "Unit $1 not found." >&2
		exit 5
	fi
	echo "$file"
}

# Whether process $1 lives (a zombie does not).
alive() {
	[[ $1 =~ ^[0-9]+$ ]] && [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" != Z ]
}

running() {
	[ -f "$state/$1.pid" ] && alive "$(cat "$state/$1.pid")"
}

start() {
	local unit=$1 file user type
	case $unit in
	nginx | nginx.service)
		if [ -f /run/nginx.pid ] && alive "$(cat /run/nginx.pid)"; then
			nginx -s reload
		else
			nginx
		fi
		return
		;;
	*.timer | *.socket)
		unit_file "$unit" > /dev/null
		return
		;;
	esac
	file=$(unit_file "$unit") || exit 5
	running "$unit" && return
	user=$(setting "$file" User)
	type=$(setting "$file" Type)
	umask "$(setting "$file" UMask)" 2>/dev/null || umask 0022
	case $type in
	exec | notify)
		# The guide's long-running ExecStart= lines have no quotes: words split on spaces.
		local command waiter=
		read -r -a command <<< "$(setting "$file" ExecStart)"
		rm -f "$state/$unit.pid"
		if [ "$type" = notify ]; then
			# systemd's side of Type=notify: a datagram socket the service may
			# write to, and `start` returns once it says READY=1.
			export NOTIFY_SOCKET=$state/$unit.notify
			rm -f "$NOTIFY_SOCKET" "$NOTIFY_SOCKET.bound"
			python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o666); s.settimeout(30)
open(sys.argv[1] + ".bound", "w").close()
while "READY=1" not in s.recv(4096).decode().split("\n"):
    pass
' "$NOTIFY_SOCKET" &
			waiter=$!
			for _ in $(seq 100); do
				[ -e "$NOTIFY_SOCKET.bound" ] && break
				sleep 0.02
			done
		fi
		# A session of its own (stop ends the whole group); sh writes its pid, then
		# becomes runuser, which runs the command as User=.
		# shellcheck disable=SC2016
		(cd / && setsid sh -c 'echo $$ > "$0"; exec "$@"' "$state/$unit.pid" \
			runuser -u "$user" -- "${command[@]}" < /dev/null > "$state/$unit.log" 2>&1 &)
		for _ in $(seq 100); do
			[ -s "$state/$unit.pid" ] && break
			sleep 0.02
		done
		if [ -n "$waiter" ] && ! wait "$waiter"; then
			echo "$unit: no READY=1 within 30 s (see $state/$unit.log)" >&2
			cat "$state/$unit.log" >&2
			exit 1
		fi
		unset NOTIFY_SOCKET
		;;
	oneshot)
		local line
		while IFS= read -r line; do
			(cd / && eval runuser -u "$user" -- "$line") < /dev/null >> "$state/$unit.log" 2>&1 || {
				echo "$unit: ExecStart failed: $line (see $state/$unit.log)" >&2
				cat "$state/$unit.log" >&2
				exit 1
			}
		done < <(setting "$file" ExecStart; setting "$file" ExecStartPost)
		;;
	*)
		echo "systemctl stub: $unit has Type=$type, which it cannot start" >&2
		exit 1
		;;
	esac
}

# reload: a running service's ExecReload= lines, in order, as its User=,
# with $MAINPID the service's process (the one runuser started); one that
# fails fails the reload. nginx: `start` (nginx -s reload when it runs).
reload() {
	local unit=$1 file user main line
	case $unit in
	nginx | nginx.service) start "$unit"; return ;;
	esac
	file=$(unit_file "$unit") || exit 5
	if ! running "$unit"; then
		echo "Job for $unit failed: it is not active." >&2
		exit 1
	fi
	user=$(setting "$file" User)
	# The pid file names sh, which became runuser; its child is the service.
	main=$(pgrep -P "$(cat "$state/$unit.pid")" | head -1)
	while IFS= read -r line; do
		line=${line//\$MAINPID/$main}
		(cd / && eval runuser -u "$user" -- "$line") < /dev/null >> "$state/$unit.log" 2>&1 || {
			echo "$unit: ExecReload failed: $line (see $state/$unit.log)" >&2
			cat "$state/$unit.log" >&2
			exit 1
		}
	done < <(setting "$file" ExecReload)
}

stop() {
	local unit=$1 pid
	case $unit in
	*.timer | *.socket) unit_file "$unit" > /dev/null; return ;;
	esac
	unit_file "$unit" > /dev/null || exit 5
	running "$unit" || return 0
	pid=$(cat "$state/$unit.pid")
	# setsid made the service a process group of its own: end all of it.
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
	for _ in $(seq 100); do
		alive "$pid" || break
		sleep 0.1
	done
	rm -f "$state/$unit.pid"
}

case $verb in
daemon-reload | list-timers) ;;
start) for u in "${units[@]}"; do start "$u"; done ;;
reload) for u in "${units[@]}"; do reload "$u"; done ;;
restart) for u in "${units[@]}"; do stop "$u"; start "$u"; done ;;
try-restart) for u in "${units[@]}"; do running "$u" && { stop "$u"; start "$u"; }; done ;;
stop) for u in "${units[@]}"; do stop "$u"; done ;;
enable)
	for u in "${units[@]}"; do
		unit_file "$u" > /dev/null
		[ $now = yes ] && start "$u"
	done
	;;
disable)
	for u in "${units[@]}"; do
		unit_file "$u" > /dev/null
		[ $now = yes ] && stop "$u"
	done
	;;
*)
	echo "systemctl stub: no \`systemctl $verb\` in the guide's runs" >&2
	exit 1
	;;
esac
exit 0
