"""The plain rule the bisections of ``fresh_ls.core.text.common_ends`` replace, kept once
for every test that holds a shortcut to it (``changed_span``, ``single_edit``,
``common_ends`` itself)."""

from __future__ import annotations

from collections.abc import Sequence


def walked(a: Sequence[object], b: Sequence[object]) -> tuple[int, int, int]:
    """The common head and then tail walked item by item: ``(start, end_a, end_b)``, the
    items ``start:end_a`` of ``a`` replaced by ``start:end_b`` of ``b``."""
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return start, end_a, end_b
