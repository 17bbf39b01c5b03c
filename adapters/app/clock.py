"""The system clock adapter for the `Clock` port."""

from __future__ import annotations

from datetime import UTC, datetime


class SystemClock:
    """Reads the local UTC clock."""

    def now(self) -> datetime:
        """The current time, aware UTC."""
        return datetime.now(UTC)
