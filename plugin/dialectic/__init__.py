"""Dialectical-reasoning evaluation (SPEC 6): extraction, process-confidence coupling, mode,
LLM judges, multi-turn resolution, cross-provider comparison, human spot-check."""
