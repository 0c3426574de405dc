"""The matrix grid as a page shows it: each cell's status by model and runtime name, read from
the HTML (a cell is `<td class=X>`; its row names the model, its column header the runtime)."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser

from web.pages.matrix import CELL_CLASS

STATUS_OF_CLASS = {letter: status for status, letter in CELL_CLASS.items()}


@dataclass(frozen=True)
class GridCell:
    model: str
    runtime: str
    status: str
    text: str
    model_id: int
    runtime_id: int


class _GridParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.in_grid = False
        self.runtimes: list[tuple[int, str]] = []
        self.rows: list[tuple[int, str, list[tuple[str, str]]]] = []
        self._cell: list[str] | None = None  # [class, text] of the open td
        self._header: int | None = None  # data-r of the open column header
        self._text: list[str] = []
        self._row_link = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "table" and "grid" in (values.get("class") or "").split():
            self.in_grid = True
        if not self.in_grid:
            return
        if tag == "th" and values.get("data-r"):
            self._header, self._text = int(values["data-r"] or 0), []
        elif tag == "tr" and values.get("data-m"):
            self.rows.append((int(values["data-m"] or 0), "", []))
        elif tag == "a" and self.rows and not self.rows[-1][1] and self._cell is None and self._header is None:
            self._row_link, self._text = True, []
        elif tag == "td" and self.rows:
            self._cell = [values.get("class") or "", ""]

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[1] += data
        elif self._header is not None or self._row_link:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if not self.in_grid:
            return
        if tag == "table":
            self.in_grid = False
        elif tag == "th" and self._header is not None:
            self.runtimes.append((self._header, "".join(self._text).strip()))
            self._header = None
        elif tag == "a" and self._row_link:
            model_id, _name, cells = self.rows[-1]
            self.rows[-1] = (model_id, "".join(self._text).strip(), cells)
            self._row_link = False
        elif tag == "td" and self._cell is not None:
            self.rows[-1][2].append((self._cell[0], self._cell[1]))
            self._cell = None


def grid_cells(html: str) -> dict[tuple[str, str], GridCell]:
    """Every cell of the page's grid by (model name, runtime name)."""
    parser = _GridParser()
    parser.feed(html)
    found = {}
    for model_id, model, cells in parser.rows:
        assert len(cells) == len(parser.runtimes), f"row {model} has {len(cells)} cells for {len(parser.runtimes)}"
        for (runtime_id, runtime), (letter, text) in zip(parser.runtimes, cells, strict=True):
            status = STATUS_OF_CLASS[letter]
            found[(model, runtime)] = GridCell(model, runtime, status, text, model_id, runtime_id)
    return found


def grid_models(html: str) -> list[str]:
    parser = _GridParser()
    parser.feed(html)
    return [name for _id, name, _cells in parser.rows]


def cell_xpath(model: str, runtime: str) -> str:
    """XPath of the grid's cell of a model (its row header's link text) and a runtime (its
    column header's): the cell's position in the row is its header's among the header cells."""
    grid = "//table[contains(concat(' ', @class, ' '), ' grid ')]"
    column = f"count({grid}/thead/tr/th[a[normalize-space()='{runtime}']]/preceding-sibling::th)"
    return f"xpath={grid}/tbody/tr[th/a[normalize-space()='{model}']]/td[{column}]"


def cell_class(status: str) -> str:
    """The class a cell of `status` has (for a browser test's to_have_class)."""
    return CELL_CLASS[status]
