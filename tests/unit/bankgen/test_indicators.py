"""Chaos indicators, simulated models, sweeps and the compute-indicators cache (known values)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml

from bankgen import compute_indicators, dynamics, indicators, sweeps

LOGISTIC = {"model": "logistic"}


def lle(model: str, **parameters) -> float:
    return indicators.largest_lyapunov({"model": model}, parameters, seed=0)


def _chaotic_map_truth() -> dict:
    for entry in compute_indicators.load_entries():
        if entry.id == "logistic_r4":
            return dict(entry.truth)
    from pytest_reasoning_evals.chaosbench import ontology

    truth = {name: False for name in ontology.PREDICATES}
    truth.update(
        Chaotic=True,
        Deterministic=True,
        PosLyap=True,
        Sensitive=True,
        Bounded=True,
        Nonlinear=True,
        PointUnpredictable=True,
        StatPredictable=True,
        DiscreteTime=True,
        Autonomous=True,
        FiniteDimensional=True,
        Mixing=True,
        Ergodic=True,
    )
    return truth


# ---------------------------------------------------------------------- Lyapunov exponents


def test_logistic_r4_lyapunov_is_ln2():
    assert lle("logistic", r=4.0) == pytest.approx(math.log(2), abs=0.02)


def test_logistic_r32_lyapunov_is_negative():
    assert lle("logistic", r=3.2) == pytest.approx(-0.916, abs=0.05)


def test_henon_lyapunov():
    assert lle("henon", a=1.4, b=0.3) == pytest.approx(0.42, abs=0.03)


def test_lorenz63_lyapunov():
    assert lle("lorenz63", sigma=10.0, rho=28.0, beta=8.0 / 3.0) == pytest.approx(0.9, abs=0.1)


def test_van_der_pol_limit_cycle_has_zero_exponent():
    assert abs(lle("van_der_pol", mu=1.0)) < 0.05


def test_damped_oscillator_exponent_is_negative():
    value = lle("damped_oscillator", omega0=1.0, zeta=0.1)
    assert value < 0
    assert value == pytest.approx(-0.1, abs=0.01)  # -zeta * omega0


def test_second_exponent_flags_hyperchaos():
    model = dynamics.MODELS["rossler_hyperchaos"]
    p = model.params({})
    analysis = indicators.analyse(model, p, k=2, horizon=100.0)
    eps = indicators.lyapunov_eps(model, p)
    assert analysis.exponents[0, 0] > eps and analysis.exponents[0, 1] > eps
    lorenz = dynamics.MODELS["lorenz63"]
    second = indicators.analyse(lorenz, lorenz.params({}), k=2, horizon=100.0).exponents[0, 1]
    assert abs(second) < indicators.lyapunov_eps(lorenz)  # the flow direction


# ---------------------------------------------------------------------- 0-1 test, permutation entropy


def test_zero_one_chaotic_series():
    lorenz = dynamics.trajectory({"model": "lorenz63"}, {}, 1000, seed=0)
    logistic = dynamics.trajectory(LOGISTIC, {"r": 4.0}, 2000, seed=0)
    assert indicators.zero_one_k(lorenz) > 0.8
    assert indicators.zero_one_k(logistic) > 0.8


def test_zero_one_regular_series():
    vdp = dynamics.trajectory({"model": "van_der_pol"}, {"mu": 1.0}, 1000, seed=0)
    logistic = dynamics.trajectory(LOGISTIC, {"r": 3.2}, 2000, seed=0)
    assert indicators.zero_one_k(vdp) < 0.2
    assert indicators.zero_one_k(logistic) < 0.2


def test_oversampled_lorenz_fools_the_zero_one_test():
    """Upstream's defect: sampling at the integration step makes Lorenz-63 look regular."""
    model = dynamics.MODELS["lorenz63"]
    p = model.params({})
    rng = np.random.default_rng(0)
    x = model.init(p, (1, 1), rng)
    x, t = dynamics.run_model(model, p, 3000, x, 0.0, rng)
    record: list = []
    dynamics.run_model(model, p, 2000, x, t, rng, record_every=1, record=record)
    assert indicators.zero_one_k(np.asarray(record).reshape(-1)) < 0.5


def test_zero_one_is_seeded():
    series = dynamics.trajectory(LOGISTIC, {"r": 3.7}, 1000, seed=1)
    assert indicators.zero_one_k(series, seed=5) == indicators.zero_one_k(series, seed=5)


def test_permutation_entropy():
    noise = np.random.default_rng(0).standard_normal(20000)
    sine = np.sin(0.1 * np.arange(5000))
    assert indicators.permutation_entropy(noise) > 0.95
    assert indicators.permutation_entropy(sine) < 0.5


# ---------------------------------------------------------------------- models


def test_ornstein_uhlenbeck_is_reproducible():
    first = dynamics.trajectory({"model": "ornstein_uhlenbeck"}, {"theta": 1.0, "sigma": 0.5}, 500, seed=3)
    second = dynamics.trajectory({"model": "ornstein_uhlenbeck"}, {"theta": 1.0, "sigma": 0.5}, 500, seed=3)
    other = dynamics.trajectory({"model": "ornstein_uhlenbeck"}, {"theta": 1.0, "sigma": 0.5}, 500, seed=4)
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)
    # the shared-noise exponent of an OU process is -theta
    assert lle("ornstein_uhlenbeck", theta=1.0, sigma=0.5) == pytest.approx(-1.0, abs=0.05)


