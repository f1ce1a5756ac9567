"""The errors every layer raises or reads, kept apart so that raising one imports nothing else:
a run that cannot start (UsageProblem), a report that cannot be written (ReportError), and how
the stop reasons of an outage begin."""

from __future__ import annotations


class UsageProblem(Exception):
    """The run cannot start (unknown alias, bad registry, missing key): one message, once."""


class ReportError(Exception):
    """A run directory the report cannot be built from (named, with what is missing)."""


OUTAGE = "provider outage"  # how the stop reason of an outage starts (the session exits 1 on it)
NO_SERVER = "no server"  # how the stop reason of a refused connection starts (exit 1 as well)
