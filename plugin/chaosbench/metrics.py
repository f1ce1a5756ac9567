"""ChaosBench-Logic metrics over the items' summary rows (rows.py) -> summary.json (SPEC 5.4;
protocol keys first).

Questions and dialogues are scored apart: overall, split and
task accuracy are over single questions; dialogue_accuracy, fol_violation_rate and
contradiction_rate over dialogues. Rows are sorted by id before anything is summed, so the
summary does not depend on the order in which workers finished, on sharding or on resuming.
"""

from __future__ import annotations

from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.dialogues import claims, contradictions, fol_violations
from pytest_reasoning_evals.chaosbench.epoch_summary import epoch_summary
from pytest_reasoning_evals.chaosbench.names import is_bank
from pytest_reasoning_evals.chaosbench.questions import FAMILIES, SPLITS
from pytest_reasoning_evals.chaosbench.rows import DialogueRow, QuestionRow, Row
from pytest_reasoning_evals.providers.base import ErrorKind, cost_saved
from pytest_reasoning_evals.stats import balanced_accuracy, confusion, mcc, per_class, ratio, wilson_interval

# the families whose questions restate one fact: upstream's perturbation groups hold paraphrases
# too, which the bank keeps in a family of their own
PERTURBED = ("perturbation_robustness", "consistency_paraphrase")


def _spend(rows: list[Row]) -> dict:
    calls = [c for r in rows for c in r.calls]
    return {
        "tokens": {
            "input": sum(c.input_tokens for c in calls),
            "output": sum(c.output_tokens for c in calls),
            "thinking": sum(c.thinking_tokens for c in calls),
        },
        "cost_usd": sum(c.cost_usd for c in calls),
    }


def _saved(rows: list[Row]) -> dict:
    """What the prompt cache saved against price_in for every input token, and what a batch's price
    saved against the list price over the calls a batch answered (their cassettes are marked so:
    a replay of a batched run is priced as the batch was); each part only when not zero, the whole
    only when a part is (the summaries of runs without either unchanged)."""
    calls = [c for r in rows for c in r.calls]
    return cost_saved(sum(c.cache_saved_usd for c in calls), sum(c.batch_saved_usd for c in calls))


def _group_details(questions: list[QuestionRow]) -> dict:
    evaluated = [r for r in questions if r.correct is not None]
    correct = sum(r.correct for r in evaluated)
    return {
        "total": len(questions),
        "evaluated": len(evaluated),
        "correct": correct,
        "unknown": sum(r.label is None for r in questions),
        "accuracy": ratio(correct, len(evaluated)),
        "accuracy_ci95": wilson_interval(correct, len(evaluated)),
        **_spend(questions),
    }


def _by(questions: list[QuestionRow], key: str, names: tuple[str, ...]) -> dict[str, dict]:
    return {name: _group_details([r for r in questions if getattr(r, key) == name]) for name in names}


def _names(questions: list[QuestionRow], key: str, known: tuple[str, ...], chaosbench: bool) -> tuple[str, ...]:
    """The groups a summary lists: ChaosBench's own in its order in a ChaosBench run (the
    protocol's schema: a subset run shows the rest as null), then any other name found, sorted."""
    listed = known if chaosbench else ()
    return (*listed, *sorted({getattr(r, key) for r in questions} - set(listed)))


def _breakdown(counts: list[int]) -> dict[str, int]:
    return {"0": counts.count(0), "1": counts.count(1), "2": counts.count(2), "3+": sum(c >= 3 for c in counts)}


