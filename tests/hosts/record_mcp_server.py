"""A stdio MCP server that records what its host started it with: `python record_mcp_server.py OUT.jsonl`.

On start it appends one JSON line to OUT.jsonl: the host's own environment variables (`CLAUDE_*`,
`CODEX_*`, no secrets), the working directory and the arguments. Then it serves one tool, `ping`,
until the host closes stdin, so the host sees a healthy server. Uses the `mcp` SDK of the dev extra.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer

_PREFIXES = ("CLAUDE", "CODEX")
_SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD")


def _record(out: Path) -> None:
    environ = {
        name: value
        for name, value in sorted(os.environ.items())
        if name.startswith(_PREFIXES) and not any(word in name for word in _SECRET_WORDS)
    }
    entry = {"env": environ, "names": sorted(os.environ), "cwd": str(Path.cwd()), "argv": sys.argv[2:]}
    with out.open("a", encoding="utf-8") as file:
        file.write(json.dumps(entry) + "\n")


def main() -> None:
    """Record the start, then serve `ping` over stdio."""
    _record(Path(sys.argv[1]))
    server = MCPServer("recorder")

    @server.tool()
    def ping() -> str:
        """Answer pong."""
        return "pong"

    anyio.run(server.run_stdio_async)


if __name__ == "__main__":
    main()
