// ChaosBench's item table in report.html (page.js draws it): one row per question or dialogue.
"use strict";
window.reportItemTable = (data, { el, block, money, ms }) => {
  const prompt = (question) => (data.template && question != null ? data.template.split("{question}").join(question) : question);
  return {
    columns: [["id", (r) => r.id], ["family", (r) => r.family], ["split", (r) => r.split], ["gold", (r) => r.gold ?? ""],
              ["label", (r) => r.label ?? (r.turns ? "" : "none")], ["status", (r) => r.status], ["latency", (r) => ms(r.latency_ms)],
              ["cost", (r) => money(r.cost_usd)]],
    group: (r) => r.family,
    text: (r) => [r.id, r.system, r.question, r.raw, ...(r.reprompts || []), r.error, r.template,
                  ...(r.turns || []).flatMap((t) => [t.question, t.raw])].filter(Boolean).join("\n").toLowerCase(),
    details(r) {
      if (r.turns) {
        return r.turns.map((t) => el("div", { class: "turn" }, el("b", {}, "turn " + t.turn + ": " + t.status + " (gold " + (t.gold ?? "none") + ", answer " + (t.label ?? "none") + ")"),
                                     ...block("prompt", prompt(t.question)), ...block("reply", t.raw), ...block("error", t.error)));
      }
      // an UNKNOWN first reply asked again: every reply, the one that gave the label marked
      const reprompts = r.reprompts || [];
      const named = (n) => (n === 0 ? "reply" : "reply to reprompt " + n) + (reprompts.length && r.label_from === n ? " (gave the label)" : "");
      return [...block("prompt", r.question == null ? "(not recorded in this run's completions)" : prompt(r.question)),
              ...block(named(0), r.raw), ...reprompts.flatMap((text, i) => block(named(i + 1), text)),
              ...block("error", r.error), ...block("template", r.template)];
    },
  };
};
