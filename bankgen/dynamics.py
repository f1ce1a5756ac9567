"""Numerical models behind the ChaosBench catalog: `MODELS` and `trajectory(...)`.

Every model is the project's own numpy implementation except `{dysts: ClassName}` entries, which
use the equations, parameters, initial conditions and integrator of the optional `dysts` package.

Conventions
-----------
* State arrays are component-first with batch axes behind: shape ``(d, npar, ncopy)``.  Parameters
  are floats or arrays broadcastable to ``(npar, 1)``, so one call integrates a whole parameter
  sweep (``npar`` values) and the reference/perturbed copies of the Lyapunov method (``ncopy``) at
  once.  All right-hand sides are elementwise in the batch axes.
* Maps advance one iteration per step.  Flows use fixed-step classical RK4 with the documented
  step ``dt``; stochastic models use Euler-Maruyama with a seeded ``numpy.random.Generator`` (the
  same noise increment is applied to every copy of a batch element); the delay equation keeps a
  history buffer of ``tau/dt`` steps (RK4 with the delayed term taken from the buffer, midpoints
  by linear interpolation); Kuramoto-Sivashinsky uses ETDRK4 (Kassam & Trefethen 2005, SIAM J.
  Sci. Comput. 26:1214) on a Fourier grid.
* Sampling rule for the observed series (0-1 test, permutation entropy): a flow with
  characteristic time P (its dominant oscillation period, `timescale`) is sampled every P/2
  time units -- two samples per oscillation, never the integration step.  Oversampling makes successive samples almost equal, the 0-1 test's translation
  variables then move ballistically and K comes out near 0 even for Lorenz-63 (upstream's
  defect).  P/10 is not enough either for phase-coherent oscillators: the dominant frequency
  of the samples is then 2 pi / 10 and its harmonics fall inside the test's frequency range
  c in (pi/5, 4 pi/5) -- measured K at P/10 vs P/2 (2000 samples): Rossler 0.66 vs 0.99, Chua
  0.14 vs 1.00, forced Duffing 0.13 vs 1.00, Kuramoto-Sivashinsky 0.36 vs 1.00, while the
  van der Pol and Brusselator limit cycles stay at K < 0.1 at P/2.  At P/2 the fundamental sits
  at frequency pi per sample, outside that range.  Periodically forced systems with explicit
  time are sampled stroboscopically, once per forcing period P = 2 pi / omega (a Poincare
  section; at P/2 the Ueda oscillator gives K = 0.39, stroboscopically 1.00).  Maps are sampled
  every iteration.
* Lyapunov renormalisation happens every P/10 (flows) or every iteration (maps).
* dysts flows: the observed series comes from dysts' own `make_trajectory` (scipy LSODA,
  rtol = atol = 1e-8, P = dysts' `period` metadata, 2 points per period, 10 P transient or the
  catalog's `simulate.transient`); the exponents use dysts' right-hand side with our RK4, whose
  step is the largest P/50 / 2^j with RK4 local error <= 1e-4 on those states
  (`choose_rk4_step`), started from the last dysts state.
* `transient` and `horizon` are given in units of P (flows) or iterations (maps): the first
  `transient` is discarded, the next `horizon` is used for the exponents and the series.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import cache, lru_cache
from typing import Any

import numpy as np

SAMPLES_PER_PERIOD = 2  # flows: the observed series is sampled every timescale / 2
BLOCKS_PER_SAMPLE = 5  # flows: Lyapunov renormalisation every timescale / 10
MAP_TRANSIENT = 1000  # iterations
MAP_HORIZON = 20000  # iterations
FLOW_TRANSIENT = 30.0  # characteristic times
FLOW_HORIZON = 300.0  # characteristic times
DYSTS_HORIZON = 150.0  # characteristic times (dysts flows), fewer when the RK4 step is small:
DYSTS_MAX_STEPS = 25000  # at most this many RK4 steps, but never under 60 characteristic times
DYSTS_SERIES = 400  # samples of the dysts-integrated series (P/2 apart)
DYSTS_TRANSIENT = 10.0  # characteristic times; a catalog `simulate: {transient: ...}` overrides


def _number(value: Any) -> Any:
    """float(value), accepting "8/3"-style fractions; arrays pass through."""
    if isinstance(value, np.ndarray):
        return value.astype(float)
    if isinstance(value, (list, tuple)):
        return np.asarray(value, dtype=float)
    if isinstance(value, str):
        try:
            return float(Fraction(value.replace(" ", "")))
        except (ValueError, ZeroDivisionError):
            return float(value)
    return float(value)


@dataclass
class Model:
    """One simulated system.  Subclasses implement `init` and `step` (or `orbit`)."""

    id: str
    kind: str  # map | flow | forced | delay | pde | sde
    description: str
    defaults: dict[str, float]
    timescale: float = 1.0  # characteristic time P (1 iteration for maps)
    dt: float = 1.0  # integration step (1 for maps)
    transient: float = 0.0  # in units of P (flows) / iterations (maps)
    horizon: float = 0.0  # in units of P (flows) / iterations (maps)
    periodic: tuple = ()  # (coordinate, period) pairs of angle-like coordinates
    autonomous: bool = True
    stochastic: bool = False
    aliases: dict[str, str] = field(default_factory=dict)  # alternative parameter names
    samples_per_period: int = SAMPLES_PER_PERIOD  # 1 for forced systems (stroboscopic)
    extras: tuple[str, ...] = ()  # optional parameters (initial conditions) with no default

    # ------------------------------------------------------------------ parameters
    def params(self, parameters: Mapping[str, Any] | None) -> dict[str, Any]:
        """Defaults overridden by the given parameters (case-insensitive names, aliases); unknown
        names are ignored so catalog entries may carry descriptive extras."""
        out: dict[str, Any] = dict(self.defaults)
        given = dict(parameters or {})
        lower = {str(k).lower(): k for k in given}
        for name in list(self.defaults) + list(self.extras):
            key = name if name in given else lower.get(name.lower())
            if key is None:
                for alias, target in self.aliases.items():
                    if target == name and (alias in given or alias.lower() in lower):
                        key = alias if alias in given else lower[alias.lower()]
                        break
            if key is not None and given[key] is not None:
                try:
                    out[name] = _number(given[key])
                except (TypeError, ValueError):
                    continue
        return out

    # ------------------------------------------------------------------ timing
    def P(self, p: Mapping[str, Any]) -> float:
        return float(self.timescale)

    def step_size(self, p: Mapping[str, Any]) -> float:
        return float(self.dt)

    def block_steps(self, p: Mapping[str, Any]) -> int:
        """Integration steps between two Lyapunov renormalisations (P/10 for flows)."""
        if self.kind == "map" or getattr(self, "discrete", False):
            return 1
        return max(1, int(round(self.P(p) / (SAMPLES_PER_PERIOD * BLOCKS_PER_SAMPLE) / self.step_size(p))))

    def blocks_per_sample(self) -> int:
        if self.kind == "map" or getattr(self, "discrete", False):
            return 1
        return BLOCKS_PER_SAMPLE * SAMPLES_PER_PERIOD // self.samples_per_period

    @property
    def neutral_direction(self) -> bool:
        """True when the exponent along the flow is exactly zero: autonomous flows, delay
        equations, PDEs and dysts' forced systems (written with a phase variable).  Forced
        models with explicit time and maps have none."""
        return self.kind in ("flow", "delay", "pde") and self.autonomous or isinstance(self, DystsFlow)

    def sample_every(self, p: Mapping[str, Any]) -> int:
        """Integration steps between two samples of the observed series (P/2 for flows)."""
        return self.block_steps(p) * self.blocks_per_sample()

    def steps(self, p: Mapping[str, Any], units: float) -> int:
        if self.kind == "map":
            return int(units)
        return int(math.ceil(units * self.P(p) / self.step_size(p)))

    # ------------------------------------------------------------------ dynamics
    def init(self, p: dict, shape: tuple, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def step(self, x: np.ndarray, t: float, p: dict, noise: np.ndarray | None) -> np.ndarray:
        raise NotImplementedError

    noise_dim: int = 0  # number of Wiener increments per step (sde)

    def observe(self, x: np.ndarray) -> np.ndarray:
        return x[0]

    jac: Callable | None = None  # maps: jac(x, p) -> (d, d, *batch) for tangent dynamics

    def wrap(self, x: np.ndarray) -> np.ndarray:
        for i, period in self.periodic:
            x[i] = np.mod(x[i], period)
        return x

    def delta(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """a - b, with minimal-image differences on angle-like coordinates."""
        d = a - b
        for i, period in self.periodic:
            d[i] = (d[i] + period / 2) % period - period / 2
        return d

    def divergence(self, x: np.ndarray, t: float, p: dict) -> np.ndarray | None:
        """Flows: trace of the Jacobian of the vector field by central differences.
        Maps: ln|det J|.  None when not meaningful (stochastic, delay, PDE)."""
        return None


# ---------------------------------------------------------------------- integrators


def rk4(f: Callable, x: np.ndarray, t: float, dt: float, p: dict) -> np.ndarray:
    k1 = f(x, t, p)
    k2 = f(x + (0.5 * dt) * k1, t + 0.5 * dt, p)
    k3 = f(x + (0.5 * dt) * k2, t + 0.5 * dt, p)
    k4 = f(x + dt * k3, t + dt, p)
    return x + (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def _fd_divergence(f: Callable, x: np.ndarray, t: float, p: dict) -> np.ndarray:
    """Trace of df/dx by central differences (elementwise over the batch axes)."""
    total = np.zeros(x.shape[1:])
    for i in range(x.shape[0]):
        h = 1e-6 * (1.0 + np.abs(x[i]))
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        total = total + (f(xp, t, p)[i] - f(xm, t, p)[i]) / (2 * h)
    return total


@dataclass
class FlowModel(Model):
    """dx/dt = rhs(x, t, p), fixed-step RK4."""

    rhs: Callable = None  # rhs(x, t, p) -> dx/dt, same shape as x
    initial: Callable = None  # initial(p, rng) -> list of d floats (before broadcasting)
    observable: Callable | None = None
    timescale_fn: Callable | None = None
    dt_fn: Callable | None = None

    def P(self, p):
        return float(self.timescale_fn(p)) if self.timescale_fn else float(self.timescale)

    def step_size(self, p):
        return float(self.dt_fn(p)) if self.dt_fn else float(self.dt)

    def init(self, p, shape, rng):
        x0 = np.asarray(self.initial(p, rng), dtype=float)
        return np.broadcast_to(x0.reshape((-1,) + (1,) * len(shape)), x0.shape[:1] + shape).copy()

    def step(self, x, t, p, noise):
        return self.wrap(rk4(self.rhs, x, t, self.step_size(p), p))

    def observe(self, x):
        return self.observable(x) if self.observable else x[0]

    def divergence(self, x, t, p):
        return _fd_divergence(self.rhs, x, t, p)


@dataclass
class MapModel(Model):
    """x(n+1) = f(x(n), p); `jacobian` enables tangent dynamics."""

    f: Callable = None
    initial: Callable = None
    observable: Callable | None = None
    jacobian: Callable | None = None
    orbit_fn: Callable | None = None  # orbit_fn(p, n, rng) -> (n, d): exact symbolic orbits

    def __post_init__(self):
        self.jac = self.jacobian

    def init(self, p, shape, rng):
        x0 = np.asarray(self.initial(p, rng), dtype=float)
        return np.broadcast_to(x0.reshape((-1,) + (1,) * len(shape)), x0.shape[:1] + shape).copy()

    def step(self, x, t, p, noise):
        return self.wrap(self.f(x, p))

    def observe(self, x):
        return self.observable(x) if self.observable else x[0]

    def divergence(self, x, t, p):
        if self.jacobian is None:
            return None
        J = self.jacobian(x, p)
        d = x.shape[0]
        if d == 1:
            det = J[0, 0]
        elif d == 2:
            det = J[0, 0] * J[1, 1] - J[0, 1] * J[1, 0]
        else:
            det = np.linalg.det(np.moveaxis(J, (0, 1), (-2, -1)))
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(np.abs(det), 1e-300))


@dataclass
class SDEModel(Model):
    """dx = drift dt + diffusion dW (Ito), Euler-Maruyama.  `noise` has shape (noise_dim, npar, 1)
    so every copy of one batch element sees the same increment."""

    drift: Callable = None
    diffusion: Callable = None  # diffusion(x, p) -> coefficient multiplying dW (same shape as x)
    initial: Callable = None
    discrete: bool = False  # True: x(n+1) = x(n) + drift + diffusion * xi (dt = 1)

    def __post_init__(self):
        self.stochastic = True
        self.noise_dim = 1

    def init(self, p, shape, rng):
        x0 = np.asarray(self.initial(p, rng), dtype=float)
        return np.broadcast_to(x0.reshape((-1,) + (1,) * len(shape)), x0.shape[:1] + shape).copy()

    def step(self, x, t, p, noise):
        h = 1.0 if self.discrete else self.step_size(p)
        return x + self.drift(x, p) * h + self.diffusion(x, p) * noise * math.sqrt(h)


@dataclass
class DelayModel(Model):
    """dx/dt = g(x(t), x(t - tau)).  The state is the history buffer x(t - tau), ..., x(t) on the
    step grid (m + 1 values, m = tau / dt), so the perturbation norm of the Lyapunov method is the
    norm of the whole history segment (Farmer 1982)."""

    g: Callable = None  # g(x, x_delayed, p)
    history: Callable = None  # history(p, rng) -> constant initial value

    def _m(self, p):
        return max(2, int(round(float(p["tau"]) / self.step_size(p))))

    def step_size(self, p):
        return float(p["tau"]) / max(2, int(round(float(p["tau"]) / self.dt)))

    def init(self, p, shape, rng):
        m = self._m(p)
        x0 = float(self.history(p, rng))
        buf = x0 + 1e-3 * rng.standard_normal(m + 1)
        return np.broadcast_to(buf.reshape((-1,) + (1,) * len(shape)), (m + 1,) + shape).copy()

    def step(self, x, t, p, noise):
        h = self.step_size(p)
        xd0, xd1 = x[0], x[1]
        xdm = 0.5 * (xd0 + xd1)
        cur = x[-1]
        k1 = self.g(cur, xd0, p)
        k2 = self.g(cur + 0.5 * h * k1, xdm, p)
        k3 = self.g(cur + 0.5 * h * k2, xdm, p)
        k4 = self.g(cur + h * k3, xd1, p)
        new = cur + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
        return np.concatenate([x[1:], new[None]], axis=0)

    def observe(self, x):
        return x[-1]


@dataclass
class KSModel(Model):
    """Kuramoto-Sivashinsky u_t = -u u_x - u_xx - u_xxxx on [0, L) periodic, N grid points,
    ETDRK4 in Fourier space (Kassam & Trefethen 2005), step h = dt.  The state is u on the grid."""

    @staticmethod
    def grid(p) -> int:
        """N grid points: given, or 64 for L <= 32 and the next power of two >= 1.25 L beyond."""
        if p.get("N") is not None:
            return int(round(float(p["N"])))
        L = float(p["L"])
        return 64 if L <= 32 else int(2 ** math.ceil(math.log2(1.25 * L)))

    def _coeffs(self, p):
        return _ks_coefficients(float(p["L"]), self.grid(p), self.dt)

    def init(self, p, shape, rng):
        n = self.grid(p)
        L = float(p["L"])
        xs = np.arange(n) * L / n
        u0 = np.cos(2 * np.pi * xs / L) * (1 + np.sin(2 * np.pi * xs / L)) + 0.01 * rng.standard_normal(n)
        return np.broadcast_to(u0.reshape((-1,) + (1,) * len(shape)), (n,) + shape).copy()

    def step(self, x, t, p, noise):
        return self.advance(x, p, 1)

    def advance(self, u, p, nsteps, record: list | None = None):
        """`nsteps` ETDRK4 steps; `record` (a list) receives u at grid point 0 (the observable)
        after every step, read off without leaving Fourier space."""
        E, E2, Q, f1, f2, f3, g = self._coeffs(p)
        n = u.shape[0]
        shape = (-1,) + (1,) * (u.ndim - 1)
        E, E2, Q, f1, f2, f3, g = (a.reshape(shape) for a in (E, E2, Q, f1, f2, f3, g))
        v = np.fft.rfft(u, axis=0)

        def N(vv):
            return g * np.fft.rfft(np.fft.irfft(vv, n=n, axis=0) ** 2, axis=0)

        for _ in range(nsteps):
            Nv = N(v)
            a = E2 * v + Q * Nv
            Na = N(a)
            b = E2 * v + Q * Na
            Nb = N(b)
            c = E2 * a + Q * (2 * Nb - Nv)
            Nc = N(c)
            v = E * v + Nv * f1 + 2 * (Na + Nb) * f2 + Nc * f3
            if record is not None:
                record.append(np.fft.irfft(v, n=n, axis=0)[0])
        return np.fft.irfft(v, n=n, axis=0)

    def observe(self, x):
        return x[0]


@lru_cache(maxsize=16)
def _ks_coefficients(L: float, n: int, h: float):
    k = 2 * np.pi / L * np.arange(n // 2 + 1)
    lin = k**2 - k**4
    E = np.exp(h * lin)
    E2 = np.exp(h * lin / 2)
    M = 32
    r = np.exp(1j * np.pi * (np.arange(1, M + 1) - 0.5) / M)
    LR = h * lin[:, None] + r[None, :]
    Q = h * np.real(np.mean((np.exp(LR / 2) - 1) / LR, axis=1))
    f1 = h * np.real(np.mean((-4 - LR + np.exp(LR) * (4 - 3 * LR + LR**2)) / LR**3, axis=1))
    f2 = h * np.real(np.mean((2 + LR + np.exp(LR) * (-2 + LR)) / LR**3, axis=1))
    f3 = h * np.real(np.mean((-4 - 3 * LR - LR**2 + np.exp(LR) * (4 - LR)) / LR**3, axis=1))
    g = -0.5j * k
    k_nyq = n // 2
    g[k_nyq] = 0.0 if n % 2 == 0 else g[k_nyq]
    return E, E2, Q, f1, f2, f3, g


# ---------------------------------------------------------------------- symbolic orbits


def _doubling_orbit(n: int, rng: np.random.Generator) -> np.ndarray:
    """Orbit of the doubling map x -> 2x mod 1 from a Lebesgue-random initial point, computed
    exactly from its binary digits (iterating 2x mod 1 in floating point collapses to 0 within 53
    steps).  x_n = sum_k b_{n+k} 2^-(k+1), truncated to 52 digits."""
    bits = rng.integers(0, 2, size=n + 52).astype(float)
    weights = 0.5 ** np.arange(1, 53)
    windows = np.lib.stride_tricks.sliding_window_view(bits, 52)[:n]
    return windows @ weights


def _bernoulli_orbit(p, n, rng):
    return _doubling_orbit(n, rng)[:, None]


def _tent2_orbit(p, n, rng):
    # T(D(y)) = T(T(y)): the tent image of a doubling orbit is a tent orbit (semi-conjugacy).
    y = _doubling_orbit(n + 1, rng)
    return (1.0 - np.abs(1.0 - 2.0 * y[:n]))[:, None]


def _baker_orbit(p, n, rng):
    x = _doubling_orbit(n, rng)
    y = np.empty(n)
    yy = rng.random()
    for i in range(n):
        y[i] = yy
        yy = 0.5 * (yy + (1.0 if x[i] >= 0.5 else 0.0))
    return np.stack([x, y], axis=1)


# ---------------------------------------------------------------------- own models


def _henon_f(x, p):
    return np.stack([1 - p["a"] * x[0] ** 2 + x[1], p["b"] * x[0] + 0 * x[1]])


def _henon_jac(x, p):
    z = np.zeros_like(x[0])
    return np.array([[-2 * p["a"] * x[0], z + 1], [z + p["b"], z]])


def _lozi_f(x, p):
    return np.stack([1 - p["a"] * np.abs(x[0]) + x[1], p["b"] * x[0] + 0 * x[1]])


def _lozi_jac(x, p):
    z = np.zeros_like(x[0])
    return np.array([[-p["a"] * np.sign(x[0]) + z, z + 1], [z + p["b"], z]])


def _ikeda_f(x, p):
    t = 0.4 - 6.0 / (1.0 + x[0] ** 2 + x[1] ** 2)
    c, s = np.cos(t), np.sin(t)
    return np.stack([1 + p["u"] * (x[0] * c - x[1] * s), p["u"] * (x[0] * s + x[1] * c)])


def _ikeda_jac(x, p):
    r2 = 1.0 + x[0] ** 2 + x[1] ** 2
    t = 0.4 - 6.0 / r2
    c, s = np.cos(t), np.sin(t)
    tx, ty = 12.0 * x[0] / r2**2, 12.0 * x[1] / r2**2
    u = p["u"]
    a = -x[0] * s - x[1] * c  # d(x cos t - y sin t)/dt
    b = x[0] * c - x[1] * s  # d(x sin t + y cos t)/dt
    return u * np.array([[c + a * tx, -s + a * ty], [s + b * tx, c + b * ty]])


def _standard_f(x, p):
    pn = x[1] + p["K"] * np.sin(x[0])
    return np.stack([x[0] + pn, pn])


def _standard_jac(x, p):
    kc = p["K"] * np.cos(x[0])
    one = np.ones_like(x[0])
    return np.array([[1 + kc, one], [kc + 0 * one, one]])


def _standard_init(p, rng):
    """Default: next to the hyperbolic fixed point (0, 0), i.e. inside its stochastic layer (the
    connected chaotic sea for K above ~1); theta0 / p0 override."""
    th = p.get("theta0")
    pp = p.get("p0")
    return [1e-3 + 1e-4 * rng.random() if th is None else th, 1e-3 if pp is None else pp]


def _cat_f(x, p):
    return np.stack([p["a11"] * x[0] + p["a12"] * x[1], p["a21"] * x[0] + p["a22"] * x[1]])


def _cat_jac(x, p):
    one = np.ones_like(x[0])
    return np.array([[p["a11"] * one, p["a12"] * one], [p["a21"] * one, p["a22"] * one]])


def _circle_f(x, p):
    return x + p["Omega"] - p["K"] / (2 * np.pi) * np.sin(2 * np.pi * x)


def _circle_jac(x, p):
    return (1 - p["K"] * np.cos(2 * np.pi * x[0]))[None, None]


def _tent_f(x, p):
    return p["mu"] * np.minimum(x, 1 - x)


def _tent_jac(x, p):
    return (p["mu"] * np.where(x[0] < 0.5, 1.0, -1.0))[None, None]


def _lorenz63(x, t, p):
    return np.stack([p["sigma"] * (x[1] - x[0]), x[0] * (p["rho"] - x[2]) - x[1], x[0] * x[1] - p["beta"] * x[2]])


def _rossler(x, t, p):
    return np.stack([-x[1] - x[2], x[0] + p["a"] * x[1], p["b"] + x[2] * (x[0] - p["c"])])


def _rossler_hyper(x, t, p):
    return np.stack([-x[1] - x[2], x[0] + p["a"] * x[1] + x[3], p["b"] + x[0] * x[2], -p["c"] * x[2] + p["d"] * x[3]])


def _chen(x, t, p):
    a, b, c = p["a"], p["b"], p["c"]
    return np.stack([a * (x[1] - x[0]), (c - a) * x[0] - x[0] * x[2] + c * x[1], x[0] * x[1] - b * x[2]])


def _chua(x, t, p):
    m0, m1 = p["m0"], p["m1"]
    fx = m1 * x[0] + 0.5 * (m0 - m1) * (np.abs(x[0] + 1) - np.abs(x[0] - 1))
    return np.stack([p["alpha"] * (x[1] - x[0] - fx), x[0] - x[1] + x[2], -p["beta"] * x[1]])


def _duffing(x, t, p):
    return np.stack(
        [x[1], -p["delta"] * x[1] - p["alpha"] * x[0] - p["beta"] * x[0] ** 3 + p["gamma"] * np.cos(p["omega"] * t)]
    )


def _vdp(x, t, p):
    return np.stack([x[1], p["mu"] * (1 - x[0] ** 2) * x[1] - x[0]])


def _damped(x, t, p):
    w = p["omega0"]
    return np.stack([x[1], -2 * p["zeta"] * w * x[1] - w**2 * x[0]])


def _pendulum(x, t, p):
    return np.stack([x[1], -(p["g"] / p["L"]) * np.sin(x[0])])


def _double_pendulum(x, t, p):
    # angles from the downward vertical; point masses on massless rods (standard form, e.g.
    # myphysicslab.com "double pendulum")
    m1, m2, l1, l2, g = p["m1"], p["m2"], p["l1"], p["l2"], p["g"]
    th1, th2, w1, w2 = x
    d = th1 - th2
    sd, cd = np.sin(d), np.cos(d)
    den = 2 * m1 + m2 - m2 * np.cos(2 * d)
    a1 = (
        -g * (2 * m1 + m2) * np.sin(th1)
        - m2 * g * np.sin(th1 - 2 * th2)
        - 2 * sd * m2 * (w2 * w2 * l2 + w1 * w1 * l1 * cd)
    ) / (l1 * den)
    a2 = (2 * sd * (w1 * w1 * l1 * (m1 + m2) + g * (m1 + m2) * np.cos(th1) + w2 * w2 * l2 * m2 * cd)) / (l2 * den)
    return np.stack([w1, w2, a1, a2])


def _double_pendulum_init(p, rng):
    """Initial angles theta1, theta2 (rad, from the downward vertical; default 2.0 each) and
    angular velocities; or, with only `energy` given, equal angles at rest with that total energy
    E = T - (m1 + m2) g l1 cos(theta1) - m2 g l2 cos(theta2) (zero potential at the pivot)."""
    th1, th2 = p.get("theta1"), p.get("theta2")
    w1, w2 = p.get("omega1") or 0.0, p.get("omega2") or 0.0
    if th1 is None and th2 is None and p.get("energy") is not None:
        m1, m2, l1, l2, g = (float(p[k]) for k in ("m1", "m2", "l1", "l2", "g"))
        depth = g * ((m1 + m2) * l1 + m2 * l2)
        e = float(p["energy"])
        if e <= depth:
            th = math.acos(max(-1.0, min(1.0, -e / depth)))
            return [th, th, 0.0, 0.0]
        th = math.pi - 1e-3
        kin = e + depth * math.cos(th)
        return [th, th, math.sqrt(2 * kin / ((m1 + m2) * l1**2)), 0.0]
    return [2.0 if th1 is None else th1, 2.0 if th2 is None else th2, w1, w2]


def _henon_heiles(x, t, p):
    X, Y, px, py = x
    return np.stack([px, py, -X - 2 * X * Y, -Y - X**2 + Y**2])


def _henon_heiles_init(p, rng):
    E = float(p["energy"])
    x0 = p.get("x0") or 0.0
    y0 = -0.1 if p.get("y0") is None else p["y0"]
    py0 = p.get("py0") or 0.0
    rest = 2 * E - py0**2 - x0**2 - y0**2 - 2 * x0**2 * y0 + 2 * y0**3 / 3
    if rest < 0:
        y0, x0, py0 = 0.0, 0.0, 0.0
        rest = 2 * E
    return [x0, y0, math.sqrt(max(rest, 0.0)), py0]


def _lotka(x, t, p):
    return np.stack([p["alpha"] * x[0] - p["beta"] * x[0] * x[1], p["delta"] * x[0] * x[1] - p["gamma"] * x[1]])


def _brusselator(x, t, p):
    a, b = p["a"], p["b"]
    return np.stack([a + x[0] ** 2 * x[1] - (b + 1) * x[0], b * x[0] - x[0] ** 2 * x[1]])


@lru_cache(maxsize=8)
def _l96_index(n: int):
    i = np.arange(n)
    return (i + 1) % n, (i - 2) % n, (i - 1) % n


def _lorenz96(x, t, p):
    ip1, im2, im1 = _l96_index(x.shape[0])
    return (x[ip1] - x[im2]) * x[im1] - x + p["F"]


def _torus(x, t, p):
    return np.stack([np.zeros_like(x[0]) + p["omega1"], np.zeros_like(x[1]) + p["omega2"]])


def _driven_pendulum(x, t, p):
    return np.stack([x[1], -x[1] / p["q"] - np.sin(x[0]) + p["A"] * np.cos(p["omega_d"] * t)])


def _ueda(x, t, p):
    return np.stack([x[1], -p["k"] * x[1] - x[0] ** 3 + p["B"] * np.cos(t)])


def _harmonic(x, t, p):
    return np.stack([x[1], -(p["omega0"] ** 2) * x[0]])


def _uncoupled(x, t, p):
    return np.stack([x[2], x[3], -(p["omega1"] ** 2) * x[0], -(p["omega2"] ** 2) * x[1]])


def _hh_rates(V):
    an = 0.01 * (V + 55.0) / (1.0 - np.exp(-(V + 55.0) / 10.0))
    bn = 0.125 * np.exp(-(V + 65.0) / 80.0)
    am = 0.1 * (V + 40.0) / (1.0 - np.exp(-(V + 40.0) / 10.0))
    bm = 4.0 * np.exp(-(V + 65.0) / 18.0)
    ah = 0.07 * np.exp(-(V + 65.0) / 20.0)
    bh = 1.0 / (1.0 + np.exp(-(V + 35.0) / 10.0))
    return an, bn, am, bm, ah, bh


def _hodgkin_huxley(x, t, p):
    # V in mV, t in ms, modern sign convention (rest near -65 mV)
    V, m, h, n = x
    an, bn, am, bm, ah, bh = _hh_rates(V)
    I_ion = p["gNa"] * m**3 * h * (V - p["ENa"]) + p["gK"] * n**4 * (V - p["EK"]) + p["gL"] * (V - p["EL"])
    return np.stack([(p["I"] - I_ion) / p["C"], am * (1 - m) - bm * m, ah * (1 - h) - bh * h, an * (1 - n) - bn * n])


def _vdp_period(p):
    mu = abs(float(np.max(p["mu"])))
    return max(2 * np.pi, (3 - 2 * np.log(2)) * mu + 2 * np.pi * math.exp(-mu))


def _const(*values):
    return lambda p, rng: list(values)


def _jitter(*values, scale=1e-3):
    return lambda p, rng: list(np.asarray(values, dtype=float) + scale * rng.standard_normal(len(values)))


def _lorenz96_init(p, rng):
    n = int(round(float(p["N"])))
    x = np.full(n, float(p["F"]))
    x[0] += 0.01
    return list(x + 1e-3 * rng.standard_normal(n))


def _lorenz96_rhs(x, t, p):
    return _lorenz96(x, t, p)


def _build_models() -> dict[str, Model]:
    tau = 2 * np.pi
    m: dict[str, Model] = {}

    def add(model: Model):
        m[model.id] = model

    # ------------------------------------------------------------- maps (per iteration)
    common_map = dict(kind="map", timescale=1.0, dt=1.0, transient=MAP_TRANSIENT, horizon=MAP_HORIZON)
    add(
        MapModel(
            id="logistic",
            description="x -> r x (1 - x)",
            defaults={"r": 4.0},
            f=lambda x, p: p["r"] * x * (1 - x),
            jacobian=lambda x, p: (p["r"] * (1 - 2 * x[0]))[None, None],
            initial=lambda p, rng: [rng.uniform(0.1, 0.9) if p.get("x0") is None else p["x0"]],
            extras=("x0",),
            **common_map,
        )
    )
    add(
        MapModel(
            id="tent",
            description="x -> mu min(x, 1 - x); mu = 2 exactly uses exact symbolic orbits",
            defaults={"mu": 2.0},
            f=_tent_f,
            jacobian=_tent_jac,
            initial=lambda p, rng: [rng.uniform(0.05, 0.95)],
            **common_map,
        )
    )
    add(
        MapModel(
            id="bernoulli",
            description="doubling map x -> 2x mod 1 (exact symbolic orbits)",
            defaults={},
            f=lambda x, p: np.mod(2 * x, 1.0),
            jacobian=lambda x, p: np.full((1, 1) + x.shape[1:], 2.0),
            initial=lambda p, rng: [rng.random()],
            orbit_fn=_bernoulli_orbit,
            **common_map,
        )
    )
    add(
        MapModel(
            id="henon",
            description="(x, y) -> (1 - a x^2 + y, b x)",
            defaults={"a": 1.4, "b": 0.3},
            f=_henon_f,
            jacobian=_henon_jac,
            initial=_jitter(0.1, 0.1, scale=0.01),
            **common_map,
        )
    )
    add(
        MapModel(
            id="lozi",
            description="(x, y) -> (1 - a |x| + y, b x)",
            defaults={"a": 1.7, "b": 0.5},
            f=_lozi_f,
            jacobian=_lozi_jac,
            initial=_jitter(0.1, 0.1, scale=0.01),
            **common_map,
        )
    )
    add(
        MapModel(
            id="ikeda",
            description="z -> 1 + u z exp(i (0.4 - 6 / (1 + |z|^2)))",
            defaults={"u": 0.9},
            f=_ikeda_f,
            jacobian=_ikeda_jac,
            initial=_jitter(0.1, 0.1, scale=0.01),
            **common_map,
        )
    )
    add(
        MapModel(
            id="standard_map",
            description="p -> p + K sin(theta), theta -> theta + p (both mod 2 pi)",
            defaults={"K": 6.0},
            f=_standard_f,
            jacobian=_standard_jac,
            initial=_standard_init,
            periodic=((0, tau), (1, tau)),
            extras=("theta0", "p0"),
            aliases={"k": "K"},
            observable=lambda x: np.sin(x[0]),
            **common_map,
        )
    )
    add(
        MapModel(
            id="cat_map",
            description="(x, y) -> (a11 x + a12 y, a21 x + a22 y) mod 1 (Arnold: 2 1 / 1 1)",
            defaults={"a11": 2.0, "a12": 1.0, "a21": 1.0, "a22": 1.0},
            f=_cat_f,
            jacobian=_cat_jac,
            initial=lambda p, rng: list(rng.random(2)),
            periodic=((0, 1.0), (1, 1.0)),
            **common_map,
        )
    )
    add(
        MapModel(
            id="baker_map",
            description="(x, y) -> (2x mod 1, (y + floor(2x)) / 2) (exact symbolic orbits)",
            defaults={},
            f=lambda x, p: np.stack([np.mod(2 * x[0], 1.0), 0.5 * (x[1] + np.floor(2 * x[0]))]),
            jacobian=lambda x, p: np.array(
                [[np.full_like(x[0], 2.0), np.zeros_like(x[0])], [np.zeros_like(x[0]), np.full_like(x[0], 0.5)]]
            ),
            initial=lambda p, rng: list(rng.random(2)),
            orbit_fn=_baker_orbit,
            **common_map,
        )
    )
    add(
        MapModel(
            id="circle_map",
            description="theta -> theta + Omega - K/(2 pi) sin(2 pi theta) mod 1",
            defaults={"Omega": 0.5 * (math.sqrt(5) - 1), "K": 0.5},
            f=_circle_f,
            jacobian=_circle_jac,
            initial=lambda p, rng: [rng.random()],
            periodic=((0, 1.0),),
            observable=lambda x: np.cos(2 * np.pi * x[0]),
            **common_map,
        )
    )

    # ------------------------------------------------------------- flows (RK4)
    def flow(id, description, defaults, rhs, initial, P, dt, **kw):
        kw.setdefault("transient", FLOW_TRANSIENT)
        kw.setdefault("horizon", FLOW_HORIZON)
        kind = kw.pop("kind", "flow")
        add(
            FlowModel(
                id=id,
                kind=kind,
                description=description,
                defaults=defaults,
                rhs=rhs,
                initial=initial,
                timescale=P,
                dt=dt,
                **kw,
            )
        )

    flow(
        "lorenz63",
        "Lorenz (1963)",
        {"sigma": 10.0, "rho": 28.0, "beta": 8.0 / 3.0},
        _lorenz63,
        _jitter(1.0, 1.0, 20.0),
        P=0.75,
        dt=0.01,
    )
    flow("rossler", "Rossler (1976)", {"a": 0.2, "b": 0.2, "c": 5.7}, _rossler, _jitter(1.0, 1.0, 0.0), P=6.0, dt=0.06)
    flow(
        "rossler_hyperchaos",
        "Rossler (1979) hyperchaos",
        {"a": 0.25, "b": 3.0, "c": 0.5, "d": 0.05},
        _rossler_hyper,
        _jitter(-10.0, -6.0, 0.0, 10.0),
        P=6.0,
        dt=0.02,
        horizon=200.0,
    )
    flow(
        "chen",
        "Chen & Ueta (1999)",
        {"a": 35.0, "b": 3.0, "c": 28.0},
        _chen,
        _jitter(-10.0, 0.0, 37.0),
        P=0.5,
        dt=0.005,
    )
    flow(
        "chua",
        "Chua circuit (double scroll)",
        {"alpha": 15.6, "beta": 28.0, "m0": -8.0 / 7.0, "m1": -5.0 / 7.0},
        _chua,
        _jitter(0.7, 0.0, 0.0),
        P=1.6,
        dt=0.016,
        aliases={"a": "alpha", "b": "beta"},
    )
    add(
        FlowModel(
            id="duffing_forced",
            kind="forced",
            description="x'' + delta x' + alpha x + beta x^3 = gamma cos(omega t)",
            defaults={"delta": 0.3, "alpha": -1.0, "beta": 1.0, "gamma": 0.5, "omega": 1.2},
            rhs=_duffing,
            initial=_jitter(1.0, 0.0),
            timescale=2 * np.pi / 1.2,
            dt=2 * np.pi / 1.2 / 100,
            timescale_fn=lambda p: 2 * np.pi / float(np.max(p["omega"])),
            dt_fn=lambda p: 2 * np.pi / float(np.max(p["omega"])) / 80,
            transient=FLOW_TRANSIENT,
            horizon=FLOW_HORIZON,
            autonomous=False,
            samples_per_period=1,
        )
    )
    flow(
        "van_der_pol",
        "x'' - mu (1 - x^2) x' + x = 0",
        {"mu": 1.0},
        _vdp,
        _jitter(0.5, 0.0),
        P=2 * np.pi,
        dt=0.02,
        timescale_fn=_vdp_period,
        dt_fn=lambda p: min(_vdp_period(p) / 100, 0.2 / max(1.0, float(np.max(p["mu"])))),
    )
    flow(
        "damped_oscillator",
        "x'' + 2 zeta omega0 x' + omega0^2 x = 0",
        {"omega0": 1.0, "zeta": 0.1},
        _damped,
        _const(1.0, 0.0),
        P=2 * np.pi,
        dt=2 * np.pi / 100,
        timescale_fn=lambda p: 2 * np.pi / float(np.max(p["omega0"])),
        dt_fn=lambda p: 2 * np.pi / float(np.max(p["omega0"])) / 100,
        horizon=100.0,
        transient=0.0,
    )
    flow(
        "simple_pendulum",
        "theta'' = -(g/L) sin(theta)",
        {"g": 9.81, "L": 1.0},
        _pendulum,
        lambda p, rng: [1.0 if p.get("theta0") is None else p["theta0"], p.get("omega0") or 0.0],
        P=2.0,
        dt=0.02,
        timescale_fn=lambda p: 2 * np.pi * math.sqrt(float(np.max(p["L"])) / float(np.max(p["g"]))),
        dt_fn=lambda p: 2 * np.pi * math.sqrt(float(np.max(p["L"])) / float(np.max(p["g"]))) / 100,
        extras=("theta0", "omega0"),
        aliases={"l": "L"},
    )
    flow(
        "double_pendulum",
        "planar double pendulum (point masses, rigid massless rods)",
        {"m1": 1.0, "m2": 1.0, "l1": 1.0, "l2": 1.0, "g": 9.81},
        _double_pendulum,
        _double_pendulum_init,
        P=2.5,
        dt=0.025,
        horizon=200.0,
        observable=lambda x: np.sin(x[0]),
        extras=("theta1", "theta2", "omega1", "omega2", "energy"),
        aliases={
            "theta1_0": "theta1",
            "theta2_0": "theta2",
            "th1": "theta1",
            "th2": "theta2",
            "initial_energy": "energy",
            "E": "energy",
        },
    )
    flow(
        "henon_heiles",
        "H = (px^2 + py^2)/2 + (x^2 + y^2)/2 + x^2 y - y^3/3",
        {"energy": 1.0 / 6.0},
        _henon_heiles,
        _henon_heiles_init,
        P=2 * np.pi,
        dt=0.06,
        extras=("x0", "y0", "py0"),
        aliases={"E": "energy", "H": "energy"},
    )
    flow(
        "lotka_volterra",
        "x' = alpha x - beta x y, y' = delta x y - gamma y",
        {"alpha": 2.0 / 3.0, "beta": 4.0 / 3.0, "gamma": 1.0, "delta": 1.0},
        _lotka,
        lambda p, rng: [p.get("x0") or 1.5, p.get("y0") or 1.0],
        P=6.0,
        dt=0.02,
        timescale_fn=lambda p: 2 * np.pi / math.sqrt(float(np.max(p["alpha"])) * float(np.max(p["gamma"]))),
        dt_fn=lambda p: 2 * np.pi / math.sqrt(float(np.max(p["alpha"])) * float(np.max(p["gamma"]))) / 100,
        extras=("x0", "y0"),
    )
    flow(
        "brusselator",
        "x' = a + x^2 y - (b + 1) x, y' = b x - x^2 y",
        {"a": 1.0, "b": 3.0},
        _brusselator,
        _jitter(1.0, 1.0),
        P=7.0,
        dt=0.07,
    )
    flow(
        "lorenz96",
        "dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F (cyclic)",
        {"N": 40.0, "F": 8.0},
        _lorenz96_rhs,
        _lorenz96_init,
        P=1.5,
        dt=0.02,
        horizon=200.0,
        aliases={"n": "N", "f": "F"},
    )
    flow(
        "quasiperiodic_torus",
        "theta1' = omega1, theta2' = omega2 on the 2-torus",
        {"omega1": 1.0, "omega2": math.sqrt(2.0)},
        _torus,
        lambda p, rng: [0.0, 0.0],
        P=2 * np.pi,
        dt=2 * np.pi / 50,
        periodic=((0, tau), (1, tau)),
        timescale_fn=lambda p: 2 * np.pi / max(abs(float(np.max(p["omega1"]))), abs(float(np.max(p["omega2"])))),
        observable=lambda x: np.cos(x[0]) + np.cos(x[1]),
        transient=0.0,
    )

    add(
        FlowModel(
            id="driven_pendulum",
            kind="forced",
            description="theta'' + theta'/q + sin(theta) = A cos(omega_d t) (Baker & Gollub)",
            defaults={"q": 2.0, "A": 1.5, "omega_d": 2.0 / 3.0},
            rhs=_driven_pendulum,
            initial=_jitter(0.2, 0.0),
            timescale=3 * np.pi,
            dt=3 * np.pi / 80,
            periodic=((0, tau),),
            observable=lambda x: x[1],
            timescale_fn=lambda p: 2 * np.pi / float(np.max(p["omega_d"])),
            dt_fn=lambda p: 2 * np.pi / float(np.max(p["omega_d"])) / 80,
            transient=FLOW_TRANSIENT,
            horizon=FLOW_HORIZON,
            autonomous=False,
            samples_per_period=1,
        )
    )
    add(
        FlowModel(
            id="ueda",
            kind="forced",
            description="x'' + k x' + x^3 = B cos(t) (Ueda 1979)",
            defaults={"k": 0.05, "B": 7.5},
            rhs=_ueda,
            initial=_jitter(2.5, 0.0),
            timescale=2 * np.pi,
            dt=2 * np.pi / 160,
            transient=FLOW_TRANSIENT,
            horizon=FLOW_HORIZON,
            autonomous=False,
            samples_per_period=1,
        )
    )
    flow(
        "harmonic_oscillator",
        "x'' + omega0^2 x = 0",
        {"omega0": 1.0},
        _harmonic,
        _const(1.0, 0.0),
        P=2 * np.pi,
        dt=2 * np.pi / 100,
        timescale_fn=lambda p: 2 * np.pi / float(np.max(p["omega0"])),
        dt_fn=lambda p: 2 * np.pi / float(np.max(p["omega0"])) / 100,
    )
    flow(
        "uncoupled_oscillators",
        "x'' + omega1^2 x = 0, y'' + omega2^2 y = 0",
        {"omega1": 1.0, "omega2": math.sqrt(2.0)},
        _uncoupled,
        _const(1.0, 1.0, 0.0, 0.0),
        P=2 * np.pi,
        dt=2 * np.pi / 100,
        observable=lambda x: x[0] + x[1],
        timescale_fn=lambda p: 2 * np.pi / max(float(np.max(p["omega1"])), float(np.max(p["omega2"]))),
        dt_fn=lambda p: 2 * np.pi / max(float(np.max(p["omega1"])), float(np.max(p["omega2"]))) / 100,
    )
    flow(
        "hodgkin_huxley",
        "Hodgkin & Huxley (1952) squid axon, V in mV, t in ms",
        {"I": 20.0, "C": 1.0, "gNa": 120.0, "gK": 36.0, "gL": 0.3, "ENa": 50.0, "EK": -77.0, "EL": -54.387},
        _hodgkin_huxley,
        _jitter(-65.0, 0.05, 0.6, 0.32, scale=1e-4),
        P=11.6,
        dt=0.05,
        horizon=60.0,
    )
    # ------------------------------------------------------------- delay, PDE
    add(
        DelayModel(
            id="mackey_glass",
            kind="delay",
            description="x' = beta x(t-tau) / (1 + x(t-tau)^n) - gamma x",
            defaults={"beta": 0.2, "gamma": 0.1, "n": 10.0, "tau": 17.0},
            g=lambda x, xd, p: p["beta"] * xd / (1 + xd ** p["n"]) - p["gamma"] * x,
            history=lambda p, rng: 0.9,
            timescale=50.0,
            dt=0.34,
            transient=10.0,
            horizon=200.0,
        )
    )
    add(
        KSModel(
            id="kuramoto_sivashinsky",
            kind="pde",
            description="u_t = -u u_x - u_xx - u_xxxx, periodic on [0, L)",
            defaults={"L": 22.0},
            extras=("N",),
            timescale=10.0,
            dt=0.25,
            transient=30.0,
            horizon=FLOW_HORIZON,
        )
    )

    # ------------------------------------------------------------- stochastic (Euler-Maruyama)
    add(
        SDEModel(
            id="ornstein_uhlenbeck",
            kind="sde",
            description="dX = theta (mu - X) dt + sigma dW",
            defaults={"theta": 1.0, "mu": 0.0, "sigma": 0.5},
            drift=lambda x, p: p["theta"] * (p["mu"] - x),
            diffusion=lambda x, p: p["sigma"] + 0 * x,
            initial=lambda p, rng: [float(p["mu"])],
            timescale=1.0,
            dt=0.01,
            transient=10.0,
            horizon=300.0,
        )
    )
    add(
        SDEModel(
            id="double_well_langevin",
            kind="sde",
            description="dX = (X - X^3) dt + sigma dW (overdamped)",
            defaults={"sigma": 0.5},
            drift=lambda x, p: x - x**3,
            diffusion=lambda x, p: p["sigma"] + 0 * x,
            initial=_const(1.0),
            timescale=1.0,
            dt=0.01,
            transient=10.0,
            horizon=300.0,
        )
    )
    add(
        SDEModel(
            id="random_walk",
            kind="sde",
            description="X(n+1) = X(n) + mu + sigma xi(n), xi standard normal",
            defaults={"mu": 0.0, "sigma": 1.0},
            drift=lambda x, p: p["mu"] + 0 * x,
            diffusion=lambda x, p: p["sigma"] + 0 * x,
            initial=_const(0.0),
            discrete=True,
            timescale=1.0,
            dt=1.0,
            transient=0.0,
            horizon=5000.0,
        )
    )
    add(
        SDEModel(
            id="geometric_brownian_motion",
            kind="sde",
            description="dX = mu X dt + sigma X dW (Ito)",
            defaults={"mu": 0.05, "sigma": 0.2},
            drift=lambda x, p: p["mu"] * x,
            diffusion=lambda x, p: p["sigma"] * x,
            initial=_const(1.0),
            timescale=1.0,
            dt=0.01,
            transient=0.0,
            horizon=300.0,
        )
    )
    return m


MODELS: dict[str, Model] = _build_models()


# ---------------------------------------------------------------------- dysts


def dysts_available() -> bool:
    try:
        _import_dysts()
        return True
    except ImportError:
        return False


def _import_dysts():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import dysts.flows  # noqa: F401
        import dysts.maps  # noqa: F401
    import dysts

    return dysts


@cache
def dysts_system(class_name: str):
    """A fresh dysts instance (its own parameters and initial condition)."""
    dysts = _import_dysts()
    for module in (dysts.flows, dysts.maps):
        cls = getattr(module, class_name, None)
        if cls is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cls()
    raise KeyError(f"dysts has no system {class_name!r}")


@dataclass
class DystsFlow(FlowModel):
    """A dysts continuous flow with dysts' equations, parameters (overridable by the catalog) and
    initial condition, integrated by our RK4 for the Lyapunov exponents.  Step: the smaller of
    P/50 and 1/|most negative exponent of dysts' estimated spectrum| (RK4 stability), where P is
    dysts' `period` metadata (its dominant Fourier period)."""

    system: Any = None
    vector_ok: bool = True
    names: tuple = ()
    own_rhs: bool = True
    obs_index: int = 0

    def _call(self, x, t, p):
        s = self.system
        if self.vector_ok and self.own_rhs:
            try:
                out = s._rhs(*x, t, *[p[k] for k in self.names])
                res = np.empty(x.shape)
                for i, o in enumerate(out):
                    res[i] = o
                return res
            except Exception:
                self.vector_ok = False
        flat = x.reshape(x.shape[0], -1)
        cols = [np.asarray(s.rhs(flat[:, j], t), dtype=float) for j in range(flat.shape[1])]
        return np.stack(cols, axis=1).reshape(x.shape)