def test_unknown_parameters_are_ignored_and_names_are_case_insensitive():
    model = dynamics.MODELS["circle_map"]
    p = model.params({"omega": 0.3, "k": 0.9, "note": "descriptive extra"})
    assert p["Omega"] == 0.3 and p["K"] == 0.9 and "note" not in p


def test_doubling_map_orbit_does_not_collapse():
    series = dynamics.trajectory({"model": "bernoulli"}, {}, 500, seed=0)
    assert series[-100:].std() > 0.1
    assert lle("bernoulli") == pytest.approx(math.log(2), abs=1e-9)


# ---------------------------------------------------------------------- sweeps


def test_sweep_point_classification():
    assert sweeps.point("logistic", "r", 3.83)["regime"] == "periodic"
    assert sweeps.point("logistic", "r", 3.9)["regime"] == "chaotic"
    assert sweeps.point("logistic", "r", 2.8)["regime"] == "fixed_point"


# ---------------------------------------------------------------------- cache files


def test_cached_files_cover_the_catalog():
    cached = json.loads(compute_indicators.INDICATORS_FILE.read_text(encoding="utf-8"))
    assert cached["version"] == 1 and cached["command"] == compute_indicators.COMMAND
    simulated = [e.id for e in compute_indicators.load_entries() if e.simulate]
    assert simulated, "no simulated catalog system"
    missing = sorted(set(simulated) - set(cached["systems"]))
    assert not missing, f"not in indicators.json: {missing}"
    for sid in simulated:
        record = cached["systems"][sid]
        assert {"lle", "k01", "perm_entropy", "settings"} <= set(record)
        assert record["lle"] is not None and 0.0 - 1e-9 <= record["perm_entropy"] <= 1.0 + 1e-9


def test_cached_sweeps_have_both_regimes():
    cached = json.loads(compute_indicators.SWEEPS_FILE.read_text(encoding="utf-8"))["sweeps"]
    assert set(sweeps.SWEEPS) <= set(cached)
    for name, sweep in cached.items():
        regimes = {p["regime"] for p in sweep["points"]}
        assert regimes <= {"chaotic", "periodic", "fixed_point", "ambiguous"}, name
        assert "chaotic" in regimes and regimes & {"periodic", "fixed_point"}, name
        values = [p["value"] for p in sweep["points"]]
        assert values == sorted(values), name


def test_cache_numbers_are_rounded_to_six_digits():
    text = compute_indicators.INDICATORS_FILE.read_text(encoding="utf-8")
    for record in json.loads(text)["systems"].values():
        for key in ("lle", "k01", "perm_entropy"):
            value = record[key]
            assert value is None or float(f"{value:.6g}") == value


def test_verify_passes_for_one_system():
    if "logistic_r4" not in {e.id for e in compute_indicators.load_entries()}:
        pytest.skip("catalog has no logistic_r4")
    assert compute_indicators.main(["--verify", "--only", "logistic_r4"]) == 0


def test_planted_wrong_label_fails_verification(tmp_path, capsys):
    catalog = tmp_path / "systems"
    catalog.mkdir()
    # r = 3.2 is periodic
    planted = {
        "id": "planted_logistic",
        "name": "the planted logistic map",
        "kind": "map",
        "equations": "x(n+1) = r x(n) (1 - x(n))",
        "parameters": {"r": 3.2},
        "source": "test",
        "simulate": {"model": "logistic"},
        "truth": _chaotic_map_truth(),
    }
    (catalog / "core.yaml").write_text(yaml.safe_dump({"systems": [planted]}), encoding="utf-8")
    files = dict(
        catalog_dir=catalog, indicators_file=tmp_path / "indicators.json", sweeps_file=tmp_path / "sweeps.json"
    )
    assert compute_indicators.main(["--only", "planted_logistic"], **files) == 0
    capsys.readouterr()
    assert compute_indicators.main(["--verify", "--only", "planted_logistic"], **files) == 1
    out = capsys.readouterr().out
    assert "system planted_logistic: curated Chaotic=True but computed lle=-0.916" in out
    assert "PosLyap=True" in out


def test_dysts_trajectory_uses_dysts():
    if not dynamics.dysts_available():
        pytest.skip("dysts not installed")
    series = dynamics.trajectory({"dysts": "SprottB"}, {}, 200, seed=0)
    assert series.shape == (200,) and np.isfinite(series).all() and series.std() > 0.1


def test_oversampled_k01_fine_is_cached_for_own_flows():
    """k01_fine: the same 0-1 test on the same orbit sampled at the integration step -- the
    oversampling failure (K near 0 for chaotic flows) that cross-indicator questions use."""
    cached = json.loads(compute_indicators.INDICATORS_FILE.read_text(encoding="utf-8"))["systems"]
    entries = [e for e in compute_indicators.load_entries() if e.simulate]
    flows = [e for e in entries if compute_indicators.fine_applies(e.simulate)]
    assert flows
    for e in entries:
        record = cached[e.id]
        if e in flows:
            assert record["k01_fine_dt"] == pytest.approx(record["settings"]["dt"]), e.id
            assert record["k01_fine"] is not None and -1.0 <= record["k01_fine"] <= 1.0, e.id
        else:
            assert "k01_fine" not in record, e.id
    lorenz = cached["lorenz63"]
    assert lorenz["k01"] > 0.8 and lorenz["k01_fine"] < 0.2 and lorenz["k01_fine_dt"] == 0.01
