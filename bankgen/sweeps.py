"""Parameter sweeps whose regime labels come from the computed Lyapunov exponents.

Each sweep integrates all its parameter values at once (the models are vectorised over a
parameter axis) and labels every point (`indicators.regime`):

* chaotic      lambda_1 > eps
* fixed_point  lambda_1 < -eps and the orbit has converged to one point (relative spread of the
               last tenth of the sampled states < 1e-5)
* periodic     lambda_1 < -eps otherwise (maps, forced flows: a stable cycle); for autonomous
               flows lambda_1 of a limit cycle is exactly 0, so |lambda_1| <= eps with
               lambda_2 < -eps is periodic
* ambiguous    anything else (near bifurcations, tori, unbounded orbits) -- no question is
               generated for these points

eps = 0.01 per iteration for maps, 0.05 per characteristic time for flows (indicators.EPS_*).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bankgen import dynamics, indicators


@dataclass(frozen=True)
class SweepSpec:
    system: str                 # dynamics.MODELS key
    parameter: str
    values: tuple[float, ...]
    fixed: dict = field(default_factory=dict)
    label: str = ""
    k: int = 1                  # exponents computed (2 for autonomous flows: limit cycles)
    transient: float | None = None
    horizon: float | None = None


def _grid(lo: float, hi: float, n: int) -> tuple[float, ...]:
    return tuple(float(v) for v in np.round(np.linspace(lo, hi, n), 6))


SWEEPS: dict[str, SweepSpec] = {
    "logistic_r": SweepSpec("logistic", "r", _grid(2.5, 4.0, 301), {},
                            "the logistic map x(n+1) = r x(n) (1 - x(n))"),
    "henon_a": SweepSpec("henon", "a", _grid(1.0, 1.4, 201), {"b": 0.3}, "the Hénon map with b = 0.3"),
    "rossler_c": SweepSpec("rossler", "c", _grid(2.0, 7.0, 101), {"a": 0.2, "b": 0.2},
                           "the Rössler system with a = b = 0.2", k=2, transient=100.0),
    "duffing_gamma": SweepSpec("duffing_forced", "gamma", _grid(0.1, 0.6, 101),
                               {"delta": 0.3, "alpha": -1.0, "beta": 1.0, "omega": 1.2},
                               "the forced Duffing oscillator x'' + 0.3x' - x + x^3 = gamma cos(1.2t)",
                               k=1, transient=100.0),
    "lorenz_rho": SweepSpec("lorenz63", "rho", _grid(10.0, 250.0, 121), {"sigma": 10.0, "beta": 8.0 / 3.0},
                            "the Lorenz-63 system with sigma = 10 and beta = 8/3", k=2, transient=100.0),
}


def run_points(system: str, parameter: str, values, fixed: dict | None = None, k: int = 1, seed: int = 0,
               transient: float | None = None, horizon: float | None = None) -> list[dict]:
    """Exponents and regime for each value of `parameter` (all integrated together)."""
    model = dynamics.MODELS[system]
    values = np.asarray(values, dtype=float)
    params = model.params(fixed or {})
    base = {key: value for key, value in params.items()}
    batch = dict(base)
    batch[parameter] = values[:, None]                   # broadcast against (npar, ncopy)
    analysis = indicators.analyse(model, batch, npar=len(values), k=k, seed=seed, transient=transient, horizon=horizon)
    points = []
    for i, value in enumerate(values):
        single = dict(base, **{parameter: float(value)})
        ex = analysis.exponents[i]
        points.append({
            "value": float(value),
            "lle": float(ex[0]),
            **({"lle2": float(ex[1])} if len(ex) > 1 else {}),
            "regime": indicators.regime(model, single, ex, float(analysis.spread[i]), bool(analysis.bounded[i])),
        })
    return points


def point(system: str, parameter: str, value: float, fixed: dict | None = None, k: int = 1, seed: int = 0) -> dict:
    """One sweep point (same settings as the sweeps)."""
    return run_points(system, parameter, [value], fixed, k=k, seed=seed)[0]


def compute_sweep(name: str, seed: int = 0) -> dict:
    spec = SWEEPS[name]
    model = dynamics.MODELS[spec.system]
    points = run_points(spec.system, spec.parameter, spec.values, spec.fixed, k=spec.k, seed=seed,
                        transient=spec.transient, horizon=spec.horizon)
    p = model.params(spec.fixed)
    return {
        "system": spec.system,
        "parameter": spec.parameter,
        "label": spec.label,
        "fixed": dict(spec.fixed),
        "eps": indicators.lyapunov_eps(model, p),
        "settings": {
            "exponents": spec.k,
            "transient": model.transient if spec.transient is None else spec.transient,
            "horizon": model.horizon if spec.horizon is None else spec.horizon,
            "units": "iterations" if model.kind == "map" else "characteristic times",
            "timescale": 1.0 if model.kind == "map" else model.P(p),
            "dt": 1.0 if model.kind == "map" else model.step_size(p),
            "seed": seed,
        },
        "points": points,
    }


def regime_counts(sweep: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pt in sweep["points"]:
        counts[pt["regime"]] = counts.get(pt["regime"], 0) + 1
    return dict(sorted(counts.items()))
