"""`python -m bankgen compute-indicators [--verify] [--only ID ...] [--jobs N]`

Computes the chaos indicators of every catalog system that has a `simulate` entry (largest and
second Lyapunov exponent, 0-1 test K, permutation entropy, mean phase-space volume rate, regime;
for the project's own continuous-time deterministic models also `k01_fine`, the 0-1 test on the
same orbit deliberately oversampled at the integration step `k01_fine_dt`, the test's known
failure) and the parameter sweeps (bankgen/sweeps.py: several initial conditions per point, a
literature guard near bifurcations, per-point `runs`, `k01`, `perm_entropy`), and writes

* cases/chaosbench/indicators.json  {"version", "command", "conventions", "systems": {id: {...}}}
* cases/chaosbench/sweeps.json      {"version", "command", "conventions", "sweeps": {name: {...}}}

with sorted keys and every float rounded to 6 significant digits, so that the files are stable.
Everything is seeded (seed 0), so a rerun on the same machine reproduces the files exactly.
`--only` restricts the run to the given system ids and/or sweep names and merges the results into
the existing files.  A progress line per system goes to stderr.

`--verify` writes nothing.  It recomputes (the selection) and
1. compares with the cached files.  Tolerances, chosen for other machines and numpy builds where
   round-off differences make chaotic trajectories diverge after a few dozen Lyapunov times:
   exponents within max(5 % relative, eps/2 absolute) (eps: the classification threshold of the
   system), K within 0.1, permutation entropy within 0.02, volume rate within max(5 %, eps/2),
   regimes (systems and sweep points) identical, and for sweep points that are not ambiguous
   also K and permutation entropy (same tolerances);
2. checks the curated labels of each system against the computed indicators
   (eps as in `indicators.lyapunov_eps`, K threshold 0.8; a label that is null, unknown, is
   never checked):
   - Chaotic=True needs lle > eps and, for deterministic systems, K > 0.8;
   - Chaotic=False needs lle <= eps unless the system is stochastic or unbounded (Bounded=False:
     exponential escape is not chaos);
   - PosLyap must match lle > eps;
   - Hyperchaotic=True needs the second exponent > eps; Hyperchaotic=False needs it <=
     max(eps, 10 % of the largest) -- the zero exponent(s) of a flow converge slowly in strongly
     chaotic systems (double pendulum: 0.065 against 1.2 over 500 time units);
   - FixedPointAttr=True needs lle < -eps;
   and prints e.g. "system lorenz63: curated Chaotic=True but computed lle=-0.02 (K=0.1)".
Exit status 1 on any disagreement or missing cache entry, 2 on usage errors.

`--write-dysts-catalog` (maintainer tool, needs `dysts`) regenerates
cases/chaosbench/systems/dysts.yaml from DYSTS_CANDIDATES: each candidate is simulated, the truth
assignment is derived from the computed exponents and dysts' metadata (see the comment block the
command writes at the top of the file) and candidates whose indicators are ambiguous or disagree
are left out and listed in that block.  Run compute-indicators afterwards.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

from bankgen import dynamics, indicators, sweeps

PROJECT = Path(__file__).resolve().parents[1]
CASES_DIR = PROJECT / "cases" / "chaosbench"
CATALOG_DIR = CASES_DIR / "systems"
INDICATORS_FILE = CASES_DIR / "indicators.json"
SWEEPS_FILE = CASES_DIR / "sweeps.json"
DYSTS_CATALOG = CATALOG_DIR / "dysts.yaml"
COMMAND = "python -m bankgen compute-indicators"
VERSION = 1
SEED = 0
K_CHAOTIC = 0.8
HYPER_FRACTION = 0.1  # a second exponent below 10 % of the first may be a slowly converging zero exponent
TOL_REL, TOL_EPS, TOL_K, TOL_PE = 0.05, 0.5, 0.1, 0.02

CONVENTIONS = {
    "lle": "largest Lyapunov exponent, per iteration (maps) or per unit time (flows, delay, PDE, SDE)",
    "lle2": "second Lyapunov exponent (same units)",
    "k01": "Gottwald-Melbourne 0-1 test K (correlation method, median over 100 seeded c in (pi/5, 4pi/5))",
    "perm_entropy": "normalised Bandt-Pompe permutation entropy, order 5, delay 1",
    "volume_rate": "mean divergence of the vector field (flows) or mean log|det J| (maps); null when not computed",
    "regime": "chaotic | periodic | fixed_point | ambiguous | stochastic, from the exponents (bankgen/indicators.py)",
    "eps": "classification threshold: 0.01 per iteration (maps), 0.05 per characteristic time P (flows)",
    "sampling": "flows sampled every P/2 (forced systems with explicit time: every forcing period), maps every iteration",
    "seed": SEED,
    "k01_fine": "systems (own continuous-time deterministic models: flows, forced flows, delay, PDE): the same 0-1 test "
    "on the same orbit sampled at every integration step (the first 5000 steps of the measured horizon) "
    "-- deliberately oversampled, the test's known failure mode (K near 0 even for chaotic flows)",
    "k01_fine_dt": "sampling interval of k01_fine: the integration step, in the system's time units",
    "runs": "sweep points: one letter per simulated initial condition, in run order (c chaotic, p periodic, "
    "f fixed_point, a ambiguous); the point's regime is the common one, ambiguous when they disagree",
    "near_bifurcation": "sweep points: the literature bifurcation value (sweep 'bifurcations') within the sweep's "
    "'margin' of the point, which makes the point ambiguous whatever its runs say",
    "sweep_point_indicators": "sweep points: lle, lle2 of run 0 (the model's own initial condition); k01 and "
    "perm_entropy of run 0's series after the transient, sampled as for systems, at most "
    "the last 5000 samples; null when run 0 is unbounded",
}


# ---------------------------------------------------------------------- helpers


def sig6(x: float) -> float | None:
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    return float(f"{x:.6g}") + 0.0  # + 0.0 turns -0.0 into 0.0


def rounded(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return sig6(obj)
    return obj


def dump(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(rounded(data), sort_keys=True, indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


def progress(message: str) -> None:
    print(f"compute-indicators: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Entry:
    id: str
    name: str
    simulate: dict | None
    parameters: dict
    truth: dict
    origin: str


def load_entries(catalog_dir: Path | None = None) -> list[Entry]:
    """Catalog systems through bankgen.systems.load_all (schema + axioms); if that module
    is missing or rejects the catalog, the YAML files are read directly (absent files tolerated)."""
    directory = CATALOG_DIR if catalog_dir is None else Path(catalog_dir)
    try:
        from bankgen.systems import load_all
    except ImportError:
        return _raw_entries(directory)
    try:
        return [
            Entry(s.id, s.name, s.simulate, dict(s.parameters), dict(s.truth), s.origin) for s in load_all(directory)
        ]
    except Exception as exc:  # CatalogError: still compute what can be computed
        progress(f"warning: catalog does not load cleanly ({exc}); reading the YAML files directly")
        return _raw_entries(directory)


def _raw_entries(directory: Path) -> list[Entry]:
    import yaml

    out: list[Entry] = []
    for filename, origin in (("core.yaml", "core"), ("dysts.yaml", "dysts")):
        path = directory / filename
        if not path.exists():
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for item in data.get("systems") or []:
            if isinstance(item, dict) and item.get("id"):
                out.append(
                    Entry(
                        str(item["id"]),
                        str(item.get("name", item["id"])),
                        item.get("simulate") or None,
                        dict(item.get("parameters") or {}),
                        dict(item.get("truth") or {}),
                        origin,
                    )
                )
    return out


# ---------------------------------------------------------------------- computation (worker side)


FINE_SAMPLES = 5000  # k01_fine: the first 5000 integration steps of the measured horizon


def fine_applies(simulate: dict) -> bool:
    """k01_fine is computed for the project's own continuous-time deterministic models (not for
    dysts flows, whose observed series comes from dysts' integrator, not from the RK4 orbit)."""
    if "dysts" in simulate:
        return False
    model = dynamics.resolve(simulate)
    return model.kind in ("flow", "forced", "delay", "pde") and not model.stochastic


