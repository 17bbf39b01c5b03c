"""The sync façade is generated from the asyncio one; a stale generated module fails the suite.

`AsyncSessionWatch` (aio.py, aio_upstream.py, aio_open.py) is the one declaration of the public API;
`tools/async_to_sync.py` writes watch.py, watch_upstream.py and watch_open.py from it at every build
(ADR-0069, ADR-0073): git ignores them, so this check is what keeps a working tree honest.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from async_to_sync import ROOT, TARGETS, AsyncToSync, Target, stale


def test_every_generated_module_is_what_its_source_gives_now() -> None:
    assert stale() == [], "run `make generate` (python tools/async_to_sync.py --write)"


def _copy(root: Path) -> None:
    for target in TARGETS:
        for name in (target.source, target.output):
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, root / name)


def test_an_edit_of_the_async_source_not_regenerated_is_caught(tmp_path: Path) -> None:
    _copy(tmp_path)
    assert stale(tmp_path) == []
    source = tmp_path / "adapters" / "entry" / "aio.py"
    text = source.read_text(encoding="utf-8")
    edited = text.replace(
        "    async def drain(self, watcher_key: str) -> list[Notice]:",
        "    async def drain(self, watcher_key: str, *, limit: int = 0) -> list[Notice]:",
    )
    assert edited != text
    source.write_text(edited, encoding="utf-8")
    assert stale(tmp_path) == ["adapters/entry/watch.py"]


def test_a_generated_module_edited_by_hand_is_caught(tmp_path: Path) -> None:
    _copy(tmp_path)
    output = tmp_path / "adapters" / "entry" / "watch_upstream.py"
    output.write_text(output.read_text(encoding="utf-8").replace("agent_id", "agent"), encoding="utf-8")
    assert stale(tmp_path) == ["adapters/entry/watch_upstream.py"]


ASYNC_SOURCE = '''
class AsyncThing(AsyncUpstream):
    """Async doc."""

    if True:  # ASYNC
        async def aclose(self) -> None:
            await self._scheduler.aclose()
    else:
        def close(self) -> None:
            self._core.close()

    async def tick(self, p: Mapping[str, UpstreamProvider | AsyncUpstreamProvider]) -> AsyncMonitorHandle:
        """Shared doc."""
        return await best_effort_async(self._scheduler, p)
'''

SYNC_TWIN = '''
class SessionWatch(Upstream):
    """Sync doc."""

    def close(self) -> None:
        self._core.close()

    def tick(self, p: Mapping[str, UpstreamProvider]) -> MonitorHandle:
        """Shared doc."""
        return best_effort(self._scheduler, p)
'''


def test_the_transform_keeps_the_sync_side_and_drops_async_and_await() -> None:
    target = Target(
        source="",
        output="",
        docstrings={"SessionWatch": "Sync doc."},
        names=(("AsyncThing", "SessionWatch"),),
    )
    tree = AsyncToSync(target).visit(ast.parse(ASYNC_SOURCE))
    assert ast.unparse(tree) == ast.unparse(ast.parse(SYNC_TWIN))
