"""FilterSets whose form class is made once per FilterSet class, not once per request."""

from __future__ import annotations

import threading
from typing import Any

from django import forms
from django_filters import rest_framework as filters
from django_filters.filters import QuerySetRequestMixin

_FORM_CLASSES: dict[type, type[forms.Form]] = {}
_LOCK = threading.Lock()


class FormOnceFilterSet(filters.FilterSet):
    """django-filter makes a form class (a field per filter) for every FilterSet it binds: most
    of a cheap request's CPU. This one makes it once per class. The one thing a field takes from
    the request, the choices of a ModelChoiceFilter (what this reader may choose), is set on
    every bound form from the filter's own queryset, so no reader validates against another's."""

    def get_form_class(self) -> type[forms.Form]:
        with _LOCK:
            made = _FORM_CLASSES.get(type(self))
        if made is None:
            made = super().get_form_class()
            with _LOCK:
                made = _FORM_CLASSES.setdefault(type(self), made)
        return made

    @property
    def form(self) -> Any:
        if not hasattr(self, "_form"):
            form = super().form
            for name, filter_ in self.filters.items():
                if isinstance(filter_, QuerySetRequestMixin):
                    form.fields[name].queryset = filter_.get_queryset(self.request)
        return self._form


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
