"""The command line's exit codes, its name, and how each command uses its store.

A module of constants, on the standard library's `enum` alone: the dispatcher and the parser need
them before anything else is loaded (ADR-0067).
"""

from __future__ import annotations

from enum import Enum

PROG = "sessionwatch"
EXIT_OK = 0
EXIT_NO = 1  # the command ran and answered "no": a refused watch, differing read models
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a closed pipe

DEMO_PATH = "sessionwatch-demo.db"
"""The demo's own file, in the working directory; deleted and recreated by every default run."""


class StoreUse(Enum):
    """How a command uses the store `--db` names."""

    DEMO = "demo"  # the demo's own file (which it resets), else like CREATE for the --db it is given
    READ = "read"  # an existing sessionwatch store only: it reads, or changes what the store holds
    CREATE = "create"  # an existing store, or a new one in a missing or 0-byte file
    OWN = "own"  # the command checks its store itself (the Claude Code hook must never fail)
