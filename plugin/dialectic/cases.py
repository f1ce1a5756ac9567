"""Dialectic test cases (cases/dialectic/*.yaml) and prompt variants (cases/prompts/*.txt).

A case file holds `cases: [{id, category, query, expected_mode, notes}]`; a bad entry raises
CaseFileError naming file:line (so do bytes that are not UTF-8 and YAML nested too deeply to
read), and a file without cases names the file. A variant is a system prompt file (its stem names it) or
`baseline`, which sends no system prompt.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import yaml

from pytest_reasoning_evals.casefiles import CaseFileError, check_id, read_text

MODES = ("dialectic", "bypass")
BASELINE = "baseline"
REQUIRED = ("id", "category", "query", "expected_mode")


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    query: str
    expected_mode: str
    notes: str = ""
    source: str = ""
    epoch: int = 0  # its epoch (1..K) under --eval-epochs K > 1 (plugin/epochs.py); 0: asked once
    base_id: str = ""  # ... and the id of the case it asks again (its own id has the epoch)


@dataclass(frozen=True)
class Variant:
    name: str
    system_prompt: str | None  # None: the baseline, no system prompt
    path: str | None = None

    @property
    def sha256(self) -> str | None:
        return None if self.system_prompt is None else hashlib.sha256(self.system_prompt.encode()).hexdigest()

    def messages(self, query: str) -> tuple[dict, ...]:
        system = () if self.system_prompt is None else ({"role": "system", "content": self.system_prompt},)
        return (*system, {"role": "user", "content": query})


def _case(entry: object, where: str) -> Case:
    if not isinstance(entry, dict):
        raise CaseFileError(f"{where}: a case must be a mapping with {', '.join(REQUIRED)}")
    missing = [k for k in REQUIRED if not entry.get(k)]
    if missing:
        raise CaseFileError(f"{where}: case is missing {', '.join(missing)}")
    if entry["expected_mode"] not in MODES:
        raise CaseFileError(f"{where}: expected_mode must be dialectic or bypass, got {entry['expected_mode']!r}")
    check_id(str(entry["id"]), where)
    return Case(
        str(entry["id"]),
        str(entry["category"]),
        str(entry["query"]).strip(),
        entry["expected_mode"],
        str(entry.get("notes") or ""),
        where,
    )


def load_file(path: Path) -> list[Case]:
    text = read_text(path)
    if not text.strip():
        raise CaseFileError(f"{path}: no dialectic cases (the case file is empty)")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        raise CaseFileError(f"{path}{line}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    except RecursionError:
        raise CaseFileError(f"{path}:1: invalid YAML (nested too deeply to read)") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise CaseFileError(f"{path}:1: expected a mapping with a `cases:` list")
    node = next(v for k, v in root.value if k.value == "cases")
    if not data["cases"]:
        raise CaseFileError(f"{path}:{node.start_mark.line + 1}: no dialectic cases (the `cases:` list is empty)")
    return [_case(entry, f"{path}:{item.start_mark.line + 1}") for entry, item in zip(data["cases"], node.value)]


def case_files(path: Path) -> list[Path]:
    """A YAML file, or every *.yaml / *.yml in a directory (sorted)."""
    if path.is_dir():
        return sorted([*path.glob("*.yaml"), *path.glob("*.yml")])
    if path.is_file():
        return [path]
    raise CaseFileError(f"{path}: no such dialectic case file or directory")


def cases_sha256(path: Path) -> str:
    """sha256 over the case files' names and contents (what names a run directory of them)."""
    overall = hashlib.sha256()
    for file in case_files(path):
        overall.update(f"{file.name}\0{hashlib.sha256(file.read_bytes()).hexdigest()}\n".encode())
    return overall.hexdigest()


def load_cases(path: Path) -> list[Case]:
    """A YAML file, or every *.yaml / *.yml in a directory; ids unique across files."""
    cases: list[Case] = []
    seen: dict[str, str] = {}
    for file in case_files(path):
        for case in load_file(file):
            if case.id in seen:
                raise CaseFileError(f"{case.source}: duplicate case id {case.id!r} (first at {seen[case.id]})")
            seen[case.id] = case.source
            cases.append(case)
    if not cases:
        raise CaseFileError(f"{path}: no dialectic cases")
    return cases


def load_variants(prompts_dir: Path, names: list[str] | None = None) -> list[Variant]:
    """`baseline` plus one variant per prompt file, or just the named ones (in that order)."""
    available = {p.stem: p for p in sorted(prompts_dir.glob("*.txt"))}
    wanted = names or [BASELINE, *available]
    variants = []
    for name in wanted:
        if name == BASELINE:
            variants.append(Variant(BASELINE, None))
        elif name in available:
            check_id(name, str(available[name]), "variant name (the prompt file's name)")  # in cassette names
            variants.append(Variant(name, read_text(available[name]), str(available[name])))
        else:
            known = ", ".join([BASELINE, *available])
            raise CaseFileError(f"unknown variant {name!r}: no {prompts_dir / (name + '.txt')} (known: {known})")
    return variants
