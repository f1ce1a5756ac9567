"""Parameter sweeps whose regime labels come from the computed Lyapunov exponents.

Each sweep integrates all its parameter values and all their initial conditions at once (the
models are vectorised over a batch axis: values x initial conditions) and labels every point.

Several runs per point.  Every parameter value is simulated from several seeded, spread-out
initial conditions (`initial_states`): run 0 starts from the model's own initial condition (as a
single-run sweep did), then the sweep's special states (Lorenz-63: next to both non-trivial
equilibria), then `n_random` states drawn uniformly from the sweep's box (the same states at
every value).  Each run discards a long transient (`SweepSpec.transient`, chosen from measured
transient lengths, see SWEEPS) and is classified by `indicators.regime`:

* chaotic      lambda_1 > eps
* fixed_point  lambda_1 < -eps and the orbit has converged to one point (relative spread of the
               last tenth of the sampled states < 1e-5)
* periodic     lambda_1 < -eps otherwise (maps, forced flows: a stable cycle); for autonomous
               flows lambda_1 of a limit cycle is exactly 0, so |lambda_1| <= eps with
               lambda_2 < -eps is periodic
* ambiguous    anything else (near bifurcations, tori, unbounded orbits)

eps = 0.01 per iteration for maps, 0.05 per characteristic time for flows (indicators.EPS_*).

The point's regime is the common regime of all its runs; runs that disagree (coexisting
attractors, a chaotic transient still alive in some runs) make the point `ambiguous`.  Second
guard: a point within `margin` of a bifurcation value from the literature (`bifurcations`) is
`ambiguous` too, whatever the runs say (near an onset or crisis finite runs cannot tell a long
transient from an attractor: Lorenz-63 at rho = 24 has no chaotic attractor, yet most orbits
stay chaotic for thousands of time units).  No question is generated for ambiguous points.

Per point: value, regime, runs (one letter per run, in run order: c chaotic, p periodic,
f fixed_point, a ambiguous), lle / lle2 (exponents of run 0), k01 and perm_entropy (0-1 test
and permutation entropy of run 0's observed series after the transient, sampled as for the
catalog systems: flows every P/2, forced flows once per forcing period, maps every iteration;
at most the last SERIES_SAMPLES samples) and, when the literature guard applies,
near_bifurcation (the bifurcation value).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from bankgen import dynamics, indicators

N_RANDOM = 4  # random initial conditions per point (plus run 0 and the special states)
SERIES_SAMPLES = 5000  # 0-1 test / permutation entropy of a sweep point: at most the last 5000 samples
RUN_CODES = {"chaotic": "c", "periodic": "p", "fixed_point": "f", "ambiguous": "a", "stochastic": "s"}


@dataclass(frozen=True)
class SweepSpec:
    system: str  # dynamics.MODELS key
    parameter: str
    values: tuple[float, ...]
    fixed: dict = field(default_factory=dict)
    label: str = ""
    k: int = 1  # exponents computed (2 for autonomous flows: limit cycles)
    transient: float | None = None  # units of P (flows) or iterations (maps)
    horizon: float | None = None
    box: tuple[tuple[float, float], ...] = ()  # random initial states: uniform in this box
    n_random: int = N_RANDOM
    special: Callable | None = None  # special(p) -> list of (d, nvalues) initial states
    special_note: str = ""
    bifurcations: tuple[float, ...] = ()  # literature values of the swept parameter
    margin: float = 0.0  # |value - bifurcation| <= margin -> ambiguous
    ic_note: str = ""


def _grid(lo: float, hi: float, n: int) -> tuple[float, ...]:
    return tuple(float(v) for v in np.round(np.linspace(lo, hi, n), 6))


def _lorenz_near_equilibria(p: dict) -> list[np.ndarray]:
    """States 0.5 (in each coordinate) away from the non-trivial equilibria C+ and C-
    (+-sqrt(beta (rho - 1)), +-sqrt(beta (rho - 1)), rho - 1): for 13.93 < rho < 24.74 they lie
    in the basin of the stable equilibria, so a coexisting or transient chaotic set shows up as a
    disagreement with the runs started far away."""
    rho = np.asarray(p["rho"], dtype=float).reshape(-1)
    c = np.sqrt(np.maximum(float(p["beta"]) * (rho - 1.0), 0.0))
    return [np.stack([s * c + 0.5, s * c + 0.5, rho - 1.0 + 0.5]) for s in (1.0, -1.0)]


# Transients were measured, not guessed (scratch runs, RK4 as here, 400 initial conditions
# uniform in the Lorenz box below, settled = within 0.5 of C+-): rho = 22: all settle, median
# 39, 90 % by 127, last at 322 time units; rho = 23: median 124, 90 % by 614, last at 1693;
# rho = 24: 327 of 400 still chaotic after 4000 time units (the lifetime of the chaotic saddle
# diverges at the attractor onset 24.06), so rho = 24 cannot be settled by simulation: the runs
# started next to C+- settle, the others do not, and the point is ambiguous (and the literature
# guard applies).  A transient of 2000 P = 1500 time units settles rho <= 22.
SWEEPS: dict[str, SweepSpec] = {
    # Bifurcations: period doublings r1 = 3, r2 = 1 + sqrt(6) = 3.449490, r3 = 3.544090,
    # r4 = 3.564407, accumulation (onset of chaos) r_inf = 3.569946 (Feigenbaum 1978; Strogatz,
    # Nonlinear Dynamics and Chaos, 2nd ed., sec. 10.2), period-3 window opens at
    # 1 + sqrt(8) = 3.828427 (tangent bifurcation; Strogatz sec. 10.4).
    "logistic_r": SweepSpec(
        "logistic",
        "r",
        _grid(2.5, 4.0, 301),
        {},
        "the logistic map x(n+1) = r x(n) (1 - x(n))",
        transient=20000,
        box=((0.02, 0.98),),
        bifurcations=(3.0, 3.449490, 3.544090, 3.564407, 3.569946, 3.828427),
        margin=0.001,
    ),
    # Bifurcation: the period-doubling cascade of the b = 0.3 Henon map accumulates at
    # a = 1.058 (onset of chaos, quoted as ~1.06 in the literature; measured here on a 0.0005
    # grid: the largest exponent changes sign between a = 1.0580 (-0.009) and 1.0585 (+0.006),
    # after period doublings near 1.051 and 1.0565).  Coexisting attractors (a period-6 orbit
    # next to the chaotic one) make a = 1.066 ... 1.076 ambiguous through the runs, not the guard.
    "henon_a": SweepSpec(
        "henon",
        "a",
        _grid(1.0, 1.4, 201),
        {"b": 0.3},
        "the Hénon map with b = 0.3",
        transient=20000,
        box=((-0.5, 0.5), (-0.15, 0.15)),
        bifurcations=(1.0580,),
        margin=0.001,
    ),
    "rossler_c": SweepSpec(
        "rossler",
        "c",
        _grid(2.0, 7.0, 101),
        {"a": 0.2, "b": 0.2},
        "the Rössler system with a = b = 0.2",
        k=2,
        transient=500.0,
        box=((-4.0, 4.0), (-4.0, 4.0), (0.0, 0.5)),
    ),
    "duffing_gamma": SweepSpec(
        "duffing_forced",
        "gamma",
        _grid(0.1, 0.6, 101),
        {"delta": 0.3, "alpha": -1.0, "beta": 1.0, "omega": 1.2},
        "the forced Duffing oscillator x'' + 0.3x' - x + x^3 = gamma cos(1.2t)",
        k=1,
        transient=500.0,
        box=((-1.5, 1.5), (-1.0, 1.0)),
    ),
    # Bifurcations (sigma = 10, beta = 8/3): homoclinic explosion at rho = 13.926 (chaotic
    # transients begin), onset of the strange attractor at rho = 24.06 (Kaplan & Yorke 1979,
    # Commun. Math. Phys. 67:93; Sparrow 1982, The Lorenz Equations), subcritical Hopf
    # bifurcation of C+- at rho = sigma (sigma + beta + 3) / (sigma - beta - 1) = 24.7368.
    "lorenz_rho": SweepSpec(
        "lorenz63",
        "rho",
        _grid(10.0, 250.0, 121),
        {"sigma": 10.0, "beta": 8.0 / 3.0},
        "the Lorenz-63 system with sigma = 10 and beta = 8/3",
        k=2,
        transient=2000.0,
        box=((-20.0, 20.0), (-25.0, 25.0), (0.0, 50.0)),
        special=_lorenz_near_equilibria,
        special_note="0.5 from C+ and from C- in each coordinate",
        bifurcations=(13.926, 24.06, 24.7368),
        margin=0.5,
    ),
}


def initial_states(spec: SweepSpec, model, p: dict, nvalues: int, seed: int = 0) -> list[np.ndarray]:
    """Initial states of the runs, each (d, nvalues): the model's own initial condition (drawn
    as `indicators.analyse` draws it), the special states, then `n_random` uniform in the box."""
    rng = np.random.default_rng(seed)
    own = model.init(p, (nvalues, 1), rng)[..., 0]
    d = own.shape[0]
    states = [own]
    if spec.special is not None:
        states += [
            np.broadcast_to(np.asarray(s, dtype=float).reshape(d, -1), (d, nvalues)).copy() for s in spec.special(p)
        ]
    if spec.box:
        if len(spec.box) != d:
            raise ValueError(f"sweep box has {len(spec.box)} coordinates, model {spec.system} has {d}")
        boxed = np.random.default_rng([seed, 1])
        lo = np.array([b[0] for b in spec.box])
        hi = np.array([b[1] for b in spec.box])
        for _ in range(spec.n_random):
            x = lo + (hi - lo) * boxed.random(d)
            states.append(np.broadcast_to(x[:, None], (d, nvalues)).copy())
    return states


def combine(regimes: list[str]) -> str:
    """The common regime of all runs, `ambiguous` when they disagree."""
    return regimes[0] if regimes and all(r == regimes[0] for r in regimes) else "ambiguous"


def near_bifurcation(spec: SweepSpec, value: float) -> float | None:
    """The literature bifurcation value within the spec's margin of `value`, if any."""
    near = [b for b in spec.bifurcations if abs(float(value) - b) <= spec.margin]
    return min(near, key=lambda b: abs(float(value) - b)) if near else None


