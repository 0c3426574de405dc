"""The one base of every app's errors that a request can cause."""

from __future__ import annotations


class DomainError(Exception):
    """An error a user can act on: its text names the object and field, `code` is for machines,
    `http_status` is what the API answers with, and `field` is the request field it is about.
    Subclasses set `code` and `http_status` as class attributes; the API's exception handler
    (core.api) turns any of them into `{"detail", "code", "field"}`."""

    code = "error"
    http_status = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
