"""Evaluation content. Installed, this folder is `pytest_reasoning_evals.cases`: the plugin's
shipped defaults (ChaosBench prompts and bank, dialectic cases and variant prompts), read with
importlib.resources. Nothing here is code."""