def run_points(spec: SweepSpec, values=None, seed: int = 0, guard: bool = True) -> list[dict]:
    """Exponents, per-run regimes and the point regime for each value (all values and all
    initial conditions integrated together).  `guard`: apply the literature margin."""
    model = dynamics.MODELS[spec.system]
    values = np.asarray(spec.values if values is None else values, dtype=float).reshape(-1)
    nv = values.size
    base = model.params(spec.fixed)
    per_value = dict(base, **{spec.parameter: values[:, None]})
    starts = initial_states(spec, model, per_value, nv, seed)
    nrun = len(starts)
    batch = dict(base, **{spec.parameter: np.tile(values, nrun)[:, None]})  # run-major: j * nv + i
    analysis = indicators.analyse(
        model,
        batch,
        npar=nv * nrun,
        k=spec.k,
        seed=seed,
        transient=spec.transient,
        horizon=spec.horizon,
        x0=np.concatenate(starts, axis=1),
    )
    series = np.asarray(analysis.series)
    points = []
    for i, value in enumerate(values):
        single = dict(base, **{spec.parameter: float(value)})
        regimes = [
            indicators.regime(
                model,
                single,
                analysis.exponents[j * nv + i],
                float(analysis.spread[j * nv + i]),
                bool(analysis.bounded[j * nv + i]),
            )
            for j in range(nrun)
        ]
        ex = analysis.exponents[i]
        obs = series[-SERIES_SAMPLES:, i]
        finite = bool(analysis.bounded[i]) and bool(np.isfinite(obs).all())
        point = {
            "value": float(value),
            "lle": float(ex[0]),
            **({"lle2": float(ex[1])} if len(ex) > 1 else {}),
            "regime": combine(regimes),
            "runs": "".join(RUN_CODES[r] for r in regimes),
            "k01": indicators.zero_one_k(obs, seed=seed) if finite else None,
            "perm_entropy": indicators.permutation_entropy(obs) if finite else None,
        }
        near = near_bifurcation(spec, value) if guard else None
        if near is not None:
            point["regime"] = "ambiguous"
            point["near_bifurcation"] = near
        points.append(point)
    return points


