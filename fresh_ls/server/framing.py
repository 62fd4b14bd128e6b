"""Reading LSP base-protocol frames without trusting the peer.

A frame is header lines (``Name: value`` ending in CRLF), a blank line, then exactly
``Content-Length`` bytes of body. Everything a peer controls is bounded before it is read:
one header line, the number of header lines, and the body, whose declared length is
checked against the limit *before* a byte of it is read (contract v1.1: an oversized
message is not read into memory). A frame that breaks these rules ends its connection
only, with a ``FrameError`` that says why; the caller answers it and closes.
"""

from __future__ import annotations

import asyncio
import re

#: The contract's floor for the largest message a server must accept.
DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: One header line, and the header lines of one frame: LSP sends two, short ones.
MAX_HEADER_LINE = 8192
MAX_HEADER_LINES = 32

_HEADER = re.compile(rb"^([!-9;-~]+):[ \t]*(.*?)[ \t]*\r?\n$")


class FrameError(Exception):
    """The peer broke the framing: its connection ends after an error answer."""

    def __init__(self, message: str, code: int = -32600) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class FrameReader:
    """Frames from an ``asyncio.StreamReader`` (its own line limit must exceed ours)."""

    def __init__(self, reader: asyncio.StreamReader, max_message_bytes: int) -> None:
        self._reader = reader
        self.max_message_bytes = max_message_bytes

    async def _line(self) -> bytes:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.LimitOverrunError:
            raise FrameError(
                f"malformed header: a header line is longer than {MAX_HEADER_LINE} bytes"
            ) from None
        except asyncio.IncompleteReadError as exc:
            if exc.partial:
                raise FrameError("connection ended inside a header") from None
            raise EOFError from None
        if len(line) > MAX_HEADER_LINE:
            raise FrameError(
                f"malformed header: a header line is longer than {MAX_HEADER_LINE} bytes"
            )
        return line

    async def read(self) -> bytes:
        """The next body; ``EOFError`` at a clean end of stream, ``FrameError`` otherwise."""
        length: int | None = None
        lines = 0
        while True:
            line = await self._line()
            if line in (b"\r\n", b"\n"):
                if lines == 0:
                    continue  # blank lines between frames are tolerated, as LSP clients do
                break
            lines += 1
            if lines > MAX_HEADER_LINES:
                raise FrameError(f"malformed header: more than {MAX_HEADER_LINES} header lines")
            m = _HEADER.match(line)
            if m is None:
                shown = line[:60].decode("utf-8", "replace").rstrip()
                raise FrameError(
                    f"malformed header {shown!r}: expected 'Content-Length: N' lines, "
                    "a blank line, then N bytes of JSON"
                )
            if m.group(1).lower() != b"content-length":
                continue  # Content-Type and any other header are allowed and ignored
            value = m.group(2)
            if not value.isdigit() or len(value) > 19:
                raise FrameError(
                    f"malformed header: Content-Length {value[:30].decode('latin-1')!r} "
                    "is not a byte count"
                )
            n = int(value)
            if length is not None and n != length:
                raise FrameError("malformed header: two different Content-Length headers")
            length = n
            if n > self.max_message_bytes:
                raise FrameError(
                    f"message of {n} bytes exceeds the limit of {self.max_message_bytes} "
                    "bytes (the server's --max-message-bytes); split it or raise the limit"
                )
        if length is None:
            raise FrameError("malformed header: no Content-Length before the blank line")
        try:
            return await self._reader.readexactly(length)
        except asyncio.IncompleteReadError:
            raise FrameError(
                f"connection ended inside a body of {length} bytes (Content-Length)"
            ) from None


def stream_limit() -> int:
    """The StreamReader limit that lets ``FrameReader`` report long header lines itself."""
    return MAX_HEADER_LINE + 2
