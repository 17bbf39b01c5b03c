"""`import`: `sessionwatch import` of a big exported history, against a snapshot of a given commit.

`python bench/import_history.py [--against COMMIT] [--signals N] [--history FILE] [--rounds R]`
exports a history with `bench/history.py` (N signals, 1,000,000 by default: the soak's mix, nothing
pruned, about one stored event per signal), then imports it with the command line, `python -m
sessionwatch import FILE --db sqlite:///...`, each time into a fresh store, alternating two sides:

- the *snapshot*: COMMIT's tree (`git archive COMMIT`) in a temporary directory, imported first
  through `PYTHONPATH` (the package is the repository root), with this virtualenv's interpreter and
  dependencies; shown in the `peer-median` column;
- the *working tree*: the `sessionwatch` this script itself imports (the editable install, or
  whatever `PYTHONPATH` gives it); shown in the `sw-median` column.

Each import runs in a child process, timed from its start to its exit (the interpreter's start and
the check of the whole file before the store opens included: what a person waits for), after an
`os.sync()`. A round is one import of each side, the snapshot first; each side's figure is the
median over the rounds of events per second (the events the import reports / the seconds). The
child's peak RSS is the larger of its own `VmHWM` and the `ru_maxrss` of the process it waited for
(a big import checks its lines in a second process), read by the child itself as it ends (`CHILD`):
not the `ru_maxrss` `wait4` reports here, which on Linux includes this script's own peak, inherited
at the child's start (`run.py` after the other workloads: about 200 MB). Every import must succeed
and report the same event count as the file holds.

Lines: `import` (events/s, snapshot vs working tree; target >= 2x when measured against
`BASELINE`, today's main before the batched import, else context) and `import-rss` (the working
tree's largest peak RSS over the rounds; target < 200 MB). `--quick` imports 60,000 signals, 3
rounds (about 30 s, the history's export included); the full run 1,000,000 signals, 1 round (a few
minutes). `--history FILE` reuses an export (made by `bench/history.py`) instead of building one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # `python bench/import_history.py` finds `bench.*`

from bench.harness import (
    BENCH_DIR,
    CONTEXT,
    SNAPSHOT_COMMIT,
    Mode,
    Result,
    at_least,
    print_table,
    settle,
    sw_below,
    sw_only_result,
    throughput_result,
    write_results,
)

NAME = "import"
BASELINE = "e2fc7ba"
"""main before the batched import (issue 30): the commit the `>= 2x` target is measured against."""
TARGET = at_least(2.0)
RSS_TARGET = sw_below(200, "MB")
FULL_SIGNALS = 1_000_000
QUICK_SIGNALS = 60_000
"""Enough for a file past the size from which the import checks its lines in a second process."""
QUICK_ROUNDS = 3
FULL_ROUNDS = 1
MB = 1024 * 1024
REPOSITORY = BENCH_DIR.parent


@dataclass(frozen=True)
class Import:
    """One timed import: seconds from start to exit, the events it reported, the child's peak RSS.

    `cpu_seconds`: the CPU time (user and system) of the import and of the process it waited for,
    which a machine busy with other work does not inflate as it does the wall time.
    """

    seconds: float
    events: int
    peak_rss_bytes: int
    cpu_seconds: float

    @property
    def rate(self) -> float:
        """Events per second."""
        return self.events / self.seconds


def peak_rss_bytes() -> int:
    """This process's peak resident set (`VmHWM`)."""
    with Path("/proc/self/status").open(encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("/proc/self/status has no VmHWM")


def snapshot(commit: str, into: Path) -> str:
    """`git archive` `commit` into `into/sessionwatch`; its full hash (`SystemExit` if git cannot)."""
    try:
        full = subprocess.run(  # noqa: S603 - git on a commit the user named
            ["git", "rev-parse", "--verify", f"{commit}^{{commit}}"],  # noqa: S607 - git from PATH
            cwd=REPOSITORY,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SystemExit(f"--against: no commit {commit!r} in {REPOSITORY}: {exc}") from None
    package = into / "sessionwatch"
    package.mkdir(parents=True)
    archive = subprocess.run(  # noqa: S603 - git archive of a verified commit
        ["git", "archive", full],  # noqa: S607 - git from PATH
        cwd=REPOSITORY,
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(  # noqa: S603 - tar of git's own archive
        ["tar", "-x", "-C", str(package)],  # noqa: S607 - tar from PATH
        input=archive,
        check=True,
    )
    generator = package / "tools" / "async_to_sync.py"
    if generator.is_file():  # a commit whose sync façade a build writes (ADR-0073): write it as one does
        subprocess.run([sys.executable, str(generator), "--write"], check=True)  # noqa: S603
    (package / SNAPSHOT_COMMIT).write_text(full[:12] + "\n", encoding="utf-8")
    return full


def side_env(pythonpath: Path | None) -> dict[str, str]:
    """The environment of one side's child: the snapshot first on `PYTHONPATH`, or this script's own."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    return env


def imported_from(env: dict[str, str]) -> str:
    """Where a child with `env` imports `sessionwatch` from (checked, so a side measures what it says)."""
    out = subprocess.run(
        [sys.executable, "-c", "import sessionwatch; print(sessionwatch.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return str(Path(out.stdout.strip()).resolve().parent)


def build_history(path: Path, signals: int) -> None:
    """Export a history of `signals` signals to `path` with `bench/history.py`, in a child process."""
    subprocess.run(  # noqa: S603 - this interpreter, the bench's own script
        [sys.executable, str(BENCH_DIR / "history.py"), str(path), "--signals", str(signals)],
        check=True,
    )


def event_count(path: Path) -> int:
    """The event lines of an export: every line but the header and the trailer."""
    with path.open("rb") as lines:
        return sum(1 for _ in lines) - 2


CHILD = """
import resource, runpy, sys
sys.argv = ["sessionwatch", "import", *sys.argv[1:]]
try:
    runpy.run_module("sessionwatch", run_name="__main__", alter_sys=True)
    code = 0
except SystemExit as done:
    code = done.code
with open("/proc/self/status", encoding="ascii") as status:
    own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
waited = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"PEAK_RSS_KB {max(own, waited)}", file=sys.stderr)
used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
print(f"CPU_SECONDS {sum(u.ru_utime + u.ru_stime for u in used)}", file=sys.stderr)
sys.exit(code)
"""
"""`python -m sessionwatch import ...` run by `runpy`, then its peak RSS on standard error: its own
`VmHWM` (its address space's, so nothing inherited from this script counts) or, if higher, that of
the process it waited for (the checking process, whose figure can include at most what it
inherited from the import, itself counted)."""


def import_once(history: Path, env: dict[str, str], scratch: Path) -> Import:
    """Import `history` into a fresh SQLite store with the command line; time it, read its peak RSS."""
    store = scratch / "imported.db"
    url = f"sqlite:///{store}"
    command = [sys.executable, "-c", CHILD, str(history), "--db", url, "--json"]
    settle()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err)  # noqa: S603 - ourselves
        _, status, _ = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        errors = err.read().decode(errors="replace")
        if process.returncode != 0:
            raise RuntimeError(f"import failed ({process.returncode}): {errors}")
        report = json.loads(out.read())
    for leftover in scratch.iterdir():
        leftover.unlink()
    peak = next(int(line.split()[1]) for line in errors.splitlines() if line.startswith("PEAK_RSS_KB "))
    cpu = next(float(line.split()[1]) for line in errors.splitlines() if line.startswith("CPU_SECONDS "))
    return Import(seconds, int(report["events"]), peak * 1024, cpu)


def measure(
    *, against: str, signals: int, rounds: int, history: Path | None = None
) -> tuple[list[Import], list[Import], dict[str, object]]:
    """Rounds of (snapshot import, working-tree import); both sides' imports and what was measured."""
    with tempfile.TemporaryDirectory(prefix="sw-import-") as temp:
        root = Path(temp)
        commit = snapshot(against, root / "snapshot")
        if history is None:
            history = root / "history.jsonl"
            build_history(history, signals)
        events = event_count(history)
        theirs, ours = side_env(root / "snapshot"), side_env(None)
        where = {"snapshot": imported_from(theirs), "working_tree": imported_from(ours)}
        if where["snapshot"] == where["working_tree"]:
            raise RuntimeError(f"both sides import sessionwatch from {where['snapshot']}")
        scratch = root / "store"
        scratch.mkdir()
        snapshot_runs: list[Import] = []
        tree_runs: list[Import] = []
        for _ in range(rounds):
            for env, runs in ((theirs, snapshot_runs), (ours, tree_runs)):
                done = import_once(history, env, scratch)
                if done.events != events:
                    raise RuntimeError(f"an import reported {done.events} events; the file holds {events}")
                runs.append(done)
        extra: dict[str, object] = {
            "against": commit,
            "events": events,
            "history_bytes": history.stat().st_size,
            "imported_from": where,
            "bench_peak_rss_mb": peak_rss_bytes() / MB,
        }
    return snapshot_runs, tree_runs, extra


def results(snapshot_runs: list[Import], tree_runs: list[Import], extra: dict[str, object]) -> list[Result]:
    """The `import` line (events/s, snapshot vs working tree) and the `import-rss` line."""
    events = int(str(extra["events"]))
    setting = f"n={events // 1000}k" if events < 1_000_000 else f"n={events / 1e6:.1f}M"
    extra = {
        **extra,
        "snapshot_seconds": [run.seconds for run in snapshot_runs],
        "tree_seconds": [run.seconds for run in tree_runs],
        "snapshot_peak_rss_mb": [run.peak_rss_bytes / MB for run in snapshot_runs],
        "tree_peak_rss_mb": [run.peak_rss_bytes / MB for run in tree_runs],
        "snapshot_cpu_seconds": [run.cpu_seconds for run in snapshot_runs],
        "tree_cpu_seconds": [run.cpu_seconds for run in tree_runs],
    }
    baseline = str(extra["against"]).startswith(BASELINE)
    rates = ([run.rate for run in snapshot_runs], [run.rate for run in tree_runs])
    peak = max(run.peak_rss_bytes for run in tree_runs) / MB
    return [
        throughput_result(
            NAME, setting, "events/s", rates, target=TARGET if baseline else CONTEXT, extra=extra
        ),
        sw_only_result(
            "import-rss",
            setting,
            "MB",
            peak,
            target=RSS_TARGET,
            extra={"snapshot_peak_rss_mb": max(run.peak_rss_bytes for run in snapshot_runs) / MB},
        ),
    ]


def run(mode: Mode) -> list[Result]:
    """`run.py`'s entry: against `BASELINE`, scaled with `--quick`; no lines when git has no such commit."""
    quick = mode.name == "quick"
    try:
        measured = measure(
            against=BASELINE,
            signals=QUICK_SIGNALS if quick else FULL_SIGNALS,
            rounds=QUICK_ROUNDS if quick else FULL_ROUNDS,
        )
    except SystemExit as exc:  # not a git checkout, or a shallow one: say why, as pg_record does
        print(f"import: skipped: {exc}", flush=True)
        return []
    return results(*measured)


def main() -> None:
    """Parse the options, measure, print the table and write `bench/results/import.json`."""
    parser = argparse.ArgumentParser(description=(__doc__ or NAME).splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_SIGNALS:,} signals, {QUICK_ROUNDS} rounds"
    )
    parser.add_argument(
        "--against", default=BASELINE, help=f"the commit to compare with (default {BASELINE})"
    )
    parser.add_argument("--signals", type=int, help="signals in the history built (default 1,000,000)")
    parser.add_argument("--history", type=Path, help="import this export instead of building one")
    parser.add_argument("--rounds", type=int, help="rounds of (snapshot import, working-tree import)")
    args = parser.parse_args()
    signals = args.signals or (QUICK_SIGNALS if args.quick else FULL_SIGNALS)
    rounds = args.rounds or (QUICK_ROUNDS if args.quick else FULL_ROUNDS)
    snapshot_runs, tree_runs, extra = measure(
        against=args.against, signals=signals, rounds=rounds, history=args.history
    )
    lines = results(snapshot_runs, tree_runs, extra)
    print_table(lines)
    print(
        f"against {str(extra['against'])[:12]}: snapshot {[f'{r.seconds:.1f} s' for r in snapshot_runs]},"
        f" working tree {[f'{r.seconds:.1f} s' for r in tree_runs]}; peak RSS (MB) snapshot"
        f" {[round(r.peak_rss_bytes / MB, 1) for r in snapshot_runs]}, working tree"
        f" {[round(r.peak_rss_bytes / MB, 1) for r in tree_runs]}"
    )
    print(
        f"CPU time (both processes): snapshot {[f'{r.cpu_seconds:.1f} s' for r in snapshot_runs]},"
        f" working tree {[f'{r.cpu_seconds:.1f} s' for r in tree_runs]}; each pair's wall-time ratio"
        f" {[f'{s.seconds / t.seconds:.2f}x' for s, t in zip(snapshot_runs, tree_runs, strict=True)]},"
        f" CPU-time ratio"
        f" {[f'{s.cpu_seconds / t.cpu_seconds:.2f}x' for s, t in zip(snapshot_runs, tree_runs, strict=True)]}"
    )
    mode = Mode(name="quick" if args.quick else "full", rounds=rounds, seconds=0.0, warmup=0.0)
    write_results(NAME, lines, mode)


if __name__ == "__main__":
    main()
