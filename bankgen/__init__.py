"""Offline tools that build and verify the project's ChaosBench-Logic bank (cases/chaosbench/).

Not part of the installed plugin: they simulate dynamical systems (numpy, scipy, dysts; the
`bank` extra) and run from a checkout: `python -m bankgen build-bank | compute-indicators |
validate-cases`. The plugin only reads the JSONL files they write.
"""
