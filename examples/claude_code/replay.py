"""Replay two Claude Code sessions of this project, a lead watching a worker, through the real hook.

Every hook runs exactly as `.claude/settings.json` names it (through `/bin/sh`, as Claude Code runs a
command hook), with the environment and the stdin JSON Claude Code gives it, and the session
transcripts are written as Claude Code writes them: the prompt after its prompt hook ran. The store
and the transcripts are in a fresh temporary directory (the store at the URL given as the first
argument, if any), never in this folder.

    python examples/claude_code/replay.py [STORE_URL]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import uuid
from datetime import UTC, datetime
from pathlib import Path

import sessionwatch

HERE = Path(__file__).resolve().parent
LEAD = "0b6c5b2e-1f0a-4c61-9d55-5d0c2e8a7f10"
WORKER = "7d3f9a40-52be-4e0f-8c1a-3b9e6f20d4c7"

TASK_NOTIFICATION = (
    "<task-notification>\n<task-id>b7x2k9</task-id>\n<status>completed</status>\n"
    '<summary>Background command "npm test" completed (exit code 0)</summary>\n</task-notification>'
)
FROM_ANOTHER_SESSION = (
    '<cross-session-message from="lead">Please rebase on main before you push.</cross-session-message>'
)


def hook_commands(event: str) -> list[str]:
    """The commands `.claude/settings.json` runs for `event`."""
    settings = json.loads((HERE / ".claude" / "settings.json").read_text(encoding="utf-8"))
    groups = settings["hooks"].get(event, [])
    return [handler["command"] for group in groups for handler in group["hooks"]]


def environment(store: str, session_id: str) -> dict[str, str]:
    """What Claude Code gives a hook: the project directory and the session id (and our store)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {
        **os.environ,
        "PATH": path,
        "CLAUDE_PROJECT_DIR": str(HERE),
        "CLAUDE_CODE_SESSION_ID": session_id,
        "SESSIONWATCH_URL": store,
    }


def fire(store: str, transcripts: Path, event: str, session_id: str, **fields: str) -> str | None:
    """Run the hooks of one event; the `additionalContext` they returned, if any."""
    payload = {
        "session_id": session_id,
        "transcript_path": str(transcripts / f"{session_id}.jsonl"),
        "cwd": str(HERE),
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }
    context = None
    for command in hook_commands(event):
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=environment(store, session_id),
            cwd=HERE,
            check=False,
        )
        if done.returncode != 0 or done.stderr:
            sys.exit(f"the hook failed ({done.returncode}): {done.stderr.strip()}")
        if done.stdout.strip():
            context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def write(transcripts: Path, session_id: str, text: str, **labels: object) -> None:
    """Claude Code writes a user record to the session's transcript (after the prompt hook ran)."""
    record = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "sessionId": session_id,
        "uuid": str(uuid.uuid4()),
        "timestamp": datetime.now(UTC).isoformat(),
        **labels,
    }
    with (transcripts / f"{session_id}.jsonl").open("a", encoding="utf-8") as transcript:
        transcript.write(json.dumps(record) + "\n")


def turn(store: str, transcripts: Path, session_id: str, text: str, **labels: object) -> str | None:
    """One turn: the prompt hook, the prompt written, the turn's end (`Stop`); the prompt's context."""
    context = fire(
        store, transcripts, "UserPromptSubmit", session_id, prompt=text, prompt_id=str(uuid.uuid4())
    )
    write(transcripts, session_id, text, **labels)
    fire(store, transcripts, "Stop", session_id)
    return context


def main(store: str, transcripts: Path) -> None:
    """The story: start both, the lead watches, the worker gets three prompts, the lead two."""
    print("1. both sessions start; each is told its key:")
    for session_id in (LEAD, WORKER):
        context = fire(
            store, transcripts, "SessionStart", session_id, source="startup", model="claude-opus-4-5"
        )
        print(f"   {context}")
    with sessionwatch.open(store) as watch:
        keys = {entry.session_id: entry.session_key for entry in watch.registry_entries()}
        lead, worker = keys[LEAD], keys[WORKER]
        # In Claude Code the lead calls the MCP tool sessions_watch; the core call is the same.
        watch.watch(lead, worker)
    print("2. the lead watches the worker")

    typed = {"promptSource": "typed", "origin": {"kind": "human"}}
    turn(store, transcripts, WORKER, "Add a retry to the payment client and run the tests", **typed)
    turn(
        store,
        transcripts,
        WORKER,
        TASK_NOTIFICATION,
        promptSource="system",
        origin={"kind": "task-notification"},
    )
    turn(store, transcripts, WORKER, FROM_ANOTHER_SESSION)
    with sessionwatch.open(store) as watch:
        delta = watch.session_status(worker, changes_since=0).state_changes
    events = delta.events if delta else ()
    recorded = [(event.kind.value, event.summary) for event in events if event.actor_type == "human"]
    print("3. the worker got a typed prompt, a task notification and a message from another session;")
    print(f"   recorded: {recorded}")

    print("4. the lead's next prompt carries the notice:")
    print(f"   {turn(store, transcripts, LEAD, 'How is the worker doing?', **typed)}")
    print(f"5. the prompt after that carries nothing: {turn(store, transcripts, LEAD, 'Thanks', **typed)}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        main(sys.argv[1] if len(sys.argv) > 1 else str(Path(folder) / "sessionwatch.db"), Path(folder))
