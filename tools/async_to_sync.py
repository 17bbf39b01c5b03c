"""Generate the sync façade from the asyncio one: `AsyncSessionWatch` is the one source of the API.

The generated modules are build outputs, not sources: git ignores them, and the build backend
(`tools/build_backend.py`) writes them before every build, so `pip install`, an editable install
(`make install`) and `pip wheel` all ship them. `python tools/async_to_sync.py --write` (or
`make generate`) rewrites them in the working tree after an edit of the source; without `--write`
it lists the stale ones and exits 1, and `test_generated_facade.py` runs that check, so a change to
the source that was not regenerated fails the suite.

The transform works on the AST: `async def` becomes `def`, `await x` becomes `x`, the names in
`NAMES` take their sync form, a union that becomes `X | X` keeps one `X`, and a block
`if True:  # ASYNC` keeps its `else:` side only (what differs by design: the lifecycle, how the
façade is built, how an upstream pass runs), and a name imported twice once renamed is imported
once. The output is `ast.unparse`'s, with the standard library alone, so that a build needs no
formatter and gives the same text everywhere.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository root: the folder the `sessionwatch` package maps to."""

NAMES = {
    "AsyncSessionWatch": "SessionWatch",
    "AsyncUpstream": "Upstream",
    "AsyncMonitorHandle": "MonitorHandle",
    "AsyncWaker": "Waker",
    "AsyncUpstreamProvider": "UpstreamProvider",
    "AsyncTranscripts": "Transcripts",
    "LoopScheduler": "CallerScheduler",
    "best_effort_async": "best_effort",
    "aclose": "close",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "sessionwatch.adapters.entry.aio": "sessionwatch.adapters.entry.watch",
    "sessionwatch.adapters.entry.aio_upstream": "sessionwatch.adapters.entry.watch_upstream",
    "sessionwatch.adapters.app.loop_scheduler": "sessionwatch.adapters.app.scheduler",
    "sessionwatch.adapters.upstream.aio_monitor": "sessionwatch.adapters.upstream.monitor",
}
"""Each asyncio name and its sync twin (identifiers, attributes, definitions, imported modules)."""


@dataclass(frozen=True)
class Target:
    """One generated module: where its source is, and the docstrings only the sync side has."""

    source: str
    output: str
    docstrings: dict[str, str]
    """The module's (key "") and each class's docstring, by the class's sync name."""
    names: tuple[tuple[str, str], ...] = ()
    """Names only this module renames, besides `NAMES`."""


TARGETS = (
    Target(
        source="adapters/entry/aio.py",
        output="adapters/entry/watch.py",
        docstrings={
            "": (
                "`SessionWatch`, the synchronous façade hosts program against.\n\n"
                "Each method names its use case (`adapters/app/`) and hands it to the caller's-thread"
                " scheduler:\nevery write is one transaction through group commit, its wakes are"
                " published after the commit, and\na record may be followed by a due prune. No rule"
                " lives here. Producers are best effort (they never\nraise: one log line, None); the"
                " strict API raises typed errors and writes nothing on error.\n"
            ),
            "SessionWatch": (
                "Session state awareness over one store. Thread-safe; close it (or use `with`) when"
                " done.\n\n    On a store shared by several processes (PostgreSQL), a `waker` is also"
                " called, from a listener\n    thread, for notices that other processes open, unless"
                " `cross_process_wakes=False`.\n    "
            ),
        },
    ),
    Target(
        source="adapters/entry/aio_upstream.py",
        output="adapters/entry/watch_upstream.py",
        docstrings={
            "": (
                "The upstream monitor of the sync façade: link adopted sessions, tick, run the monitor"
                " on a thread.\n\nA room of `SessionWatch` (its base class): the use cases of"
                " `adapters/app/upstream.py`, a pass\nrun on the caller's thread, a monitor on a thread"
                " of its own.\n"
            ),
            "Upstream": "The upstream methods of `SessionWatch`, over the core and scheduler it builds.",
        },
    ),
    Target(
        source="adapters/entry/aio_open.py",
        output="adapters/entry/watch_open.py",
        docstrings={
            "": (
                "`open()`: a `SessionWatch` on the store a URL names, its options checked first, its"
                " restart sweep run."
            ),
        },
        names=(("open", "open_watch"),),
    ),
)


