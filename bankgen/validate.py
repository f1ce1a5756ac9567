"""`python -m bankgen validate-cases [PATH]`: checks question files and reports file:line for
every bad record; exit 1 on any.

Every file gets the checks any question set needs: schema (id, question, TRUE/FALSE gold; any
family and split), duplicate ids and questions, golds that contradict each other, the systems
catalog or an axiom. A built bank (a folder with the manifest.json that build-bank writes) also
gets the rules the bank is built by: ChaosBench's 10 families and 5 splits, a system and a
template on every record, label balance per family, per template and per dialogue turn
position, no question about a property the catalog leaves unknown, no predicate asked twice in a
dialogue, no text twice (dialogue turns included), the text style of the templates, and the
surface-cue checks of `bankgen.cues` (a bag-of-words model and the shortcut baseline at most
60% overall and 65% per family, both labels for each polarity of each template, the minority
value of each asked property asked at least as often as the majority). A team's own five
questions about billing need none of that."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bankgen import cues
from pytest_reasoning_evals.casefiles import CaseFileError, numbered_lines
from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.names import FAMILIES, SPLITS
from pytest_reasoning_evals.chaosbench.questions import (
    OPTIONAL_NAMES,
    Question,
    case_files,
    default_family,
    parse_record,
)

BALANCE = (0.45, 0.55)  # TRUE share of each family
TEMPLATE_MINORITY = 0.35  # each template: the rarer label is at least this share
POSITION_MAJORITY = 0.65  # each dialogue turn position: no label above this share
# Families whose single predicate is a direct claim about the system at fixed parameters:
# their golds (with polarity) imply a truth assignment that must satisfy the axioms.
DIRECT_CLAIM_FAMILIES = ("atomic", "extended_systems", "consistency_paraphrase", "perturbation_robustness")
# Raw predicate names that are not English words ("PosLyap", "strangeattr", "weakmixing").
RAW_TOKEN = re.compile(
    r"\b("
    + "|".join(
        sorted(
            {n for n in ontology.PREDICATES if sum(c.isupper() for c in n) > 1}
            | {n.lower() for n in ontology.PREDICATES if sum(c.isupper() for c in n) > 1}
            | {"weakmixing"}
        )
    )
    + r")\b"
)
DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
NEGATIVE_ZERO = re.compile(r"-0\.0+(?![0-9])")  # "K = -0.00": a printed value that reads as a sign


@dataclass(frozen=True)
class Problem:
    where: str  # file:line, or file for whole-file checks
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def _normalized(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _text_problems(question: str) -> list[str]:
    found = []
    if raw := RAW_TOKEN.search(question):
        found.append(f"raw predicate token {raw.group(1)!r} in the question text")
    if doubled := DOUBLED.search(question):
        found.append(f"doubled word {doubled.group(0)!r}")
    if zero := NEGATIVE_ZERO.search(question):
        found.append(f"negative zero {zero.group(0)!r} printed in the question")
    if not question.rstrip().endswith("?"):
        found.append("question does not end with '?'")
    return found


def is_built_bank(path: Path) -> bool:
    return path.is_dir() and (path / "manifest.json").is_file()


def validate(
    path: Path,
    catalog: dict[str, dict[str, bool | None]] | None = None,
    bank: bool | None = None,
    scores: dict | None = None,
) -> list[Problem]:
    """Problems of the question files at `path`; `bank` (default: the folder is a built bank)
    adds the bank-building rules, and fills `scores` (when given) with the cue scores."""
    bank = is_built_bank(Path(path)) if bank is None else bank
    problems: list[Problem] = []
    templates: dict[str, list[bool]] = defaultdict(list)
    positions: dict[int, list[bool]] = defaultdict(list)
    dialogue_predicates: dict[str, dict[str, str]] = defaultdict(dict)  # dialogue -> predicate -> where
    seen_ids: dict[str, str] = {}
    seen_text: dict[str, tuple[str, str]] = {}  # normalized -> (where, raw)
    claims: dict[str, dict[str, list[tuple[bool, str]]]] = defaultdict(lambda: defaultdict(list))
    golds: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    questions: list[dict] = []  # the bank's questions, for the cue checks
    turns: list[dict] = []  # its dialogue turns, for the shortcut check
    try:
        files = case_files(path)
    except CaseFileError as exc:
        return [Problem(str(path), str(exc).split(": ", 1)[-1])]
    for file in files:
        family = default_family(file)
        for where, line in numbered_lines(file):
            try:
                record = json.loads(line)
                q = parse_record(record, where, family)
            except json.JSONDecodeError as exc:
                problems.append(Problem(where, f"invalid JSON: {exc.msg}"))
                continue
            except CaseFileError as exc:
                problems.append(Problem(where, str(exc).removeprefix(f"{where}: ")))
                continue
            if q.id in seen_ids:
                problems.append(Problem(where, f"duplicate id {q.id!r} (first at {seen_ids[q.id]})"))
            seen_ids.setdefault(q.id, where)
            if bank:
                problems.extend(Problem(where, m) for m in _bank_schema_problems(q, record))
                problems.extend(Problem(where, m) for m in _text_problems(q.question))
                problems.extend(Problem(where, m) for m in _unknown_truth(q, catalog))
                if q.dialogue_id is None and q.ground_truth:
                    templates[q.template].append(q.ground_truth == "TRUE")
                elif q.ground_truth:
                    positions[q.turn].append(q.ground_truth == "TRUE")
                    for p in q.predicates:
                        first = dialogue_predicates[q.dialogue_id].setdefault(p["name"], where)
                        if first != where:
                            problems.append(
                                Problem(where, f"dialogue {q.dialogue_id} asks {p['name']} again (first at {first})")
                            )
            key = _normalized(q.question)
            # dialogue turns of a team's own file may repeat (one turn, many dialogues); a built
            # bank's may not
            if key in seen_text and (bank or q.dialogue_id is None):
                first_where, first_raw = seen_text[key]
                kind = "duplicate" if first_raw == q.question else "near-duplicate"
                problems.append(Problem(where, f"{kind} question of {first_where}"))
            elif bank or q.dialogue_id is None:
                seen_text[key] = (where, q.question)
            if bank and q.ground_truth:
                (questions if q.dialogue_id is None else turns).append(
                    {**record, "family": q.family, "template": q.template, "where": where}
                )
            if q.dialogue_id is None and q.ground_truth:
                golds[str(file)][q.family].append(q.ground_truth == "TRUE")
            direct = q.dialogue_id is not None or q.family in DIRECT_CLAIM_FAMILIES
            if (
                direct and len(q.predicates) == 1 and q.ground_truth and q.system_id not in ("", "generic")
            ):  # no particular system: no claims to hold together
                p = q.predicates[0]
                value = (q.ground_truth == "TRUE") == (p["polarity"] == "positive")
                claims[q.system_id][p["name"]].append((value, where))
    if bank:
        problems.extend(_balance_problems(golds))
        problems.extend(_share_problems(path, templates, positions))
        problems.extend(_cue_problems(path, questions, turns, catalog, {} if scores is None else scores))
    problems.extend(_axiom_problems(claims, catalog))
    return problems


def _bank_schema_problems(q: Question, record: dict) -> list[str]:
    """What the loader leaves free (or fills in) and the bank's own records may not."""
    found = []
    if missing := [key for key in OPTIONAL_NAMES if key not in record]:
        found.append(f"missing field(s) {', '.join(missing)} (a built bank's records have them)")
    if q.family not in FAMILIES:
        found.append(f"unknown family {q.family!r} in a built bank; families: {', '.join(FAMILIES)}")
    if q.split not in SPLITS:
        found.append(f"unknown split {q.split!r} in a built bank; splits: {', '.join(SPLITS)}")
    return found


