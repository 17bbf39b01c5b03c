"""The Claude Code hook reads its session's transcript, and follows a session across `/clear`.

Shell code over the façade. Each Claude Code session the hook meets gets an upstream link in the
catalog `claude-code`: host id this machine's name, thread id Claude Code's session id, kind
`transcript`, and the transcript path the hook input names; the link's agent (the key's) is the
project. At every hook event the hook reads the
transcript on from the link's marker with the transcript provider's own reader, so the hook and
the provider count with one rule, and a turn is recorded once, by whichever reads it first (the
marker moves in the transaction that records the turn).

`/clear` ends the session (`SessionEnd`, reason `clear`) and starts another with a new id and a new
transcript (`SessionStart`, source `clear`); both inputs carry the same `prompt_id`, and nothing
else links them. The ending session's link is parked (kind `cleared`, thread id that prompt id)
until the new one claims it: the new session then continues under the old key, its registry entry
naming the new id and its link the new transcript, so its watchers, its notices and its MCP server
(which keeps the old id) all keep one key. A later hook input with the new id finds that key by the
link that follows the new thread.
"""

from __future__ import annotations

import platform
import time
from pathlib import Path

from pydantic import JsonValue

from sessionwatch.adapters.entry.watch import SessionWatch
from sessionwatch.adapters.upstream.transcripts import JsonlTranscriptProvider, marker_at_end
from sessionwatch.projections.models import UpstreamLink

CATALOG = "claude-code"
"""The catalog of the hook's links (and of the turns it records: `human message via claude-code`)."""

FOLLOWING = "transcript"
"""The kind of a link that follows a session's transcript."""

CLEARING = "cleared"
"""The kind of a link `/clear` parked for the session that continues it (thread id: the prompt id)."""

SCAN_CAP = 16 * 1024 * 1024
"""Bytes one read takes: a pasted image makes a line of a few MiB, which a smaller cap would block on."""

SCANS = 16
"""At most this many reads per hook run (a long turn's transcript is read in a few)."""

SETTLE_S = 1.0
"""At `SessionEnd`, how long the hook waits at most for Claude Code's last transcript lines."""

QUIET = 0.25
"""Seconds without growth after which the transcript is taken as written (Claude Code writes every 0.1 s)."""

STARTING_SOURCES = frozenset({"startup", "clear"})
"""`SessionStart` sources whose transcript is new: read from its first byte."""


def follows(link: UpstreamLink, agent_id: str, session_id: str) -> bool:
    """Whether the link follows the transcript of Claude Code session `session_id` of this project."""
    return (link.catalog_id, link.agent_id, link.upstream_kind, link.thread_id) == (
        CATALOG,
        agent_id,
        FOLLOWING,
        session_id,
    )


def awaits_continuation(link: UpstreamLink, agent_id: str, prompt_id: str) -> bool:
    """Whether the link was parked by the `/clear` whose prompt id is `prompt_id`, in this project."""
    return (link.catalog_id, link.agent_id, link.upstream_kind, link.thread_id) == (
        CATALOG,
        agent_id,
        CLEARING,
        prompt_id,
    )


def reads_from_start(source: object) -> bool:
    """Whether a session starting from `source` reads its transcript from the first byte."""
    return source in STARTING_SOURCES


def following_key(watch: SessionWatch, agent_id: str, session_id: str) -> str | None:
    """The key of the session whose link follows `session_id`'s transcript (one `/clear` continued)."""
    return next(
        (
            link.session_key
            for link in watch.upstream_links(catalog_id=CATALOG)
            if follows(link, agent_id, session_id)
        ),
        None,
    )


def continued_key(watch: SessionWatch, agent_id: str, prompt_id: str) -> str | None:
    """The key of the session the `/clear` with `prompt_id` ended, waiting for its continuation."""
    return next(
        (
            link.session_key
            for link in watch.upstream_links(catalog_id=CATALOG)
            if awaits_continuation(link, agent_id, prompt_id)
        ),
        None,
    )


def link_transcript(
    watch: SessionWatch, key: str, agent_id: str, session_id: str, transcript: Path, *, from_start: bool
) -> None:
    """Have the session's link follow this transcript (kept as it is when it already does).

    A new link starts at the transcript's first byte (`from_start`) or at its current end, so what a
    session wrote before the hook first met it (a resumed conversation) is never counted again.
    """
    current = watch.upstream_link(key)
    if (
        current is not None
        and follows(current, agent_id, session_id)
        and current.upstream_ref == str(transcript)
    ):
        return
    watch.link_upstream(
        key,
        catalog_id=CATALOG,
        host_id=platform.node() or "localhost",
        thread_id=session_id,
        upstream_kind=FOLLOWING,
        upstream_ref=str(transcript),
        marker={"offset": 0} if from_start else _at_end(transcript),
    )


def park_for_continuation(watch: SessionWatch, key: str, link: UpstreamLink, prompt_id: str) -> None:
    """Park the session's link for the session `/clear` starts next (the marker stays where it was)."""
    watch.link_upstream(
        key,
        catalog_id=CATALOG,
        host_id=link.host_id,
        thread_id=prompt_id,
        upstream_kind=CLEARING,
        upstream_ref=link.upstream_ref,
        marker=link.marker,
    )


def read_transcript(watch: SessionWatch, key: str, *, settle: float = 0.0) -> None:
    """Read the session's transcript on from its marker, recording the human turns found there.

    With `settle` (seconds), read again while the transcript still grows, until it stayed unchanged
    for `QUIET` seconds or `settle` passed: Claude Code writes its last lines (an `/exit`, the turn a
    `/clear` ends) while its `SessionEnd` hooks already run, a batch every tenth of a second.
    """
    provider = JsonlTranscriptProvider.claude_code(scan_cap=SCAN_CAP)
    _read_on(watch, key, provider)
    link = watch.upstream_link(key)
    if settle <= 0 or link is None or not isinstance(link.upstream_ref, str):
        return
    deadline = time.monotonic() + settle
    size = _size(link.upstream_ref)
    while time.monotonic() < deadline:
        time.sleep(QUIET)
        grown = _size(link.upstream_ref)
        if grown == size:
            return
        size = grown
        _read_on(watch, key, provider)


def _read_on(watch: SessionWatch, key: str, provider: JsonlTranscriptProvider) -> None:
    for _ in range(SCANS):
        if not watch.follow_upstream(key, {CATALOG: provider}).advanced:
            return


def _size(path: str) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return -1


def _at_end(transcript: Path) -> dict[str, JsonValue]:
    try:
        return marker_at_end(transcript)
    except FileNotFoundError:  # Claude Code writes the file with the session's first lines
        return {"offset": 0}
