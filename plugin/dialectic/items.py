"""The dialectical-reasoning items (SPEC 6): per case x variant one item per rubric check
(structure, PCC, mode, judge); per case a multi-turn resolution item and a cross-provider item.

Collect them in your own project with one line in a test module under your eval folder:

    from pytest_reasoning_evals.dialectic.items import *  # noqa: F401,F403

A case's items share one worker, so its response is generated (or replayed) once and every
check reads the same text. Options: --eval-variant, --eval-judge-model, --eval-n-judges,
--eval-compare-models, --eval-dialectic-cases, --eval-variant-prompts, and the gates
--eval-max-hard-fails / --eval-require-variant-pass.
"""

from pytest_reasoning_evals.dialectic import checks

__all__ = ["test_structure", "test_pcc", "test_mode", "test_judge", "test_resolution", "test_cross_provider"]


def test_structure(dialectic_item, dialectic_response, dialectic_outcome):
    dialectic_outcome(checks.structure(*dialectic_item, dialectic_response))


def test_pcc(dialectic_item, dialectic_response, dialectic_outcome):
    dialectic_outcome(checks.pcc(*dialectic_item, dialectic_response))


def test_mode(dialectic_item, dialectic_response, dialectic_outcome):
    dialectic_outcome(checks.mode(*dialectic_item, dialectic_response))


def test_judge(dialectic_item, dialectic_response, dialectic_runner, dialectic_pass_rule, dialectic_outcome):
    verdict = dialectic_runner.verdict(*dialectic_item)
    dialectic_outcome(checks.judged(*dialectic_item, dialectic_response, verdict, dialectic_pass_rule))


def test_resolution(dialectic_case, dialectic_resolution_variant, dialectic_runner, dialectic_outcome):
    dialectic_outcome(checks.resolution(dialectic_runner.resolution(dialectic_case, dialectic_resolution_variant)))


def test_cross_provider(
    dialectic_case, dialectic_resolution_variant, dialectic_compare_models, dialectic_runner, dialectic_outcome
):
    result = dialectic_runner.cross_provider(dialectic_case, dialectic_resolution_variant, dialectic_compare_models)
    responses = {
        alias: dialectic_runner.response(dialectic_case, dialectic_resolution_variant, alias)
        for alias in dialectic_compare_models
    }
    errors = [f"{alias}: {r['completion']['error']}" for alias, r in responses.items() if r["completion"]["error"]]
    dialectic_outcome(checks.cross_provider(result, errors))