def _sync_side(node: ast.stmt) -> list[ast.stmt]:
    """`if True:` marks what only the asyncio side has; its `else:` what only the sync side has."""
    if isinstance(node, ast.If) and isinstance(node.test, ast.Constant) and node.test.value is True:
        return node.orelse
    return [node]


def _union_members(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    return [node]


class AsyncToSync(ast.NodeTransformer):
    """The asyncio module's tree, rewritten into its sync twin."""

    def __init__(self, target: Target) -> None:
        self.docstrings = target.docstrings
        self.names = NAMES | dict(target.names)

    def _statements(self, body: list[ast.stmt]) -> list[ast.stmt]:
        kept: list[ast.stmt] = []
        for statement in body:
            for node in _sync_side(statement):
                visited = self.visit(node)
                if not isinstance(visited, ast.stmt):
                    raise TypeError(f"the sync form of a statement is not one: {ast.dump(visited)}")
                kept.append(visited)
        return kept

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and all(isinstance(item, ast.stmt) for item in value):
                setattr(node, field, self._statements(value))
        return super().generic_visit(node)

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self._redocument(node, "")
        return self.generic_visit(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self.names.get(node.name, node.name)
        self._redocument(node, node.name)
        return self.generic_visit(node)

    def _redocument(self, node: ast.Module | ast.ClassDef, name: str) -> None:
        if name in self.docstrings and node.body and isinstance(node.body[0], ast.Expr):
            node.body[0] = ast.Expr(ast.Constant(self.docstrings[name]))

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        fields = {field: getattr(node, field) for field in node._fields}
        function = ast.copy_location(ast.FunctionDef(**fields), node)
        return self.visit_FunctionDef(function)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self.names.get(node.name, node.name)
        return self.generic_visit(node)

    def visit(self, node: ast.AST) -> ast.AST:
        visited: ast.AST = super().visit(node)
        return visited

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return self.visit(node.value)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        return self.visit(ast.copy_location(ast.With(items=node.items, body=node.body), node))

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        fields = {field: getattr(node, field) for field in node._fields}
        return self.visit(ast.copy_location(ast.For(**fields), node))

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        node.attr = self.names.get(node.attr, node.attr)
        return self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        node.module = self.names.get(node.module or "", node.module)
        kept: dict[tuple[str, str | None], ast.alias] = {}
        for alias in node.names:
            alias.name = self.names.get(alias.name, alias.name)
            kept.setdefault((alias.name, alias.asname), alias)
        node.names = list(kept.values())
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        visited = self.generic_visit(node)
        if not (isinstance(visited, ast.BinOp) and isinstance(visited.op, ast.BitOr)):
            return visited
        members: dict[str, ast.expr] = {}
        for member in _union_members(visited):
            members.setdefault(ast.dump(member), member)
        first, *rest = members.values()
        for member in rest:
            first = ast.BinOp(first, ast.BitOr(), member)
        return first


def generate(target: Target, root: Path = ROOT) -> str:
    """The text of `target.output`, made from `target.source` under `root`."""
    source = ast.parse((root / target.source).read_text(encoding="utf-8"))
    tree = ast.fix_missing_locations(AsyncToSync(target).visit(source))
    header = (
        f"# Generated from {target.source} by tools/async_to_sync.py when the package is built"
        " (`make generate` after an edit): edit that.\n"
    )
    return header + ast.unparse(tree) + "\n"


def write(root: Path = ROOT) -> list[str]:
    """Write every generated module under `root` whose text differs; the ones written."""
    written = []
    for target in TARGETS:
        output = root / target.output
        text = generate(target, root)
        if not output.exists() or output.read_text(encoding="utf-8") != text:
            output.write_text(text, encoding="utf-8")
            written.append(target.output)
    return written


def stale(root: Path = ROOT) -> list[str]:
    """The generated modules under `root` that differ from what their source gives now."""
    return [
        target.output
        for target in TARGETS
        if not (root / target.output).exists()
        or (root / target.output).read_text(encoding="utf-8") != generate(target, root)
    ]


def main(arguments: list[str]) -> int:
    """`--write`: write the stale modules; no arguments: name them on stderr, exit 1 if any."""
    if arguments == ["--write"]:
        write()
        return 0
    out_of_date = stale()
    for output in out_of_date:
        sys.stderr.write(f"{output} is stale: run `make generate`\n")
    return 1 if out_of_date else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
