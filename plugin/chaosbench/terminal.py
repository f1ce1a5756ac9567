"""The terminal summary printed at the end of an eval run (and of a merge)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_reasoning_evals.chaosbench.early_stop import decided_line
from pytest_reasoning_evals.chaosbench.epoch_compare import paired_test_name
from pytest_reasoning_evals.gates import GateResult, gate_line
from pytest_reasoning_evals.markdown import code, inline
from pytest_reasoning_evals.providers.base import saved_text


def _pct(value: float | None) -> str:
    return "   n/a" if value is None else f"{value:6.1%}"


def _ci(ci: list[float] | None) -> str:
    return "" if ci is None else f"[{ci[0]:.1%}, {ci[1]:.1%}]"


def epoch_line(block: dict) -> str:
    """The line on the epochs (summary.json "epochs"): accuracy with its clustered interval, and the noise floor."""
    return (
        f"epochs {block['k']} per question, {block['questions']} questions: accuracy "
        f"{_pct(block['accuracy']).strip()}{' ' + _ci(block['accuracy_ci95']) if block['accuracy_ci95'] else ''} "
        f"(clustered by question), majority vote {_pct(block['majority_accuracy']).strip()}; noise floor: "
        f"consistency {_pct(block['consistency']).strip()}, flip rate {_pct(block['flip_rate']).strip()} "
        "(questions whose epochs disagree)"
    )


def consistency(summary: dict) -> str:
    """The dialogues' consistency rates, or why there are none (no turn names a predicate to check)."""
    dd = summary["dialogue_details"]
    if summary["contradiction_rate"] is None:
        return "consistency not checked (no turn names a predicate)"
    fol = (
        f"FOL violation rate {_rate(summary['fol_violation_rate'])} ({dd['dialogues_with_violations']} dialogues)"
        if summary["fol_violation_rate"] is not None
        else "FOL axioms not applicable (no turn names a ChaosBench predicate)"
    )
    return f"{fol}, contradiction rate {_rate(summary['contradiction_rate'])}"


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _reprompted(summary: dict) -> str:
    """How many UNKNOWN answers were asked again and how many of those a reprompt labelled."""
    asked = summary.get("reprompted")  # a merged summary of older shards has none
    if not asked:
        return ""
    return f"; asked again {asked}, rescued by the reprompt {summary['rescued_by_reprompt']}"


def summary_lines(
    summary: dict,
    gates: list[GateResult],
    run_dir: Path,
    calls: dict | None = None,
    resumed: int = 0,
    comparison: list[str] = (),
    report: str | None = None,
    floor: float | None = None,
    notes: Sequence[str] = (),
) -> list[str]:
    """`floor`: the shortcut baseline's accuracy on the same selection, when it has been run;
    `notes`: lines to say before the results line (cassette misses, say)."""
    lines = [
        f"overall accuracy {_pct(summary['overall_accuracy']).strip()} {_ci(summary['overall_accuracy_ci95'])} "
        f"({summary['num_correct']}/{summary['total_evaluated']} evaluated), "
        + (f"shortcut floor: {_pct(floor).strip()}, " if floor is not None else "")
        + f"coverage {_pct(summary['coverage']).strip()}, UNKNOWN {summary['num_unknown']}, "
        f"no gold {summary['num_items_no_gold']}" + _reprompted(summary),
    ]
    if "epochs" in summary:
        lines.append(epoch_line(summary["epochs"]))
    for title, key in (("family", "task_details"), ("split", "split_details")):
        rows = [(name, d) for name, d in summary[key].items() if d["total"]]
        if not rows:
            continue
        lines.append(f"  {title:<25} {'n':>5} {'acc':>7}  95% CI")
        for name, d in rows:
            lines.append(f"  {name:<25} {d['total']:>5} {_pct(d['accuracy'])}  {_ci(d['accuracy_ci95'])}")
    dd = summary["dialogue_details"]
    if dd["total_dialogues"]:
        lines.append(
            f"dialogues {dd['total_dialogues']} ({dd['total_turns']} turns): accuracy "
            f"{_pct(summary['dialogue_accuracy']).strip()} {_ci(dd['accuracy_ci95'])}, turn accuracy "
            f"{_pct(dd['turn_accuracy']).strip()}, {consistency(summary)}"
        )
    tokens = summary["tokens"]
    lines.append(
        f"tokens in {tokens['input']:,} / out {tokens['output']:,}, cost ${summary['cost_usd']:.4f}"
        + saved_text(summary.get("cost_saved_usd"))
        + (
            f"; calls {calls['total']:,}: {calls['cassette_hits']:,} cassette hits, {calls['live']:,} live"
            if calls
            else ""
        )
        + (f"; {resumed:,} items resumed from an earlier run" if resumed else "")
    )
    lines += _not_asked_lines(summary)
    lines.extend(comparison)
    for gate in gates:
        lines.append(gate_line(gate))
    lines.extend(notes)
    lines.append(f"results: {run_dir}")
    if report:
        lines.append(report)  # where report.html is (or why it is not)
    return lines