def _unknown_truth(q, catalog: dict | None) -> list[str]:
    truth = (catalog or {}).get(q.system_id, {})
    return [
        f"{q.system_id}: asks about {p['name']}, which the systems catalog leaves unknown"
        for p in q.predicates
        if p["name"] in truth and truth[p["name"]] is None
    ]


def _share_problems(path: Path, templates: dict[str, list[bool]], positions: dict[int, list[bool]]) -> list[Problem]:
    """A template or a dialogue turn position whose label can be guessed without reading it."""
    problems = []
    for template, values in sorted(templates.items()):
        minority = min(sum(values), len(values) - sum(values)) / len(values)
        if minority < TEMPLATE_MINORITY:
            problems.append(
                Problem(
                    str(path),
                    f"template {template}: {sum(values)} TRUE / {len(values) - sum(values)} "
                    f"FALSE (each label must be at least {TEMPLATE_MINORITY:.0%})",
                )
            )
    for turn, values in sorted(positions.items()):
        majority = max(sum(values), len(values) - sum(values)) / len(values)
        if majority > POSITION_MAJORITY:
            problems.append(
                Problem(
                    str(path),
                    f"dialogue turn {turn}: {sum(values)} TRUE / {len(values) - sum(values)} "
                    f"FALSE (no label may exceed {POSITION_MAJORITY:.0%})",
                )
            )
    return problems