def _has_own(cls, name):
    from dysts.base import DynSys

    for klass in cls.__mro__:
        if klass is DynSys:
            return False
        if name in klass.__dict__:
            return True
    return False


@cache
def dysts_model(class_name: str) -> Model:
    s = dysts_system(class_name)
    params = {k: np.asarray(v, dtype=float) for k, v in s.params.items()}
    scalar_defaults = {k: (float(v) if np.ndim(v) == 0 else v) for k, v in params.items()}
    period = float(getattr(s, "period", 1.0) or 1.0)
    spec = getattr(s, "lyapunov_spectrum_estimated", None) or []
    most_negative = max([abs(v) for v in spec if v < 0] + [1e-9])
    dt = min(period / 50.0, 1.0 / most_negative)
    ic = np.asarray(s.ic, dtype=float)
    unbounded = set(getattr(s, "unbounded_indices", []) or [])
    obs_index = next((i for i in range(len(ic)) if i not in unbounded), 0)
    model = DystsFlow(
        id=f"dysts:{class_name}",
        kind="forced" if getattr(s, "nonautonomous", False) else "flow",
        description=f"dysts.flows.{class_name}",
        defaults=scalar_defaults,
        rhs=None,
        initial=lambda p, rng, ic=ic: list(ic),
        timescale=period,
        dt=dt,
        transient=10.0,
        horizon=DYSTS_HORIZON,
        system=s,
        names=tuple(sorted(s.params)),
        own_rhs=_has_own(type(s), "_rhs"),
        obs_index=obs_index,
        observable=lambda x, i=obs_index: x[i],
        autonomous=not getattr(s, "nonautonomous", False),
    )
    model.rhs = model._call
    return model


