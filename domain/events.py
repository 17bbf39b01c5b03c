"""Every stored event type of the core: Session, WatchCursor, UpstreamLink, Digest streams, the store's."""

from __future__ import annotations

from typing import TypeAlias

from sessionwatch.domain.digest import DigestEvent
from sessionwatch.domain.retention import SignalsPruned
from sessionwatch.domain.session import SessionEvent
from sessionwatch.domain.upstream import LinkEvent
from sessionwatch.domain.watch_cursor import CursorEvent, NoticesSwept

DomainEvent: TypeAlias = SessionEvent | CursorEvent | NoticesSwept | SignalsPruned | LinkEvent | DigestEvent
