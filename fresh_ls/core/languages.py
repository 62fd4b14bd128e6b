"""Which tree-sitter grammar and definition query serve a file.

Languages are data: supporting one more is an entry in ``EXTENSIONS`` plus a
``queries/<language>.scm`` file. Nothing else in the code branches on the language, so a
new grammar cannot silently take a different path through the extractor.

Parsers and compiled queries are cached because building them costs milliseconds (query
compilation walks the grammar's state tables), and the extractor runs on every change.
A ``Parser`` is stateful and not thread-safe: each thread gets its own.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:  # the grammars load on the first parse, not when the server starts
    import tree_sitter

# File extension (lower case, with the dot) -> tree-sitter-language-pack name.
EXTENSIONS: Final[dict[str, str]] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".rb": "ruby",
}

# The query files of a language, concatenated in order, when they are not just its own.
# TSX is the TypeScript grammar plus JSX expressions, which never hold a definition's
# name; the ECMAScript file holds the variable-bound functions all three share.
QUERY_FILES_OF: Final[dict[str, tuple[str, ...]]] = {
    "javascript": ("javascript", "ecmascript"),
    "typescript": ("typescript", "ecmascript"),
    "tsx": ("typescript", "ecmascript"),
}

SUPPORTED_LANGUAGES: Final[frozenset[str]] = frozenset(EXTENSIONS.values())


def language_for_path(path: str) -> str | None:
    """The grammar for ``path`` by extension, or None when there is no definition query.

    The extension is compared in lower case so ``FOO.PY`` behaves like ``foo.py``.
    """
    return EXTENSIONS.get(os.path.splitext(path)[1].lower())


_per_thread = threading.local()


def get_parser(language: str) -> tree_sitter.Parser:
    """This thread's parser of ``language`` (big files are parsed off the event loop, in
    worker threads: each thread has its own parsers)."""
    if language not in SUPPORTED_LANGUAGES:
        raise ValueError(f"unsupported language: {language!r}")
    parsers: dict[str, tree_sitter.Parser] = _per_thread.__dict__.setdefault("parsers", {})
    parser = parsers.get(language)
    if parser is None:
        from tree_sitter_language_pack import get_parser as _pack_parser

        parser = parsers[language] = _pack_parser(language)  # type: ignore[arg-type]
    return parser


@functools.cache
def get_query(language: str) -> tree_sitter.Query:
    """The compiled definition query; a broken .scm fails here, loudly, on first use."""
    if language not in SUPPORTED_LANGUAGES:
        raise ValueError(f"unsupported language: {language!r}")
    from importlib import resources

    import tree_sitter
    from tree_sitter_language_pack import get_language

    queries = resources.files("fresh_ls.core").joinpath("queries")
    text = "\n".join(
        queries.joinpath(f"{stem}.scm").read_text("utf-8")
        for stem in QUERY_FILES_OF.get(language, (language,))
    )
    return tree_sitter.Query(get_language(language), text)  # type: ignore[arg-type]
