"""Comparing a dialectic run with a baseline run, per variant (SPEC 8): paired by (case, variant),
the mean judge score and the PCC hard fails before and after, each with an exact paired test.

- score: the sign test on the paired score differences (cases judged in both runs; ties
  dropped): the binomial test of min(lower, higher) out of lower + higher at 0.5, two-sided.
- hard fails: McNemar's exact test on the cases that became or stopped being hard fails.
A variant `regressed` when its mean score dropped or its hard fails rose, with p < alpha.
When either run has epochs (--eval-epochs), the pairs are cases (epoch_compare.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_reasoning_evals import gates
from pytest_reasoning_evals.dialectic.epoch_compare import compare_by_case, has_epochs, score_comparison
from pytest_reasoning_evals.stats import mcnemar_exact


class BaselineError(gates.BaselineError):
    pass


def load_responses(path: Path) -> tuple[str, list[dict]]:
    """A dialectic run directory (or its per_response.jsonl) -> (its path, its responses);
    BaselineError names the file and line of anything compare() could not use."""
    file = path / "per_response.jsonl" if path.is_dir() else path
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(
            f"--eval-dialectic-baseline {path}: {getattr(exc, 'strerror', None) or exc} "
            "(a <model>_dialectic run directory)"
        ) from None
    responses = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            responses.append(_response(line, f"--eval-dialectic-baseline {file}:{number}"))
    return str(path), responses


def _is_score(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


RESPONSE_FIELDS = {  # what compare() reads of a baseline response
    "query_id": (lambda v: isinstance(v, str), "a string"),
    "variant": (lambda v: isinstance(v, str), "a string"),
    "score": (_is_score, "a number or null"),
    "hard_fail": (lambda v: isinstance(v, bool), "true or false"),
}
EPOCH_FIELDS = {  # ... and of a run with epochs, when a row has them
    "case_id": (lambda v: isinstance(v, str), "a string"),
    "epoch": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "an epoch number (1, 2, ...)"),
}


def _response(line: str, where: str) -> dict:
    try:
        response = json.loads(line)
    except ValueError as exc:
        raise BaselineError(f"{where}: not JSON ({exc})") from None
    except RecursionError:
        raise BaselineError(f"{where}: not JSON (nested too deeply to read)") from None
    if not isinstance(response, dict):
        raise BaselineError(f"{where}: not a JSON object")
    for field, (check, expected) in RESPONSE_FIELDS.items():
        if field not in response:
            raise BaselineError(f"{where}: no {field!r}")
        if not check(response[field]):
            raise BaselineError(f"{where}: {field!r} is {response[field]!r}, not {expected}")
    for field, (check, expected) in EPOCH_FIELDS.items():
        if field in response and not check(response[field]):
            raise BaselineError(f"{where}: {field!r} is {response[field]!r}, not {expected}")
    return response


def compare(baseline: tuple[str, list[dict]], current: list[dict], *, alpha: float) -> dict:
    source, before_rows = baseline
    if has_epochs(before_rows) or has_epochs(current):
        return {"baseline": {"path": source}, **compare_by_case(before_rows, current, alpha=alpha)}
    before = {(r["query_id"], r["variant"]): r for r in before_rows}
    variants = []
    for variant in sorted({r["variant"] for r in current}):
        pairs = [
            (before[(r["query_id"], variant)], r)
            for r in current
            if r["variant"] == variant and (r["query_id"], variant) in before
        ]
        scored = [(b["score"], n["score"]) for b, n in pairs if b["score"] is not None and n["score"] is not None]
        new_fails = sorted(n["query_id"] for b, n in pairs if n["hard_fail"] and not b["hard_fail"])
        gone_fails = sorted(n["query_id"] for b, n in pairs if b["hard_fail"] and not n["hard_fail"])
        scores, score_drop = score_comparison(scored, alpha)
        p_fails = mcnemar_exact(len(new_fails), len(gone_fails))
        more_fails = len(new_fails) > len(gone_fails) and p_fails < alpha
        variants.append(
            {
                "variant": variant,
                "n_paired": len(pairs),
                **scores,
                "hard_fails_baseline": sum(b["hard_fail"] for b, _ in pairs),
                "hard_fails_current": sum(n["hard_fail"] for _, n in pairs),
                "new_hard_fails": new_fails,
                "resolved_hard_fails": gone_fails,
                "p_value_hard_fails": p_fails,
                "regressed": score_drop or more_fails,
            }
        )
    return {
        "baseline": {"path": source},
        "alpha": alpha,
        "variants": variants,
        "regressed": any(v["regressed"] for v in variants),
    }


def _hard_fails(c: dict, v: dict) -> str:
    """Hard fails before -> now: counts, or with epochs the mean share per case (sign-flip p)."""
    if "epochs" not in c:
        return f"hard fails {v['hard_fails_baseline']} -> {v['hard_fails_current']} (p = {v['p_value_hard_fails']:.4g})"
    before, now = v["hard_fail_share_baseline"], v["hard_fail_share_current"]
    shares = "n/a" if before is None else f"{before:.1%} -> {now:.1%}"
    return f"hard-fail share per case {shares} (sign-flip p = {v['p_value_hard_fails']:.4g})"


def comparison_lines(c: dict) -> list[str]:
    lines = []
    epochs = f" (cases, epochs {c['epochs']['baseline']} vs {c['epochs']['current']})" if "epochs" in c else ""
    for v in c["variants"]:
        delta = "n/a" if v["mean_score_delta"] is None else f"{v['mean_score_delta']:+.1f}"
        lines.append(
            f"baseline {c['baseline']['path']}, variant {v['variant']}: {v['n_paired']} paired cases{epochs}, mean score "
            f"{delta} (sign test p = {v['p_value_score']:.4g}), {_hard_fails(c, v)}"
            + (": REGRESSED" if v["regressed"] else "")
            + (f"; new hard fails: {', '.join(v['new_hard_fails'][:20])}" if v["new_hard_fails"] else "")
        )
    return lines
