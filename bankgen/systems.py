"""The ChaosBench system catalog: curated (core.yaml) and imported (dysts.yaml) systems.

Each catalog file is YAML with a top-level ``systems`` list; every entry carries an id, a noun
phrase ``name`` usable in questions, a ``kind``, plain-text equations, parameters, a citation,
an optional simulation key and a truth assignment over all 27 ontology predicates (`null` = unknown:
not established for this system, so never asked). Loading
checks the schema and that every truth assignment satisfies the ontology's axioms; any problem
raises :class:`CatalogError` naming the file and the system.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pytest_reasoning_evals.chaosbench import ontology

__all__ = ["System", "CatalogError", "KINDS", "CATALOG_DIR", "load_catalog", "load_all"]

CATALOG_DIR = Path(__file__).resolve().parents[1] / "cases" / "chaosbench" / "systems"

KINDS = ("flow", "map", "delay", "pde", "forced", "conservative", "stochastic", "non_chaotic")
REQUIRED_KEYS = ("id", "name", "kind", "equations", "parameters", "source", "truth")
# `simulate` may be absent or null (not simulated); other extra keys are ignored.
ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
# Words that give a predicate away in a system's name ("the damped oscillator": dissipative; "the
# four-dimensional X system": the bank's hyperchaotic ones). A name identifies, it does not tell.
LEAKY_NAME = re.compile(
    r"\b(damped|undamped|overdamped|chaotic|chaos|hyperchaotic|hyper\w*|four-dimensional|random|regime|"
    r"periodic(?! domain| boundar)|quasi-periodic|double-scroll|dissipative|conservative|area-preserving|stochastic|noisy|"
    r"forced|driven|high energy|strange|attractor|integrable|hamiltonian)\b",
    re.IGNORECASE,
)
# catalog file name -> origin recorded on its systems
ORIGINS = {"core.yaml": "core", "dysts.yaml": "dysts"}


class CatalogError(ValueError):
    """A catalog file is malformed or a truth assignment breaks the ontology."""


@dataclass(frozen=True)
class System:
    id: str
    name: str
    kind: str
    equations: str
    parameters: dict
    truth: dict[str, bool | None]  # None: unknown, never asked
    source: str
    simulate: dict | None
    origin: str  # "core" | "dysts"


def _problems(entry: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    missing = [k for k in REQUIRED_KEYS if k not in entry]
    if missing:
        problems.append(f"missing key(s) {', '.join(missing)}")
    sid = entry.get("id")
    if "id" in entry and (not isinstance(sid, str) or not ID_PATTERN.match(sid)):
        problems.append(f"id {sid!r} does not match {ID_PATTERN.pattern}")
    for key in ("name", "equations", "source"):
        if key in entry and (not isinstance(entry[key], str) or not entry[key].strip()):
            problems.append(f"{key} must be a non-empty string")
    if isinstance(entry.get("name"), str) and (leak := LEAKY_NAME.search(entry["name"])):
        problems.append(f"name {entry['name']!r} gives a property away ({leak.group(0)!r})")
    if "kind" in entry and entry["kind"] not in KINDS:
        problems.append(f"unknown kind {entry['kind']!r} (allowed: {', '.join(KINDS)})")
    if "parameters" in entry and not isinstance(entry["parameters"], dict):
        problems.append("parameters must be a mapping")
    simulate = entry.get("simulate")
    if simulate is not None:
        if not isinstance(simulate, dict) or not (
            isinstance(simulate.get("model"), str) or isinstance(simulate.get("dysts"), str)
        ):
            problems.append("simulate must be null or a mapping with a 'model' or 'dysts' name")
    if "truth" in entry:
        truth = entry["truth"]
        if not isinstance(truth, dict):
            problems.append("truth must be a mapping of the 27 predicates to booleans (or null: unknown)")
        else:
            absent = [p for p in ontology.PREDICATES if p not in truth]
            if absent:
                problems.append(f"truth is missing predicate(s) {', '.join(absent)}")
            extra = sorted(str(k) for k in truth if k not in ontology.PREDICATES)
            if extra:
                problems.append(f"truth has unknown predicate(s) {', '.join(extra)}")
            nonbool = [str(k) for k, v in truth.items() if v is not None and not isinstance(v, bool)]
            if nonbool:
                problems.append(f"truth value(s) neither boolean nor null for {', '.join(nonbool)}")
            if not absent and not extra and not nonbool:
                for message in ontology.violations(truth):
                    problems.append(f"truth violates the ontology: {message}")
                problems += _forced_unknowns(truth)
    return problems


def _forced_unknowns(truth: dict) -> list[str]:
    """An unknown (null) value that the known ones settle through the axioms is a catalog slip:
    the bank would silently skip a fact the catalog in fact states."""
    requires, excludes = ontology.requires_closure(), ontology.excludes_closure()
    true = [q for q, v in truth.items() if v is True]
    problems = []
    for p, value in truth.items():
        if value is None:
            if any(p in requires[q] for q in true):
                problems.append(f"{p} is null but the axioms make it true")
            elif any(p in excludes[q] for q in true):
                problems.append(f"{p} is null but the axioms make it false")
    return problems


def load_catalog(path: Path, origin: str | None = None) -> list[System]:
    """Load and check one catalog file. Raises CatalogError("<file>: system <id>: <problem>")."""
    path = Path(path)
    if origin is None:
        origin = ORIGINS.get(path.name, path.stem)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path}: cannot read catalog: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("systems"), list):
        raise CatalogError(f"{path}: expected a mapping with a 'systems' list")
    systems: list[System] = []
    seen: set[str] = set()
    for index, entry in enumerate(data["systems"]):
        if not isinstance(entry, dict):
            raise CatalogError(f"{path}: system #{index}: entry is not a mapping")
        sid = entry.get("id")
        label = sid if isinstance(sid, str) and sid else f"#{index}"
        problems = _problems(entry)
        if isinstance(sid, str) and sid in seen:
            problems.append("duplicate id")
        if problems:
            raise CatalogError(f"{path}: system {label}: {'; '.join(problems)}")
        seen.add(sid)
        systems.append(
            System(
                id=sid,
                name=entry["name"],
                kind=entry["kind"],
                equations=entry["equations"],
                parameters=dict(entry["parameters"]),
                truth={p: entry["truth"][p] for p in ontology.PREDICATES},
                source=entry["source"],
                simulate=dict(entry["simulate"]) if entry.get("simulate") else None,
                origin=origin,
            )
        )
    return systems


def load_all(catalog_dir: Path | None = None) -> list[System]:
    """core.yaml then dysts.yaml (when present) from CATALOG_DIR; ids unique across files."""
    directory = CATALOG_DIR if catalog_dir is None else Path(catalog_dir)
    systems: list[System] = []
    where: dict[str, Path] = {}
    for filename, origin in ORIGINS.items():
        path = directory / filename
        if not path.exists():
            continue
        for system in load_catalog(path, origin=origin):
            if system.id in where:
                raise CatalogError(f"{path}: system {system.id}: duplicate id (already defined in {where[system.id]})")
            where[system.id] = path
            systems.append(system)
    return systems
