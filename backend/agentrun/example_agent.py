#!/usr/bin/env python3
"""A minimal agentdesk agent in Python, standard library only.

It reads the environment that `agentdesk agent env` prints, picks up the Todo tasks
assigned to it, works through their steps, asks the human when a step title ends with
"?" (answers in brackets, "Ship it? [Approve, Reject]", become buttons; every question
must be answered within ANSWER_WITHIN_SECONDS, default a day, or the task fails), and
finishes each task Done. What to do next is read from the task on every poll,
so it can be stopped and restarted at any time.

    eval "$(agentdesk agent env --project $PROJECT --name worker)"
    python3 example_agent.py
"""
import hashlib
import json
import os
import sys
import time
import urllib.error
import urllib.request

URL = os.environ.get("AGENTDESK_URL", "http://127.0.0.1:8080").rstrip("/")
PROJECT = os.environ["SERVICE_PROJECT_ID"]
NAME = os.environ["AGENT_NAME"]
# X-Task-Authorization is the hex SHA-1 of the project id followed by the secret
# (never the namespace). SERVICE_API_TOKEN is the same value, precomputed.
DIGEST = os.environ.get("SERVICE_API_TOKEN") or hashlib.sha1(
    (PROJECT + os.environ["SERVICE_TOKEN_SECRET"]).encode()).hexdigest()
POLL = float(os.environ.get("POLL_SECONDS", "2"))
ANSWER_WITHIN = float(os.environ.get("ANSWER_WITHIN_SECONDS", str(24 * 3600)))


class Changed(RuntimeError):
    """The task changed since it was read (412 precondition_failed): read it again."""


def call(method, path, body=None, if_match=None):
    headers = {
        "X-Task-Authorization": DIGEST,
        "X-Task-Namespace": os.environ.get("SERVICE_NAMESPACE", ""),
        "X-Agent-Name": NAME,
        "Content-Type": "application/json",
    }
    if if_match:
        headers["If-Match"] = if_match
    req = urllib.request.Request(URL + path, method=method, headers=headers,
                                 data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            data = json.load(resp)
            if isinstance(data, dict) and resp.headers.get("ETag"):
                data["_etag"] = resp.headers["ETag"]  # this version of the task, for If-Match
            return data
    except urllib.error.HTTPError as e:
        error = json.load(e).get("error", {})
        kind = Changed if error.get("code") == "precondition_failed" else RuntimeError
        raise kind(f"{e.code} {error.get('code')}: {error.get('message')}") from None


def callback(task, **report):
    """Report progress on a task assigned to this agent; applied atomically. If-Match
    makes sure the report fits the task as read: if a human changed it meanwhile, the
    report is refused (Changed) and the next poll decides again."""
    return call("POST", f"/api/agent_callback/{task['id']}", {"project_id": PROJECT, **report},
                if_match=task.get("_etag"))


def question_of(title):
    """A step's title as a question and its options: "Ship it? [Approve, Reject]"."""
    title = title.strip()
    if title.endswith("]") and " [" in title:
        text, _, rest = title.rpartition(" [")
        return text.strip(), [o.strip() for o in rest[:-1].split(",") if o.strip()]
    return title, []


def work(task):
    if task["status"] == "Todo":
        print(f"picked up task {task['id']}: {task['summary']}", flush=True)
        task = callback(task, status="Doing")
    while task["status"] == "Doing":
        i = task["current_step_num"]
        if i >= len(task["steps"]):
            callback(task, status="Done", message="All steps are complete.")
            print(f"task {task['id']} done", flush=True)
            return
        step = task["steps"][i]
        question, options = question_of(step["title"])
        if question.endswith("?"):
            if step["status"] == "pending":
                # Start the step and wait for the human, in one callback: the options
                # as buttons, and a deadline after which the task fails.
                deadline = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + ANSWER_WITHIN))
                ask = {"waiting_expires_at": deadline, "waiting_on_expiry": "fail"}
                if options:
                    ask["waiting_options"] = options
                callback(task, steps=[{"index": i, "status": "in_progress"}],
                         waiting_details=question, **ask)
                return
            answers = [m["content"] for m in task["conversation"] if m["role"] == "user"]
            answer = answers[-1] if answers else ""
            task = callback(task, steps=[{"index": i, "status": "completed"}],
                            message=f"You answered {answer!r}; carrying on.")
        else:
            time.sleep(0.05)  # the "work" of a step
            task = callback(task, steps=[{"index": i, "status": "completed"}])


def main():
    print(f"agent {NAME} polling {URL} every {POLL}s", flush=True)
    while True:
        try:
            for task in call("GET", f"/api/projects/{PROJECT}/tasks?assigned=me"):
                if task["status"] in ("Todo", "Doing"):
                    work(call("GET", f"/api/projects/{PROJECT}/tasks/{task['id']}"))
        except Changed as e:
            print(f"task changed meanwhile ({e}); looking again", flush=True)
        except (RuntimeError, OSError) as e:
            print(f"error: {e}; retrying", file=sys.stderr, flush=True)
        time.sleep(POLL)


if __name__ == "__main__":
    main()
