"""ChaosBench-Logic question records and their loader (project JSONL and upstream v2 / v1 JSONL).

A record needs only `id`, `question` and `ground_truth`: a team's own TRUE/FALSE questions need
not be about dynamical systems. `family` and `split` are free names (default: the file's name
without .jsonl, and `core`); the bank's own rules (its 10 families and 5 splits, a system and a
template on every record) are checked by `python -m bankgen validate-cases` on a built bank.
A bad record raises CaseFileError naming file:line and what is wrong, so collection stops
before any model is asked anything.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from sys import intern

from pytest_reasoning_evals.casefiles import CaseFileError, check_id, numbered_lines, parse_json
from pytest_reasoning_evals.chaosbench.names import FAMILIES, SPLITS
from pytest_reasoning_evals.sampling import stratified_sample

LABELS = ("TRUE", "FALSE")
POLARITIES = ("positive", "negative")

# Upstream `type` names -> the 10 families ("multi_turn" marks a v1 dialogue turn).
UPSTREAM_TYPES = {
    **{family: family for family in FAMILIES},
    "indicator_diagnostic": "indicator_diagnostics",
    "perturbation": "perturbation_robustness",
    "adversarial_misleading": "adversarial",
    "adversarial_nearmiss": "adversarial",
    "multi_turn": "multi_hop",
}
REQUIRED_FIELDS = ("id", "question", "ground_truth")
OPTIONAL_NAMES = ("family", "split", "system_id", "template")  # free names, each a non-empty string when given
# the rest go to `extra`
KNOWN_FIELDS = frozenset((*REQUIRED_FIELDS, *OPTIONAL_NAMES, "predicates", "bias", "dialogue_id", "turn"))
DEFAULT_SPLIT = "core"


NO_EXTRA: dict = {}  # the `extra` of every loaded question that has none: one object, never changed


@dataclass(frozen=True, slots=True)  # slots: a 40,000-question bank is held by every process that collects it
class Question:
    id: str
    question: str
    ground_truth: str | None  # "TRUE" | "FALSE" | None (no gold: excluded from accuracy)
    family: str
    split: str
    system_id: str  # "" when the record names none
    template: str  # "" when the record names none
    predicates: tuple[dict, ...] = ()
    bias: str | None = None
    dialogue_id: str | None = None
    turn: int | None = None
    source: str = ""  # file:line, for error messages
    extra: dict = field(default_factory=dict, compare=False)  # fields the loader does not know, kept as read
    epoch: int = 0  # its epoch (1..K) under --eval-epochs K > 1 (plugin/epochs.py); 0: asked once
    base_id: str = ""  # ... and the id of the question it asks again (its own id has the epoch)

    def to_dict(self) -> dict:
        return asdict(self)


def upstream_split(family: str, system_id: str) -> str:
    """Split for an upstream record that has none. Upstream v2 has one template ("V2") for
    everything, so nothing can be placed in heldout_templates from its data alone."""
    if family in ("adversarial", "cross_indicator"):
        return "hard"
    if family in ("perturbation_robustness", "consistency_paraphrase"):
        return "robustness"
    if system_id.startswith("dysts_"):
        return "heldout_systems"
    return "core"


def _gold(value: object, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str) and value.strip().upper() in LABELS:
        return value.strip().upper()
    raise CaseFileError(f"{where}: ground_truth must be TRUE or FALSE (or null for no gold), got {value!r}")


def _predicates(value: object, where: str) -> tuple[dict, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise CaseFileError(f"{where}: predicates must be a list of {{name, polarity}}, got {value!r}")
    for entry in value:
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry.get("polarity") in POLARITIES):
            raise CaseFileError(
                f"{where}: each predicate needs a name and a polarity (positive|negative), got {entry!r}"
            )
    return tuple({"name": _shared(e["name"]), "polarity": _shared(e["polarity"])} for e in value)


def _shared(value):
    """One object for each distinct label, family, split, system, template or bias: they repeat
    across a bank's records, and each record's JSON gave it a copy of its own."""
    return intern(value) if type(value) is str else value


def _text(record: dict, key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CaseFileError(f"{where}: field {key!r} must be a non-empty string, got {value!r}")
    return value


def _project_record(record: dict, where: str, family: str) -> Question:
    """`family`: the one a record without any gets (its file's name)."""
    missing = [key for key in REQUIRED_FIELDS if key not in record]
    if missing:
        raise CaseFileError(f"{where}: missing field(s) {', '.join(missing)}")
    names = {"family": family, "split": DEFAULT_SPLIT, "system_id": "", "template": ""}
    names.update({key: _text(record, key, where) for key in OPTIONAL_NAMES if key in record})
    extra = {k: v for k, v in record.items() if k not in KNOWN_FIELDS}
    return Question(
        id=_text(record, "id", where),
        question=_text(record, "question", where),
        ground_truth=_shared(_gold(record["ground_truth"], where)),
        **{key: _shared(value) for key, value in names.items()},
        predicates=_predicates(record.get("predicates"), where),
        bias=_shared(record.get("bias")),
        dialogue_id=record.get("dialogue_id"),
        turn=record.get("turn"),
        source=where,
        extra=extra or NO_EXTRA,
    )


def _upstream_record(record: dict, where: str) -> Question:
    missing = [key for key in REQUIRED_FIELDS if key not in record]
    if missing:
        raise CaseFileError(f"{where}: upstream record is missing field(s) {', '.join(missing)}")
    kind = record["type"]
    family = UPSTREAM_TYPES[kind]
    system_id = str(record.get("system_id") or "generic")
    split = record.get("split") or upstream_split(family, system_id)
    if split not in SPLITS:
        raise CaseFileError(f"{where}: unknown split {split!r}; splits: {', '.join(SPLITS)}")
    return Question(
        id=_text(record, "id", where),
        question=_text(record, "question", where),
        ground_truth=_shared(_gold(record["ground_truth"], where)),
        family=_shared(family),
        split=_shared(split),
        system_id=_shared(system_id),
        template=_shared(str(record.get("template") or "upstream")),
        # upstream adversarial types name the misconception family
        bias=_shared(kind.removeprefix("adversarial_")) if kind.startswith("adversarial_") else None,
        dialogue_id=record.get("dialogue_id"),
        turn=record.get("turn"),
        source=where,
        extra=NO_EXTRA,
    )


def default_family(file: Path) -> str:
    """The family of a project record that names none: its file's name (billing.jsonl -> billing)."""
    return file.stem


def parse_record(record: object, where: str, family: str) -> Question:
    """One JSON object -> Question; upstream records have an upstream `type` and no `family`,
    anything else is read (and reported on) as the project's format, `family` for a record that
    has none (a team's own `type` key is one of its extra keys)."""
    if not isinstance(record, dict):
        raise CaseFileError(f"{where}: expected a JSON object, got {type(record).__name__}")
    upstream = "family" not in record and isinstance(record.get("type"), str) and record["type"] in UPSTREAM_TYPES
    question = _upstream_record(record, where) if upstream else _project_record(record, where, family)
    check_id(question.id, where)
    if question.dialogue_id is not None:  # a dialogue's id names its cassette
        check_id(str(question.dialogue_id), where, "dialogue_id")
    return question


def case_files(path: Path) -> list[Path]:
    """A .jsonl file, or every .jsonl file directly inside a directory (sorted by name)."""
    if path.is_dir():
        files = sorted(path.glob("*.jsonl"))
        if not files:
            raise CaseFileError(f"{path}: no .jsonl case files in this directory")
        return files
    if path.is_file():
        return [path]
    raise CaseFileError(f"{path}: no such case file or directory")


def load_questions(path: Path) -> list[Question]:
    """Every record under `path`, in file order; ids must be unique across files, and a file
    with no record in it is an error naming it."""
    questions: list[Question] = []
    seen: dict[str, str] = {}
    for file in case_files(path):
        before = len(questions)
        family = default_family(file)
        for where, line in numbered_lines(file):
            question = parse_record(parse_json(line, where), where, family)
            if question.id in seen:
                raise CaseFileError(f"{where}: duplicate id {question.id!r} (first at {seen[question.id]})")
            seen[question.id] = where
            questions.append(question)
        if len(questions) == before:
            raise CaseFileError(f"{file}: no questions (the case file is empty)")
    return questions


def unmatched_selection(questions: list[Question], *, splits: list[str], families: list[str]) -> str | None:
    """Why --eval-family / --eval-split selects nothing: a name no question has (names are free,
    so a typo is found against the questions, not a list of choices)."""
    for option, plural, wanted in (("family", "families", families), ("split", "splits", splits)):
        present = {getattr(q, option) for q in questions}
        for name in wanted:
            if name not in present:
                return f"--eval-{option} {name}: no question of this {option} in the case files; {plural} there: {', '.join(sorted(present))}"
    return None


def select(
    questions: list[Question], *, splits: list[str] | None = None, families: list[str] | None = None
) -> list[Question]:
    """Single questions (dialogue turns excluded) filtered by split and family."""
    return [
        q
        for q in questions
        if q.dialogue_id is None and (not splits or q.split in splits) and (not families or q.family in families)
    ]


@dataclass(frozen=True)
class Dialogue:
    """A multi-turn dialogue: its turns (Questions with dialogue_id and turn), in turn order."""

    id: str
    turns: tuple[Question, ...]
    epoch: int = 0  # as Question's
    base_id: str = ""

    @property
    def family(self) -> str:
        return self.turns[0].family

    @property
    def split(self) -> str:
        return self.turns[0].split


def group_dialogues(questions: list[Question]) -> list[Dialogue]:
    """The dialogue turns among `questions`, grouped by dialogue_id (first-seen order) and
    ordered by turn; turn numbers must be 1..n without gaps or repeats."""
    grouped: dict[str, list[Question]] = {}
    for q in questions:
        if q.dialogue_id is not None:
            grouped.setdefault(str(q.dialogue_id), []).append(q)
    dialogues = []
    for dialogue_id, turns in grouped.items():
        check_id(dialogue_id, turns[0].source, "dialogue_id")
        bad = next((t for t in turns if not isinstance(t.turn, int) or isinstance(t.turn, bool)), None)
        if bad is not None:
            raise CaseFileError(f"{bad.source}: dialogue turn must be an integer, got {bad.turn!r}")
        numbers = [t.turn for t in turns]
        if sorted(numbers) != list(range(1, len(turns) + 1)):
            raise CaseFileError(
                f"{turns[0].source}: dialogue {dialogue_id!r} has turns {sorted(numbers)}; expected 1..{len(turns)}"
            )
        dialogues.append(Dialogue(dialogue_id, tuple(sorted(turns, key=lambda t: t.turn))))
    return dialogues


def select_dialogues(
    dialogues: list[Dialogue],
    *,
    splits: list[str] | None = None,
    families: list[str] | None = None,
) -> list[Dialogue]:
    """Dialogues whose turns all lie in the selected splits and families."""
    return [
        d
        for d in dialogues
        if all((not splits or t.split in splits) and (not families or t.family in families) for t in d.turns)
    ]


def sample(
    questions: list[Question], dialogues: list[Dialogue], n: int, seed: int
) -> tuple[list[Question], list[Dialogue]]:
    """--eval-max-items: n items of the selection, a dialogue being one item, stratified by family
    and then by label (TRUE, FALSE, no gold; a dialogue's own label is "dialogue"): sampling.py."""
    chosen = stratified_sample(
        [*questions, *dialogues],
        n,
        seed,
        (lambda item: item.family, lambda item: "dialogue" if isinstance(item, Dialogue) else str(item.ground_truth)),
        # a dialogue's id may also be a question's
        lambda item: ("dialogue:" if isinstance(item, Dialogue) else "question:") + item.id,
    )
    return [i for i in chosen if isinstance(i, Question)], [i for i in chosen if isinstance(i, Dialogue)]


def files_digest(path: Path) -> dict:
    """sha256 of each case file and of them all, for the run manifest."""
    overall = hashlib.sha256()
    files = {}
    for file in case_files(path):
        digest = hashlib.sha256(file.read_bytes()).hexdigest()
        files[file.name] = digest
        overall.update(f"{file.name}\0{digest}\n".encode())
    return {"sha256": overall.hexdigest(), "files": files}
