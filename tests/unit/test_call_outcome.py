"""providers/base.py: a call's typed outcome, and the error kinds a record's message is read back as."""

from __future__ import annotations

import json

import pytest

from pytest_reasoning_evals.providers.base import CallOutcome, Completion, ErrorKind
from pytest_reasoning_evals.stash import HARNESS


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (None, None),
        ("cassette miss for item 'q-1': no cassette file: c/q-1.yaml", ErrorKind.MISS),
        ("malformed provider response (KeyError): {}", ErrorKind.MALFORMED),
        ("nothing is listening at http://127.0.0.1:9 for model 'm'", ErrorKind.NOT_LISTENING),
        ("connection failed: ConnectionError (after 5 attempts)", ErrorKind.CONNECTION),
        ("cannot save cassettes in c/m: Read-only file system; the run stopped, incomplete", ErrorKind.UNSAVED),
        (f"{HARNESS}: ValueError: boom", ErrorKind.HARNESS),
        ("HTTP 500: oops (after 5 attempts)", ErrorKind.PROVIDER),
        ("timeout after 2s (after 5 attempts)", ErrorKind.PROVIDER),
    ],
)
def test_a_record_message_reads_back_as_its_kind(error, kind) -> None:
    assert ErrorKind.of(error) is kind


def test_kinds_are_their_message_prefixes_in_json() -> None:
    assert json.dumps([ErrorKind.MISS, f"{ErrorKind.MISS} for"]) == '["cassette miss", "cassette miss for"]'


def test_only_a_provider_failure_counts_towards_an_outage() -> None:
    def failed(kind: ErrorKind) -> Completion:
        return Completion("p", "m", "", error=f"{kind}: x", outcome=CallOutcome(error_kind=kind))

    assert [kind for kind in ErrorKind if failed(kind).provider_failed()] == [
        ErrorKind.NOT_LISTENING,
        ErrorKind.CONNECTION,
        ErrorKind.UNSAVED,
        ErrorKind.HARNESS,
        ErrorKind.PROVIDER,
    ]
    assert not Completion("p", "m", "TRUE").provider_failed()
