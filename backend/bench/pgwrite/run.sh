#!/bin/sh
# What one transaction per write would cost on PostgreSQL (issue 42's question): a
# create's statements (the project's lock, its seq, the task, the event, the NOTIFY) as
# one transaction each, 16 clients, with and without the project's advisory lock.
# Usage: run.sh postgres://user@127.0.0.1:PORT/DB   (needs pgbench and psql on PATH)
set -e
url=${1:?a PostgreSQL URL}
dir=$(dirname "$0")
psql -q "$url" -f "$dir/setup.sql"
for s in locked free locked free; do
	pgbench -n -c 16 -j 2 -T 8 -f "$dir/$s.sql" "$url" 2>&1 | grep -E '^tps' | sed "s/^/$s: /"
done
