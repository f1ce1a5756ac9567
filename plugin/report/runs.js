// runs.html: a click on a heading sorts its table by that column (numbers as numbers), again to reverse.
"use strict";
(function () {
  document.querySelectorAll("table.sortable").forEach((table) => {
    const body = table.tBodies[0];
    table.querySelectorAll("thead th").forEach((th) => {
      th.addEventListener("click", () => {
        const col = Number(th.dataset.col);
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const key = (tr) => tr.cells[col].dataset.sort;
        const rows = [...body.rows];
        const numeric = rows.every((tr) => key(tr) === "" || !Number.isNaN(Number(key(tr))));
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === "" || y === "") return (x === "") - (y === "");
          const order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
          return ascending ? order : -order;
        });
        body.append(...rows);
      });
    });
  });
})();
