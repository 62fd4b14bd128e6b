"""Typed params of every custom method, validated strictly.

cattrs would happily turn ``"3"`` into ``3`` and ``"abc"`` into ``['a', 'b', 'c']``; a
harness that sends those has a bug it should hear about, so the converter here accepts
only the JSON types the contract names, and every failure becomes -32602 with the field.
"""

from __future__ import annotations

from typing import Any, Literal, get_origin

import attrs
import cattrs
from cattrs import transform_error

from fresh_ls.core.paths import path_too_long
from fresh_ls.core.sources import MAX_FILE_BYTES
from fresh_ls.errors import InvalidParams


def _non_empty(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and not value:
        raise ValueError(f"{attribute.name} must not be empty")


def _path(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """Non-empty, and short enough to resolve cheaply (see ``paths.MAX_PATH_BYTES``)."""
    _non_empty(_, attribute, value)
    if value is not None and (too_long := path_too_long(value)) is not None:
        raise ValueError(f"{attribute.name} {too_long}")


def _text(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    """No larger than a file may be: a view is of a file (see ``sources.MAX_FILE_BYTES``)."""
    if value is None or len(value) * 4 <= MAX_FILE_BYTES:
        return
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{attribute.name} is {size} bytes, over the limit of {MAX_FILE_BYTES} bytes "
            "for a file; observe a smaller range"
        )


def _positive(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{attribute.name} must be 1 or more, got {value}")


def _not_negative(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value}")


def _last_line(_: object, attribute: attrs.Attribute[Any], value: int | None) -> None:
    if value is not None and value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value}")


@attrs.define(kw_only=True)
class ObserveParams:
    session: str = attrs.field(validator=_non_empty)
    path: str = attrs.field(validator=_path)
    viewId: str | None = attrs.field(default=None, validator=_non_empty)
    firstLine: int | None = attrs.field(default=None, validator=_positive)
    lastLine: int | None = attrs.field(default=None, validator=_last_line)
    text: str | None = attrs.field(default=None, validator=_text)
    kind: Literal["read", "editResult"] = "read"


@attrs.define(kw_only=True)
class StaleParams:
    session: str = attrs.field(validator=_non_empty)
    viewIds: list[str] | None = None


@attrs.define(kw_only=True)
class ProjectParams:
    session: str = attrs.field(validator=_non_empty)
    budgetBytes: int | None = attrs.field(default=None, validator=_not_negative)
    policy: Literal["stale", "all"] | None = None
    viewIds: list[str] | None = None


@attrs.define(kw_only=True)
class CommitParams:
    planId: str


@attrs.define(kw_only=True)
class ForgetParams:
    session: str = attrs.field(validator=_non_empty)
    viewIds: list[str] | None = None


@attrs.define(kw_only=True)
class ViewTextParams:
    session: str = attrs.field(validator=_non_empty)
    viewId: str = attrs.field(validator=_non_empty)


@attrs.define(kw_only=True)
class StatusParams:
    pass


@attrs.define(kw_only=True)
class DidWriteParams:
    path: str = attrs.field(validator=_path)
    session: str | None = None


@attrs.define(kw_only=True)
class InitializationOptions:
    token: str | None = None
    budgetBytes: int | None = attrs.field(default=None, validator=_not_negative)
    policy: Literal["stale", "all"] | None = None


#: method name -> params class: the one table the server and the docs are checked against.
PARAMS: dict[str, type] = {
    "fresh/observe": ObserveParams,
    "fresh/stale": StaleParams,
    "fresh/project": ProjectParams,
    "fresh/commit": CommitParams,
    "fresh/forget": ForgetParams,
    "fresh/status": StatusParams,
    "fresh/viewText": ViewTextParams,
    "fresh/didWrite": DidWriteParams,
}
REQUESTS = frozenset(PARAMS) - {"fresh/didWrite"}
NOTIFICATIONS = frozenset({"fresh/didWrite"})


def _strict(kind: type, label: str) -> Any:
    def hook(value: Any, _: Any) -> Any:
        if kind is int and (type(value) is not int):
            raise TypeError(f"expected {label}, got {_json_type(value)}")
        if kind is not int and not isinstance(value, kind):
            raise TypeError(f"expected {label}, got {_json_type(value)}")
        if kind is str:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                # JSON allows "\ud800"; UTF-8 (the store, hashes, the disk) does not.
                raise TypeError(
                    "expected a string of valid Unicode (it holds a lone surrogate)"
                ) from None
        return value

    return hook


def _json_type(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _list_of_str(value: Any, _: Any) -> list[str]:
    if not isinstance(value, list):
        raise TypeError(f"expected an array of strings, got {_json_type(value)}")
    for v in value:
        if not isinstance(v, str):
            raise TypeError(f"expected an array of strings, got an array holding {_json_type(v)}")
    return list(value)


def make_converter() -> cattrs.Converter:
    conv = cattrs.Converter(forbid_extra_keys=False)
    conv.register_structure_hook(int, _strict(int, "an integer"))
    conv.register_structure_hook(str, _strict(str, "a string"))
    conv.register_structure_hook(bool, _strict(bool, "a boolean"))
    conv.register_structure_hook_func(lambda t: t == list[str], _list_of_str)
    return conv


_CONVERTER = make_converter()


def parse(cls: type, raw: Any, where: str = "params") -> Any:
    """Structure ``raw`` into ``cls`` or raise InvalidParams naming every bad field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InvalidParams(f"{where}: expected an object, got {_json_type(raw)}")
    try:
        return _CONVERTER.structure(raw, cls)
    except Exception as exc:
        messages = transform_error(exc, path=where, format_exception=_describe)
        raise InvalidParams("; ".join(_tidy(m) for m in messages)) from None


def _describe(exc: BaseException, type_: Any) -> str:
    """One phrase per failure, in JSON terms rather than Python's."""
    if isinstance(exc, KeyError):
        return "required field missing"
    text = str(exc)
    if " not in literal " in text:
        choices = ", ".join(repr(c) for c in _literal_choices(type_))
        return f"expected one of {choices}, got {text.split(' not in literal ')[0]!r}"
    if isinstance(exc, (TypeError, ValueError)) and text:
        return text
    return f"invalid value for {type_}"


def _literal_choices(type_: Any) -> list[Any]:
    """The values a ``Literal`` (or an optional one, ``Literal[...] | None``) allows."""
    choices: list[Any] = []
    for arg in getattr(type_, "__args__", ()):
        if get_origin(arg) is Literal:
            choices.extend(_literal_choices(arg))
        elif arg is not type(None):
            choices.append(arg)
    return choices


def _tidy(message: str) -> str:
    """cattrs says ``invalid value ... @ params.firstLine``; put the field first."""
    if " @ " in message:
        text, where = message.rsplit(" @ ", 1)
        return f"{where}: {text}"
    return message
