#!/usr/bin/env bash
# Makes agentdesk-0.2.0.db, the database TestUpgradeFrom020 opens: agentdesk as it was at
# the end of round 2 (commit c05000a, migrations up to 00027, released as 0.2.0) with a
# little of everything in it. Run from the repository's root; needs git and go:
#   testdata/upgrade/make-0.2.0-db.sh
set -euo pipefail
out=$PWD/testdata/upgrade/agentdesk-0.2.0.db
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
git archive c05000a | tar -x -C "$work"
(cd "$work" && CGO_ENABLED=0 go build -o agentdesk .)
bin=$work/agentdesk data=$work/data
export AGENTDESK_DATA=$data AGENTDESK_DB=
project=$("$bin" project create --name Upgrade --namespace upgrade | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
"$bin" agent create --project "$project" --name worker >/dev/null
token=$("$bin" token create --project "$project" --name upgrade --scopes task:read,task:write,messaging:read,messaging:write,admin)
"$bin" --serve --log-format json --addr 127.0.0.1:18931 2>/dev/null & pid=$!
U=http://127.0.0.1:18931 A="Authorization: Bearer $token" P=http://127.0.0.1:18931/api/projects/$project
for _ in $(seq 50); do curl -sf $U/healthz >/dev/null && break; sleep 0.2; done
post() { curl -sS --fail-with-body -X "$1" "$2" -H "$A" -H 'Content-Type: application/json' -d "$3" >/dev/null; }
post POST $P/conversations '{"message":"Kick-off for the launch","name":"launch"}'
post POST $P/conversations/1/messages '{"message":"Agenda attached"}'
post POST $U/api/tasks '{"summary":"Write the release notes","details":"For 0.2.0","conversation_id":1,"steps":[{"title":"Draft"},{"title":"Review"}]}'
post POST $U/api/tasks '{"summary":"Ask about the tone","agent_id":1}'
post PUT $U/api/tasks/2/status '{"status":"Doing"}'
post PUT $U/api/tasks/2/status '{"status":"Waiting","waiting_details":"Formal or casual?"}'
post POST $U/api/tasks '{"summary":"Old finished work"}'
post PUT $U/api/tasks/3/status '{"status":"Done"}'
post PUT $U/api/tasks/1/steps/0/status '{"status":"completed"}'
post PUT $U/api/tasks/1/agent '{"agent_id":1}'
kill -TERM $pid; wait $pid || true; pid=
# The server checkpoints on a clean stop: the .db file alone is the whole database.
test ! -s "$data/agentdesk.db-wal"
cp "$data/agentdesk.db" "$out"
echo "$token" >"$out.token"
echo "wrote $out"
