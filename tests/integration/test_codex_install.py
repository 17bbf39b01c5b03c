"""`sessionwatch codex install`: the hook, the MCP server and the hooks' trust, every other byte kept.

The trust entries are checked against Codex's own rule, computed here independently: the SHA-256 of
the compact, key-sorted JSON of the event's name in snake case and the handler as Codex hashes it
(`async` false added). The real Codex honours them: the host suite (tests/hosts) runs every Codex
scenario with hooks only this install trusted.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "sessionwatch"
EVENTS = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "Stop": "stop",
    "PostCompact": "post_compact",
    "SessionEnd": "session_end",
}

USER_HOOKS = """{
    "hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "notify-send prompt", "timeout": 5}]}
        ]
    },
    "note": "mine"
}
"""
USER_PROJECT_CONFIG = """# the team's Codex settings
model = "gpt-5.4"

[mcp_servers.docs]
command = "docs-server"   # our docs
args = ["--port", "0"]
"""
USER_HOME_CONFIG = """model_provider = "openai"

# projects I trust
[projects."{project}"]
trust_level = "trusted"
"""


def codex_hash(event: str, command: str, timeout: int) -> str:
    identity = {
        "event_name": EVENTS[event],
        "hooks": [{"async": False, "command": command, "timeout": timeout, "type": "command"}],
    }
    text = json.dumps(identity, separators=(",", ":"), sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def installed(event: str, command: str) -> str:
    """The handler's command line: `SessionEnd`'s runs in the background of Codex's shell, its
    input on descriptor 3, so Codex's 3-second cap cannot kill it."""
    if event == "SessionEnd":
        return f"exec 3<&0; {command} <&3 3<&- >/dev/null 2>&1 &"
    return command


def install(project: Path, home: Path, *options: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CODEX_HOME"}
    argv = [str(SCRIPT), "codex", "install", "--project", str(project), "--codex-home", str(home), *options]
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=60)


def files(project: Path, home: Path) -> dict[str, bytes | None]:
    paths = [project / ".codex" / "hooks.json", project / ".codex" / "config.toml", home / "config.toml"]
    return {str(path): path.read_bytes() if path.exists() else None for path in paths}


def only_added(before: str, after: str) -> bool:
    opcodes = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    return all(tag in {"equal", "insert"} for tag, *_ in opcodes)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "payments-api"
    folder.mkdir()
    return folder


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "codex-home"
    folder.mkdir()
    return folder


def test_a_fresh_install_writes_the_hooks_the_server_and_codexs_own_trust_entries(
    project: Path, home: Path
) -> None:
    done = install(project, home, "--db", "/srv/sw.db")

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == ["created: .codex/hooks.json", "created: .codex/config.toml"]
    command = "sessionwatch codex hook --db /srv/sw.db"
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    assert sorted(hooks) == sorted(EVENTS)
    for event, groups in hooks.items():
        timeout = 3 if event == "SessionEnd" else 10
        assert groups == [
            {"hooks": [{"type": "command", "command": installed(event, command), "timeout": timeout}]}
        ]
    server = tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]["sessionwatch"]
    assert server == {
        "command": "sessionwatch",
        "args": ["codex", "mcp", "--db", "/srv/sw.db"],
        "env_vars": ["SESSIONWATCH_URL"],
    }
    trust = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    hooks_path = project.resolve() / ".codex" / "hooks.json"
    assert trust == {
        f"{hooks_path}:{snake}:0:0": {
            "trusted_hash": codex_hash(event, installed(event, command), 3 if event == "SessionEnd" else 10)
        }
        for event, snake in EVENTS.items()
    }
    assert "note: Codex reads .codex/ of a trusted project only" in done.stdout


def test_a_second_install_changes_no_byte_and_writes_no_file(project: Path, home: Path) -> None:
    assert install(project, home).returncode == 0
    before = files(project, home)
    stamps = [Path(p).stat().st_mtime_ns for p in before]

    done = install(project, home)

    assert done.returncode == 0, done.stderr
    assert [line.split(":")[0] for line in done.stdout.splitlines()[:3]] == ["unchanged"] * 3
    assert files(project, home) == before
    assert [Path(p).stat().st_mtime_ns for p in before] == stamps


