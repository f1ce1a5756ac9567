"""Validity of the sweep regime labels (several runs per point, literature guard), the
per-point indicators, and the generated dysts catalog (unknown Mixing / Ergodic, neutral names).
Fast: the committed files and small functions, no long simulation."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import yaml

from bankgen import compute_indicators, dynamics, sweeps
from bankgen.dynamics import MapModel

# one letter per run in a sweep point's "runs" (the format the bank generator reads)
CODES = {"c": "chaotic", "p": "periodic", "f": "fixed_point", "a": "ambiguous", "s": "stochastic"}


@pytest.fixture(scope="module")
def cached() -> dict:
    return json.loads(compute_indicators.SWEEPS_FILE.read_text(encoding="utf-8"))["sweeps"]


def _point(sweep: dict, value: float) -> dict:
    return next(p for p in sweep["points"] if math.isclose(p["value"], value))


def _toy_bistable() -> MapModel:
    """1-D map with two attractors: x < 0 contracts onto the fixed point -1/2, x >= 0 is the
    logistic map at r = 4 on [0, 1] (chaotic).  `s` shifts the contraction's fixed point."""

    def f(x, p):
        return np.where(x < 0, -0.5 + 0.5 * (x + 0.5) + 0 * p["s"], 4.0 * x * (1.0 - x))

    def jac(x, p):
        return np.where(x[0] < 0, 0.5, 4.0 * (1.0 - 2.0 * x[0]))[None, None] + 0 * p["s"]

    return MapModel(
        id="toy_bistable",
        kind="map",
        description="toy",
        defaults={"s": 0.0},
        f=f,
        jacobian=jac,
        initial=lambda p, rng: [0.3],
        timescale=1.0,
        dt=1.0,
        transient=100,
        horizon=2000,
    )


# ---------------------------------------------------------------------- dysts catalog


@pytest.fixture(scope="module")
def dysts_catalog() -> list[dict]:
    return yaml.safe_load(compute_indicators.DYSTS_CATALOG.read_text(encoding="utf-8"))["systems"]


# ---------------------------------------------------------------------- sweep labels


def test_lorenz_rho_24_is_not_chaotic(cached):
    """Kaplan & Yorke 1979: the strange attractor exists only for rho > 24.06; below it the
    chaos is transient (and rho = 22 settles on C+-)."""
    lorenz = cached["lorenz_rho"]
    assert _point(lorenz, 24.0)["regime"] in ("ambiguous", "fixed_point")
    assert _point(lorenz, 22.0)["regime"] != "chaotic"
    assert _point(lorenz, 28.0)["regime"] == "chaotic"


def test_points_near_literature_bifurcations_are_ambiguous(cached):
    for name, spec in sweeps.SWEEPS.items():
        sweep = cached[name]
        assert sweep["bifurcations"] == pytest.approx(list(spec.bifurcations), rel=1e-5), name
        assert sweep["margin"] == pytest.approx(spec.margin), name
        for p in sweep["points"]:
            near = [b for b in spec.bifurcations if abs(p["value"] - b) <= spec.margin]
            if near:
                assert p["regime"] == "ambiguous", (name, p["value"], near)
                assert p["near_bifurcation"] == pytest.approx(near[0], rel=1e-5), (name, p["value"])
            else:
                assert "near_bifurcation" not in p, (name, p["value"])
    # the guard covers the Lorenz grid points next to 13.926 and 24.06
    assert {b for b in sweeps.SWEEPS["lorenz_rho"].bifurcations} >= {13.926, 24.06}


def test_every_point_has_several_runs_and_labelled_points_agree(cached):
    for name, sweep in cached.items():
        nrun = sweep["settings"]["runs"]
        assert nrun >= 4, name
        for p in sweep["points"]:
            runs = p["runs"]
            assert len(runs) == nrun and set(runs) <= set(CODES), (name, p["value"], runs)
            if p["regime"] != "ambiguous":
                assert {CODES[c] for c in runs} == {p["regime"]}, (name, p["value"], runs)
            elif "near_bifurcation" not in p:
                # ambiguous without the guard: the runs disagree or are ambiguous themselves
                assert len(set(runs)) > 1 or runs[0] == "a", (name, p["value"], runs)


def test_sweep_points_carry_k01_and_perm_entropy(cached):
    for name, sweep in cached.items():
        for p in sweep["points"]:
            assert "k01" in p and "perm_entropy" in p, (name, p["value"])
            if p["regime"] != "ambiguous":
                assert p["k01"] is not None and -0.2 <= p["k01"] <= 1.0 + 1e-9, (name, p["value"])
                assert p["perm_entropy"] is not None and 0.0 <= p["perm_entropy"] <= 1.0 + 1e-9, (name, p["value"])
    # the two indicators mostly agree on clear cases
    lorenz = cached["lorenz_rho"]
    assert _point(lorenz, 28.0)["k01"] > 0.8 and _point(lorenz, 10.0)["k01"] < 0.2