def dysts_states(
    class_name: str, parameters: Mapping | None, n: int, seed: int = 0, transient_periods: float = DYSTS_TRANSIENT
) -> np.ndarray:
    """Full states (n, d) from dysts' own integrator: `make_trajectory` (scipy solve_ivp, here
    method LSODA with rtol = atol = 1e-8 -- its default Radau at 1e-12 takes minutes per system
    without numba), resampled at SAMPLES_PER_PERIOD points per dysts `period`, starting from
    dysts' initial condition; the first `transient_periods` are dropped."""
    s = dysts_system(class_name)
    model = dysts_model(class_name)
    p = model.params(parameters)
    saved = dict(s.params)
    skip = int(transient_periods * SAMPLES_PER_PERIOD)
    try:
        _set_dysts_params(s, p)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = s.make_trajectory(
                n + skip,
                pts_per_period=SAMPLES_PER_PERIOD,
                method="LSODA",
                rtol=1e-8,
                atol=1e-8,
                postprocess=False,
                random_seed=seed,
            )
    finally:
        _set_dysts_params(s, saved)
    if sol is None or np.ndim(sol) != 2 or len(sol) < n + skip or not np.isfinite(sol).all():
        raise RuntimeError(f"dysts {class_name}: integration failed")
    return np.asarray(sol, dtype=float)[skip:]


