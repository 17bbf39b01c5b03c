"""Every stored event type of the core: the Session stream's and the WatchCursor streams'."""

from __future__ import annotations

from typing import TypeAlias

from sessionwatch.domain.session import SessionEvent
from sessionwatch.domain.watch_cursor import CursorEvent

DomainEvent: TypeAlias = SessionEvent | CursorEvent
