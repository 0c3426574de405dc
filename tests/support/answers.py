"""Two answers compared as a reader sees them: what differs by construction between two
requests (the CSRF token, masked anew each response; the id asked for; an age in seconds, which
the clock moves between them) is taken out first."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

_CSRF = re.compile(r'("X-CSRFToken": "|name="csrfmiddlewaretoken" value=")[^"]+')
_AGE = re.compile(r'("age_seconds":\s*)\d+')
_TIME_AGO = re.compile(r'(<time datetime="[^"]*">)[^<]* ago(</time>)')


def body_text(response: Any) -> str:
    body = b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content
    return body.decode(errors="replace")


def normalized(text: str, asked: Iterable[object] = ()) -> str:
    """`text` without CSRF tokens and ages ("age_seconds", "3 minutes ago"), and with each value
    `asked` for (an id, a name) as ID, also where the page repeats it URL-encoded or HTML-escaped."""
    text = _CSRF.sub(r"\1CSRF", unquote(html.unescape(text)))
    text = _TIME_AGO.sub(r"\1AGO\2", _AGE.sub(r"\1AGE", text))
    for value in sorted({str(v) for v in asked}, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", "ID", text)
    return text


def answer(response: Any, asked: Iterable[object] = ()) -> tuple[int, str]:
    """The status and the normalized body: equal for two requests that answer alike. Give both
    requests every id either asked for (a small id may also be a number of the page itself)."""
    return response.status_code, normalized(body_text(response), asked)
