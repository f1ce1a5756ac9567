"""Dialectical-reasoning evaluation (SPEC 6): the shipped items; a user project collects them the
same way."""

from pytest_reasoning_evals.dialectic.items import *  # noqa: F401,F403