def point(
    system: str, parameter: str, value: float, fixed: dict | None = None, k: int | None = None, seed: int = 0
) -> dict:
    """One sweep point with the settings (initial conditions, transient, literature guard) of the
    sweep over the same system and parameter; other parameters: model defaults plus `fixed`."""
    spec = next((s for s in SWEEPS.values() if s.system == system and s.parameter == parameter), None)
    if spec is None:
        spec = SweepSpec(system, parameter, (float(value),))
    spec = replace(spec, fixed=dict(spec.fixed, **(fixed or {})), k=spec.k if k is None else k)
    return run_points(spec, [value], seed=seed)[0]


def compute_sweep(name: str, seed: int = 0) -> dict:
    spec = SWEEPS[name]
    model = dynamics.MODELS[spec.system]
    points = run_points(spec, seed=seed)
    p = model.params(spec.fixed)
    runs = ["the model's own initial condition (seeded)"]
    if spec.special:
        runs.append(spec.special_note)
    if spec.box:
        runs.append(f"{spec.n_random} uniform in {[list(b) for b in spec.box]} (seeded, the same at every value)")
    return {
        "system": spec.system,
        "parameter": spec.parameter,
        "label": spec.label,
        "fixed": dict(spec.fixed),
        "eps": indicators.lyapunov_eps(model, p),
        "bifurcations": list(spec.bifurcations),
        "margin": spec.margin,
        "settings": {
            "exponents": spec.k,
            "transient": model.transient if spec.transient is None else spec.transient,
            "horizon": model.horizon if spec.horizon is None else spec.horizon,
            "units": "iterations" if model.kind == "map" else "characteristic times",
            "timescale": 1.0 if model.kind == "map" else model.P(p),
            "dt": 1.0 if model.kind == "map" else model.step_size(p),
            "seed": seed,
            "runs": len(points[0]["runs"]),
            "initial_conditions": "; ".join(runs),
            "series_samples": SERIES_SAMPLES,
        },
        "points": points,
    }


def regime_counts(sweep: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pt in sweep["points"]:
        counts[pt["regime"]] = counts.get(pt["regime"], 0) + 1
    return dict(sorted(counts.items()))
