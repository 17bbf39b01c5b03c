"""The command line's exit codes and name.

A module that imports nothing: the dispatcher needs them before it loads anything else (ADR-0067).
"""

PROG = "sessionwatch"
EXIT_OK = 0
EXIT_NO = 1  # the command ran and answered "no": a refused watch, differing read models
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a closed pipe
