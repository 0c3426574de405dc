"""The one redaction function: every text the project stores or shows (sync errors, build errors,
patch attempt details, object error texts) and every log record passes `redact` (or
`redact_value` for structured data, `redact_manifest` for a Kubernetes object). No Django:
LOGGING loads it before the apps.

What it blanks (the value, never the name, so a reader still sees what was there):
- `NAME=value`, `NAME: value`, `"NAME": "value"` where NAME contains TOKEN, SECRET, KEY or
  PASSWORD, AUTH or SIGNING (any case, with `-`/`_` around: HF_TOKEN, client-secret,
  refresh-token, api_key, client-key-data, PGPASSWORD, AccountKey in a connection string,
  DB_PASS, NGC_AUTH, a docker config's `"auth"`), and a signed URL's
  `sig=` / `X-Amz-Signature=`;
- `--flag value` where the flag names a secret (`--hf-token X`, `--auth X`);
- a token as a URL's path segment after a segment naming it (`https://host/api/token/X`);
- `Authorization: Bearer ...` and `Basic ...` credentials, and a bare `Bearer xyz`;
- passwords in URLs (`scheme://user:pass@host`), including ones that contain `/` or `@`;
- by content, wherever they are: tokens of a known format (GitHub, GitLab, AWS, Slack, OpenAI,
  JWTs, private keys, ... as detect-secrets' detectors know them; Hugging Face).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector

MARK = "[redacted]"

# A name that holds a secret: one ending in the word (HF_TOKEN, client-secret, id-token, DB_PASS).
# `KEY` counts in the `NAME=value` form only: "key: BaseModel/x" is common prose, "API_KEY=" is not.
_SECRET_WORDS = r"token|secret|password|passwd|credential|api[_-]?key|private[_-]?key|key[_-]?data|auth|signing"
# The word ends the name: `tokenizer-mode=`, `max_tokens:` and `secretName:` hold no secret.
_SECRET_NAME = rf"[\w.-]*(?:{_SECRET_WORDS})(?![\w.-])"
# A signed URL's signature (Azure SAS `sig=`, S3 `X-Amz-Signature=`) is its credential.
_SECRET_ASSIGNED = rf"[\w.-]*(?:{_SECRET_WORDS}|key|pass|pwd|sig|signature|access)(?![\w.-])"
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
    # --hf-token VALUE (a command line): the next word.
    (re.compile(rf"(?i)(--?{_SECRET_NAME}\s+)(?!\[redacted\])(?:{_QUOTED}|[^\s\"'-][^\s\"']*)"), rf"\1{MARK}"),
    # A token as a URL's path segment after one naming it: https://host/api/token/VALUE/x.
    (
        re.compile(rf"(?i)(://[^\s/]+(?:/[^\s/]+)*?/(?:{_SECRET_WORDS}|key)s?/)(?!\[redacted\])[^\s/?#\"',;]+"),
        rf"\1{MARK}",
    ),
    # scheme://user:password@host: the password runs to the LAST @ before the host, so one
    # holding "/" or "@" is blanked whole.
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^\s]*@(?=[^@\s]*(?:[/?#\s]|$))"), rf"\1{MARK}@"),
]


def _scoped(pattern: re.Pattern[str]) -> str:
    """The pattern's text with its own flags inline, so several can be joined into one."""
    flags = "".join(
        letter for flag, letter in ((re.IGNORECASE, "i"), (re.VERBOSE, "x"), (re.DOTALL, "s")) if pattern.flags & flag
    )
    return f"(?{flags}:{pattern.pattern})" if flags else f"(?:{pattern.pattern})"