def dysts_trajectory(class_name: str, parameters: Mapping | None, n: int, seed: int = 0) -> np.ndarray:
    """Observed series (first bounded coordinate) from dysts' own integrator, P/2 apart."""
    return dysts_states(class_name, parameters, n, seed)[:, dysts_model(class_name).obs_index]


RK4_TOLERANCE = 1e-4  # max relative local error of one RK4 step over the probe states


def choose_rk4_step(model: Model, p: dict, states: np.ndarray, tol: float = RK4_TOLERANCE) -> float:
    """Largest step <= P/50 whose RK4 local error (step doubling, relative to 1 + |x|) stays
    below `tol` at every probe state (rows of `states`, e.g. a dysts trajectory).  dysts' `period`
    is the dominant Fourier period and can be far slower than the fastest motion (Lorenz-84:
    P/100 lands on a spurious periodic orbit, P/200 reproduces the chaotic attractor)."""
    X = np.asarray(states, dtype=float).T[:, :, None]
    if X.shape[1] > 200:
        X = X[:, np.linspace(0, X.shape[1] - 1, 200).astype(int)]
    scale = 1.0 + np.sqrt((X**2).sum(axis=0))[:, 0]
    P = model.P(p)
    dt = min(P / 50.0, model.step_size(p))

    def error(h):
        with np.errstate(all="ignore"):
            y1 = rk4(model.rhs, X, 0.0, h, p)
            y2 = rk4(model.rhs, rk4(model.rhs, X, 0.0, h / 2, p), h / 2, h / 2, p)
        e = np.sqrt(((y1 - y2) ** 2).sum(axis=0))[:, 0] / scale
        return float(np.max(np.where(np.isfinite(e), e, np.inf)))

    for _ in range(12):
        if error(dt) <= tol or dt <= P / 5000.0:
            break
        dt /= 2.0
    return dt