def _cue_problems(
    path: Path, questions: list[dict], turns: list[dict], catalog: dict | None, scores: dict
) -> list[Problem]:
    """The bank answered from surface cues: a bag-of-words model or the shortcut baseline above
    its ceiling, a template polarity with one label, an asked property whose rarer value is
    asked less often than the usual one."""
    problems = []
    # (name, score, held to the per-family ceiling): dialogue turns are all multi_hop, one family
    scored = [("the shortcut baseline", cues.shortcut_score(questions), True)]
    if turns:
        scored.append(("the shortcut baseline on dialogue turns", cues.shortcut_score(turns), False))
    if len({cues.group_of(r) for r in questions}) >= cues.FOLDS:
        scored.insert(0, ("a bag-of-words model (held out, grouped by system)", cues.surface_model(questions), True))
    scores.update((name, score) for name, score, _ in scored)
    for name, score, per_family in scored:
        if score["accuracy"] is not None and score["accuracy"] > cues.SURFACE_MAX:
            problems.append(
                Problem(
                    str(path),
                    f"{name} scores {score['accuracy']:.1%} of {score['n']} questions from surface cues "
                    f"(at most {cues.SURFACE_MAX:.0%})",
                )
            )
        for family, row in score["families"].items() if per_family else ():
            if row["n"] >= cues.FAMILY_MIN_ITEMS and row["accuracy"] > cues.FAMILY_MAX:
                problems.append(
                    Problem(
                        str(path),
                        f"{name} scores {row['accuracy']:.1%} of the {row['n']} {family} questions "
                        f"(at most {cues.FAMILY_MAX:.0%} per family)",
                    )
                )
    for (template, polarity), (true, false) in cues.polarity_balance(questions).items():
        if not true or not false:
            label = "TRUE" if true else "FALSE"
            problems.append(
                Problem(
                    str(path),
                    f"template {template}: every {polarity} conclusion is {label} ({true + false}); "
                    "the word 'not' gives the label away",
                )
            )
    for name, row in cues.minority_coverage(questions, catalog or {}).items():
        rare, usual = ("asked_true", "asked_false") if row["minority"] else ("asked_false", "asked_true")
        if row[rare] < row[usual]:
            problems.append(
                Problem(
                    str(path),
                    f"{name}: systems with its rarer value ({rare == 'asked_true'}) asked {row[rare]} times, "
                    f"the others {row[usual]} (the rarer value must be asked at least as often)",
                )
            )
    return problems


def _balance_problems(golds: dict[str, dict[str, list[bool]]]) -> list[Problem]:
    problems = []
    for file, families in golds.items():
        for family, values in sorted(families.items()):
            share = sum(values) / len(values)
            if not BALANCE[0] <= share <= BALANCE[1]:
                problems.append(
                    Problem(
                        file,
                        f"family {family}: {share:.1%} TRUE of {len(values)} "
                        f"(allowed {BALANCE[0]:.0%}-{BALANCE[1]:.0%})",
                    )
                )
    return problems


def _axiom_problems(claims: dict, catalog: dict[str, dict[str, bool]] | None) -> list[Problem]:
    problems = []
    for system_id, by_predicate in sorted(claims.items()):
        assignment = {}
        for name, values in sorted(by_predicate.items()):
            first_value, first_where = values[0]
            for value, where in values[1:]:
                if value != first_value:
                    problems.append(
                        Problem(where, f"{system_id}: {name}={value} contradicts {first_where} ({name}={first_value})")
                    )
            assignment[name] = first_value
            truth = (catalog or {}).get(system_id, {})
            if truth.get(name) is not None and truth[name] != first_value:
                problems.append(
                    Problem(
                        first_where,
                        f"{system_id}: the gold implies {name}={first_value}, the systems catalog says {truth[name]}",
                    )
                )
        for message in ontology.violations(assignment):
            where = min((w for vs in by_predicate.values() for _, w in vs), key=_line_order)
            problems.append(Problem(where, f"{system_id}: the golds break an axiom: {message}"))
    return problems


def _line_order(where: str) -> tuple[str, int]:
    file, _, line = where.rpartition(":")
    return file, int(line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bankgen validate-cases")
    parser.add_argument("path", nargs="?", default=None, help="a .jsonl file or a folder (default cases/chaosbench)")
    args = parser.parse_args(argv)
    from bankgen.bank import CASES_DIR as DEFAULT_CASES
    from bankgen.systems import load_all

    path = Path(args.path) if args.path else DEFAULT_CASES
    catalog = {s.id: s.truth for s in load_all()}
    scores: dict = {}
    problems = validate(path, catalog, scores=scores)
    for problem in problems:
        print(problem)
    for name, score in scores.items():
        if score["accuracy"] is not None:
            worst = max(score["families"].items(), key=lambda item: item[1]["accuracy"])
            print(
                f"surface cues: {name} scores {score['accuracy']:.1%} of {score['n']} questions "
                f"(highest family: {worst[0]} {worst[1]['accuracy']:.1%})"
            )
    count = len(case_files(path)) if path.exists() else 0
    if problems:
        print(f"validate-cases: {len(problems)} problem(s) in {path} ({count} file(s))")
        return 1
    print(f"validate-cases: {path} is valid ({count} file(s))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
