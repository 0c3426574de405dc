/* OME Compat: small progressive enhancements. Every page works without this file.
 *
 * - The matrix's status line: hovering or focusing a cell loads OME's one-line reason for it
 *   (GET <cell url>reason/) into #cell-reason, which is an aria-live region.
 * - Arrow keys move the focus between matrix cells.
 * - Buttons with data-copy="<id>" copy that element's text (the kubectl command).
 * - A 400 answer to an htmx request is swapped in like a 200: the pages answer bad input
 *   (a what-if's manifest) with the form's fragment and the error in place.
 * - A swapped-in result marked data-scroll-into-view (the what-if's) scrolls into view and
 *   takes the focus, so that a keyboard or screen-reader user lands on it too.
 */
(function () {
  "use strict";

  var DELAY_MS = 120;
  var timer = null;
  var shown = null;

  function cellOf(target) {
    return target && target.closest ? target.closest("a.cell") : null;
  }

  function showReason(link) {
    var line = document.getElementById("cell-reason");
    if (!line || link === shown || !window.htmx) return;
    shown = link;
    window.clearTimeout(timer);
    timer = window.setTimeout(function () {
      var url = new URL(link.getAttribute("href"), window.location.href);
      url.pathname += "reason/";
      window.htmx.ajax("GET", url.pathname + url.search, { target: "#cell-reason", swap: "innerHTML" });
    }, DELAY_MS);
  }

  document.addEventListener("focusin", function (event) {
    var link = cellOf(event.target);
    if (link) showReason(link);
  });
  document.addEventListener("mouseover", function (event) {
    var link = cellOf(event.target);
    if (link) showReason(link);
  });

  document.addEventListener("keydown", function (event) {
    var link = cellOf(event.target);
    if (!link || event.altKey || event.ctrlKey || event.metaKey) return;
    var td = link.parentElement;
    var tr = td.parentElement;
    var column = Array.prototype.indexOf.call(tr.children, td);
    var next = null;
    if (event.key === "ArrowRight") next = td.nextElementSibling;
    else if (event.key === "ArrowLeft") next = td.previousElementSibling;
    else if (event.key === "ArrowDown") next = tr.nextElementSibling && tr.nextElementSibling.children[column];
    else if (event.key === "ArrowUp") next = tr.previousElementSibling && tr.previousElementSibling.children[column];
    else return;
    var target = next && next.querySelector("a.cell");
    if (target) {
      event.preventDefault();
      target.focus();
    }
  });

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
