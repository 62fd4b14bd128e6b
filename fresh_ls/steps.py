"""Driving a step generator (sans-IO) from blocking code and from asyncio code.

A step generator does the logic of an exchange without any I/O: it yields what it needs
done (a request to send, a line to read) and is sent back what came of it; its return
value is the outcome. ``run`` performs each step with a plain call, ``arun`` awaits it, so
the logic is written once for both (framing, the clients, harness/rewrite.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

Step = TypeVar("Step")
Out = TypeVar("Out")


def run(steps: Generator[Step, Any, Out], perform: Callable[[Step], Any]) -> Out:
    """Drive ``steps`` to its end, performing each step with a blocking call."""
    try:
        step = next(steps)
        while True:
            step = steps.send(perform(step))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun(steps: Generator[Step, Any, Out], perform: Callable[[Step], Awaitable[Any]]) -> Out:
    """Drive ``steps`` to its end, awaiting each step."""
    reply: Any = None
    while True:
        try:
            step = steps.send(reply)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        reply = await perform(step)
