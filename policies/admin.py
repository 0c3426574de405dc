"""Policies, their revisions and states, webhook receivers and the delivery log in the admin.
A policy's text is validated as the files are (line and field named); a receiver's URL is
shown as its host only, and its signing key is never here (WEBHOOK_SECRET_DIR)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

import matching.policy
from access.current import scope_of
from access.restrict import Action
from access.scope import Scope
from inventory.selectors import clusters_visible

from .models import AssertionState, Delivery, Policy, PolicyRevision, Receiver
from .services import policy_upsert, policy_validate
from .visibility import subscribe_problem
from .webhooks import url_shown


class PolicyForm(forms.ModelForm):
    class Meta:
        model = Policy
        fields = ["name", "text", "enabled"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("name") and data.get("text"):
            try:
                policy_validate(data["text"], source="text", name=data["name"])
            except matching.policy.PolicyError as error:
                raise forms.ValidationError(error.problems) from None
        return data


@admin.register(Policy)
class PolicyAdmin(admin.ModelAdmin):
    form = PolicyForm
    list_display = ["name", "version", "source", "path", "enabled", "updated_at"]
    list_filter = ["source", "enabled"]
    readonly_fields = ["version", "source", "path", "updated_at"]

    def save_model(self, request: HttpRequest, obj: Policy, form: Any, change: bool) -> None:
        # One path for every write: a changed text is a new version with its revision.
        stored, _outcome = policy_upsert(name=obj.name, text=obj.text, source=Policy.Source.ADMIN)
        if stored.enabled != obj.enabled:
            Policy.objects.filter(pk=stored.pk).update(enabled=obj.enabled)
        obj.pk, obj.version = stored.pk, stored.version


@admin.register(PolicyRevision)
class PolicyRevisionAdmin(admin.ModelAdmin):
    list_display = ["policy", "version", "source", "created_at"]
    readonly_fields = ["policy", "version", "text", "source", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AssertionState)
class AssertionStateAdmin(admin.ModelAdmin):
    list_display = ["cluster", "policy", "assertion", "severity", "passing", "since", "inventory_version"]
    list_filter = ["passing", "severity", ("cluster", admin.RelatedOnlyFieldListFilter)]

    def get_queryset(self, request: HttpRequest) -> QuerySet[AssertionState]:
        """The states of clusters its user reads whole: the admin shows every failure of a state."""
        scope = scope_of(request)
        return AssertionState.objects.restrict(scope, Action.VIEW).filter(scope.q_whole("cluster__name"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def receivers_editable(scope: Scope) -> QuerySet[Receiver]:
    """The receivers `scope` could have saved: of what it reads, those sent nothing else."""
    rows = Receiver.objects.restrict(scope, Action.VIEW).select_related("cluster")
    mine = [row.pk for row in rows if not subscribe_problem(scope, row.cluster.name if row.cluster else None,
                                                             row.namespaces)]  # fmt: skip
    return rows.filter(pk__in=mine)


class ReceiverForm(forms.ModelForm):
    # The URL (Slack's carries its token) is written, never shown back.
    url = forms.URLField(max_length=2000, assume_scheme="https", widget=forms.PasswordInput(render_value=False))

    class Meta:
        model = Receiver
        fields = ["name", "url", "format", "secret_file", "cluster", "namespaces", "on_assertion_change",
                  "on_pick_change", "enabled"]  # fmt: skip

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # The clusters the editor reads: no other cluster's name in the choices.
        self.fields["cluster"].queryset = clusters_visible(self.scope)  # type: ignore[attr-defined]
        if self.instance.pk:
            self.fields["url"].required = False
            self.fields["url"].help_text = f"Now {url_shown(self.instance.url)}; leave empty to keep it."

    scope: Scope = Scope()  # the editor's, set by ReceiverAdmin.get_form

    def clean_url(self) -> str:
        return str(self.cleaned_data.get("url") or (self.instance.url if self.instance.pk else ""))

    def clean(self) -> dict[str, Any]:
        """A receiver is sent what its cluster and namespaces cover: its editor must read all of it."""
        data = super().clean() or {}
        cluster = data.get("cluster")
        problem = subscribe_problem(self.scope, cluster.name if cluster else None, data.get("namespaces") or "")
        if problem:
            self.add_error("cluster", f"receiver {data.get('name') or self.instance.name}: {problem}")
        return data


@admin.register(Receiver)
class ReceiverAdmin(admin.ModelAdmin):
    form = ReceiverForm
    list_display = ["name", "target", "format", "cluster", "namespaces", "on_assertion_change", "on_pick_change",
                    "enabled"]  # fmt: skip

    @admin.display(description="URL")
    def target(self, obj: Receiver) -> str:
        return url_shown(obj.url)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Receiver]:
        return receivers_editable(scope_of(request))

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        return type(form.__name__, (form,), {"scope": scope_of(request)})


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    """The delivery log, for admins: what was sent where and what came of it."""

    list_display = ["created_at", "receiver", "event", "cluster_name", "status", "attempts", "last_status_code",
                    "last_error", "delivered_at"]  # fmt: skip
    list_filter = ["status", "event", ("receiver", admin.RelatedOnlyFieldListFilter)]
    readonly_fields = [field.name for field in Delivery._meta.fields]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Delivery]:
        """The deliveries of the receivers its user could have saved (receivers_editable)."""
        scope = scope_of(request)
        return Delivery.objects.restrict(scope, Action.VIEW).filter(receiver__in=receivers_editable(scope))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
