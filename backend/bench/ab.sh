#!/bin/sh
# Interleaved A/B of two agentdesk binaries, writes only (the floor's creates beside
# each: floor.go): OLD NEW OLD NEW ... , one JSON
# summary line per run. PAIRS (3), DURATION (5s), INSTANCES (1) and PG (a PostgreSQL
# server URL without a database, e.g. postgres://postgres@127.0.0.1:55432: each run
# gets a new empty database on it; unset: SQLite) tune it.
#   backend/bench/ab.sh /tmp/agentdesk-old bin/agentdesk
set -eu
old=$1 new=$2
pairs=${PAIRS:-3} duration=${DURATION:-5s} instances=${INSTANCES:-1}
bench=$(mktemp /tmp/agentdesk-bench-XXXXXX)
trap 'rm -f "$bench"' EXIT
go build -o "$bench" ./backend/bench
i=0
while [ "$i" -lt "$pairs" ]; do
	for side in old new; do
		bin=$old
		[ "$side" = new ] && bin=$new
		db=
		if [ -n "${PG:-}" ]; then
			name="ab_$(date +%s%N)"
			psql "$PG/postgres" -qc "CREATE DATABASE $name" >/dev/null
			db="$PG/$name?sslmode=disable"
		fi
		"$bench" -bin "$bin" ${db:+-db "$db"} -instances "$instances" -writes-only -rounds 1 \
			-duration "$duration" -subscribers 0 -vector-chunks 0 2>/dev/null | tail -1 |
			python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(sys.argv[1], " ".join("%s=%s" % (k, d.get(k)) for k in ("creates_per_s", "floor_creates_per_s", "creates_share_of_floor", "callbacks_per_s", "messages_per_s", "server_cpu_us_per_create", "floor_server_cpu_us_per_create")))' "$side"
		[ -n "$db" ] && psql "$PG/postgres" -qc "DROP DATABASE $name" >/dev/null
	done
	i=$((i + 1))
done
