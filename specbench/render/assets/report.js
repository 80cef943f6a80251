// specbench report.html: sortable tables, the AL-definition switch, hover values on plots.
// Plain DOM, no framework, no network.
"use strict";
(function () {
  function cellValue(cell) {
    var text = cell.textContent.trim();
    var number = parseFloat(text.replace(/[,\u2212]/g, function (c) { return c === "," ? "" : "-"; })
      .replace(/^[^0-9+\-.]+/, ""));
    return isNaN(number) ? text.toLowerCase() : number;
  }
  function sortBy(table, index, th) {
    var body = table.tBodies[0];
    if (!body) { return; }
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) {
      if (h !== th && h.classList.contains("sortable")) { h.setAttribute("aria-sort", "none"); }
    });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a.cells[index]), y = cellValue(b.cells[index]);
      var order = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0)
        : (typeof x === "number" ? -1 : 1);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  function makeSortable(table) {
    if (!table.tHead || !table.tBodies[0] || table.tBodies[0].rows.length < 2) { return; }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.classList.add("sortable");
      th.setAttribute("aria-sort", "none");
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, index, th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, index, th); }
      });
    });
  }
  function definitionOf(text) {
    if (/\(official|official AL/i.test(text)) { return "official"; }
    if (/step-weighted/i.test(text)) { return "step_weighted"; }
    return null;
  }
  function showDefinition(chosen) {
    document.querySelectorAll("main table").forEach(function (table) {
      if (!table.tHead) { return; }
      var header = table.tHead.rows[0].cells, hide = [];
      Array.prototype.forEach.call(header, function (th, i) {
        var kind = definitionOf(th.textContent);
        hide[i] = kind !== null && chosen !== "both" && kind !== chosen;
      });
      Array.prototype.forEach.call(table.rows, function (row) {
        Array.prototype.forEach.call(row.cells, function (cell, i) {
          cell.classList.toggle("al-hidden", !!hide[i]);
        });
      });
    });
    document.querySelectorAll("figure[data-al]").forEach(function (figure) {
      var kind = figure.getAttribute("data-al");
      figure.hidden = chosen !== "both" && kind !== chosen && figure.hasAttribute("data-al-pair");
    });
  }
  function hoverValues(figure) {
    var points = JSON.parse(figure.getAttribute("data-points"));
    var tip = document.createElement("div");
    tip.className = "tooltip";
    tip.hidden = true;
    tip.setAttribute("role", "status");
    figure.appendChild(tip);
    figure.querySelectorAll("svg g[id^='point-']").forEach(function (group) {
      var index = parseInt(group.id.split("-")[1], 10);
      var text = points[index];
      if (text === undefined) { return; }
      var title = document.createElementNS("http://www.w3.org/2000/svg", "title");
      title.textContent = text;
      group.insertBefore(title, group.firstChild);
      group.style.cursor = "crosshair";
      group.addEventListener("mouseover", function (event) {
        var box = figure.getBoundingClientRect();
        tip.textContent = text;
        tip.hidden = false;
        tip.style.left = (event.clientX - box.left + 12) + "px";
        tip.style.top = (event.clientY - box.top + 12) + "px";
      });
      group.addEventListener("mouseout", function () { tip.hidden = true; });
    });
  }
  document.querySelectorAll("main table").forEach(makeSortable);
  document.querySelectorAll("figure[data-points]").forEach(hoverValues);
  document.querySelectorAll("input[name='al-definition']").forEach(function (input) {
    input.addEventListener("change", function () { if (input.checked) { showDefinition(input.value); } });
  });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
})();
