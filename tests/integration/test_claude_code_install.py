"""`sessionwatch claude-code install`: the hook into `.claude/settings.json`, the server into `.mcp.json`.

Idempotent (a second run writes nothing), text-preserving (what the install did not add stays byte
for byte, checked with a diff that may only insert), and all-or-nothing on a file it cannot read.
"""

from __future__ import annotations

import difflib
import json
import shlex
from pathlib import Path

import pytest
from cli_runs import Outcome, cli

from sessionwatch.integrations.claude_code_install import hook_command, is_our_handler

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "claude_code"
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")

PREVIOUS_INSTALL = """{
  "permissions": {"allow": ["Bash(npm run test:*)"]},
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "sessionwatch claude-code hook",
            "timeout": 10
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "sessionwatch claude-code hook",
            "timeout": 10
          }
        ]
      },
      {"hooks": [{"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/branch.sh"}]}
    ]
  }
}
"""
"""What the previous version's install left (two events), beside a setting and a hook of the user's."""

USER_SETTINGS = """{
    "$schema": "https://json.schemastore.org/claude-code-settings.json",
    "permissions": {
        "allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
        "deny":  ["Read(./.env)"]
    },
    "env": {"NODE_OPTIONS": "--max-old-space-size=4096", "RATIO": 1.50},
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [{"type": "command", "command": "npx prettier --write \\"$CLAUDE_FILE_PATHS\\""}]
            }
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/branch.sh"}]}
        ]
    },
    "model": "claude-sonnet-4-5",
    "unicode": "caf\\u00e9 \u2013 ok"
}
"""

USER_MCP = """{
  "mcpServers": {
    "postgres": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-postgres", "${DATABASE_URL}"]}
  }
}
"""


def install(capsys: pytest.CaptureFixture[str], project: Path, *options: str) -> Outcome:
    return cli(capsys, "claude-code", "install", "--project", str(project), *options)


def settings(project: Path) -> dict[str, object]:
    loaded = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def mcp(project: Path) -> dict[str, object]:
    loaded = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def our_handlers(project: Path, event: str) -> list[dict[str, object]]:
    hooks = settings(project)["hooks"]
    assert isinstance(hooks, dict)
    return [h for group in hooks[event] for h in group["hooks"] if is_our_handler(h)]


