"""A TCP proxy on 127.0.0.1 that a test can freeze: it stops forwarding but keeps every socket open.

A frozen proxy is what a stalled middlebox, pooler or half-dead host looks like to a client: the
kernel still acknowledges what the client sends (so TCP keepalives and `tcp_user_timeout` see a
live peer), but no answer ever comes back. Connections made while it is frozen are accepted and
frozen too. `thaw()` forwards again whatever waited; `close()` closes every socket.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from types import TracebackType
from typing import Self

_POLL_S = 0.02


class FreezableProxy:
    """Forwards 127.0.0.1:`port` to `target`, one pair of threads per connection, until closed."""

    def __init__(self, target: tuple[str, int]) -> None:
        self._target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._flowing = threading.Event()
        self._flowing.set()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = [self._listener]
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    def freeze(self) -> None:
        """Stop forwarding in both directions; nothing is closed."""
        self._flowing.clear()

    def thaw(self) -> None:
        self._flowing.set()

    def close(self) -> None:
        self._closed.set()
        self._flowing.set()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self._target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._pump, args=(source, sink), name="proxy-pump", daemon=True
                ).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        """Copy `source` to `sink` while flowing; frozen, read nothing and send nothing."""
        while not self._closed.is_set():
            if not self._flowing.wait(_POLL_S):
                continue
            try:
                readable, _, _ = select.select([source], [], [], _POLL_S)
                if not readable:
                    continue
                data = source.recv(65536)
                while not self._flowing.wait(_POLL_S):  # frozen after the read: hold it until thawed
                    if self._closed.is_set():
                        return
                if not data:
                    sink.shutdown(socket.SHUT_WR)
                    return
                sink.sendall(data)
            except (OSError, ValueError):
                return

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
