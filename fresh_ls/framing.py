"""LSP base-protocol frames, written once for the server and the clients.

A frame is header lines (``Name: value`` ending in CRLF), a blank line, then exactly
``Content-Length`` bytes of body. Everything a peer controls is bounded before it is read:
one header line, the number of header lines, and the body, whose declared length is
checked against the limit *before* a byte of it is read (contract v1.1: an oversized
message is not read into memory). A frame that breaks these rules ends its connection
only, with a ``FrameError`` that says why; the caller answers it and closes.

``frame_steps`` is the reading without I/O: it asks its driver for a line or a number of
bytes and returns the body. ``FrameReader`` drives it over an asyncio stream (the
server); fresh_ls/client/ drives it over a blocking stream and an asyncio one. This
module imports neither pygls nor asyncio, so ``fresh-ls status`` stays cheap to start.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING

from fresh_ls import steps

if TYPE_CHECKING:
    import asyncio

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


#: What ``frame_steps`` asks for when it wants the next line (with its LF); any other
#: number it yields is a count of body bytes.
LINE = -1


def encode_frame(body: bytes) -> bytes:
    """One message's frame: the ``Content-Length`` header, a blank line, the body."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def frame_steps(max_message_bytes: int | None) -> Generator[int, bytes, bytes]:
    """Read one frame: yields ``LINE`` (send the next line, LF included, as ``readline``
    gives it) until the headers end, then the body's length (send that many bytes, or
    what there was before the end of the stream); returns the body. Raises ``EOFError``
    when the stream ends before a line, ``FrameError`` for a frame that breaks the rules
    (a length over ``max_message_bytes`` before a byte of the body is asked for; None: no
    limit) or that the end of the stream cuts."""
    length: int | None = None
    lines = 0
    while True:
        line = yield LINE
        if not line.endswith(b"\n"):
            if line:
                raise FrameError("connection ended inside a header")
            raise EOFError
        if len(line) > MAX_HEADER_LINE:
            raise FrameError(
                f"malformed header: a header line is longer than {MAX_HEADER_LINE} bytes"
            )
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
        if max_message_bytes is not None and n > max_message_bytes:
            raise FrameError(
                f"message of {n} bytes exceeds the limit of {max_message_bytes} "
                "bytes (the server's --max-message-bytes); split it or raise the limit"
            )
    if length is None:
        raise FrameError("malformed header: no Content-Length before the blank line")
    body = yield length
    if len(body) < length:
        raise FrameError(f"connection ended inside a body of {length} bytes (Content-Length)")
    return body


class FrameReader:
    """Frames from an ``asyncio.StreamReader`` (its own line limit must exceed ours)."""

    def __init__(self, reader: asyncio.StreamReader, max_message_bytes: int) -> None:
        self._reader = reader
        self.max_message_bytes = max_message_bytes

    async def _line(self) -> bytes:
        import asyncio

        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.LimitOverrunError:
            raise FrameError(
                f"malformed header: a header line is longer than {MAX_HEADER_LINE} bytes"
            ) from None
        except asyncio.IncompleteReadError as exc:
            return exc.partial  # the end of the stream: frame_steps says what it cut

    async def _body(self, length: int) -> bytes:
        import asyncio

        try:
            return await self._reader.readexactly(length)
        except asyncio.IncompleteReadError as exc:
            return exc.partial

    def _take(self, want: int) -> Awaitable[bytes]:
        return self._line() if want == LINE else self._body(want)

    async def read(self) -> bytes:
        """The next body; ``EOFError`` at a clean end of stream, ``FrameError`` otherwise."""
        return await steps.arun(frame_steps(self.max_message_bytes), self._take)


def stream_limit() -> int:
    """The StreamReader limit that lets ``FrameReader`` report long header lines itself."""
    return MAX_HEADER_LINE + 2
