"""MkDocs hook: the CLI reference page is generated from the real `sessionwatch` argument parser.

`docs/reference/cli.md` holds the marker `<!-- cli-reference -->`; this hook replaces it, at build
time, with the help of the top-level parser and of every subcommand, so the page cannot drift from
the parser.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

MARKER = "<!-- cli-reference -->"
WIDTH = "100"
"""Columns argparse wraps the help at, so the page is the same on every machine."""


def on_page_markdown(markdown: str, **_: Any) -> str:  # noqa: ANN401 - mkdocs passes page, config, files
    """Replace the marker with the generated reference."""
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())


def cli_reference() -> str:
    """The help of `sessionwatch` and of each of its subcommands, as Markdown."""
    from sessionwatch.cli.cli import build_parser  # noqa: PLC0415 - only when the page builds

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parser = build_parser()
        parts = ["## sessionwatch", "", _fenced(parser.format_help())]
        for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers here
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                for name, sub in action.choices.items():
                    parts += _sections(f"sessionwatch {name}", sub)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved
    return "\n".join(parts)


def _sections(name: str, parser: argparse.ArgumentParser) -> list[str]:
    """The help of one subcommand, then of each of its own subcommands (`claude-code hook`)."""
    parts = [f"## {name}", "", _fenced(parser.format_help())]
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers here
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for child, sub in action.choices.items():
                parts += _sections(f"{name} {child}", sub)
    return parts


def _fenced(text: str) -> str:
    return f"```text\n{text.rstrip()}\n```\n"