def compute_system(simulate: dict, parameters: dict, seed: int = SEED) -> dict:
    """The cached record of one system."""
    fine = FINE_SAMPLES if fine_applies(simulate) else 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        analysis = indicators.analyse_system(simulate, parameters, seed=seed, k=2, fine=fine)
    model = dynamics.resolve(simulate)
    p = model.params(dynamics.merged_parameters(simulate, parameters))
    series = np.asarray(analysis.series)[:, 0]
    ex = analysis.exponents[0]
    settings = dict(analysis.settings)
    settings.update(
        {
            "model": simulate.get("model") or f"dysts:{simulate.get('dysts')}",
            "series_length": int(series.size),
            "kind": model.kind,
            "stochastic": bool(model.stochastic),
        }
    )
    volume = None if analysis.volume_rate is None else float(np.asarray(analysis.volume_rate).reshape(-1)[0])
    out = {
        "lle": float(ex[0]),
        "lle2": float(ex[1]) if len(ex) > 1 else None,
        "k01": indicators.zero_one_k(series, seed=seed),
        "perm_entropy": indicators.permutation_entropy(series),
        "volume_rate": volume,
        "regime": indicators.regime(model, p, ex, float(analysis.spread[0]), bool(analysis.bounded[0])),
        "settings": settings,
    }
    if analysis.fine_series is not None:
        fine_series = np.asarray(analysis.fine_series)[:, 0]
        out["k01_fine"] = indicators.zero_one_k(fine_series, seed=seed)
        out["k01_fine_dt"] = float(analysis.settings["dt"])
        settings["fine_samples"] = int(fine_series.size)
    return out


def _system_job(args):
    sid, simulate, parameters = args
    start = time.time()
    try:
        return sid, compute_system(simulate, parameters), None, time.time() - start
    except Exception as exc:  # reported by the caller
        return sid, None, f"{type(exc).__name__}: {exc}", time.time() - start


def _sweep_job(name):
    start = time.time()
    try:
        return name, sweeps.compute_sweep(name, seed=SEED), None, time.time() - start
    except Exception as exc:
        return name, None, f"{type(exc).__name__}: {exc}", time.time() - start


def run_parallel(
    jobs: list[tuple[Callable, Any, str]], workers: int, report: Callable[[int, int, str, Any, str | None, float], None]
) -> list:
    """Run (function, argument, label) jobs; report(i, n, label, result, error, seconds) as each ends."""
    results = []
    n = len(jobs)
    if workers <= 1 or n <= 1:
        for i, (fn, arg, label) in enumerate(jobs, 1):
            key, value, error, seconds = fn(arg)
            report(i, n, label, value, error, seconds)
            results.append((key, value, error))
        return results
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("fork")) as pool:
        futures = {pool.submit(fn, arg): label for fn, arg, label in jobs}
        for i, future in enumerate(as_completed(futures), 1):
            key, value, error, seconds = future.result()
            report(i, n, futures[future], value, error, seconds)
            results.append((key, value, error))
    return results


# ---------------------------------------------------------------------- checks


def _fmt(x: float | None) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.4g}"