def _set_dysts_params(s, p):
    s.params = {k: np.asarray(v) for k, v in p.items()}
    s.__dict__.update(s.params)
    s.param_list = [s.params[k] for k in sorted(s.params)]


# ---------------------------------------------------------------------- public API


def resolve(simulate: Mapping[str, Any]) -> Model:
    """The Model named by a catalog `simulate` entry: {model: id} or {dysts: ClassName}."""
    if not simulate:
        raise ValueError("system is not simulated")
    if "model" in simulate:
        try:
            return MODELS[simulate["model"]]
        except KeyError:
            raise KeyError(f"unknown model {simulate['model']!r} (known: {', '.join(sorted(MODELS))})") from None
    if "dysts" in simulate:
        return dysts_model(str(simulate["dysts"]))
    raise ValueError(f"simulate entry needs 'model' or 'dysts': {dict(simulate)}")


def merged_parameters(simulate: Mapping[str, Any], parameters: Mapping[str, Any] | None) -> dict:
    """Catalog parameters plus any overrides written inside the simulate entry itself."""
    out = dict(parameters or {})
    for k, v in (simulate or {}).items():
        if k not in ("model", "dysts", "transient"):
            if isinstance(v, Mapping):
                out.update(v)
            else:
                out[k] = v
    return out