def only_inserted(old: str, new: str) -> str:
    """What `new` added to `old`, failing when any byte of `old` was changed or removed."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    added = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        assert tag in {"equal", "insert"}, (tag, old[i1:i2], new[j1:j2])
        if tag == "insert":
            added.append(new[j1:j2])
    return "".join(added)


def user_project(tmp_path: Path) -> Path:
    project = tmp_path / "shop"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(USER_SETTINGS, encoding="utf-8")
    (project / ".mcp.json").write_text(USER_MCP, encoding="utf-8")
    return project


def test_a_new_project_gets_both_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    outcome = install(capsys, tmp_path)
    assert outcome == Outcome(0, "created: .claude/settings.json\ncreated: .mcp.json\n", "")
    for event in EVENTS:
        assert our_handlers(tmp_path, event) == [
            {"type": "command", "command": "sessionwatch claude-code hook", "timeout": 10}
        ]
    assert mcp(tmp_path) == {
        "mcpServers": {
            "sessionwatch": {"type": "stdio", "command": "sessionwatch", "args": ["claude-code", "mcp"]}
        }
    }
    assert (
        (tmp_path / ".mcp.json")
        .read_text(encoding="utf-8")
        .startswith('{\n  "mcpServers": {\n    "sessionwatch"')
    )


def test_the_example_holds_exactly_what_install_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert install(capsys, tmp_path).code == 0
    for name in (".claude/settings.json", ".mcp.json"):
        assert (EXAMPLE / name).read_bytes() == (tmp_path / name).read_bytes(), name
    assert install(capsys, EXAMPLE).out == "unchanged: .claude/settings.json\nunchanged: .mcp.json\n"


def test_install_twice_keeps_one_copy_and_keeps_every_other_byte(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = user_project(tmp_path)
    first = install(capsys, project, "--db", "sqlite:////srv/shared/sessionwatch.db")
    assert first == Outcome(0, "updated: .claude/settings.json\nupdated: .mcp.json\n", "")
    written = {name: (project / name).read_bytes() for name in (".claude/settings.json", ".mcp.json")}
    stats = {name: (project / name).stat() for name in written}

    second = install(capsys, project, "--db", "sqlite:////srv/shared/sessionwatch.db")
    assert second == Outcome(0, "unchanged: .claude/settings.json\nunchanged: .mcp.json\n", "")
    for name, content in written.items():
        assert (project / name).read_bytes() == content
        assert (project / name).stat().st_mtime_ns == stats[name].st_mtime_ns  # not even rewritten
        assert (project / name).stat().st_ino == stats[name].st_ino

    command = "sessionwatch claude-code hook --db sqlite:////srv/shared/sessionwatch.db"
    for event in EVENTS:
        assert [h["command"] for h in our_handlers(project, event)] == [command]
    new_settings = written[".claude/settings.json"].decode("utf-8")
    added = only_inserted(USER_SETTINGS, new_settings)
    assert command in added
    assert "branch.sh" not in added
    loaded = settings(project)
    hooks = loaded["hooks"]
    assert isinstance(hooks, dict)
    assert hooks["PostToolUse"] == json.loads(USER_SETTINGS)["hooks"]["PostToolUse"]
    assert hooks["UserPromptSubmit"][0] == json.loads(USER_SETTINGS)["hooks"]["UserPromptSubmit"][0]
    assert {k: v for k, v in loaded.items() if k != "hooks"} == {
        k: v for k, v in json.loads(USER_SETTINGS).items() if k != "hooks"
    }
    only_inserted(USER_MCP, written[".mcp.json"].decode("utf-8"))
    servers = mcp(project)["mcpServers"]
    assert isinstance(servers, dict)
    assert servers["postgres"] == json.loads(USER_MCP)["mcpServers"]["postgres"]
    assert servers["sessionwatch"]["args"] == [
        "claude-code",
        "mcp",
        "--db",
        "sqlite:////srv/shared/sessionwatch.db",
    ]


def test_installing_again_upgrades_an_earlier_install_to_every_event(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = tmp_path / "shop"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(PREVIOUS_INSTALL, encoding="utf-8")
    (project / ".mcp.json").write_bytes((EXAMPLE / ".mcp.json").read_bytes())

    assert install(capsys, project) == Outcome(
        0, "updated: .claude/settings.json\nunchanged: .mcp.json\n", ""
    )

    added = only_inserted(
        PREVIOUS_INSTALL, (project / ".claude" / "settings.json").read_text(encoding="utf-8")
    )
    assert '"Stop"' in added
    assert '"SessionEnd"' in added
    for event in EVENTS:
        assert [h["command"] for h in our_handlers(project, event)] == ["sessionwatch claude-code hook"]
    hooks = settings(project)["hooks"]
    assert isinstance(hooks, dict)
    assert hooks["UserPromptSubmit"][1] == json.loads(PREVIOUS_INSTALL)["hooks"]["UserPromptSubmit"][1]
    assert install(capsys, project).out == "unchanged: .claude/settings.json\nunchanged: .mcp.json\n"


def test_a_new_store_replaces_the_hook_where_it_is_and_nothing_else(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = user_project(tmp_path)
    assert install(capsys, project).code == 0
    before = (project / ".claude" / "settings.json").read_text(encoding="utf-8")
    assert install(capsys, project, "--db", "postgresql://app@db.internal:5432/watch").code == 0
    after = (project / ".claude" / "settings.json").read_text(encoding="utf-8")
    diff = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-"]
    assert len(diff) == 2 * len(EVENTS), diff  # one command line per event, out and in
    for event in EVENTS:
        assert [h["command"] for h in our_handlers(project, event)] == [
            "sessionwatch claude-code hook --db postgresql://app@db.internal:5432/watch"
        ]


def test_copies_of_the_hook_are_taken_out_down_to_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / ".claude").mkdir()
    ours = {"type": "command", "command": "/opt/venv/bin/sessionwatch claude-code hook"}
    user = {"type": "command", "command": "echo started"}
    original = {
        "hooks": {
            "SessionStart": [{"hooks": [ours, user]}, {"matcher": "startup", "hooks": [ours]}],
            "UserPromptSubmit": [{"hooks": [ours]}, {"hooks": [ours]}],
        }
    }
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(original, indent=2), encoding="utf-8")
    assert install(capsys, tmp_path).code == 0
    assert install(capsys, tmp_path).out == "unchanged: .claude/settings.json\nunchanged: .mcp.json\n"
    hooks = settings(tmp_path)["hooks"]
    assert hooks == {
        "SessionStart": [
            {"hooks": [{"type": "command", "command": "sessionwatch claude-code hook", "timeout": 10}, user]}
        ],
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "sessionwatch claude-code hook", "timeout": 10}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "sessionwatch claude-code hook", "timeout": 10}]}],
        "SessionEnd": [
            {"hooks": [{"type": "command", "command": "sessionwatch claude-code hook", "timeout": 10}]}
        ],
    }


@pytest.mark.parametrize(
    ("text", "style"),
    [
        pytest.param('{\r\n\t"model": "opus"\r\n}\r\n', "\r\n\t", id="crlf-tabs"),
        pytest.param('{"model": "opus", "hooks": {}}', None, id="one-line"),
        pytest.param("", None, id="empty-file"),
        pytest.param("{}", None, id="empty-object"),
    ],
)
def test_added_text_follows_the_files_style(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, style: str | None
) -> None:
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.json"
    path.write_bytes(text.encode("utf-8"))
    assert install(capsys, tmp_path).code == 0
    new = path.read_bytes().decode("utf-8")
    only_inserted(text, new)
    for event in EVENTS:
        assert len(our_handlers(tmp_path, event)) == 1
    if text.startswith('{"model"'):
        assert "\n" not in new  # a file of one line stays one line
    if style is not None:
        assert "\n" not in new.replace("\r\n", "")
        assert f'{style}"hooks": {{' in new
    assert install(capsys, tmp_path).out.startswith("unchanged: .claude/settings.json\n")


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        pytest.param(
            ".claude/settings.json", '{"hooks": {"SessionStart": [}', "not valid JSON", id="settings-broken"
        ),
        pytest.param(".claude/settings.json", '["not", "an", "object"]', "JSON object", id="settings-array"),
        pytest.param(".claude/settings.json", '{"hooks": []}', "'hooks' must be an object", id="hooks-list"),
        pytest.param(
            ".claude/settings.json",
            '{"hooks": {"UserPromptSubmit": {}}}',
            "must be a list",
            id="event-object",
        ),
        pytest.param(".claude/settings.json", '{"a": 1} {"b": 2}', "not valid JSON", id="two-documents"),
        pytest.param(".mcp.json", '{"mcpServers": {"x": }', "not valid JSON", id="mcp-broken"),
        pytest.param(
            ".mcp.json", '{"mcpServers": ["x"]}', "'mcpServers' must be an object", id="servers-list"
        ),
    ],
)
def test_a_file_that_is_not_a_json_object_stops_the_install_and_nothing_is_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, words: str
) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / name).write_text(text, encoding="utf-8")
    outcome = install(capsys, tmp_path)
    assert outcome.code == 2
    assert outcome.out == ""
    [line] = outcome.err.splitlines()
    assert line.startswith(f"sessionwatch: error: {name}: ")
    assert words in line
    assert "nothing was written" in line
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [name]
    assert (tmp_path / name).read_text(encoding="utf-8") == text


def test_a_file_that_is_not_utf8_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_bytes(b'{"mcpServers": {"\xff": {}}}')
    outcome = install(capsys, tmp_path)
    assert outcome.code == 2
    assert "sessionwatch: error: .mcp.json: not UTF-8 text; nothing was written" in outcome.err
    assert not (tmp_path / ".claude").exists()


def test_a_missing_project_and_a_bad_store_url_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    outcome = install(capsys, tmp_path / "nowhere")
    assert outcome.code == 2
    assert "--project" in outcome.err
    for db, words in (
        ("mysql://localhost/x", "unknown scheme"),
        ("memory://", "memory://"),
        ("state.db", "relative"),
        ("sqlite:///state.db", "relative"),
    ):
        outcome = install(capsys, tmp_path, "--db", db)
        assert outcome.code == 2
        [line] = outcome.err.splitlines()
        assert "--db" in line
        assert words in line
    assert list(tmp_path.iterdir()) == []


def test_the_program_option_names_the_executable_everywhere(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    program = "/opt/tools/my venv/bin/sessionwatch"
    assert install(capsys, tmp_path, "--program", program).code == 0
    [handler] = our_handlers(tmp_path, "SessionStart")
    assert isinstance(handler["command"], str)
    assert shlex.split(handler["command"]) == [program, "claude-code", "hook"]
    assert handler["command"] == hook_command(None, program)
    servers = mcp(tmp_path)["mcpServers"]
    assert isinstance(servers, dict)
    assert servers["sessionwatch"]["command"] == program


def test_the_files_keep_their_permissions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{}", encoding="utf-8")
    (tmp_path / ".mcp.json").chmod(0o640)
    assert install(capsys, tmp_path).code == 0
    assert (tmp_path / ".mcp.json").stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
