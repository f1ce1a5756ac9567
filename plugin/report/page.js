// The item table of report.html: rows from the page's JSON block, filters, search, details; what a
// row shows comes from the protocol's own script (reportItemTable).
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const LIMIT = 500; // rows drawn at once; "show more" draws the next ones
  const money = (v) => (v == null ? "" : "$" + Number(v).toFixed(4));
  const ms = (v) => (v == null ? "" : Math.round(v).toLocaleString("en") + " ms");
  const rows = data.items.map((r) => ({ item: r, haystack: null }));
  const $ = (id) => document.getElementById(id);
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
    children.flat().forEach((c) => node.append(c));
    return node;
  };
  const block = (title, body) => (body == null || body === "" ? [] : [el("h4", {}, title), el("pre", {}, String(body))]);
  // the protocol's table (its report.js, run just before this script): columns, group, search text, details
  const { columns, group, text, details } = window.reportItemTable(data, { el, block, money, ms });
  const fill = (select, values) => [...new Set(values)].sort().forEach((v) => select.append(el("option", { value: v }, v)));
  fill($("filter-status"), data.items.map((r) => r.status));
  fill($("filter-group"), data.items.map(group));
  $("item-head").append(...columns.map(([name]) => el("th", {}, name)));

  function toggle(tr, r) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("detail")) { next.remove(); tr.classList.remove("open"); return; }
    tr.classList.add("open");
    tr.after(el("tr", { class: "detail" }, el("td", { colspan: columns.length, class: "detail" }, details(r))));
  }
  let shown = LIMIT;
  function draw() {
    const status = $("filter-status").value, grp = $("filter-group").value, needle = $("filter-text").value.trim().toLowerCase();
    const matching = rows.filter(({ item }) => (!status || item.status === status) && (!grp || group(item) === grp))
      .filter((row) => !needle || (row.haystack ??= text(row.item)).includes(needle));
    const body = $("item-rows");
    body.replaceChildren(...matching.slice(0, shown).map(({ item }) => {
      const tr = el("tr", { class: "row", id: "item-" + item.id, "data-status": item.status, "data-group": group(item) },
                    columns.map(([name, get]) => el("td", name === "status" ? { class: "status s-" + item.status.replace(" ", ".") } : {}, get(item))));
      tr.addEventListener("click", () => toggle(tr, item));
      return tr;
    }));
    $("item-count").textContent = "(" + matching.length + " of " + rows.length + ")";
    const more = $("item-more");
    more.replaceChildren();
    if (matching.length > shown) {
      const button = el("button", { type: "button" }, "show " + Math.min(LIMIT, matching.length - shown) + " more");
      button.addEventListener("click", () => { shown += LIMIT; draw(); });
      more.append(matching.length - shown + " more rows; filter or ", button);
    }
  }
  ["filter-status", "filter-group"].forEach((id) => $(id).addEventListener("change", () => { shown = LIMIT; draw(); }));
  $("filter-text").addEventListener("input", () => { shown = LIMIT; draw(); });
  document.querySelectorAll("a[data-item]").forEach((a) => a.addEventListener("click", (event) => {
    event.preventDefault();
    $("filter-status").value = ""; $("filter-group").value = ""; $("filter-text").value = a.dataset.item; shown = LIMIT; draw();
    const tr = document.getElementById("item-" + a.dataset.item);
    if (tr) { toggle(tr, rows.find(({ item }) => item.id === a.dataset.item).item); tr.scrollIntoView({ block: "center" }); }
  }));
  draw();
})();