def run_model(
    model: Model,
    p: dict,
    nsteps: int,
    x: np.ndarray,
    t: float,
    rng: np.random.Generator,
    record_every: int = 0,
    record: list | None = None,
) -> tuple[np.ndarray, float]:
    """Advance `nsteps` steps; every `record_every` steps append model.observe(x) to `record`."""
    h = model.step_size(p) if model.kind != "map" else 1.0
    if isinstance(model, KSModel) and not record_every:
        return model.advance(x, p, nsteps), t + nsteps * h
    noise_shape = (model.noise_dim,) + x.shape[1:-1] + (1,) if model.stochastic else None
    with np.errstate(all="ignore"):
        for i in range(nsteps):
            noise = rng.standard_normal(noise_shape) if noise_shape else None
            x = model.step(x, t, p, noise)
            t += h
            if record_every and (i + 1) % record_every == 0:
                record.append(np.array(model.observe(x), copy=True))
    return x, t


def trajectory(simulate: Mapping[str, Any], parameters: Mapping[str, Any] | None, n: int, seed: int = 0) -> np.ndarray:
    """Observable series of length n after the model's transient: maps every iteration, flows
    every P/10 (see the module docstring), dysts flows through dysts' own integrator."""
    if "dysts" in (simulate or {}):
        states = dysts_states(
            str(simulate["dysts"]),
            merged_parameters(simulate, parameters),
            n,
            seed,
            transient_periods=float(simulate.get("transient", DYSTS_TRANSIENT)),
        )
        return states[:, dysts_model(str(simulate["dysts"])).obs_index]
    model = resolve(simulate)
    if "transient" in simulate:
        model = replace(model, transient=float(simulate["transient"]))
    p = model.params(merged_parameters(simulate, parameters))
    rng = np.random.default_rng(seed)
    if isinstance(model, MapModel) and model.orbit_fn is not None and _symbolic(model, p):
        orbit = model.orbit_fn(p, n + int(model.transient), rng)[int(model.transient) :]
        return np.asarray(model.observe(orbit.T), dtype=float)[:n]
    if model.id == "tent" and _symbolic(model, p):
        return _tent2_orbit(p, n + int(model.transient), rng)[int(model.transient) :, 0]
    x = model.init(p, (1, 1), rng)
    x, t = run_model(model, p, model.steps(p, model.transient), x, 0.0, rng)
    every = model.sample_every(p)
    rec: list = []
    run_model(model, p, n * every, x, t, rng, record_every=every, record=rec)
    return np.asarray(rec, dtype=float).reshape(len(rec), -1)[:, 0]


def _symbolic(model: Model, p: dict) -> bool:
    """Maps whose floating-point orbits degenerate (slope exactly 2: doubling, baker, tent mu=2)."""
    if model.id in ("bernoulli", "baker_map"):
        return True
    return model.id == "tent" and np.ndim(p["mu"]) == 0 and abs(float(p["mu"]) - 2.0) < 1e-12
