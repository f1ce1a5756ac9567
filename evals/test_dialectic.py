"""Dialectical-reasoning evaluation (SPEC 6): per case x variant one item per rubric check
(structure, PCC, mode, judge); per case a multi-turn resolution item and a cross-provider item.

A case's items share one xdist group, so its response is generated (or replayed) once and every
check reads the same text. Options: --variant, --judge-model, --n-judges, --compare-models,
--dialectic-cases, and the gates --max-hard-fails / --require-variant-pass.
"""

from plugin.dialectic import checks


def test_structure(dialectic_item, dialectic_response, report_outcome):
    report_outcome(checks.structure(*dialectic_item, dialectic_response))


def test_pcc(dialectic_item, dialectic_response, report_outcome):
    report_outcome(checks.pcc(*dialectic_item, dialectic_response))


def test_mode(dialectic_item, dialectic_response, report_outcome):
    report_outcome(checks.mode(*dialectic_item, dialectic_response))


def test_judge(dialectic_item, dialectic_response, dialectic_runner, report_outcome):
    verdict = dialectic_runner.verdict(*dialectic_item)
    report_outcome(checks.judged(*dialectic_item, dialectic_response, verdict))


def test_resolution(dialectic_case, resolution_variant, dialectic_runner, report_outcome):
    report_outcome(checks.resolution(dialectic_runner.resolution(dialectic_case, resolution_variant)))


def test_cross_provider(dialectic_case, resolution_variant, compare_models, dialectic_runner, report_outcome):
    result = dialectic_runner.cross_provider(dialectic_case, resolution_variant, compare_models)
    responses = {alias: dialectic_runner.response(dialectic_case, resolution_variant, alias) for alias in compare_models}
    errors = [f"{alias}: {r['completion']['error']}" for alias, r in responses.items() if r["completion"]["error"]]
    report_outcome(checks.cross_provider(result, errors))
