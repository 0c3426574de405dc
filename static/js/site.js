/* OME Compat: small progressive enhancements. Every page works without this file.
 *
 * - The matrix grid: one Tab stop (roving tabindex); arrow keys, Home/End, PageUp/PageDown move
 *   between cells and headers; Enter or a click opens a cell. Hovering or focusing a cell loads
 *   OME's one-line reason for it (GET <cell url>reason/) into #cell-reason (aria-live).
 *   Without this file, each model's link (the row header) leads to its cells.
 * - Filter boxes (details.filters-box) start closed on narrow screens.
 * - A filter select browsed with arrow keys applies its value on Enter or when the focus leaves
 *   it, not at every key (a closed select changes its value, and fires `change`, at each one).
 * - Buttons with data-copy="<id>" copy that element's text (the kubectl command).
 * - A 400 answer to an htmx request is swapped in like a 200: the pages answer bad input
 *   (a what-if's manifest) with the form's fragment and the error in place. Under DEBUG too:
 *   django-htmx's debug script would replace the whole page with it.
 * - A swapped-in result marked data-scroll-into-view (the what-if's) scrolls into view and
 *   takes the focus, so that a keyboard or screen-reader user lands on it too.
 */
(function () {
  "use strict";

  var DELAY_MS = 120;
  var CELL_STATUS = {
    s: "selected", c: "compatible", m: "manual-only", x: "excluded", d: "disabled",
    o: "not considered in this row's namespace"
  };
  var timer = null;
  var shown = null;

  // ---- the matrix grid ------------------------------------------------------------------
  // A cell is `<td class=X>TEXT</td>`: its model is its row's `data-m`, its runtime its
  // column header's `data-r`; the table carries the cells' URL prefix and the scope.

  function gridOf(element) {
    return element && element.closest ? element.closest("table.grid") : null;
  }

  function cellOf(target) {
    var td = target && target.closest ? target.closest("td") : null;
    return td && gridOf(td) && td.parentElement.hasAttribute("data-m") ? td : null;
  }

  function headerOf(td) {
    var table = gridOf(td);
    var index = Array.prototype.indexOf.call(td.parentElement.children, td);
    return table.tHead.rows[0].children[index];
  }

  function cellUrl(td) {
    var table = gridOf(td);
    return table.getAttribute("data-cells") + td.parentElement.getAttribute("data-m") + "/" +
      headerOf(td).getAttribute("data-r") + "/" +
      (td.parentElement.getAttribute("data-s") || table.getAttribute("data-scope")) + "/";
  }

  function cellLabel(td) {
    var model = td.parentElement.querySelector("th a");
    var runtime = headerOf(td).querySelector("a");
    var status = CELL_STATUS[td.className] || td.className;
    var score = /^\d+$/.test(td.textContent) ? ", score " + td.textContent : "";
    return (model ? model.textContent : "") + " \u00d7 " + (runtime ? runtime.textContent : "") + ": " + status + score;
  }

  function showReason(td) {
    var line = document.getElementById("cell-reason");
    if (!line || td === shown || !window.htmx || td.className === "o") return;
    shown = td;
    window.clearTimeout(timer);
    timer = window.setTimeout(function () {
      window.htmx.ajax("GET", cellUrl(td) + "reason/", { target: "#cell-reason", swap: "innerHTML" });
    }, DELAY_MS);
  }

  // What takes the focus in a grid position: a header's link, or the cell itself.
  function focusable(position) {
    if (!position) return null;
    return position.tagName === "TH" ? position.querySelector("a") : position;
  }

  // Roving tabindex: exactly one element of the grid is in the Tab order.
  function makeActive(table, element) {
    var previous = table.querySelectorAll('[tabindex="0"]');
    for (var i = 0; i < previous.length; i++) {
      if (previous[i] !== element) previous[i].setAttribute("tabindex", "-1");
    }
    element.setAttribute("tabindex", "0");
    if (element.tagName === "TD") {
      element.setAttribute("role", "link");
      element.setAttribute("aria-label", cellLabel(element));
    }
  }

  function initGrid(table) {
    if (table.getAttribute("data-roving")) return;
    table.setAttribute("data-roving", "1");
    table.removeAttribute("tabindex");
    var links = table.querySelectorAll("th a");
    for (var i = 0; i < links.length; i++) links[i].setAttribute("tabindex", "-1");
    var first = table.querySelector("tbody td") || links[0];
    if (first) makeActive(table, first);
  }

  function initGrids(root) {
    var tables = (root || document).querySelectorAll("table.grid");
    for (var i = 0; i < tables.length; i++) initGrid(tables[i]);
  }

  // The grid position a key moves to from `position`; undefined for keys the grid leaves alone.
  function move(position, key, ctrl) {
    var tr = position.parentElement;
    var column = Array.prototype.indexOf.call(tr.children, position);
    var rows = Array.prototype.slice.call(gridOf(position).rows);
    var at = rows.indexOf(tr);
    if (key === "ArrowRight") return position.nextElementSibling;
    if (key === "ArrowLeft") return position.previousElementSibling;
    if (key === "Home") return tr.children[ctrl ? 0 : 1] || tr.children[0];
    if (key === "End") return tr.lastElementChild;
    if (key === "ArrowDown") return rows[at + 1] && rows[at + 1].children[column];
    if (key === "ArrowUp") return rows[at - 1] && rows[at - 1].children[column];
    if (key === "PageDown") return rows[Math.min(at + 10, rows.length - 1)].children[column];
    if (key === "PageUp") return rows[Math.max(at - 10, 0)].children[column];
    return undefined;
  }

  document.addEventListener("focusin", function (event) {
    var table = gridOf(event.target);
    if (!table) return;
    initGrid(table);
    var position = event.target.tagName === "A" ? event.target.parentElement : event.target;
    makeActive(table, focusable(position) || event.target);
    var td = cellOf(event.target);
    if (td) showReason(td);
  });
  document.addEventListener("mouseover", function (event) {
    var td = cellOf(event.target);
    if (td) showReason(td);
  });
  document.addEventListener("click", function (event) {
    var td = cellOf(event.target);
    if (td && !event.defaultPrevented && td.className !== "o") window.location.href = cellUrl(td);
  });

  document.addEventListener("keydown", function (event) {
    var table = gridOf(event.target);
    if (!table || event.altKey || event.metaKey) return;
    var td = cellOf(event.target);
    if (td && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      if (td.className !== "o") window.location.href = cellUrl(td);
      return;
    }
    var position = event.target.tagName === "A" ? event.target.parentElement : event.target;
    var next = move(position, event.key, event.ctrlKey);
    if (next === undefined) return;
    event.preventDefault();
    var target = focusable(next);
    if (target) {
      makeActive(table, target);
      target.focus();
    }
  });

  // The skip link to the grid lands on its active cell.
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest('a.skip-link[href="#grid"]') : null;
    var table = document.getElementById("grid");
    if (!link || !table) return;
    event.preventDefault();
    initGrid(table);
    var active = table.querySelector('[tabindex="0"]');
    if (active) active.focus();
  });

  // ---- filter selects: arrow keys browse, Enter or leaving the select applies ---------------
  var BROWSE_KEYS = { ArrowUp: 1, ArrowDown: 1, ArrowLeft: 1, ArrowRight: 1, Home: 1, End: 1, PageUp: 1, PageDown: 1 };
  var browsing = null;

  function filterSelect(element) {
    return element && element.matches && element.matches("form.filters select") ? element : null;
  }

  function applyPending(select) {
    if (!select.hasAttribute("data-pending")) return;
    select.removeAttribute("data-pending");
    select.dispatchEvent(new Event("change", { bubbles: true }));
  }

  document.addEventListener("keydown", function (event) {
    var select = filterSelect(event.target);
    if (!select) return;
    if (BROWSE_KEYS[event.key]) browsing = select;
    else if (event.key === "Enter" && select.hasAttribute("data-pending")) {
      event.preventDefault();
      applyPending(select);
    }
  }, true);
  // Capture phase: the change stops here, before the form's htmx trigger hears it.
  document.addEventListener("change", function (event) {
    var select = filterSelect(event.target);
    if (!select || select !== browsing) return;
    browsing = null;
    event.stopPropagation();
    select.setAttribute("data-pending", "1");
  }, true);
  document.addEventListener("focusout", function (event) {
    var select = filterSelect(event.target);
    if (select) applyPending(select);
  });

  // ---- filters and other long boxes: collapsed on narrow screens ----------------------------
  function collapseFilters() {
    var boxes = document.querySelectorAll("details[data-collapse-below]");
    for (var i = 0; i < boxes.length; i++) {
      var below = parseInt(boxes[i].getAttribute("data-collapse-below"), 10);
      if (window.matchMedia("(max-width: " + below + "px)").matches) boxes[i].open = false;
    }
  }

  function ready() {
    initGrids(document);
    collapseFilters();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
  document.addEventListener("htmx:afterSettle", function (event) { initGrids(event.target); });

  function selectText(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-copy]") : null;
    if (!button) return;
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var done = function () { button.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(source.textContent).then(done, function () { selectText(source); });
    } else {
      // Plain http on another host: no clipboard API; select the text for Ctrl-C instead.
      selectText(source);
      button.textContent = "Selected: press Ctrl-C";
    }
  });

  // django-htmx's debug script (DEBUG only) shows 400, 403, 404 and 500 answers as a whole page
  // from a document listener of htmx:beforeOnLoad. Our 400s are fragments for their form: stop
  // that event on its way down (window, capture phase), so only htmx itself goes on with them.
  window.addEventListener("htmx:beforeOnLoad", function (event) {
    if (event.detail.xhr && event.detail.xhr.status === 400) event.stopPropagation();
  }, true);

  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr && event.detail.xhr.status === 400) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.target;
    var result = target && target.matches && target.matches("[data-scroll-into-view]")
      ? target : (target && target.querySelector ? target.querySelector("[data-scroll-into-view]") : null);
    if (!result) return;
    result.scrollIntoView({ block: "start" });
    result.focus({ preventScroll: true });
  });
})();
