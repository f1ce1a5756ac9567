"""Chaos indicators computed from the project's own simulations (all deterministic given the seed).

Largest Lyapunov exponent (and the second one, for hyperchaos and limit cycles)
    * Maps with an easy Jacobian (logistic, tent, doubling, Henon, Lozi, Ikeda, standard, cat,
      baker, circle): tangent dynamics, x(n+1) = f(x(n)), v(n+1) = J(x(n)) v(n); 1-D maps average
      log|f'(x)|, 2-D maps carry k vectors re-orthonormalised by QR every 5 iterations; exponents
      per iteration.  Slope-2 maps (doubling, baker, tent with mu = 2) run on exact orbits built
      from random binary digits (floating-point iteration collapses onto 0).
    * Everything else (flows, delay, PDE, SDE): Benettin's two-trajectory method.  A reference
      copy and k perturbed copies at distance d0 = 1e-8 (1 + rms(x)) are integrated together;
      every P/10 (flows; every iteration for maps without a Jacobian) the separations are
      re-orthonormalised by QR (k = 1: plain renormalisation) and log(|R_ii| / d0) is accumulated.
      The exponents are the least-squares slopes of these cumulative sums against time (per unit
      time): the bounded oscillation of the growth along a limit cycle (speed changes along the
      orbit) then biases the estimate by O(P/T^2) instead of O(1/T), and the logarithmic growth
      of shear in integrable systems by O(1/T) instead of O(log T / T).  Stochastic models apply
      the same noise increment to all copies, so the exponent measures the dependence on the
      initial condition for a fixed noise realisation.
    * Defaults (dynamics.py): maps 1000 transient + 20000 measured iterations; own flows 30 P
      transient + 300 P measured (P = the model's characteristic time; some slow models less);
      dysts flows 10 P (dysts' integrator) + up to 150 P of RK4 (at most 25000 steps, at least
      60 P).  All runs use seed 0 unless told otherwise.

Classification threshold (`lyapunov_eps`): eps = 0.01 per iteration for maps and, for flows,
0.05 per characteristic time (eps = EPS_PER_PERIOD / P): over the 300-P horizon the residual
bias of a zero exponent (integrable shear, limit cycles) stays below about 0.02 per P, while the
weakest chaos in the catalog (Rossler 0.07 with P = 6, Mackey-Glass 0.005 with P = 50) sits well
above.  `regime`: chaotic if lambda_1 > eps; fixed_point if lambda_1 < -eps and the orbit has
converged to a point; periodic if lambda_1 < -eps otherwise (maps, forced flows) or, for flows
with a neutral direction along the orbit (autonomous flows, delay, PDE, dysts' phase-variable
forced flows: a limit cycle has lambda_1 = 0 exactly), |lambda_1| <= eps with lambda_2 < -eps;
ambiguous otherwise.

0-1 test for chaos (Gottwald & Melbourne 2009, SIAM J. Appl. Dyn. Syst. 8:129, modified mean
square displacement, correlation method): for 100 random c in (pi/5, 4pi/5) (seeded),
p_c(n) + i q_c(n) = sum_{j<=n} phi(j) exp(i j c), M_c(n) = mean_j |z(j+n) - z(j)|^2 for
n <= N/10, D_c(n) = M_c(n) - (E phi)^2 (1 - cos nc) / (1 - cos c), K_c = corr(n, D_c(n)),
K = median K_c.  The series must not be oversampled (sampling rule in dynamics.py).

Permutation entropy (Bandt & Pompe 2002): Shannon entropy of the ordinal patterns of `order`
consecutive values (ties by position), divided by log(order!).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bankgen import dynamics
from bankgen.dynamics import KSModel, MapModel, Model

EPS_MAP = 0.01  # per iteration
EPS_PER_PERIOD = 0.05  # flows: eps = EPS_PER_PERIOD / P (per unit time)
D0 = 1e-8  # relative size of the Benettin perturbation
FIXED_POINT_SPREAD = 1e-5  # relative spread of the final states below which the orbit is a point
N_C = 100  # number of random frequencies c in the 0-1 test
CONSTANT_RTOL = 1e-4  # series flatter than this (relative) count as constant


# ---------------------------------------------------------------------- 0-1 test, permutation entropy


def _constant(x: np.ndarray) -> bool:
    """A series varying by less than 1e-4 of its magnitude (an orbit resting on a fixed point, up
    to integrator round-off) is treated as constant: K = 0 and permutation entropy 0, instead of
    values computed from round-off noise."""
    return bool(np.ptp(x) <= CONSTANT_RTOL * (1.0 + np.abs(x).max()))


def zero_one_k(series: np.ndarray, seed: int = 0, n_c: int = N_C) -> float:
    """Gottwald-Melbourne 0-1 test K (median over c of the correlation method); ~0 regular, ~1 chaotic."""
    phi = np.asarray(series, dtype=float).reshape(-1)
    phi = phi[np.isfinite(phi)]
    N = phi.size
    if N < 100 or _constant(phi):
        return 0.0
    ncut = max(2, N // 10)
    rng = np.random.default_rng(seed)
    c = rng.uniform(np.pi / 5, 4 * np.pi / 5, n_c)
    j = np.arange(1, N + 1)
    z = np.cumsum(phi[None, :] * np.exp(1j * np.outer(c, j)), axis=1)  # p + i q
    a2 = np.abs(z) ** 2
    csum = np.concatenate([np.zeros((n_c, 1)), np.cumsum(a2, axis=1)], axis=1)  # csum[:, m] = sum_{j<m}
    nfft = 1 << int(math.ceil(math.log2(2 * N)))
    F = np.fft.fft(z, nfft, axis=1)
    corr = np.fft.ifft(F * np.conj(F), axis=1)[:, : ncut + 1]  # sum_j z[j+n] conj(z[j])
    n = np.arange(1, ncut + 1)
    head = csum[:, N][:, None] - csum[:, n]  # sum_{j=n}^{N-1} |z_j|^2
    tail = csum[:, (N - n)]  # sum_{j=0}^{N-n-1} |z_j|^2
    M = (head + tail - 2 * corr[:, 1:].real) / (N - n)[None, :]
    mean = phi.mean()
    vosc = mean**2 * (1 - np.cos(np.outer(c, n))) / (1 - np.cos(c))[:, None]
    D = M - vosc
    xi = n - n.mean()
    Dc = D - D.mean(axis=1, keepdims=True)
    denom = np.sqrt((xi**2).sum() * (Dc**2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        kc = np.where(denom > 0, (Dc @ xi) / denom, 0.0)
    return float(np.median(kc))


def permutation_entropy(series: np.ndarray, order: int = 5, delay: int = 1) -> float:
    """Normalised Bandt-Pompe permutation entropy in [0, 1]."""
    x = np.asarray(series, dtype=float).reshape(-1)
    span = (order - 1) * delay + 1
    if x.size < span + 1 or _constant(x):
        return 0.0
    windows = np.lib.stride_tricks.sliding_window_view(x, span)[:, ::delay]
    ranks = np.argsort(windows, axis=1, kind="stable")
    codes = ranks @ (order ** np.arange(order))
    _, counts = np.unique(codes, return_counts=True)
    prob = counts / counts.sum()
    return float(-(prob * np.log(prob)).sum() / math.log(math.factorial(order)))


# ---------------------------------------------------------------------- Lyapunov exponents


@dataclass
class Analysis:
    """One simulation of `npar` parameter values: exponents (npar, k), the observed series of
    the reference copy (nsamples, npar), the relative spread of the last tenth of the sampled
    states (fixed-point detection), whether the orbit stayed bounded and the mean phase-space
    volume rate (flows: divergence of the vector field; maps: log |det J|)."""

    exponents: np.ndarray
    series: np.ndarray
    spread: np.ndarray
    bounded: np.ndarray
    volume_rate: np.ndarray | None
    settings: dict = field(default_factory=dict)
    fine_series: np.ndarray | None = None  # (nfine, npar): observable at every integration step (`fine`)


def lyapunov_eps(model: Model, p: Mapping[str, Any] | None = None) -> float:
    """Threshold separating positive / zero / negative exponents (see module docstring)."""
    if model.kind == "map" or (model.stochastic and getattr(model, "discrete", False)):
        return EPS_MAP
    return EPS_PER_PERIOD / model.P(p or model.defaults)


def _orthonormal(rng: np.random.Generator, d: int, k: int) -> np.ndarray:
    q, _ = np.linalg.qr(rng.standard_normal((d, k)))
    return q


def _spread(states: list[np.ndarray], model: Model) -> np.ndarray:
    last = states[-1]
    worst = np.zeros(last.shape[1:])
    for s in states:
        dist = np.sqrt((model.delta(s.copy(), last.copy()) ** 2).sum(axis=0))
        worst = np.maximum(worst, dist)
    return worst / (1.0 + np.sqrt((last**2).sum(axis=0)))


def analyse(
    model: Model,
    p: dict,
    npar: int = 1,
    k: int = 1,
    seed: int = 0,
    transient: float | None = None,
    horizon: float | None = None,
    x0: np.ndarray | None = None,
    fine: int = 0,
) -> Analysis:
    """Simulate, estimate the k largest exponents and record the observed series.  `x0` replaces
    the model's initial condition: a state vector (d,) shared by all `npar` batch elements, or one
    state per batch element (d, npar) -- several initial conditions integrated together.
    `fine` > 0 (flows, delay, PDE): also record the observable of the reference orbit at every
    integration step for the first `fine` steps of the measured horizon (`Analysis.fine_series`;
    the orbit itself is unchanged) -- the oversampled series of the 0-1 test's known failure."""
    transient = model.transient if transient is None else transient
    horizon = model.horizon if horizon is None else horizon
    k = max(1, k)
    rng = np.random.default_rng(seed)
    if isinstance(model, MapModel) and model.orbit_fn is not None and dynamics._symbolic(model, p):
        return _analyse_symbolic(model, p, k, rng, int(transient), int(horizon))
    if model.id == "tent" and dynamics._symbolic(model, p):
        return _analyse_symbolic(model, p, k, rng, int(transient), int(horizon), orbit_fn=dynamics._tent2_orbit)
    x = model.init(p, (npar, 1), rng)
    if x0 is not None:
        x0 = np.asarray(x0, dtype=float)
        x0 = x0.reshape(-1, 1, 1) if x0.ndim == 1 else x0.reshape(x0.shape[0], -1, 1)
        x = np.broadcast_to(x0, x.shape[:1] + (npar, 1)).copy()
    x, t = dynamics.run_model(model, p, model.steps(p, transient), x, 0.0, rng)
    d = x.shape[0]
    k = min(k, d)
    if isinstance(model, MapModel) and model.jacobian is not None:
        return _analyse_tangent(model, p, x, k, rng, int(horizon), transient)
    h = 1.0 if model.kind == "map" else model.step_size(p)
    block = model.block_steps(p)
    per_sample = model.blocks_per_sample()
    nblocks = max(10, model.steps(p, horizon) // block)
    nblocks -= nblocks % per_sample
    scale = 1.0 + np.sqrt(np.mean(np.where(np.isfinite(x), x, 0.0) ** 2, axis=0))  # (npar, 1)
    d0 = D0 * scale[..., 0]  # (npar,)
    Q = _orthonormal(rng, d, k)  # (d, k)
    X = model.wrap(np.concatenate([x, x + d0[None, :, None] * Q[:, None, :]], axis=-1))
    sums = np.zeros((npar, k))
    cumulative = np.empty((nblocks, npar, k))
    series, tail_states, div = [], [], []
    tail_from = nblocks - max(2 * per_sample, nblocks // 10)
    bounded = np.ones(npar, dtype=bool)
    want_div = d <= 12 and not model.stochastic and not isinstance(model, KSModel) and npar == 1
    fine_left = max(0, int(fine)) if model.kind != "map" else 0
    fine_rec: list = []
    for b in range(nblocks):
        if fine_left > 0:
            rec: list = []
            X, t = _advance_recording(model, p, block, X, t, rng, rec)
            fine_rec.extend(np.asarray(r)[..., 0] for r in rec[:fine_left])
            fine_left -= min(fine_left, len(rec))
        else:
            X, t = dynamics.run_model(model, p, block, X, t, rng)
        ref = X[..., :1]
        D = model.delta(X[..., 1:].copy(), np.broadcast_to(ref, X[..., 1:].shape).copy())  # (d, npar, k)
        A = np.moveaxis(D, 0, 1)  # (npar, d, k)
        finite = np.isfinite(A).all(axis=(1, 2)) & np.isfinite(ref).all(axis=(0, 2))
        if not finite.all():
            A = np.where(finite[:, None, None], A, 1.0)
            ref = np.where(np.isfinite(ref), ref, 0.0)
        Qm, R = np.linalg.qr(A)
        diag = np.abs(np.diagonal(R, axis1=1, axis2=2))
        with np.errstate(divide="ignore"):
            sums += np.where(finite[:, None], np.log(np.maximum(diag, 1e-300) / d0[:, None]), 0.0)
        cumulative[b] = sums
        bounded &= finite & (np.abs(ref).max(axis=(0, 2)) < 1e8)
        X = np.concatenate([ref, model.wrap(ref + d0[None, :, None] * np.moveaxis(Qm, 1, 0))], axis=-1)
        if (b + 1) % per_sample == 0:
            series.append(np.asarray(model.observe(ref))[..., 0])
        if want_div:
            dv = model.divergence(ref.copy(), t, p)
            if dv is not None:
                div.append(np.asarray(dv)[..., 0])
        if b >= tail_from:
            tail_states.append(ref[..., 0].copy())
    # slope of the cumulative log growth against time (least squares): a bounded oscillation of
    # the growth along a limit cycle (e.g. the speed ratio along a spike) then biases the estimate
    # by O(P / T^2) instead of O(1 / T)
    times = (np.arange(1, nblocks + 1) * block * h)[:, None, None]
    tc = times - times.mean()
    exps = (tc * (cumulative - cumulative.mean(axis=0))).sum(axis=0) / (tc**2).sum()
    exps[~bounded] = np.nan
    volume = np.mean(div, axis=0) if div else None
    P = model.P(p)
    settings = {
        "method": "benettin",
        "dt": h,
        "timescale": P if model.kind != "map" else 1.0,
        "sample_dt": block * per_sample * h,
        "renorm_dt": block * h,
        "transient": transient,
        "horizon": horizon,
        "d0": D0,
        "k": k,
        "seed": seed,
        "eps": lyapunov_eps(model, p),
    }
    fine_series = np.asarray(fine_rec) if fine_rec else None
    return Analysis(exps, np.asarray(series), _spread(tail_states, model), bounded, volume, settings, fine_series)


def _advance_recording(
    model: Model, p: dict, nsteps: int, X: np.ndarray, t: float, rng, record: list
) -> tuple[np.ndarray, float]:
    """`dynamics.run_model` for `nsteps` steps, appending the observable after every step to
    `record`; the integration is the same as without recording (Kuramoto-Sivashinsky: the ETDRK4
    steps stay in Fourier space, the grid value is only read off)."""
    if isinstance(model, KSModel):
        return model.advance(X, p, nsteps, record=record), t + nsteps * model.step_size(p)
    return dynamics.run_model(model, p, nsteps, X, t, rng, record_every=1, record=record)


def _analyse_tangent(model: MapModel, p: dict, x: np.ndarray, k: int, rng, n: int, transient) -> Analysis:
    npar = x.shape[1]
    d = x.shape[0]
    V = np.broadcast_to(_orthonormal(rng, d, k)[:, None, :], (d, npar, k)).copy()
    sums = np.zeros((npar, k))
    series = np.empty((n, npar))
    logdet = np.zeros(npar)
    tail = max(2, n // 10)
    tail_states = []
    with np.errstate(all="ignore"):
        for b in range(n):
            J = model.jacobian(x, p)
            if d == 1:
                lj = np.log(np.maximum(np.abs(J[0, 0, :, 0]), 1e-300))
                sums[:, 0] += lj
                logdet += lj
            else:
                J = np.broadcast_to(J, (d, d) + x.shape[1:])[..., 0]
                V = np.einsum("ijn,jnk->ink", J, V)
                if d == 2:
                    logdet += np.log(np.maximum(np.abs(J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0]), 1e-300))
                if (b + 1) % 5 == 0 or b == n - 1:
                    Qm, R = np.linalg.qr(np.moveaxis(V, 0, 1))
                    sums += np.log(np.maximum(np.abs(np.diagonal(R, axis1=1, axis2=2)), 1e-300))
                    V = np.moveaxis(Qm, 1, 0).copy()
            x = model.step(x, 0.0, p, None)
            series[b] = model.observe(x)[:, 0]
            if b >= n - tail:
                tail_states.append(x[..., 0].copy())
    bounded = np.isfinite(x).all(axis=(0, 2)) & (np.abs(np.nan_to_num(x, nan=np.inf)).max(axis=(0, 2)) < 1e8)
    bounded &= np.isfinite(sums).all(axis=1)
    exps = sums / n
    exps[~bounded] = np.nan
    settings = {
        "method": "tangent",
        "dt": 1.0,
        "timescale": 1.0,
        "sample_dt": 1.0,
        "transient": transient,
        "horizon": n,
        "k": k,
        "eps": EPS_MAP,
    }
    return Analysis(exps, series, _spread(tail_states, model), bounded, logdet / n if d <= 2 else None, settings)


def _analyse_symbolic(model: MapModel, p: dict, k: int, rng, transient: int, horizon: int, orbit_fn=None) -> Analysis:
    """Maps with slope 2 (doubling, baker, tent mu = 2): exact orbits from random binary digits,
    tangent dynamics along them."""
    orbit = (orbit_fn or model.orbit_fn)(p, transient + horizon, rng)[transient:]  # (n, d)
    d = orbit.shape[1]
    k = min(k, d)
    V = _orthonormal(rng, d, k)
    sums = np.zeros(k)
    logdet = 0.0
    for i in range(orbit.shape[0]):
        x = orbit[i].reshape(d, 1, 1)
        J = np.broadcast_to(model.jacobian(x, p), (d, d, 1, 1))[..., 0, 0]
        logdet += math.log(max(abs(np.linalg.det(J)), 1e-300))
        V = J @ V
        if (i + 1) % 5 == 0 or i == orbit.shape[0] - 1:
            Qm, R = np.linalg.qr(V)
            sums += np.log(np.abs(np.diag(R)))
            V = Qm
    exps = (sums / orbit.shape[0])[None, :]
    series = np.asarray(model.observe(orbit.T), dtype=float).reshape(-1, 1)
    settings = {
        "method": "tangent (exact symbolic orbit)",
        "dt": 1.0,
        "timescale": 1.0,
        "sample_dt": 1.0,
        "transient": transient,
        "horizon": horizon,
        "k": k,
        "eps": EPS_MAP,
    }
    return Analysis(exps, series, np.array([1.0]), np.array([True]), np.array([logdet / orbit.shape[0]]), settings)


def analyse_system(
    simulate: Mapping[str, Any], parameters: Mapping[str, Any] | None, seed: int = 0, k: int = 2, fine: int = 0
) -> Analysis:
    """Exponents and observed series of one catalog system.  dysts flows: the series comes from
    dysts' own integrator (`dynamics.dysts_states`, DYSTS_SERIES samples P/2 apart after 10 P), the
    RK4 step for the exponents is chosen on those states (`dynamics.choose_rk4_step`) and the
    Benettin run starts from the last of them."""
    model = dynamics.resolve(simulate)
    p = model.params(dynamics.merged_parameters(simulate, parameters))
    if "dysts" not in simulate:
        if "transient" in simulate:
            model = replace(model, transient=float(simulate["transient"]))
        return analyse(model, p, npar=1, k=k, seed=seed, fine=fine)
    name = str(simulate["dysts"])
    transient = float(simulate.get("transient", dynamics.DYSTS_TRANSIENT))
    states = dynamics.dysts_states(name, p, dynamics.DYSTS_SERIES, seed, transient_periods=transient)
    dt = dynamics.choose_rk4_step(model, p, states)
    stepped = replace(model, dt=dt)
    stepped.rhs = stepped._call
    horizon = float(np.clip(dynamics.DYSTS_MAX_STEPS * dt / model.P(p), 60.0, dynamics.DYSTS_HORIZON))
    result = analyse(stepped, p, npar=1, k=k, seed=seed, transient=0.0, horizon=horizon, x0=states[-1], fine=fine)
    result.series = states[:, model.obs_index][:, None]
    result.settings.update(
        {
            "series": "dysts make_trajectory (LSODA, rtol=atol=1e-8)",
            "transient": transient,
            "series_samples": len(states),
            "rk4_tolerance": dynamics.RK4_TOLERANCE,
        }
    )
    return result


def largest_lyapunov(simulate: Mapping[str, Any], parameters: Mapping[str, Any] | None = None, seed: int = 0) -> float:
    """Largest Lyapunov exponent (per iteration for maps, per unit time otherwise)."""
    return float(analyse_system(simulate, parameters, seed=seed, k=1).exponents[0, 0])


def regime(model: Model, p: Mapping[str, Any], exponents: np.ndarray, spread: float, bounded: bool = True) -> str:
    """chaotic | periodic | fixed_point | ambiguous from the computed exponents (see module docstring)."""
    if model.stochastic:
        return "stochastic"
    eps = lyapunov_eps(model, p)
    l1 = float(exponents[0])
    l2 = float(exponents[1]) if len(exponents) > 1 else float("nan")
    if not bounded or not math.isfinite(l1):
        return "ambiguous"
    if l1 > eps:
        return "chaotic"
    point = spread < FIXED_POINT_SPREAD
    if l1 < -eps:
        return "fixed_point" if point else "periodic"
    if model.neutral_direction and not point and math.isfinite(l2) and l2 < -eps:
        return "periodic"
    return "ambiguous"
