"""Run the real-host scenarios and print the results table: `python tests/hosts/report.py [options]`.

Options: `--only NAME...` (some scenarios), `--host claude-code|codex`, `--workers N` (scenarios at
once), `--keep DIR` (run folders go there and stay; default a temporary folder, removed), and
`--capture` (write the regression fixtures of tests/data/hosts/ from this run). Exits 1 when a run
broke (the table says which).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # `hosts` lives in tests/

from hosts import install
from hosts.claude_scenarios import SCENARIOS as CLAUDE_CODE
from hosts.codex_scenarios import SCENARIOS as CODEX
from hosts.fixtures import capture
from hosts.runner import parallel_runs, run_all
from hosts.scenario import Outcome, Scenario, table


def main(argv: list[str] | None = None) -> int:
    """Run, print, optionally capture."""
    parser = argparse.ArgumentParser(prog="report.py", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", default=[])
    parser.add_argument("--host", choices=["claude-code", "codex"])
    parser.add_argument("--workers", type=int, default=parallel_runs())
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--capture", action="store_true")
    args = parser.parse_args(argv)
    chosen = [
        s
        for s in (*CLAUDE_CODE, *CODEX)
        if (not args.only or s.name in args.only) and (args.host is None or s.host == args.host)
    ]
    unknown = set(args.only) - {s.name for s in chosen}
    if unknown:
        parser.error(f"--only: no scenario named {', '.join(sorted(unknown))}")
    for pin in install.PINS:
        install.ensure(pin)
    started = time.monotonic()
    if args.keep:
        outcomes = run_all(chosen, args.keep, workers=args.workers)
        _print(outcomes, chosen, time.monotonic() - started, capturing=args.capture)
    else:
        with tempfile.TemporaryDirectory(prefix="sessionwatch-hosts-") as base:
            outcomes = run_all(chosen, Path(base), workers=args.workers)
            _print(outcomes, chosen, time.monotonic() - started, capturing=args.capture)
    return 1 if any(outcome.error for outcome in outcomes) else 0


def _print(outcomes: list[Outcome], chosen: list[Scenario], seconds: float, *, capturing: bool) -> None:
    by_name = {s.name: s for s in chosen}
    for host, pin in (("claude-code", install.CLAUDE_CODE), ("codex", install.CODEX)):
        rows = [outcome for outcome in outcomes if outcome.host == host]
        if rows:
            print(f"\n{pin.package} {pin.version}\n")
            print(table(rows, by_name))
    for outcome in outcomes:
        if outcome.error:
            print(f"\n{outcome.scenario} broke:\n{outcome.error}", file=sys.stderr)
        elif capturing:
            print(f"captured {capture(outcome)}")
    print(f"\n{len(outcomes)} scenarios in {seconds:.0f}s")


if __name__ == "__main__":
    sys.exit(main())
