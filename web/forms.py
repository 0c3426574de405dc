"""The add-cluster page's form: a name, a source and its field (one per source the page offers,
named by the source's key, inventory.sources)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from django import forms

from inventory.kubeconfigs import KubeconfigInvalid
from inventory.registration import Choices, page_sources, spec_of
from inventory.services import ClusterSpec, RegistrationInvalid, registration_check


class ClusterAddForm(forms.Form):
    name = forms.SlugField(max_length=63, help_text="Letters, digits and hyphens; how pages and the API name it.")
    source = forms.ChoiceField(widget=forms.RadioSelect)
    policy_reports = forms.BooleanField(
        required=False,
        label="Write PolicyReports",
        help_text="After each matrix update, write the findings into the cluster as PolicyReports (live clusters).",
    )

    def __init__(self, *args: Any, choices: Choices, author: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.choices = choices
        self.author = author
        self.sources = page_sources()
        self.fields["source"].choices = [(source.key, source.page_label) for source in self.sources]  # type: ignore[attr-defined]
        for source in self.sources:
            self.fields[source.key] = source.form_field(choices.offers[source.key])

    @property
    def source_fields(self) -> list[tuple[forms.BoundField, str]]:
        """Each source's field, with what to say beside it when its source offers nothing."""
        return [
            (self[source.key], "" if self.choices.offers[source.key].choices else source.none_offered)
            for source in self.sources
        ]

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        try:
            registration_check(name, author=self.author)  # as the API and the admin
        except RegistrationInvalid as error:
            raise forms.ValidationError(error.message, code=error.code) from None
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        source, name = data.get("source"), data.get("name")
        if not source or not name:
            return data
        choice = data.get(source) or ""
        if not choice:
            self.add_error(source, "Choose one.")
            return data
        try:
            spec = spec_of(name, source, choice, self.choices)
            data["spec"] = replace(spec, policy_reports=bool(data.get("policy_reports")))
        except (KubeconfigInvalid, ValueError) as error:
            self.add_error(source, getattr(error, "message", None) or str(error))
        return data

    @property
    def spec(self) -> ClusterSpec:
        spec: ClusterSpec = self.cleaned_data["spec"]
        return spec