def label_problems(entry: Entry, values: dict) -> list[str]:
    """Curated labels that contradict the computed indicators (see the module docstring).  A
    truth value None (unknown) is never checked."""
    truth = {k: v for k, v in (entry.truth or {}).items() if v is not None}
    lle, lle2, k = values.get("lle"), values.get("lle2"), values.get("k01")
    eps = values.get("settings", {}).get("eps", indicators.EPS_MAP)
    stochastic = truth.get("Stochastic") is True or bool(values.get("settings", {}).get("stochastic"))
    msg = f"system {entry.id}: curated {{}} but computed lle={_fmt(lle)} (K={_fmt(k)})"
    out: list[str] = []
    if lle is None or not math.isfinite(lle):
        return [f"system {entry.id}: no finite Lyapunov exponent computed (orbit unbounded or integration failed)"]
    if truth.get("Chaotic") is True:
        if not lle > eps or (not stochastic and not (k is not None and k > K_CHAOTIC)):
            out.append(msg.format("Chaotic=True"))
    elif truth.get("Chaotic") is False:
        if lle > eps and not stochastic and truth.get("Bounded") is not False:
            out.append(msg.format("Chaotic=False"))
    if truth.get("PosLyap") is not None and bool(truth["PosLyap"]) != (lle > eps):
        out.append(msg.format(f"PosLyap={truth['PosLyap']}"))
    if truth.get("Hyperchaotic") is not None and lle2 is not None and math.isfinite(lle2) and not stochastic:
        hyper_true_bad = truth["Hyperchaotic"] and not lle2 > eps
        hyper_false_bad = not truth["Hyperchaotic"] and lle2 > max(eps, HYPER_FRACTION * lle)
        if hyper_true_bad or hyper_false_bad:
            out.append(
                f"system {entry.id}: curated Hyperchaotic={truth['Hyperchaotic']} but computed "
                f"second exponent={_fmt(lle2)} (lle={_fmt(lle)}, eps={_fmt(eps)})"
            )
    if truth.get("FixedPointAttr") is True and not lle < -eps:
        out.append(msg.format("FixedPointAttr=True"))
    return out