# Public IPs are no secret; every other regex detector of detect-secrets is, and Hugging Face's
# tokens (hf_ and 34 letters) and GitHub's fine-grained ones, which it does not know.
_PLUGINS: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
_DETECTORS: list[type[RegexBasedDetector]] = [
    detector
    for detector in _PLUGINS.values()
    if issubclass(detector, RegexBasedDetector) and detector.__name__ != "IPPublicDetector"
]
# A match is blanked to the end of its word: some detectors' patterns stop at a prefix (`ghp`).
_KNOWN_TOKENS = [
    re.compile(_scoped(pattern) + r"[^\s\"',;]*")
    for pattern in [
        *(pattern for detector in _DETECTORS for pattern in detector().denylist),
        re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
        re.compile(r"\bgithub_pat_[A-Za-z0-9_]{22,}"),  # fine-grained: detect-secrets knows ghp_ and kin only
    ]
]
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY[^-]*-----.*?(?:-----END [A-Z0-9 ]*-----|$)", re.DOTALL)
# Every form of _PATTERNS holds one of these; most texts hold none and are passed at once.
_MAY_HOLD_FORM = re.compile(rf"(?i){_SECRET_WORDS}|key|pass|pwd|sig|access|bearer|basic|://")
# No known token format is shorter.
_SHORTEST_TOKEN = 16


def redact(text: str) -> str:
    """`text` with every secret form above blanked."""
    if _MAY_HOLD_FORM.search(text):
        text = _PRIVATE_KEY.sub(MARK, text)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
    if len(text) >= _SHORTEST_TOKEN:
        for token in _KNOWN_TOKENS:
            text = token.sub(MARK, text)
    return text


@lru_cache(maxsize=4096)
def secret_key(key: str) -> bool:
    """Whether a manifest's key names a secret: its last word, or last two words joined, ends
    in one (HF_TOKEN, DB_PASS, PGPASSWORD, secretKey, AccountKey, api_key, example.com/token).
    References to secrets (secretName, secretKeyRef) and counts (maxTokens) are not secrets."""
    words = [word.lower() for word in re.split(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])", key) if word]
    last = [*words[-1:], "".join(words[-2:])]
    return any(word.endswith(_SECRET_ENDINGS) for word in last)


_SECRET_ENDINGS = (
    "token",
    "secret",
    "password",
    "passwd",
    "pass",
    "pwd",
    "credential",
    "credentials",
    "apikey",
    "accountkey",
    "accesskey",
    "secretkey",
    "privatekey",
    "keydata",
    "authorization",
    "auth",  # NGC_AUTH, a docker config's base64 `auth`, --auth
    "signing",  # SIGNING, COSIGN_SIGNING
    "access",  # HF_HUB_ACCESS (an access value; accessMode and the like end in another word)
)


def redact_manifest(value: Any, key: str = "") -> Any:
    """A copy of a Kubernetes object (or part of it, found under `key`) with every credential
    blanked: the string value of a key naming a secret (annotations, storage parameters, any
    field), the `value` of a `{name, value}` entry naming one (env), the argument after a
    `--flag` naming one (args, command), and every form `redact` knows inside every string."""
    if isinstance(value, str):
        return MARK if key and secret_key(key) else _redact_repeated(value)
    if isinstance(value, Mapping):
        if isinstance(value.get("name"), str) and isinstance(value.get("value"), str) and secret_key(value["name"]):
            return {**value, "value": MARK}
        return {name: redact_manifest(item, str(name)) for name, item in value.items()}
    if isinstance(value, list):
        return [
            MARK if isinstance(item, str) and _follows_secret_flag(value, index) else redact_manifest(item)
            for index, item in enumerate(value)
        ]
    return value


# The objects of a cluster repeat most of their strings (runtimes made from one template, the
# same args and formats), so a sync redacts each distinct one once.
_redact_repeated = lru_cache(maxsize=16384)(redact)


def _follows_secret_flag(items: list[Any], index: int) -> bool:
    before = items[index - 1] if index else None
    return (
        isinstance(before, str)
        and re.fullmatch(r"--?[\w.-]+", before) is not None
        and secret_key(before)
        and not items[index].startswith("-")
    )


def redacted(value: Any) -> bool:
    """Whether a stored object (or text) holds a redacted value: pages say so."""
    if isinstance(value, str):
        return MARK in value
    if isinstance(value, Mapping):
        return any(redacted(item) for item in value.values())
    if isinstance(value, list):
        return any(redacted(item) for item in value)
    return False


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
