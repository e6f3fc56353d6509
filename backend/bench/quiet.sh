#!/bin/sh
# Waits for a quiet spell of this shared machine, then runs the whole bench RUNS (3) times
# back to back. The floor server's CPU per create (floor.go) says how fast the host is
# right now: one writes-only round every EVERY seconds (200) gives it, and once it is at
# most FLOOR µs (95), the whole runs start. Gives up after MINUTES (120). Each probe
# adds a line to OUT/probes.log; each whole run writes OUT/run-N.out (what make bench
# prints). Nothing runs while OUT/pause exists (your own builds would spoil a run).
#   backend/bench/quiet.sh bin/agentdesk
set -eu
bin=$1
out=${OUT:-/tmp/agentdesk-quiet} runs=${RUNS:-3} floor=${FLOOR:-95} every=${EVERY:-200}
end=$(($(date +%s) + ${MINUTES:-120} * 60))
mkdir -p "$out"
bench="$out/bench"
go build -o "$bench" ./backend/bench
while [ "$(date +%s)" -lt "$end" ]; do
	if [ -e "$out/pause" ]; then
		sleep 30
		continue
	fi
	probe=$("$bench" -bin "$bin" -writes-only -rounds 1 2>/dev/null | tail -1 |
		python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(round(d["floor_server_cpu_us_per_create"]), round(d["server_cpu_us_per_create"]))')
	set -- $probe
	echo "$(date +%T) load $(cut -d' ' -f1 /proc/loadavg) floor $1 µs agentdesk $2 µs a create" >>"$out/probes.log"
	if [ "$1" -le "$floor" ] && [ ! -e "$out/pause" ]; then
		i=1
		while [ "$i" -le "$runs" ]; do
			echo "$(date +%T) run $i, load $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/probes.log"
			"$bench" -bin "$bin" >"$out/run-$i.out" 2>&1
			i=$((i + 1))
		done
		echo "$(date +%T) done" >>"$out/probes.log"
		exit 0
	fi
	sleep "$every"
done
echo "$(date +%T) no quiet spell" >>"$out/probes.log"
exit 1
