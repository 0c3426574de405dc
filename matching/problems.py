"""One problem of a manifest, as every entry point reports it: where (file, document, line,
field path), what is wrong, a hint ("did you mean max?") and how bad (an error refuses the
input; a warning is reported with the answer)."""

from __future__ import annotations

from dataclasses import dataclass, replace

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True, slots=True)
class Problem:
    """`document` numbers the document as its reader does (a manifest tree's files from 0, as
    `Origin`; the what-if's text from 1); `line` is 1-based; `obj` names the object ("Kind
    name"); `path` is the field, as `spec.supportedModelFormats[0].modelFormat`. Any but the
    path and message may be unknown."""

    path: str
    message: str
    hint: str | None = None
    severity: str = ERROR
    file: str | None = None
    document: int | None = None
    line: int | None = None
    obj: str | None = None

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def located(
        self, *, file: str | None = None, document: int | None = None, line: int | None = None, obj: str | None = None
    ) -> Problem:
        return replace(self, file=file, document=document, line=line, obj=obj)

    def demoted(self) -> Problem:
        """The same problem as a warning (`--lenient`: fields of another OME version)."""
        return replace(self, severity=WARNING)

    @property
    def where(self) -> str:
        """`file: document N, line L: Kind name`, with what is known."""
        place = ", ".join(
            part
            for part in (
                f"document {self.document}" if self.document is not None else "",
                f"line {self.line}" if self.line is not None else "",
            )
            if part
        )
        return ": ".join(part for part in (self.file, place, self.obj) if part)

    def __str__(self) -> str:
        hint = f" ({self.hint})" if self.hint else ""
        where = f"{self.where}: " if self.where else ""
        label = "" if self.is_error else "warning: "
        return f"{where}{label}{self.path}: {self.message}{hint}"

    def to_dict(self) -> dict[str, object]:
        return {
            "severity": self.severity,
            "file": self.file,
            "document": self.document,
            "line": self.line,
            "object": self.obj,
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
            # The what-if's earlier shape: a problem that refuses the input is blocking.
            "blocking": self.is_error,
        }
