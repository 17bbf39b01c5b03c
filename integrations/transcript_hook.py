"""A host's hook follows its session's own transcript: what a person typed is read, never guessed.

Host-neutral (Codex's hook uses it; any host whose hook input names the session's transcript can).
A hook's prompt text alone cannot say who wrote it, and most of a person's acts run no prompt
hook at all (a shell command, a slash command that runs locally, a compaction, a typed answer to
the agent's question). The transcript says all of it, and the transcript provider already decides
it with the host's rule. So each hook run links the session to its transcript once (an upstream
link, from the file's start) and follows it from the position the store keeps, with the same
provider the upstream monitor would use (`SessionWatch.follow_upstream`): every turn is recorded
once, when the next hook runs after the host wrote it, into a session someone watches; a session
nobody watches has its position advanced and nothing kept, as a prompt hook keeps nothing then.
The link is the same one a monitor follows, so a hook and a monitor never count a turn twice.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass

from sessionwatch.adapters.app.reports import TickReport
from sessionwatch.adapters.entry.watch import SessionWatch
from sessionwatch.domain.ports import UpstreamProvider

TRANSCRIPT_KIND = "transcript"
"""The upstream kind of a link a hook made to its session's transcript file."""


@dataclass(frozen=True)
class Transcript:
    """A session's own transcript as its host names it: the catalog (host), the thread, the file."""

    catalog_id: str
    thread_id: str
    path: str


def follow_transcript(
    watch: SessionWatch, key: str, transcript: Transcript | None, provider: UpstreamProvider
) -> TickReport:
    """Link `key` to its transcript (when not linked to that file yet), then follow the link now.

    `transcript` None (the hook's input named no transcript of the session's own) follows the link
    the session already has, if any.
    """
    if transcript is not None:
        link = watch.upstream_link(key)
        if link is None or link.upstream_ref != transcript.path:
            watch.link_upstream(
                key,
                catalog_id=transcript.catalog_id,
                host_id=platform.node() or "localhost",
                thread_id=transcript.thread_id,
                upstream_kind=TRANSCRIPT_KIND,
                upstream_ref=transcript.path,
                marker=None,  # the file's start: the session began with the hook installed
            )
        return watch.follow_upstream(key, {transcript.catalog_id: provider})
    link = watch.upstream_link(key)
    if link is None:
        return TickReport()
    return watch.follow_upstream(key, {link.catalog_id: provider})
