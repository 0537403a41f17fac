"""Write a clothbake scene file (TOML) from plain Python data, without a third-party TOML library.

Blender ships no TOML writer, so this covers exactly what scene files use: tables, arrays of tables
(one level of nesting such as ``[[collider.keys]]`` and ``[garment.pin]``), strings, booleans,
integers, finite floats and (nested) arrays of those. Strings are written as TOML basic strings with
every character that needs it escaped. bpy-free, so it is tested with plain pytest.
"""

from __future__ import annotations

import math

__all__ = ["TomlError", "dumps", "quote"]


class TomlError(ValueError):
    """A value cannot be written as TOML (the message names its key path)."""


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def quote(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _key(name: str) -> str:
    if name and all(c.isascii() and (c.isalnum() or c in "_-") for c in name):
        return name
    return quote(name)


def _value(value, path: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TomlError(f"{path}: {value} is not a finite number")
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v, f"{path}[{i}]") for i, v in enumerate(value)) + "]"
    raise TomlError(f"{path}: cannot write a {type(value).__name__} as TOML")


def _is_table(value) -> bool:
    return isinstance(value, dict)


def _is_table_array(value) -> bool:
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(isinstance(v, dict) for v in value)


def _write_table(lines: list[str], table: dict, path: str) -> None:
    """Scalars first, then sub-tables, then arrays of tables (TOML requires that order)."""
    for key, value in table.items():
        if value is None or _is_table(value) or _is_table_array(value):
            continue
        lines.append(f"{_key(key)} = {_value(value, f'{path}.{key}' if path else key)}")
    for key, value in table.items():
        if _is_table(value):
            sub = f"{path}.{_key(key)}" if path else _key(key)
            lines.append("")
            lines.append(f"[{sub}]")
            _write_table(lines, value, sub)
    for key, value in table.items():
        if _is_table_array(value):
            sub = f"{path}.{_key(key)}" if path else _key(key)
            for item in value:
                lines.append("")
                lines.append(f"[[{sub}]]")
                _write_table(lines, item, sub)


def dumps(document: dict, header: str = "") -> str:
    """TOML text for ``document`` (keys with value ``None`` are left out)."""
    lines: list[str] = [f"# {line}" for line in header.splitlines()]
    _write_table(lines, document, "")
    return "\n".join(lines).lstrip("\n") + "\n"