def test_the_users_own_hooks_settings_and_servers_stay_byte_for_byte(project: Path, home: Path) -> None:
    (project / ".codex").mkdir()
    (project / ".codex" / "hooks.json").write_text(USER_HOOKS)
    (project / ".codex" / "config.toml").write_text(USER_PROJECT_CONFIG)
    (home / "config.toml").write_text(USER_HOME_CONFIG.replace("{project}", str(project.resolve())))
    before = {path: text.decode() for path, text in files(project, home).items() if text is not None}

    done = install(project, home)

    assert done.returncode == 0, done.stderr
    after = files(project, home)
    for path, text in before.items():
        new = after[path]
        assert new is not None
        assert only_added(text, new.decode()), path
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"] == "notify-send prompt"
    trust = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    hooks_path = project.resolve() / ".codex" / "hooks.json"
    assert f"{hooks_path}:user_prompt_submit:1:0" in trust  # behind the user's own group
    assert "note:" not in done.stdout  # the project is trusted: Codex reads its .codex/


def test_a_changed_handler_is_replaced_in_place_and_trusted_anew(project: Path, home: Path) -> None:
    assert install(project, home).returncode == 0
    assert install(project, home, "--db", "/srv/other.db").returncode == 0

    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    command = "sessionwatch codex hook --db /srv/other.db"
    assert hooks["Stop"] == [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}]
    trust = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    key = f"{project.resolve() / '.codex' / 'hooks.json'}:stop:0:0"
    assert trust[key] == {"trusted_hash": codex_hash("Stop", command, 10)}


def test_a_session_end_handler_of_the_previous_release_is_detached_in_place_and_trusted_anew(
    project: Path, home: Path
) -> None:
    command = "sessionwatch codex hook"
    previous = {"type": "command", "command": command, "timeout": 3}
    (project / ".codex").mkdir()
    (project / ".codex" / "hooks.json").write_text(
        json.dumps({"hooks": {"SessionEnd": [{"hooks": [previous]}]}}, indent=2)
    )

    assert install(project, home).returncode == 0

    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    detached = installed("SessionEnd", command)
    assert hooks["SessionEnd"] == [{"hooks": [{"type": "command", "command": detached, "timeout": 3}]}]
    trust = tomllib.loads((home / "config.toml").read_text())["hooks"]["state"]
    key = f"{project.resolve() / '.codex' / 'hooks.json'}:session_end:0:0"
    assert trust[key] == {"trusted_hash": codex_hash("SessionEnd", detached, 3)}
    assert install(project, home).stdout.splitlines()[0] == "unchanged: .codex/hooks.json"


@pytest.mark.parametrize(
    ("where", "text", "message"),
    [
        ("hooks", "{not json", ".codex/hooks.json: not valid JSON"),
        ("hooks", '{"hooks": []}', ".codex/hooks.json: 'hooks' must be an object"),
        ("project", "model = ", ".codex/config.toml: not valid TOML"),
        (
            "project",
            'mcp_servers = {sessionwatch = {command = "x"}}',
            "written as dotted keys or an inline table",
        ),
        ("home", "[broken", "config.toml: not valid TOML"),
    ],
    ids=["hooks-not-json", "hooks-wrong-type", "project-not-toml", "inline-server", "home-not-toml"],
)
def test_a_file_the_install_cannot_edit_stops_it_before_anything_is_written(
    project: Path, home: Path, where: str, text: str, message: str
) -> None:
    target = {
        "hooks": project / ".codex" / "hooks.json",
        "project": project / ".codex" / "config.toml",
        "home": home / "config.toml",
    }[where]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    before = files(project, home)

    done = install(project, home)

    assert done.returncode == 2
    assert message in done.stderr
    assert "nothing was written" in done.stderr
    assert files(project, home) == before


def test_a_relative_or_in_memory_store_is_refused_naming_db(project: Path, home: Path) -> None:
    for db in ("sessionwatch.db", "memory://"):
        done = install(project, home, "--db", db)
        assert done.returncode == 2
        assert done.stderr.startswith("sessionwatch: --db:") or "--db:" in done.stderr
    assert files(project, home) == dict.fromkeys(files(project, home))