def dialogue_metrics(dialogues: list[DialogueRow]) -> dict:
    """SPEC 5.4: a dialogue is correct when every turn is; FOL violations and contradictions
    come from the claims the answers make about the turns' own predicates."""
    total = len(dialogues)
    with_gold = [d for d in dialogues if d.correct is not None]
    correct = sum(d.correct for d in with_gold)
    turns = [t for d in dialogues for t in d.turns]
    turns_evaluated = [t for t in turns if t.correct is not None]
    turns_correct = sum(t.correct for t in turns_evaluated)
    violations = [len(fol_violations(claims(d))) for d in dialogues]
    contradicted = [bool(contradictions(claims(d))) for d in dialogues]
    checked = any(t.predicates for t in turns)  # no predicate on any turn: nothing was checked
    # the axioms are ChaosBench's: a team's own predicates can contradict, but break none of them
    axioms_apply = any(p.name in ontology.PREDICATES for t in turns for p in t.predicates)
    return {
        "dialogue_accuracy": ratio(correct, len(with_gold)),
        "fol_violation_rate": ratio(sum(violations), total) if axioms_apply else None,
        "contradiction_rate": ratio(sum(contradicted), total) if checked else None,
        "dialogue_details": {
            "total_dialogues": total,
            "evaluated": len(with_gold),
            "correct": correct,
            "accuracy_ci95": wilson_interval(correct, len(with_gold)),
            "total_turns": len(turns),
            "turns_with_predicates": sum(bool(t.predicates) for t in turns),
            "turn_accuracy": ratio(turns_correct, len(turns_evaluated)),
            "turn_accuracy_ci95": wilson_interval(turns_correct, len(turns_evaluated)),
            "unknown_turns": sum(t.label is None for t in turns),
            "total_violations": sum(violations),
            "dialogues_with_violations": sum(v > 0 for v in violations),
            "violation_breakdown": _breakdown(violations),
            "dialogues_with_contradictions": sum(contradicted),
            **_spend(dialogues),
        },
    }


def flip_rate(questions: list[QuestionRow]) -> float | None:
    """Upstream v1's flip rate (chaosbench/eval/metrics.py `_compute_flip_rate`): the share of
    perturbation groups whose answers disagree. A group is one fact, a system and a predicate,
    asked by two or more perturbation_robustness questions (distractors, paraphrases, a negation,
    another system's entity swap onto it); an answer's claim is its label, turned over when the
    question asks the negated predicate ("Is it false that ..."), so a model that answers all of
    them right never flips. Groups with no answered question are not counted; None with no group."""
    sizes: dict[tuple[str, str], int] = {}
    claims: dict[tuple[str, str], set[bool]] = {}
    for r in questions:
        if r.family not in PERTURBED or len(r.predicates) != 1:
            continue
        predicate = r.predicates[0]
        key = (r.system_id, predicate.name)
        sizes[key] = sizes.get(key, 0) + 1
        if r.label is not None:
            claims.setdefault(key, set()).add((r.label == "TRUE") == (predicate.polarity == "positive"))
    groups = [claimed for key, claimed in claims.items() if sizes[key] > 1]
    return ratio(sum(len(claimed) == 2 for claimed in groups), len(groups))


def errors_by_kind(rows: list[Row]) -> dict[str, int]:
    """Items that ended in an error: replay misses (no matching cassette), harness errors (the item
    raised inside the harness: no call failed) and provider errors (the rest)."""
    errors = [r.error for r in rows if r.error is not None]
    kinds = [ErrorKind.of(e) for e in errors]
    misses, harness = kinds.count(ErrorKind.MISS), kinds.count(ErrorKind.HARNESS)
    return {"cassette_miss": misses, "provider": len(errors) - misses - harness, "harness": harness}


def call_counts(rows: list[Row]) -> dict:
    """Model calls made for the items, and how many a cassette answered. A fact about the run,
    not the evaluation: it goes to run_meta.json, so a replay's summary equals the recording's."""
    calls = [c for r in rows for c in r.calls if c.provider]
    # a question asked again made 1 + reprompts calls: all replayed or all live (cassette_hit), or
    # `cassette_hits` of them replayed
    weight = [1 + c.reprompts for c in calls]
    hits = [w if c.cassette_hit is True else c.cassette_hits or 0 for c, w in zip(calls, weight)]
    live = [w - h if c.cassette_hit is not None else 0 for c, w, h in zip(calls, weight, hits)]
    return {"total": sum(weight), "cassette_hits": sum(hits), "live": sum(live)}


def api_success_rate(summary: dict, calls: dict) -> float | None:
    """Share of model calls that returned an answer (run_meta.json); None with no call."""
    return (calls["total"] - summary["num_errors"]) / calls["total"] if calls["total"] else None


