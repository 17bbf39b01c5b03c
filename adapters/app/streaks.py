"""The upstream monitor's missing streaks: process state, never stored (ADR-0010).

A restart starts every streak afresh, so an upstream is declared missing later, never wrongly.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from sessionwatch.domain.keys import SessionIdentity
from sessionwatch.domain.upstream import UpstreamLinkState


@dataclass
class MissingStreaks:
    """Consecutive misses of each session's current link version (thread-safe).

    One entry per session: a streak counted for another link version reads as 0, so a re-link
    starts a fresh streak, while a pass still judging the old version sees that version's streak
    (and its write then finds the link changed).
    """

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _misses: dict[SessionIdentity, tuple[int, int]] = field(default_factory=dict)

    def get(self, link: UpstreamLinkState) -> int:
        """The link version's current streak."""
        with self._lock:
            version, misses = self._misses.get(link.identity, (link.link_version, 0))
            return misses if version == link.link_version else 0

    def set(self, link: UpstreamLinkState, misses: int) -> None:
        """Record the link version's streak."""
        with self._lock:
            self._misses[link.identity] = (link.link_version, misses)

    def reset(self, link: UpstreamLinkState) -> None:
        """Start the link version's streak afresh."""
        with self._lock:
            if self._misses.get(link.identity, (None, 0))[0] == link.link_version:
                del self._misses[link.identity]

    def forget(self, identity: SessionIdentity) -> None:
        """Drop the session's streak (its link is gone)."""
        with self._lock:
            self._misses.pop(identity, None)
