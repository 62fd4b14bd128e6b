"""``app._write_all``: a message in pieces reaches a pipe whole and in order, through short
writes and a non-blocking descriptor (the stdio writer's ``writev``)."""

from __future__ import annotations

import os
import threading

from fresh_ls.server.app import _write_all


def _drain(fd: int, out: bytearray) -> threading.Thread:
    def run() -> None:
        while chunk := os.read(fd, 4096):
            out.extend(chunk)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_pieces_arrive_whole_through_a_small_nonblocking_pipe() -> None:
    r, w = os.pipe()
    os.set_blocking(w, False)  # each writev is short: the pipe holds 64 KiB at most
    got = bytearray()
    reader = _drain(r, got)
    parts = [b"head:", bytes(range(256)) * 2000, b"", b"x" * 70_000, b"}"] + [b"ab"] * 40
    try:
        _write_all(w, parts)
    finally:
        os.close(w)
        reader.join(10)
        os.close(r)
    assert bytes(got) == b"".join(parts)