def summarize(
    rows: list[Row],
    *,
    model: str,
    mode: str,
    not_asked: list[str] = (),
    stopped: str | None = None,
    decided: dict | None = None,
) -> dict:
    """`stopped`: why the run ended before asking everything (key refused, interrupt); with items
    not asked (budget) the summary is incomplete too, unless the comparison was `decided` early
    (early_stop.decided_block): then they were not needed."""
    rows = sorted(rows, key=lambda r: r.id)
    questions = [r for r in rows if r.kind == "question"]
    dialogue = dialogue_metrics([r for r in rows if r.kind == "dialogue"])
    overall = _group_details(questions)
    # a run of a team's own families only lists just those (and their splits), not ten empty ones
    chaosbench = is_bank({r.family for r in rows})
    task_details = _by(questions, "family", _names(questions, "family", FAMILIES, chaosbench))
    split_details = _by(questions, "split", _names(questions, "split", SPLITS, chaosbench))
    total = overall["total"]
    return {
        # --- the protocol's schema ---
        "overall_accuracy": overall["accuracy"],
        "coverage": ratio(total - overall["unknown"], total),
        "total_evaluated": overall["evaluated"],
        "total_questions": total,
        "num_unknown": overall["unknown"],
        "split_accuracy": {name: d["accuracy"] for name, d in split_details.items()},
        "task_accuracy": {name: d["accuracy"] for name, d in task_details.items()},
        "fol_violation_rate": dialogue["fol_violation_rate"],
        "contradiction_rate": dialogue["contradiction_rate"],
        "dialogue_accuracy": dialogue["dialogue_accuracy"],
        # --- extras ---
        "model": model,
        "mode": mode,
        **_question_extras(questions, overall),
        "split_details": split_details,
        "task_details": task_details,
        "dialogue_details": dialogue["dialogue_details"],
        **_spend(rows),
        **_saved(rows),
        **_run_state(rows, not_asked, stopped, decided),
        **({"epochs": epochs} if (epochs := epoch_summary(questions)) else {}),
    }


def _question_extras(questions: list[QuestionRow], overall: dict) -> dict:
    """The single questions' scores beyond the protocol's schema."""
    counts = confusion([(r.gold, r.label) for r in questions if r.correct is not None])
    biased = [r for r in questions if r.bias and r.correct is not None]
    bias_errors = sum(not r.correct for r in biased)
    with_gold = sum(r.gold is not None for r in questions)
    return {
        "num_correct": overall["correct"],
        "num_items_no_gold": len(questions) - with_gold,
        # questions whose first reply was UNKNOWN and were asked again (--eval-reprompt), and those of
        # them a reprompt's reply labelled
        "reprompted": sum(bool(r.reprompts) for r in questions),
        "rescued_by_reprompt": sum((r.label_from or 0) > 0 for r in questions),
        "overall_accuracy_ci95": overall["accuracy_ci95"],
        # an UNKNOWN counts as wrong: correct over every question with gold (coverage x accuracy
        # when every question has gold)
        "effective_accuracy": ratio(overall["correct"], with_gold),
        "invalid_rate": ratio(overall["unknown"], overall["total"]),
        "balanced_accuracy": balanced_accuracy(counts),
        "mcc": mcc(counts),
        "confusion": counts,
        "per_class": per_class(counts),
        "flip_rate": flip_rate(questions),
        "bias_error_rate": ratio(bias_errors, len(biased)),
        "bias_error_rate_ci95": wilson_interval(bias_errors, len(biased)),
    }


def _run_state(rows: list[Row], not_asked: list[str], stopped: str | None, decided: dict | None = None) -> dict:
    """Failed calls, items not asked, and whether the run is complete."""
    failed = sum(r.error is not None for r in rows)
    if decided is not None:
        not_asked = []  # counted in the decision: they were not needed
    return {
        "num_errors": failed,
        "error_rate": ratio(failed, len(rows)),
        "errors_by_kind": errors_by_kind(rows),
        "not_asked": {"count": len(not_asked), "ids": sorted(not_asked)},
        "complete": stopped is None and not not_asked,
        "incomplete_reason": stopped
        or (f"{len(not_asked)} items not asked (--eval-max-cost budget spent)" if not_asked else None),
        **({"decided_early": decided} if decided is not None else {}),
    }
