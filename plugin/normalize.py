"""Public import path of the answer-normalisation cascade, which lives in chaosbench/normalize.py."""

from pytest_reasoning_evals.chaosbench.normalize import FALSE, TRUE, normalize_answer

__all__ = ["normalize_answer", "TRUE", "FALSE"]