def _close(a: float | None, b: float | None, rel: float, absolute: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(rel * abs(b), absolute)


def cache_problems(sid: str, new: dict, old: dict | None) -> list[str]:
    if old is None:
        return [f"system {sid}: missing from {INDICATORS_FILE.name} (run `{COMMAND}`)"]
    eps = new.get("settings", {}).get("eps", indicators.EPS_MAP)
    out = []
    for key in ("lle", "lle2", "volume_rate"):
        if not _close(sig6(new.get(key)), old.get(key), TOL_REL, TOL_EPS * eps):
            out.append(f"system {sid}: cached {key}={_fmt(old.get(key))} but recomputed {_fmt(new.get(key))}")
    if not _close(sig6(new.get("k01")), old.get("k01"), 0.0, TOL_K):
        out.append(f"system {sid}: cached k01={_fmt(old.get('k01'))} but recomputed {_fmt(new.get('k01'))}")
    if not _close(sig6(new.get("perm_entropy")), old.get("perm_entropy"), 0.0, TOL_PE):
        out.append(
            f"system {sid}: cached perm_entropy={_fmt(old.get('perm_entropy'))} but recomputed "
            f"{_fmt(new.get('perm_entropy'))}"
        )
    if new.get("regime") != old.get("regime"):
        out.append(f"system {sid}: cached regime={old.get('regime')} but recomputed {new.get('regime')}")
    return out


def sweep_problems(name: str, new: dict, old: dict | None) -> list[str]:
    if old is None:
        return [f"sweep {name}: missing from {SWEEPS_FILE.name} (run `{COMMAND}`)"]
    old_points = {p["value"]: p for p in old.get("points", [])}
    eps = new.get("eps", indicators.EPS_MAP)
    out = []
    for point in new["points"]:
        value = sig6(point["value"])
        cached = old_points.get(value)
        if cached is None:
            out.append(f"sweep {name}: point {value:g} missing from the cache")
            continue
        if cached.get("regime") != point["regime"]:
            out.append(
                f"sweep {name}: at {new['parameter']}={value:g} cached regime={cached.get('regime')} "
                f"but recomputed {point['regime']} (lle={_fmt(point['lle'])})"
            )
        elif not _close(sig6(point["lle"]), cached.get("lle"), TOL_REL, TOL_EPS * eps):
            out.append(
                f"sweep {name}: at {new['parameter']}={value:g} cached lle={_fmt(cached.get('lle'))} "
                f"but recomputed {_fmt(point['lle'])}"
            )
        elif point["regime"] != "ambiguous":
            for key, tol in (("k01", TOL_K), ("perm_entropy", TOL_PE)):
                if not _close(sig6(point.get(key)), cached.get(key), 0.0, tol):
                    out.append(
                        f"sweep {name}: at {new['parameter']}={value:g} cached {key}={_fmt(cached.get(key))} "
                        f"but recomputed {_fmt(point.get(key))}"
                    )
    if len(old.get("points", [])) != len(new["points"]):
        out.append(f"sweep {name}: cache has {len(old.get('points', []))} points, recomputed {len(new['points'])}")
    return out


# ---------------------------------------------------------------------- main


def _load_json(path: Path, key: str) -> dict:
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8")).get(key, {}) or {}
    except (OSError, ValueError):
        return {}


def main(
    argv: list[str] | None = None,
    catalog_dir: Path | None = None,
    indicators_file: Path | None = None,
    sweeps_file: Path | None = None,
) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description="compute (or --verify) the cached chaos indicators")
    parser.add_argument("--verify", action="store_true", help="recompute and compare; write nothing")
    parser.add_argument("--only", nargs="+", metavar="ID", help="system ids and/or sweep names")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes (default 2)")
    parser.add_argument("--no-sweeps", action="store_true", help="skip the parameter sweeps")
    parser.add_argument(
        "--write-dysts-catalog",
        action="store_true",
        help="regenerate cases/chaosbench/systems/dysts.yaml (needs dysts; slow)",
    )
    parser.add_argument(
        "--dysts-facts",
        type=Path,
        metavar="FILE",
        help="with --write-dysts-catalog: scratch JSON caching the simulations (outside the project)",
    )
    args = parser.parse_args(argv)
    ind_path = INDICATORS_FILE if indicators_file is None else Path(indicators_file)
    sw_path = SWEEPS_FILE if sweeps_file is None else Path(sweeps_file)
    if args.write_dysts_catalog:
        return write_dysts_catalog(workers=args.jobs, facts_file=args.dysts_facts)

    entries = [e for e in load_entries(catalog_dir) if e.simulate]
    by_id = {e.id: e for e in entries}
    sweep_names = list(sweeps.SWEEPS) if not args.no_sweeps else []
    if args.only:
        unknown = [x for x in args.only if x not in by_id and x not in sweeps.SWEEPS]
        if unknown:
            print(f"{COMMAND}: unknown system or sweep id(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        selected = [by_id[x] for x in args.only if x in by_id]
        sweep_names = [x for x in args.only if x in sweeps.SWEEPS]
    else:
        selected = entries
    problems: list[str] = []
    for e in selected:
        try:
            dynamics.resolve(e.simulate)
        except Exception as exc:
            problems.append(f"system {e.id}: cannot simulate {e.simulate}: {exc}")
    runnable = [e for e in selected if not any(p.startswith(f"system {e.id}:") for p in problems)]

    def report(i, n, label, value, error, seconds):
        if error:
            progress(f"[{i}/{n}] {label}: FAILED {error} ({seconds:.1f} s)")
        elif label.startswith("sweep "):
            progress(f"[{i}/{n}] {label}: {sweeps.regime_counts(value)} ({seconds:.1f} s)")
        else:
            progress(
                f"[{i}/{n}] {label}: lle={_fmt(value['lle'])} lle2={_fmt(value['lle2'])} "
                f"K={_fmt(value['k01'])} PE={_fmt(value['perm_entropy'])} {value['regime']} ({seconds:.1f} s)"
            )

    jobs = [(_sweep_job, name, f"sweep {name}") for name in sweep_names]
    jobs += [(_system_job, (e.id, dict(e.simulate), dict(e.parameters)), f"system {e.id}") for e in runnable]
    start = time.time()
    results = run_parallel(jobs, args.jobs, report)
    new_systems = {k: v for (k, v, err) in results if v is not None and k in by_id}
    new_sweeps = {k: v for (k, v, err) in results if v is not None and k in sweeps.SWEEPS}
    for key, _value, error in results:
        if error:
            problems.append(f"{'sweep' if key in sweeps.SWEEPS else 'system'} {key}: computation failed: {error}")
    progress(f"{len(new_systems)} systems, {len(new_sweeps)} sweeps in {time.time() - start:.0f} s")

    if args.verify:
        cached_systems = _load_json(ind_path, "systems")
        cached_sweeps = _load_json(sw_path, "sweeps")
        for e in runnable:
            if e.id in new_systems:
                problems += cache_problems(e.id, rounded(new_systems[e.id]), cached_systems.get(e.id))
                problems += label_problems(e, rounded(new_systems[e.id]))
        for name, sweep in new_sweeps.items():
            problems += sweep_problems(name, rounded(sweep), cached_sweeps.get(name))
        if not args.only:
            for sid in sorted(set(cached_systems) - set(by_id)):
                problems.append(f"system {sid}: in {ind_path.name} but not a simulated catalog system")
        for line in problems:
            print(line)
        if problems:
            print(f"{COMMAND} --verify: {len(problems)} problem(s)", file=sys.stderr)
            return 1
        print(
            f"{COMMAND} --verify: {len(new_systems)} systems and {len(new_sweeps)} sweeps agree with the cache "
            f"and the curated labels"
        )
        return 0

    systems_out = _load_json(ind_path, "systems") if args.only else {}
    systems_out = {k: v for k, v in systems_out.items() if k in by_id}
    systems_out.update(new_systems)
    dump(ind_path, {"version": VERSION, "command": COMMAND, "conventions": CONVENTIONS, "systems": systems_out})
    if sweep_names or not args.only:
        sweeps_out = _load_json(sw_path, "sweeps") if args.only else {}
        sweeps_out.update(new_sweeps)
        dump(sw_path, {"version": VERSION, "command": COMMAND, "conventions": CONVENTIONS, "sweeps": sweeps_out})
    for line in problems:
        print(line)
    return 1 if problems else 0


# ---------------------------------------------------------------------- dysts catalog generator


# dysts continuous flows considered for cases/chaosbench/systems/dysts.yaml, with the noun phrase
# used in questions.  A name must not let a reader infer any predicate without knowing the system:
# author(s) / year / field names only -- no "chaotic", "hyper..." (hyperchaos), "four-dimensional"
# or any dimension (4 dimensions correlate with hyperchaos), "attractor", "strange", "scroll" or
# "wing" (attractor shapes), "forced", "driven", "vibrating", "seasonally" (non-autonomy),
# "oscillator" (sustained oscillation), "damped", "thermostated", "random", "periodic", "regime"
# (LEAKING_WORDS, checked by the writer and the tests).  Names are unique.  Left out on purpose: systems already curated in core.yaml (Lorenz, Rossler,
# Chen, Chua, Duffing, double pendulum, van der Pol variants, Lorenz-96, Mackey-Glass,
# Kuramoto-Sivashinsky, Henon-Heiles, Brusselator variants, hyperchaotic Rossler), delay
# equations, kinematic fluid-advection models with unbounded angle or time coordinates (ArnoldWeb,
# BickleyJet, BlinkingRotlet/Vortex, InteriorSquirmer, LidDrivenCavityFlow, OscillatingFlow,
# DoubleGyre, ArnoldBeltramiChildress, SwingingAtwood, Torus), systems defined through matrices or
# many auxiliary functions (BeerRNN, Hopfield, MacArthur, CellularNeuralNetwork, MultiChua,
# ExcitableCell, CaTwoPlus*, CellCycle, CircadianRhythm, BelousovZhabotinsky,
# CoevolvingPredatorPrey, LorenzBounded) and two very stiff ones (AtmosphericRegime,
# StickSlipOscillator).
DYSTS_NAMES = {
    "Aizawa": "the Aizawa system",
    "AnishchenkoAstakhov": "the Anishchenko-Astakhov system",
    "Arneodo": "the Arneodo-Coullet-Tresser system",
    "Blasius": "the Blasius food-chain model",
    "Bouali": "the Bouali (1999) economic model",
    "Bouali2": "the second Bouali (1999) economic model",
    "BurkeShaw": "the Burke-Shaw system",
    "ChenLee": "the Chen-Lee system",
    "Colpitts": "the Colpitts circuit",
    "Coullet": "the Coullet system",
    "Dadras": "the Dadras system",
    "DequanLi": "the Dequan Li system",
    "Finance": "the Cai-Huang (2007) finance model",
    "FluidTrampoline": "the Gilet-Bush (2009) fluid-trampoline model",
    "ForcedFitzHughNagumo": "the FitzHugh (1961) nerve-membrane model",
    "GenesioTesi": "the Genesio-Tesi system",
    "GlycolyticOscillation": "the Decroly-Goldbeter (1982) glycolysis model",
    "GuckenheimerHolmes": "the Guckenheimer-Holmes system",
    "Hadley": "the Hadley circulation model",
    "Halvorsen": "the Halvorsen system",
    "HastingsPowell": "the Hastings-Powell food chain",
    "HindmarshRose": "the Hindmarsh-Rose neuron model",
    "HyperBao": "the Bao-Liu (2008) system",
    "HyperCai": "the second Cai-Huang (2007) finance model",
    "HyperJha": "the Jha system",
    "HyperLorenz": "the Meier (2003) Lorenz-type system",
    "HyperLu": "the Chen-Lu-Lü-Yu (2006) system",
    "HyperPang": "the Pang-Liu (2011) system",
    "HyperQi": "the second Qi et al. (2008) system",
    "HyperWang": "the second Wang-Sun (2009) system",
    "HyperXu": "the Xu system",
    "HyperYan": "the Yan system",
    "HyperYangChen": "the Yang-Chen system",
    "IsothermalChemical": "the isothermal autocatalytic chemical reactor",
    "ItikBanksTumor": "the Itik-Banks tumour growth model",
    "JerkCircuit": "the diode jerk circuit",
    "KawczynskiStrizhak": "the Kawczynski-Strizhak chemical model",
    "Laser": "the Haken laser model",
    "LiuChen": "the Liu-Chen system",
    "Lorenz84": "the Lorenz-84 atmospheric model",
    "LorenzCoupled": "the pair of coupled Lorenz systems",
    "LorenzStenflo": "the Lorenz-Stenflo system",
    "LuChen": "the Lu-Chen system",
    "LuChenCheng": "the Lu-Chen-Cheng system",
    "MooreSpiegel": "the Moore-Spiegel thermo-convective model",
    "NewtonLiepnik": "the Newton-Leipnik system",
    "NoseHoover": "the Nose-Hoover system",
    "NuclearQuadrupole": "the Baran-Raduta (1998) nuclear quadrupole model",
    "PanXuZhou": "the Pan-Xu-Zhou system",
    "PehlivanWei": "the Pehlivan-Wei system",
    "Qi": "the first Qi et al. (2008) system",
    "QiChen": "the Qi-Chen system",
    "RabinovichFabrikant": "the Rabinovich-Fabrikant system",
    "RayleighBenard": "the Rayleigh-Benard convection model",
    "RikitakeDynamo": "the Rikitake dynamo",
    "Rucklidge": "the Rucklidge double-convection model",
    "Sakarya": "the Sakarya system",
    "SaltonSea": "the Salton Sea ecosystem model",
    "SanUmSrisuchinwong": "the San-Um-Srisuchinwong system",
    "ShimizuMorioka": "the Shimizu-Morioka system",
    "SprottA": "the Sprott A system",
    "SprottB": "the Sprott B system",
    "SprottC": "the Sprott C system",
    "SprottD": "the Sprott D system",
    "SprottE": "the Sprott E system",
    "SprottF": "the Sprott F system",
    "SprottG": "the Sprott G system",
    "SprottH": "the Sprott H system",
    "SprottI": "the Sprott I system",
    "SprottJ": "the Sprott J system",
    "SprottJerk": "the Sprott jerk system",
    "SprottK": "the Sprott K system",
    "SprottL": "the Sprott L system",
    "SprottM": "the Sprott M system",
    "SprottMore": "the Sprott sign-nonlinearity system",
    "SprottN": "the Sprott N system",
    "SprottO": "the Sprott O system",
    "SprottP": "the Sprott P system",
    "SprottQ": "the Sprott Q system",
    "SprottR": "the Sprott R system",
    "SprottS": "the Sprott S system",
    "SprottTorus": "the Sprott 2014 system",
    "Thomas": "the Thomas (1999) cyclically symmetric system",
    "ThomasLabyrinth": "the Thomas labyrinth system",
    "Tsucs2": "the Pan-Zhou-Li (2013) system",
    "TurchinHanski": "the Turchin-Hanski vole model",
    "VallisElNino": "the Vallis El Nino model",
    "WangSun": "the Wang-Sun (2009) system",
    "WindmiReduced": "the reduced WINDMI magnetosphere model",
    "YuWang": "the Yu-Wang system",
    "YuWang2": "the second Yu-Wang system",
    "ZhouChen": "the Zhou-Chen system",
}
DYSTS_CANDIDATES = tuple(sorted(DYSTS_NAMES))
# substrings (lower case) that must not occur in a dysts system name
LEAKING_WORDS = (
    "dimension",
    "hyper",
    "chao",
    "strange",
    "attractor",
    "scroll",
    "wing",
    "forced",
    "forcing",
    "driven",
    "vibrat",
    "seasonal",
    "oscillat",
    "damp",
    "thermostat",
    "random",
    "stochastic",
    "noise",
    "noisy",
    "periodic",
    "regime",
    "conservative",
    "dissipat",
    "hamilton",
    "integrab",
    "ergodic",
    "mixing",
    "torus",
    "turbulen",
    "delay",
    "equilibri",
    "fixed point",
    "limit cycle",
    "quasi",
    "area-preserving",
    "high energy",
)


def leaking_name_words(name: str) -> list[str]:
    """The LEAKING_WORDS found in a system name (case-insensitive)."""
    low = name.lower()
    return [w for w in LEAKING_WORDS if w in low]


# Equations written by hand where dysts' right-hand side is not a plain list of assignments.
DYSTS_EQUATIONS = {
    "AnishchenkoAstakhov": "dx/dt = mu*x + y - x*z, dy/dt = -x, dz/dt = -eta*z + eta*H(x)*x^2 (H: Heaviside step)",
    "Colpitts": "dx/dt = y - a*F(z), dy/dt = c - x - b*y - z, dz/dt = y - d*z, "
    "with F(z) = -u*(1 - H(u)), u = z - (e - 1) (H: Heaviside step)",
    "FluidTrampoline": "dx/dt = y, dy/dt = -1 - H(-x)*(x + psi*y*|y|) + gamma*cos(th), dth/dt = w "
    "(H: Heaviside step; th: forcing phase)",
    # dysts writes b2 * p ** 1 / 2, i.e. b2*p/2
    "WindmiReduced": "di/dt = a1*(vsw - v), dv/dt = b1*i - b2*p/2 - b3*v, "
    "dp/dt = vsw^2 - p^(5/4)*vsw^(1/2)*(1 + tanh(d1*(i - 1)))/2",
}
LONG_TRANSIENT = 600.0  # characteristic times, generator check for late settling
DYSTS_MARGIN = 2.0  # accept a chaotic / regular label only beyond 2 eps
K_ACCEPT_CHAOTIC, K_ACCEPT_REGULAR = 0.85, 0.5


def _expr(node) -> str:
    text = ast.unparse(node)
    for a, b in (("np.", ""), (" ** ", "^"), ("**", "^"), (" * ", "*"), (" / ", "/")):
        text = text.replace(a, b)
    return text


def dysts_equations(class_name: str) -> str:
    """Plain-text equations from dysts' source (`_rhs` of the class or its nearest base)."""
    if class_name in DYSTS_EQUATIONS:
        return DYSTS_EQUATIONS[class_name]
    import dysts.flows as flows

    tree = ast.parse(Path(flows.__file__).read_text(encoding="utf-8"))
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    node = classes.get(class_name)
    while node is not None:
        fn = next((b for b in node.body if isinstance(b, ast.FunctionDef) and b.name == "_rhs"), None)
        if fn is not None:
            break
        base = node.bases[0].id if node.bases and isinstance(node.bases[0], ast.Name) else None
        node = classes.get(base)
    if node is None:
        raise ValueError(f"no _rhs for {class_name}")
    rates, helpers = [], []
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
            if target.endswith("dot"):
                rates.append(f"d{target[:-3]}/dt = {_expr(stmt.value)}")
            else:
                helpers.append(f"{target} = {_expr(stmt.value)}")
        elif isinstance(stmt, ast.Return):
            continue
        else:
            raise ValueError(f"{class_name}: unsupported statement {ast.unparse(stmt)}")
    text = ", ".join(rates)
    if helpers:
        text += ", where " + ", ".join(helpers)
    return text


def _dysts_facts(class_name: str) -> dict:
    """Standard indicators (as compute-indicators computes them) plus a long-transient check."""
    warnings.filterwarnings("ignore")
    facts: dict[str, Any] = {"class": class_name}
    try:
        facts["standard"] = compute_system({"dysts": class_name}, {})
        model = dynamics.dysts_model(class_name)
        p = model.params({})
        states = dynamics.dysts_states(class_name, p, dynamics.DYSTS_SERIES)
        dt = dynamics.choose_rk4_step(model, p, states)
        stepped = replace(model, dt=dt)
        stepped.rhs = stepped._call
        long = indicators.analyse(
            stepped, p, k=2, transient=LONG_TRANSIENT, horizon=dynamics.DYSTS_HORIZON, x0=model.system.ic
        )
        ex = long.exponents[0]
        facts["long"] = {
            "lle": float(ex[0]),
            "lle2": float(ex[1]),
            "k01": indicators.zero_one_k(long.series[:, 0]),
            "regime": indicators.regime(stepped, p, ex, float(long.spread[0]), bool(long.bounded[0])),
        }
    except Exception as exc:
        facts["error"] = f"{type(exc).__name__}: {exc}"
    return facts


def _dysts_job(class_name):
    start = time.time()
    return class_name, _dysts_facts(class_name), None, time.time() - start


def _settle_job(class_name):
    start = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value = compute_system({"dysts": class_name, "transient": LONG_TRANSIENT}, {})
        except Exception as exc:
            value = {"error": f"{type(exc).__name__}: {exc}"}
    return class_name, value, None, time.time() - start


def _needs_settling(facts: dict) -> bool:
    """Late settling suspected: the long-transient regime differs, or the standard run's 0-1 test
    contradicts its exponents (e.g. a chaotic transient in the observed series)."""
    if "error" in facts:
        return False
    standard = facts["standard"]
    if facts["long"]["regime"] != standard["regime"]:
        return True
    k = standard["k01"]
    return (standard["regime"] == "chaotic" and k < K_ACCEPT_CHAOTIC) or (
        standard["regime"] in ("periodic", "fixed_point") and k > K_ACCEPT_REGULAR
    )


def _zero_removed(spectrum: list[float], zeros: int) -> list[float]:
    rest = sorted(spectrum, reverse=True)
    for _ in range(min(zeros, len(rest))):
        rest.pop(min(range(len(rest)), key=lambda i: abs(rest[i])))
    return rest


def derive_dysts_entry(class_name: str, facts: dict) -> tuple[dict | None, str]:
    """(catalog entry, note) or (None, reason for leaving the candidate out)."""
    from pytest_reasoning_evals.chaosbench import ontology

    if "error" in facts:
        return None, f"simulation failed ({facts['error']})"
    simulate: dict[str, Any] = {"dysts": class_name}
    values = facts["standard"]
    if "settled" in facts:
        if "error" in facts["settled"]:
            return None, f"long-transient run failed ({facts['settled']['error']})"
        values = facts["settled"]
        simulate["transient"] = LONG_TRANSIENT
        if values["regime"] != facts["long"]["regime"]:
            return None, (
                f"long-transient runs disagree ({facts['long']['regime']} by RK4, {values['regime']} "
                f"with dysts' integrator after {LONG_TRANSIENT:g} periods)"
            )
    system = dynamics.dysts_system(class_name)
    lle, lle2, k = values["lle"], values["lle2"], values["k01"]
    eps = values["settings"]["eps"]
    regime = values["regime"]
    summary = f"lle={_fmt(lle)}, lle2={_fmt(lle2)}, eps={_fmt(eps)}, K={_fmt(k)}"
    if lle is None or not math.isfinite(lle):
        return None, "no finite exponent (integration escaped)"
    if regime == "chaotic":
        if lle <= DYSTS_MARGIN * eps:
            return None, f"weakly positive exponent, within 2 eps ({summary})"
        if k < K_ACCEPT_CHAOTIC:
            return None, f"exponent says chaotic but the 0-1 test does not ({summary})"
        chaotic = True
    elif regime in ("periodic", "fixed_point"):
        if k > K_ACCEPT_REGULAR:
            return None, f"exponents say {regime} but the 0-1 test says otherwise ({summary})"
        # a fixed point is also confirmed by the orbit's convergence (regime), so eps suffices
        if regime == "fixed_point" and lle >= -eps:
            return None, f"weakly negative exponent ({summary})"
        if regime == "periodic" and lle2 >= -DYSTS_MARGIN * eps:
            return None, f"second exponent too close to zero for a limit cycle ({summary})"
        chaotic = False
    else:
        return None, f"ambiguous exponents ({summary})"
    spectrum = [float(v) for v in (getattr(system, "lyapunov_spectrum_estimated", None) or [])]
    divergence = values.get("volume_rate")
    hamiltonian_flag = bool(getattr(system, "hamiltonian", False))
    if divergence is None:
        return None, "no divergence estimate"
    if divergence < -eps and (not spectrum or sum(spectrum) < 0):
        dissipative, conservative = True, False
    elif abs(divergence) <= 0.1 * eps and hamiltonian_flag:
        dissipative, conservative = False, True
    else:
        return (
            None,
            f"volume contraction undetermined (mean divergence {_fmt(divergence)}, dysts spectrum sum "
            f"{_fmt(sum(spectrum) if spectrum else None)})",
        )
    # Hyperchaos needs two positive exponents besides the zero exponent(s) of a flow (one along the
    # orbit; two for Hamiltonian systems), hence at least 4 dimensions.
    dimension = len(system.ic)
    zeros = 2 if conservative else 1
    rest = _zero_removed(spectrum, zeros)
    dysts_two_positive = dimension >= 4 and len(rest) >= 2 and rest[1] > max(eps, 0.05 * rest[0])
    hyper = False
    if chaotic and dimension >= 4:
        if dysts_two_positive and lle2 > DYSTS_MARGIN * eps:
            hyper = True
        elif dysts_two_positive or lle2 > eps:
            return None, (
                f"second exponent disagrees with dysts' spectrum ({summary}; dysts spectrum "
                f"{[round(v, 3) for v in spectrum]})"
            )
    elif chaotic and lle2 > eps:
        return None, f"second exponent positive in a 3-dimensional flow ({summary})"
    forced = bool(getattr(system, "nonautonomous", False))
    truth = {
        "Chaotic": chaotic,
        "Deterministic": True,
        "Stochastic": False,
        "PosLyap": chaotic,
        "Sensitive": chaotic,
        "StrangeAttr": chaotic and dissipative,
        "Periodic": regime == "periodic",
        "QuasiPeriodic": False,
        "FixedPointAttr": regime == "fixed_point",
        "Dissipative": dissipative,
        "Conservative": conservative,
        "Bounded": True,
        "Mixing": None,
        "Ergodic": None,
        "ContinuousTime": True,
        "DiscreteTime": False,
        "Autonomous": not forced,
        "Invertible": True,
        "DelaySystem": False,
        "PDE": False,
        "Nonlinear": True,
        "Hyperchaotic": hyper,
        "PointUnpredictable": chaotic,
        "StatPredictable": True,
        "Hamiltonian": conservative and hamiltonian_flag,
        "Integrable": False,
        "FiniteDimensional": True,
    }
    truth = {name: truth[name] for name in ontology.PREDICATES}
    # an unknown the known values settle through the axioms is stated (e.g. Periodic excludes Mixing)
    requires, excludes = ontology.requires_closure(), ontology.excludes_closure()
    true = [q for q, v in truth.items() if v is True]
    for name in [q for q, v in truth.items() if v is None]:
        if any(name in requires[q] for q in true):
            truth[name] = True
        elif any(name in excludes[q] for q in true):
            truth[name] = False
    broken = ontology.violations(truth)
    if broken:
        return None, f"derived truth violates the axioms: {broken}"
    kind = "forced" if forced else "non_chaotic" if not chaotic else "conservative" if conservative else "flow"
    params = {k: (float(v) if np.ndim(v) == 0 else np.asarray(v).tolist()) for k, v in sorted(system.params.items())}
    entry = {
        "id": f"dysts_{class_name.lower()}",
        "name": DYSTS_NAMES[class_name],
        "kind": kind,
        "equations": dysts_equations(class_name),
        "parameters": params,
        "source": f"{_sentence(system.citation)} Equations, parameters and initial condition from dysts (Gilpin 2021).",
        "simulate": simulate,
        "truth": truth,
    }
    note = (
        f"computed {summary}, regime {regime}, mean divergence {_fmt(divergence)}; dysts spectrum "
        f"{[round(v, 3) for v in spectrum]}"
    )
    return entry, note


def _sentence(text: str) -> str:
    text = " ".join(str(text).split()).rstrip(".")
    return text + "."


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_scalar(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _yaml_map(mapping: dict) -> str:
    return "{" + ", ".join(f"{k}: {_yaml_scalar(v)}" for k, v in mapping.items()) + "}"


DYSTS_HEADER = """\
# ChaosBench imported catalog: continuous flows from the dysts package (Gilpin 2021, "Chaos as an
# interpretable benchmark for forecasting and data-driven modelling"), with dysts' equations,
# parameters and initial conditions.  GENERATED by
#     python -m bankgen.compute_indicators --write-dysts-catalog
# (bankgen/compute_indicators.py); do not edit by hand.  Loaded and checked by
# bankgen/systems.py.
#
# How the truth assignments are derived (facts, not dysts' "chaotic" label):
# - Each candidate is simulated as compute-indicators does: dysts' integrator (LSODA) for the
#   observed series, our RK4 with an error-controlled step for the Lyapunov exponents, from dysts'
#   initial condition.  A second RK4 run after a 600-period transient checks for late settling;
#   when its regime differs, or the 0-1 test contradicts the exponents (a chaotic transient in the
#   observed series), the system is recomputed with dysts' integrator after 600 periods and, if
#   both long runs agree, the entry gets `simulate.transient: 600` and is labelled by its
#   long-term behaviour.
# - Chaotic / PosLyap / Sensitive / PointUnpredictable: the computed largest exponent is > 2 eps
#   (eps = 0.05 per dysts period) AND the 0-1 test gives K >= 0.85.  Non-chaotic: a stable
#   equilibrium (largest exponent < -eps, orbit converged to a point; FixedPointAttr) or a limit cycle
#   (largest exponent 0, second < -2 eps; Periodic), with K <= 0.5.  Anything else is left out.
# - Dissipative: mean divergence of the vector field along the computed orbit < -eps and dysts'
#   estimated spectrum sums to a negative number.  Conservative (and Hamiltonian, when dysts marks
#   the system Hamiltonian): mean divergence within 0.1 eps of zero.  Otherwise left out.
# - StrangeAttr = Chaotic and Dissipative.  Hyperchaotic needs two positive exponents besides the
#   zero exponent(s) of a flow, so 3-dimensional flows are not hyperchaotic.  In 4 or more
#   dimensions: dysts' estimated spectrum, after removing the exponent(s) closest to zero (one; two
#   for conservative systems), shows two clearly positive exponents (second > max(eps, 5 % of the
#   first)) AND our second exponent > 2 eps.  Candidates where the two sources disagree (or a
#   3-dimensional flow shows a second exponent > eps) are left out.
# - Mixing, Ergodic: null (unknown) for every system -- nothing is proven for these flows
#   (ergodicity or mixing of a numerically observed chaotic attractor is believed, not
#   established), and an unknown property is never asked; only a value the axioms settle from
#   the known ones is written (a limit cycle, Periodic, excludes Mixing).
# - Integrable: false.  QuasiPeriodic: false (no accepted candidate is quasi-periodic).
# - Names: author(s), year or field only; no word that hints at a property (no "hyper...",
#   dimension, "attractor", "scroll", "forced", "oscillator", ...: LEAKING_WORDS in the generator).
# - ContinuousTime, Invertible (ODE flows), FiniteDimensional, Nonlinear, Deterministic, Bounded,
#   StatPredictable: true; DiscreteTime, DelaySystem, PDE, Stochastic: false.  Autonomous is false
#   only for explicitly driven systems (dysts "nonautonomous", written with a phase variable).
# - kind follows core.yaml's precedence: forced, non_chaotic, conservative, flow.
"""


def write_dysts_catalog(
    workers: int = 2, candidates: Iterable[str] | None = None, path: Path | None = None, facts_file: Path | None = None
) -> int:
    """Simulate the candidates (facts optionally cached in `facts_file`, a scratch JSON outside the
    project, so that changing the derivation rules does not need a rerun) and write dysts.yaml."""
    if not dynamics.dysts_available():
        print(f"{COMMAND}: --write-dysts-catalog needs the dysts package", file=sys.stderr)
        return 2
    names = list(candidates or DYSTS_CANDIDATES)
    leaks = {name: leaking_name_words(DYSTS_NAMES[name]) for name in names if leaking_name_words(DYSTS_NAMES[name])}
    if leaks or len({DYSTS_NAMES[n] for n in names}) != len(names):
        print(f"{COMMAND}: DYSTS_NAMES must be unique and free of {LEAKING_WORDS}: {leaks}", file=sys.stderr)
        return 2
    facts: dict[str, dict] = {}
    if facts_file is not None and Path(facts_file).exists():
        facts = {k: v for k, v in json.loads(Path(facts_file).read_text(encoding="utf-8")).items() if k in names}

    def save():
        if facts_file is not None:
            Path(facts_file).write_text(json.dumps(rounded(facts), sort_keys=True, indent=1), encoding="utf-8")

    def report(i, n, label, value, error, seconds):
        if label.startswith("settle"):
            extra = value.get("error") or f"{value['regime']} lle={_fmt(value['lle'])} K={_fmt(value['k01'])}"
        else:
            extra = value.get("error") or f"{value['standard']['regime']} lle={_fmt(value['standard']['lle'])}"
        progress(f"[{i}/{n}] {label}: {extra} ({seconds:.1f} s)")

    todo = [name for name in names if name not in facts]
    for key, value, _ in run_parallel([(_dysts_job, name, f"dysts {name}") for name in todo], workers, report):
        facts[key] = value
    save()
    settle = [name for name in names if _needs_settling(facts[name]) and "settled" not in facts[name]]
    for key, value, _ in run_parallel([(_settle_job, name, f"settle {name}") for name in settle], workers, report):
        facts[key]["settled"] = value
    save()
    facts = json.loads(json.dumps(rounded(facts)))  # derive from the same 6-digit values as a cached run
    accepted, notes, rejected = [], {}, []
    for name in sorted(names):
        entry, note = derive_dysts_entry(name, facts[name])
        if entry is None:
            rejected.append((name, note))
        else:
            accepted.append(entry)
            notes[entry["id"]] = note
    lines = [DYSTS_HEADER.rstrip("\n")]
    lines.append("#")
    lines.append(f"# {len(accepted)} of {len(names)} candidates accepted; left out:")
    for name, reason in rejected:
        lines.append(f"# - {name}: {reason}")
    lines.append("")
    lines.append("systems:")
    for entry in accepted:
        lines.append("")
        lines.append(f"  # {notes[entry['id']]}")
        lines.append(f"  - id: {entry['id']}")
        lines.append(f"    name: {entry['name']}")
        lines.append(f"    kind: {entry['kind']}")
        lines.append(f"    equations: {_yaml_scalar(entry['equations'])}")
        lines.append(f"    parameters: {_yaml_map(entry['parameters'])}")
        lines.append(f"    source: {_yaml_scalar(entry['source'])}")
        lines.append(f"    simulate: {_yaml_map(entry['simulate'])}")
        lines.append(f"    truth: {_yaml_map(entry['truth'])}")
    target = DYSTS_CATALOG if path is None else Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    progress(f"wrote {target} ({len(accepted)} systems, {len(rejected)} left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
