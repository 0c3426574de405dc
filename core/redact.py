"""The one redaction function: every text the project stores or shows (sync errors, build errors,
patch attempt details, object error texts) and every log record passes `redact` (or
`redact_value` for structured data). Standard library only: LOGGING loads it before the apps.

What it blanks (the value, never the name, so a reader still sees what was there):
- `NAME=value`, `NAME: value`, `"NAME": "value"` where NAME contains TOKEN, SECRET, KEY or
  PASSWORD (any case, with `-`/`_` around: HF_TOKEN, client-secret, refresh-token, api_key,
  client-key-data, PGPASSWORD);
- `Authorization: Bearer ...` and `Basic ...` credentials, and a bare `Bearer xyz`;
- passwords in URLs (`scheme://user:pass@host`), including ones that contain `/` or `@`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MARK = "[redacted]"

# A name that holds a secret: the word anywhere inside it (HF_TOKEN, client-secret, id-token).
# `KEY` counts in the `NAME=value` form only: "key: BaseModel/x" is common prose, "API_KEY=" is not.
_SECRET_WORDS = r"token|secret|password|passwd|credential|api[_-]?key|private[_-]?key|key[_-]?data"
_SECRET_NAME = rf"[\w.-]*(?:{_SECRET_WORDS})[\w.-]*"
_SECRET_ASSIGNED = rf"[\w.-]*(?:{_SECRET_WORDS}|key)[\w.-]*"
_QUOTED = r"(?:\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # Authorization: Bearer xyz / Authorization: Basic xyz, a bare "Bearer xyz", "Basic dXNlcg==".
    (re.compile(r"(?i)(\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic)\s+)[^\s\"',;]+"), rf"\1{MARK}"),
    (re.compile(r"(?i)(\bbearer\s+)(?!\[redacted\])[^\s\"',;]+"), rf"\1{MARK}"),
    (re.compile(r"(\bBasic\s+)(?!\[redacted\])[A-Za-z0-9+/]{8,}={0,2}"), rf"\1{MARK}"),
    # "name": "value" / 'name': 'value' (JSON, Python reprs of dicts): the quotes are kept.
    (re.compile(rf"(?i)([\"']{_SECRET_ASSIGNED}[\"']\s*:\s*)\"(?:[^\"\\]|\\.)*\""), rf'\1"{MARK}"'),
    (re.compile(rf"(?i)([\"']{_SECRET_ASSIGNED}[\"']\s*:\s*)'(?:[^'\\]|\\.)*'"), rf"\1'{MARK}'"),
    (re.compile(rf"(?i)([\"']{_SECRET_ASSIGNED}[\"']\s*:\s*)(?![\"'])[^\s,}}\]]+"), rf"\1{MARK}"),
    # name=value (env lines, query strings), name: value (YAML, headers).
    (re.compile(rf"(?i)(\b{_SECRET_ASSIGNED}\s*=\s*)(?!\[redacted\])(?:{_QUOTED}|[^\s\"',;&}}\]]+)"), rf"\1{MARK}"),
    (re.compile(rf"(?i)(\b{_SECRET_NAME}\s*:\s*)(?![\"']?\[redacted\])(?:{_QUOTED}|[^\s\"',;&}}\]]+)"), rf"\1{MARK}"),
    # scheme://user:password@host: the password runs to the LAST @ before the host, so one
    # holding "/" or "@" is blanked whole.
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^\s]*@(?=[^@\s]*(?:[/?#\s]|$))"), rf"\1{MARK}@"),
]


def redact(text: str) -> str:
    """`text` with every secret form above blanked."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def secret_name(key: object) -> bool:
    """Whether `key` names a secret (HF_TOKEN, client-secret, api_key, PGPASSWORD, ...)."""
    return isinstance(key, str) and re.fullmatch(rf"(?i){_SECRET_ASSIGNED}", key) is not None


def redact_value(value: Any) -> Any:
    """A copy of structured data (log extras, JSON) with secrets blanked: values under secret
    names, and secret forms inside every string."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {key: MARK if secret_name(key) else redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [redact_value(item) for item in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact(repr(value))