def _not_asked_lines(summary: dict) -> list[str]:
    """Why items were not asked: a decision that made them unneeded, or a spent budget."""
    lines = [decided_line(summary["decided_early"])] if "decided_early" in summary else []
    if summary["not_asked"]["count"]:
        lines.append(
            f"NOT ASKED: {summary['not_asked']['count']} items (--max-cost budget spent); "
            "run again with --eval-resume to ask them"
        )
    return lines


def _md_pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def markdown(title: str, summary: dict, gates: list[GateResult], comparison: dict | None) -> str:
    """The run as Markdown for a CI job summary ($GITHUB_STEP_SUMMARY); text from outside (names,
    paths, ids, gate details with a provider's error) made inert (markdown.py)."""
    out = [
        f"### {inline(title)}",
        "",
        f"Overall accuracy **{_md_pct(summary['overall_accuracy'])}** {_ci(summary['overall_accuracy_ci95'])} "
        f"({summary['num_correct']}/{summary['total_evaluated']} evaluated), coverage {_md_pct(summary['coverage'])}, "
        f"UNKNOWN {summary['num_unknown']}{_reprompted(summary)}.",
        "",
        "| family | n | accuracy | 95% CI |" + (" Δ paired accuracy vs baseline |" if comparison else ""),
        "|---|---:|---:|---|" + ("---:|" if comparison else ""),
    ]
    deltas = (comparison or {}).get("family_deltas", {})
    for name, d in summary["task_details"].items():
        if d["total"]:
            delta = deltas.get(name, {}).get("accuracy_delta")
            cell = f" {'n/a' if delta is None else f'{delta:+.1%}'} |" if comparison else ""
            out.append(
                f"| {inline(name)} | {d['total']} | {_md_pct(d['accuracy'])} | {_ci(d['accuracy_ci95'])} |{cell}"
            )
    dd = summary["dialogue_details"]
    if dd["total_dialogues"]:
        out += [
            "",
            f"Dialogues: {dd['total_dialogues']}, accuracy {_md_pct(summary['dialogue_accuracy'])}, "
            f"{consistency(summary)}.",
        ]
    if comparison:
        c = comparison
        out += [
            "",
            f"Against the baseline {code(c['baseline']['path'])}: {c['n_paired']} paired items, accuracy "
            f"{_md_pct(c['accuracy_baseline'])} → {_md_pct(c['accuracy_current'])}, fixed {c['fixed']}, broken {c['broken']}, "
            f"{paired_test_name(c)} p = {c['p_value']:.4g}: **{'regressed' if c['regressed'] else 'no significant regression'}**.",
        ]
        if c["broken_ids"]:
            out.append(
                f"Broken: {', '.join(code(i) for i in c['broken_ids'][:20])}"
                + (" …" if len(c["broken_ids"]) > 20 else "")
            )
    if gates:
        out += ["", "| gate | verdict | detail |", "|---|---|---|"]
        out += [
            f"| {inline(g.name)} | {'✅ passed' if g.passed else '❌ FAILED'} | {inline(g.detail)} |" for g in gates
        ]
    return "\n".join(out) + "\n\n"