# ---------------------------------------------------------------------- the rule, synthetic


def test_combine_rule():
    assert {v: k for k, v in sweeps.RUN_CODES.items()} == CODES
    assert sweeps.combine(["chaotic"] * 5) == "chaotic"
    assert sweeps.combine(["periodic", "periodic", "periodic"]) == "periodic"
    assert sweeps.combine(["chaotic", "chaotic", "fixed_point", "chaotic"]) == "ambiguous"
    assert sweeps.combine(["periodic", "ambiguous"]) == "ambiguous"


def test_runs_that_disagree_make_the_point_ambiguous(monkeypatch):
    monkeypatch.setitem(dynamics.MODELS, "toy_bistable", _toy_bistable())
    both = sweeps.SweepSpec(
        "toy_bistable", "s", (0.0, 1.0), transient=100, horizon=2000, box=((-0.9, 0.9),), n_random=6
    )
    points = sweeps.run_points(both, seed=0)
    for p in points:
        assert set(p["runs"]) == {"c", "f"}, p["runs"]  # both basins were sampled
        assert p["regime"] == "ambiguous"
    only_chaos = sweeps.SweepSpec(
        "toy_bistable", "s", (0.0,), transient=100, horizon=2000, box=((0.05, 0.95),), n_random=3
    )
    p = sweeps.run_points(only_chaos, seed=0)[0]
    assert p["runs"] == "cccc" and p["regime"] == "chaotic" and p["k01"] > 0.8
    guarded = sweeps.SweepSpec(
        "toy_bistable",
        "s",
        (0.0, 1.0),
        transient=100,
        horizon=2000,
        box=((0.05, 0.95),),
        n_random=3,
        bifurcations=(0.9,),
        margin=0.2,
    )
    low, high = sweeps.run_points(guarded, seed=0)
    assert low["regime"] == "chaotic" and "near_bifurcation" not in low
    assert high["regime"] == "ambiguous" and high["near_bifurcation"] == 0.9 and high["runs"] == "cccc"


def test_dysts_mixing_and_ergodic_are_unknown(dysts_catalog):
    assert dysts_catalog
    for entry in dysts_catalog:
        truth = entry["truth"]
        assert truth["Ergodic"] is None, entry["id"]
        # only a value the axioms settle may be stated (a limit cycle excludes mixing)
        assert truth["Mixing"] is None or (truth["Mixing"] is False and truth["Periodic"] is True), entry["id"]


def test_dysts_names_do_not_leak_predicates(dysts_catalog):
    names = [e["name"] for e in dysts_catalog]
    assert len(set(names)) == len(names)
    assert len(set(compute_indicators.DYSTS_NAMES.values())) == len(compute_indicators.DYSTS_NAMES)
    pattern = re.compile(
        r"four-dimensional|dimension|hyper|chaotic|chaos|damped|random|periodic|regime|attractor|"
        r"scroll|wing|forced|driven|oscillator",
        re.IGNORECASE,
    )
    for name in list(names) + list(compute_indicators.DYSTS_NAMES.values()):
        assert not pattern.search(name), name
        assert not compute_indicators.leaking_name_words(name), name
    try:
        from bankgen.systems import LEAKY_NAME
    except ImportError:
        return
    for name in names:
        assert not LEAKY_NAME.search(name), name


def test_dysts_yaml_writes_unknown_as_null():
    assert compute_indicators._yaml_scalar(None) == "null"
    assert yaml.safe_load("truth: " + compute_indicators._yaml_map({"Mixing": None, "Chaotic": True})) == {
        "truth": {"Mixing": None, "Chaotic": True}
    }


def test_label_problems_skip_unknown_values():
    truth = {
        "Chaotic": None,
        "PosLyap": None,
        "Hyperchaotic": None,
        "FixedPointAttr": None,
        "Stochastic": None,
        "Mixing": None,
        "Ergodic": None,
    }
    entry = compute_indicators.Entry("x", "the x system", {"model": "logistic"}, {}, truth, "core")
    values = {"lle": 0.5, "lle2": 0.3, "k01": 0.1, "settings": {"eps": 0.01}}
    assert compute_indicators.label_problems(entry, values) == []
    known = compute_indicators.Entry("x", "the x system", {"model": "logistic"}, {}, dict(truth, PosLyap=False), "core")
    assert len(compute_indicators.label_problems(known, values)) == 1
