"""How far a bank can be answered from surface cues, without knowing any dynamics.

- `surface_model`: a bag-of-words logistic regression, scored held out with grouped
  cross-validation (a system's questions are never in the fold that trains on them), so what it
  learns is wording, not facts about a system.
- `shortcut_score`: the `--model=shortcut` baseline (thresholds on printed numbers, the catalog's
  most common value of the asked property, negation polarity) on every question.
- `polarity_balance`: per template and predicate polarity, the TRUE share (a template whose label
  follows "not" is answered by the word).
- `minority_coverage`: per asked predicate, how often systems holding its rarer value are asked.

`bankgen validate-cases` turns these into problems against the thresholds below.
"""

from __future__ import annotations

from collections import Counter, defaultdict

SURFACE_MAX = 0.60  # held-out accuracy of the surface model, and the shortcut's, over the bank
FAMILY_MAX = 0.65  # the same per family of at least FAMILY_MIN_ITEMS questions
FAMILY_MIN_ITEMS = 50
FOLDS = 5
# Families whose single predicate is a fact about the named system at its stated parameters
# (a regime question is about a sweep point, an indicator question about printed numbers).
FACT_FAMILIES = ("atomic", "extended_systems", "consistency_paraphrase", "perturbation_robustness", "adversarial")


def group_of(record: dict) -> str:
    """The cross-validation group: the system; a question about no particular system is grouped
    by its predicates, so a rule about a pair of properties is not learned from itself."""
    if record.get("system_id") not in (None, "", "generic"):
        return record["system_id"]
    return "generic:" + ",".join(sorted({p["name"] for p in record.get("predicates", [])}))


def _scores(records: list[dict], correct: list[bool]) -> dict:
    by_family: dict[str, list[bool]] = defaultdict(list)
    for record, hit in zip(records, correct):
        by_family[record["family"]].append(hit)
    return {
        "n": len(correct),
        "accuracy": round(sum(correct) / len(correct), 4) if correct else None,
        "families": {
            family: {"n": len(hits), "accuracy": round(sum(hits) / len(hits), 4)}
            for family, hits in sorted(by_family.items())
        },
    }


def surface_model(records: list[dict], folds: int = FOLDS) -> dict:
    """Held-out accuracy of a bag-of-words classifier (words and word pairs, logistic regression),
    grouped k-fold by system; overall and per family. Needs scikit-learn (the bank extra)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline

    texts = [r["question"] for r in records]
    labels = [r["ground_truth"] == "TRUE" for r in records]
    groups = [group_of(r) for r in records]
    predicted = list(labels)
    for train, test in GroupKFold(n_splits=min(folds, len(set(groups)))).split(texts, labels, groups):
        seen = {labels[i] for i in train}
        if len(seen) == 1:
            # one label to learn from: the model can only say it
            for i in test:
                predicted[i] = next(iter(seen))
            continue
        model = make_pipeline(
            CountVectorizer(binary=True, ngram_range=(1, 2), lowercase=True),
            LogisticRegression(max_iter=2000),
        )
        model.fit([texts[i] for i in train], [labels[i] for i in train])
        for i, p in zip(test, model.predict([texts[i] for i in test])):
            predicted[i] = bool(p)
    return _scores(records, [p == y for p, y in zip(predicted, labels)])


def shortcut_score(records: list[dict]) -> dict:
    """The shortcut baseline's accuracy on the questions, overall and per family."""
    from pytest_reasoning_evals.chaosbench.shortcut import decide

    return _scores(records, [decide(r["question"]).label == r["ground_truth"] for r in records])


def polarity_balance(records: list[dict]) -> dict[tuple[str, str], tuple[int, int]]:
    """(template, polarity of the asked conclusion) -> (TRUE, FALSE) counts. The conclusion is the
    last predicate of the record; a template is balanced when each polarity it uses has both
    labels."""
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        if not r.get("predicates"):
            continue
        polarity = r["predicates"][-1]["polarity"]
        counts[(r["template"], polarity)][r["ground_truth"] != "TRUE"] += 1
    return {key: (t, f) for key, (t, f) in sorted(counts.items())}


def minority_coverage(records: list[dict], catalog: dict[str, dict[str, bool | None]]) -> dict[str, dict]:
    """Per predicate asked of a system (single-predicate questions of the fact families): how
    many questions are about systems where it holds and where it fails, and which value is the
    catalog's minority among the systems the bank asks about."""
    records = [r for r in records if r["family"] in FACT_FAMILIES]
    asked_systems = {r["system_id"] for r in records if r.get("system_id") in catalog}
    report = {}
    per_value: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        truth = catalog.get(r.get("system_id", ""))
        if truth is None or len(r.get("predicates", [])) != 1:
            continue
        name = r["predicates"][0]["name"]
        if truth.get(name) is not None:
            per_value[name][truth[name]] += 1
    for name, asked in sorted(per_value.items()):
        values = Counter(catalog[s][name] for s in asked_systems if catalog[s].get(name) is not None)
        minority = values[True] < values[False]  # the rarer value among the bank's systems
        report[name] = {
            "asked_true": asked[True],
            "asked_false": asked[False],
            "systems_true": values[True],
            "systems_false": values[False],
            "minority": minority,
        }
    return report
