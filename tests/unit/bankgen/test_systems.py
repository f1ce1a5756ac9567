"""bankgen/systems.py: the system catalog loads, reads right, and refuses planted bad catalogs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bankgen.systems import CATALOG_DIR, KINDS, CatalogError, load_all, load_catalog
from pytest_reasoning_evals.chaosbench import ontology
from pytest_reasoning_evals.chaosbench.ontology import (
    PREDICATES,
    violations,
)

EXPECTED_ORDER = [
    "Chaotic", "Deterministic", "Stochastic", "PosLyap", "Sensitive", "StrangeAttr", "Periodic",
    "QuasiPeriodic", "FixedPointAttr", "Dissipative", "Conservative", "Bounded", "Mixing",
    "Ergodic", "ContinuousTime", "DiscreteTime", "Autonomous", "Invertible", "DelaySystem", "PDE",
    "Nonlinear", "Hyperchaotic", "PointUnpredictable", "StatPredictable", "Hamiltonian",
    "Integrable", "FiniteDimensional",
]  # fmt: skip


# ----------------------------------------------------------------------------- catalog


@pytest.fixture(scope="module")
def systems():
    return load_all()


@pytest.fixture(scope="module")
def by_id(systems):
    return {s.id: s for s in systems}


# ----------------------------------------------------------------------------- bad catalogs


def _valid_entry(by_id) -> dict:
    s = by_id["lorenz63"]
    return {
        "id": "planted",
        "name": s.name,
        "kind": s.kind,
        "equations": s.equations,
        "parameters": dict(s.parameters),
        "source": s.source,
        "simulate": s.simulate,
        "truth": dict(s.truth),
    }


def _write(path: Path, entries: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"systems": entries}, sort_keys=False), encoding="utf-8")
    return path


def _mutations(by_id):
    violating = _valid_entry(by_id)
    violating["truth"]["Periodic"] = True
    missing = _valid_entry(by_id)
    del missing["truth"]["Ergodic"]
    kind = _valid_entry(by_id)
    kind["kind"] = "chaotic_flow"
    nonbool = _valid_entry(by_id)
    nonbool["truth"]["Bounded"] = "yes"
    badid = _valid_entry(by_id)
    badid["id"] = "Planted-1"
    nokey = _valid_entry(by_id)
    del nokey["source"]
    return {
        "violating truth": ([violating], "planted", "Chaotic and Periodic are exclusive"),
        "missing predicate": ([missing], "planted", "Ergodic"),
        "unknown kind": ([kind], "planted", "chaotic_flow"),
        "non-boolean": ([nonbool], "planted", "Bounded"),
        "bad id": ([badid], "Planted-1", "does not match"),
        "missing key": ([nokey], "planted", "source"),
        "duplicate id": ([_valid_entry(by_id), _valid_entry(by_id)], "planted", "duplicate"),
    }


def test_core_catalog_loads(systems):
    core = [s for s in systems if s.origin == "core"]
    assert len(core) >= 32
    ids = [s.id for s in systems]
    assert len(ids) == len(set(ids))
    assert {s.kind for s in core} == set(KINDS)
    for s in systems:
        assert re.match(r"^[a-z][a-z0-9_]*$", s.id)
        assert list(s.truth) == EXPECTED_ORDER
        assert all(v is None or isinstance(v, bool) for v in s.truth.values())  # None: unknown
        assert violations(s.truth) == [], s.id
        assert s.name.strip() and s.source.strip() and s.equations.strip()


def test_core_names_read_as_noun_phrases(systems):
    for s in systems:
        if s.origin != "core":
            continue
        question = PREDICATES["Chaotic"].question.format(system=s.name)
        assert question.startswith("Is ") and question.endswith(" chaotic?")
        for token in ("PosLyap", "StrangeAttr", "FixedPointAttr", "QuasiPeriodic", "Hyperchaotic"):
            assert token not in s.name


@pytest.mark.parametrize(
    "system_id, expected",
    [
        ("lorenz63", {"Chaotic": True, "Dissipative": True, "StrangeAttr": True, "Mixing": True}),
        ("logistic_r3_2", {"Periodic": True, "Chaotic": False}),
        ("logistic_r2_8", {"FixedPointAttr": True, "Chaotic": False}),
        ("logistic_r4", {"Chaotic": True, "StrangeAttr": False, "Invertible": False}),
        ("standard_map", {"Conservative": True, "StrangeAttr": False, "Hamiltonian": True,
                          "Invertible": True}),
        ("cat_map", {"Conservative": True, "Invertible": True, "Mixing": True, "Ergodic": True,
                     "Chaotic": True}),
        ("ornstein_uhlenbeck", {"Stochastic": True, "Deterministic": False, "Chaotic": False}),
        ("random_walk", {"Stochastic": True, "Bounded": False, "StatPredictable": False}),
        ("kuramoto_sivashinsky", {"PDE": True, "FiniteDimensional": False, "Chaotic": True}),
        ("mackey_glass", {"DelaySystem": True, "FiniteDimensional": False, "Chaotic": True}),
        ("tent", {"Invertible": False, "Chaotic": True}),
        ("rossler_hyperchaos", {"Hyperchaotic": True}),
        ("double_pendulum", {"Chaotic": True, "Conservative": True, "StrangeAttr": False,
                             "Dissipative": False}),
        ("simple_pendulum", {"Periodic": True, "Integrable": True, "Chaotic": False}),
        ("duffing_forced", {"Autonomous": False, "Chaotic": True}),
        ("van_der_pol", {"Periodic": True, "Dissipative": True}),
        ("damped_oscillator", {"FixedPointAttr": True, "Nonlinear": False}),
    ],
)  # fmt: skip
def test_science_spot_checks(by_id, system_id, expected):
    truth = by_id[system_id].truth
    for predicate, value in expected.items():
        assert truth[predicate] is value, (system_id, predicate)


def test_planted_valid_catalog_loads(tmp_path, by_id):
    loaded = load_catalog(_write(tmp_path / "core.yaml", [_valid_entry(by_id)]))
    assert [s.id for s in loaded] == ["planted"] and loaded[0].origin == "core"


@pytest.mark.parametrize(
    "case",
    ["violating truth", "missing predicate", "unknown kind", "non-boolean", "bad id",
     "missing key", "duplicate id"],
)  # fmt: skip
def test_planted_bad_catalog_rejected(tmp_path, by_id, case):
    entries, sid, fragment = _mutations(by_id)[case]
    path = _write(tmp_path / "core.yaml", entries)
    with pytest.raises(CatalogError) as info:
        load_catalog(path)
    message = str(info.value)
    assert str(path) in message
    assert f"system {sid}:" in message
    assert fragment in message
    with pytest.raises(CatalogError):
        load_all(tmp_path)


def test_duplicate_id_across_files(tmp_path, by_id):
    _write(tmp_path / "core.yaml", [_valid_entry(by_id)])
    dysts = _write(tmp_path / "dysts.yaml", [_valid_entry(by_id)])
    with pytest.raises(CatalogError) as info:
        load_all(tmp_path)
    assert str(dysts) in str(info.value) and "system planted:" in str(info.value)
    assert "duplicate" in str(info.value)


def test_origins_and_missing_dysts(tmp_path, by_id):
    _write(tmp_path / "core.yaml", [_valid_entry(by_id)])
    assert [s.origin for s in load_all(tmp_path)] == ["core"]
    other = _valid_entry(by_id)
    other["id"] = "planted_dysts"
    other["simulate"] = {"dysts": "Lorenz"}
    _write(tmp_path / "dysts.yaml", [other])
    assert [(s.id, s.origin) for s in load_all(tmp_path)] == [
        ("planted", "core"),
        ("planted_dysts", "dysts"),
    ]


def test_catalog_dir_points_into_cases():
    assert CATALOG_DIR.parts[-3:] == ("cases", "chaosbench", "systems")
    assert (CATALOG_DIR / "core.yaml").exists()
    assert ontology.PREDICATES is PREDICATES
