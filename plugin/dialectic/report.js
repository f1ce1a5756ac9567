// The dialectic item table in report.html (page.js draws it): one row per response.
"use strict";
window.reportItemTable = (data, { el, block, money, ms }) => ({
  columns: [["case", (r) => r.case], ["variant", (r) => r.variant], ["category", (r) => r.category ?? ""],
            ["mode", (r) => (r.expected_mode ?? "") + " \u2192 " + (r.mode ?? "")], ["status", (r) => r.status],
            ["score", (r) => (r.score == null ? "" : r.score.toFixed(1))], ["latency", (r) => ms(r.latency_ms)], ["cost", (r) => money(r.cost_usd)]],
  group: (r) => r.variant,
  text: (r) => [r.id, r.raw, r.query, r.error].filter(Boolean).join("\n").toLowerCase(),
  details(r) {
    const judged = r.judge_scores ? Object.entries(r.judge_scores).map(([k, v]) => k + ": " + v).join("\n") : null;
    return [...block("query", r.query), ...block("reply", r.raw), ...block("checks", r.checks && Object.entries(r.checks).map(([k, v]) => k + ": " + (v ? "passed" : "failed")).join("\n")),
            ...block("confidence", r.confidence == null ? null : r.confidence + " (ceiling " + r.pcc_ceiling + ")"),
            ...block("judge scores (medians)", judged), ...block("judge", r.judge && JSON.stringify(r.judge, null, 1)), ...block("error", r.error)];
  },
});
