"""Façades and entry points: `SessionWatch`, the CLI and the demo."""
