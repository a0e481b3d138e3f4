"""Link: a replica's own TCP relay to the API server; cutting it is the replica's SIGKILL.

Concept: every byte between a replica's Client and the embedded API server goes through the
replica's `Link`. `cut()` aborts every connection and refuses new ones, so from the server's
side the replica is dead at that instant: it renews no Lease, releases nothing and writes
nothing, exactly like a killed process — while what is left of it in this process can be
stopped in the background.

Invariant: after `cut()`, no byte from the replica reaches the server.
"""

from __future__ import annotations

import asyncio


class Link:
    """A TCP relay from a replica to the API server on 127.0.0.1:`upstream_port`."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.cut_off = False
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut_off:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        except OSError:
            writer.transport.abort()
            return
        if self.cut_off:  # cut while connecting
            writer.transport.abort()
            up_writer.transport.abort()
            return
        self._writers |= {writer, up_writer}
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            self._writers -= {writer, up_writer}

    def cut(self) -> None:
        """Abort every connection and refuse new ones (the replica is dead to the server)."""
        self.cut_off = True
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            await self._server.wait_closed()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.transport.abort()
