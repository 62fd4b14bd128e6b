"""Typed errors with the contract's JSON-RPC codes, raised by the engine, sent by the server.

Each message names the offending field or path and, where there is one, what to do next.
"""

from __future__ import annotations

INVALID_PARAMS = -32602
PATH_OUTSIDE_ROOT = -32010
FILE_UNREADABLE = -32011
UNKNOWN_ID = -32012
UNAUTHORIZED = -32013


class FreshError(Exception):
    code = -32603

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidParams(FreshError):
    code = INVALID_PARAMS


class OutsideRoot(FreshError):
    code = PATH_OUTSIDE_ROOT


class FileUnreadable(FreshError):
    code = FILE_UNREADABLE


class UnknownId(FreshError):
    code = UNKNOWN_ID


class Unauthorized(FreshError):
    code = UNAUTHORIZED
