"""Reading the providers' batch answers (plugin/batch/openai.py, anthropic.py): statuses and result
lines in the shapes of the providers' documentation, no HTTP."""

import pytest
import requests

from pytest_reasoning_evals.batch import (
    CANCELED,
    CANCELING,
    ENDED,
    EXPIRED,
    FAILED,
    IN_PROGRESS,
    AnthropicBatchClient,
    BatchError,
    BatchResult,
    OpenAIBatchClient,
)
from pytest_reasoning_evals.batch import anthropic as anthropic_batch
from pytest_reasoning_evals.batch import openai as openai_batch
from pytest_reasoning_evals.batch.base import jsonl

KEY = "sk-PLANTEDresultKey0123456789abcdef"
OPENAI = OpenAIBatchClient(requests.Session(), "https://api.openai.com/v1", KEY)
ANTHROPIC = AnthropicBatchClient(requests.Session(), "https://api.anthropic.com/v1", KEY)
REPLY = {"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", "content": "TRUE"}}]}
MESSAGE = {"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "TRUE"}], "usage": {}}


@pytest.mark.parametrize(
    "status, state",
    [
        ("validating", IN_PROGRESS),
        ("in_progress", IN_PROGRESS),
        ("finalizing", IN_PROGRESS),
        ("cancelling", CANCELING),
        ("completed", ENDED),
        ("failed", ENDED),
        ("expired", ENDED),
        ("cancelled", ENDED),
    ],
)
def test_every_openai_status_has_its_state(status, state):
    read = openai_batch.status_of({"status": status, "request_counts": {"total": 10, "completed": 6, "failed": 1}})
    assert (read.state, read.provider_state, read.total, read.done, read.failed) == (state, status, 10, 7, 1)


def test_anthropic_counts_add_up():
    counts = {"processing": 100, "succeeded": 50, "errored": 30, "canceled": 10, "expired": 10}
    read = anthropic_batch.status_of({"processing_status": "in_progress", "request_counts": counts})
    assert (read.state, read.total, read.done, read.failed) == (IN_PROGRESS, 200, 100, 50)
    assert anthropic_batch.status_of({"processing_status": "canceling"}).state == CANCELING


@pytest.mark.parametrize(
    "read, batch, message",
    [
        (openai_batch.status_of, {"id": "b", "status": "paused"}, "unknown status 'paused'"),
        (anthropic_batch.status_of, {"id": "b", "processing_status": None}, "unknown processing_status 'None'"),
        (openai_batch.status_of, {"status": "completed", "request_counts": {"total": -1}}, "total is not a whole"),
        (openai_batch.status_of, {"status": "completed", "request_counts": {"failed": 1.5}}, "failed is not a whole"),
    ],
)
def test_a_status_no_batch_has_is_an_error(read, batch, message):
    with pytest.raises(BatchError, match=message):
        read(batch)


@pytest.mark.parametrize(
    "row, expected",
    [
        (
            {"custom_id": "a", "response": {"status_code": 200, "body": REPLY}, "error": None},
            BatchResult("a", REPLY),
        ),
        (
            {"custom_id": "a", "response": {"status_code": 400, "body": {"error": {"message": "bad max_tokens"}}}},
            BatchResult("a", None, FAILED, "HTTP 400: bad max_tokens"),
        ),
        (
            {"custom_id": "a", "response": None, "error": {"code": "batch_expired", "message": "too late"}},
            BatchResult("a", None, EXPIRED, "too late"),
        ),
        (
            {"custom_id": "a", "response": None, "error": {"code": "batch_cancelled", "message": "stopped"}},
            BatchResult("a", None, CANCELED, "stopped"),
        ),
        (
            {"custom_id": "a", "response": {"status_code": 200, "body": "text"}},
            BatchResult("a", None, FAILED, "HTTP 200: text"),
        ),
    ],
)
def test_openai_lines(row, expected):
    assert OPENAI.result(row) == expected


@pytest.mark.parametrize(
    "result, expected",
    [
        ({"type": "succeeded", "message": MESSAGE}, BatchResult("a", MESSAGE)),
        (
            {
                "type": "errored",
                "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}},
            },
            BatchResult("a", None, FAILED, "no"),
        ),
        ({"type": "expired"}, BatchResult("a", None, EXPIRED, "expired")),
        ({"type": "canceled"}, BatchResult("a", None, CANCELED, "canceled")),
        ({"type": "succeeded"}, BatchResult("a", None, FAILED, "succeeded")),  # no message: nothing to keep
        (None, BatchResult("a", None, FAILED, "no result")),
    ],
)
def test_anthropic_lines(result, expected):
    assert ANTHROPIC.result({"custom_id": "a", "result": result}) == expected


def test_a_message_quoting_the_key_is_masked():
    row = {"custom_id": "a", "response": {"status_code": 401, "body": {"error": {"message": f"bad key {KEY}"}}}}
    assert OPENAI.result(row).message == "HTTP 401: bad key ***"
    errored = {"type": "errored", "error": {"error": {"message": f"key {KEY} refused"}}}
    assert ANTHROPIC.result({"custom_id": "a", "result": errored}).message == "key *** refused"


def test_a_results_file_line_that_is_no_result_is_an_error():
    assert [r["custom_id"] for r in jsonl('{"custom_id": "a"}\n\n{"custom_id": "b"}\n', "x")] == ["a", "b"]
    for text in ('{"custom_id": "a"}\n{"cut', "[1]", '{"custom_id": 3}'):
        with pytest.raises(BatchError, match="x: line [12] is not a JSON object with a custom_id"):
            jsonl(text, "x")


def test_whole_batch_errors_are_read():
    batch = {"errors": {"data": [{"message": "two models"}, {"message": "duplicate custom_id"}]}}
    assert openai_batch._batch_errors(batch) == "two models; duplicate custom_id"
    assert openai_batch._batch_errors({"errors": None}) == openai_batch._batch_errors({"errors": {"data": 3}}) == ""
