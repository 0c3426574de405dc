"""A boolean filter that refuses what is not a boolean, for the project's FilterSets."""

from __future__ import annotations

from typing import Any

from django import forms
from django_filters import rest_framework as filters


class StrictBooleanField(forms.Field):
    """`true` / `false` (or 1 / 0, any case); empty means no filter. django-filter's own boolean
    fields read any other value as "no filter", so `has_pipeline=maybe` quietly listed everything."""

    VALUES = {"true": True, "1": True, "false": False, "0": False}

    def to_python(self, value: Any) -> bool | None:
        if value in (None, ""):
            return None
        if isinstance(value, bool):
            return value
        try:
            return self.VALUES[str(value).strip().lower()]
        except KeyError:
            raise forms.ValidationError(f"{value!r} is not a boolean: use true or false.", code="invalid") from None


class StrictBooleanFilter(filters.BooleanFilter):
    """A boolean filter that answers 400 naming the field for a value that is not a boolean
    (the widget passes the value as sent; django-filter's BooleanWidget dropped others)."""

    field_class = StrictBooleanField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", forms.TextInput)
        super().__init__(*args, **kwargs)
