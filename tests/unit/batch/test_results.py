"""Reading the providers' batch answers (plugin/batch/openai.py, anthropic.py, gemini.py): statuses and result
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
    GeminiBatchClient,
    OpenAIBatchClient,
)
from pytest_reasoning_evals.batch import anthropic as anthropic_batch
from pytest_reasoning_evals.batch import gemini as gemini_batch
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


# --- Gemini: the operation GET /batches/{id} answers, and its inline replies ---

GEMINI = GeminiBatchClient(requests.Session(), "https://generativelanguage.googleapis.com/v1beta", KEY)
CONTENT = {"candidates": [{"content": {"parts": [{"text": "TRUE"}]}, "finishReason": "STOP"}], "usageMetadata": {}}


@pytest.mark.parametrize(
    "state, expected",
    [
        ("BATCH_STATE_PENDING", IN_PROGRESS),
        ("BATCH_STATE_RUNNING", IN_PROGRESS),
        ("BATCH_STATE_SUCCEEDED", ENDED),
        ("BATCH_STATE_FAILED", ENDED),
        ("BATCH_STATE_CANCELLED", ENDED),
        ("BATCH_STATE_EXPIRED", ENDED),
        ("JOB_STATE_RUNNING", IN_PROGRESS),  # the SDKs' and the guide's word for the same state
        ("JOB_STATE_SUCCEEDED", ENDED),
    ],
)
def test_every_gemini_state_has_its_state(state, expected):
    status = gemini_batch.status_of({"name": "batches/b", "metadata": {"state": state}}, 3)
    assert (status.state, status.provider_state, status.total) == (expected, state, 3)


def test_gemini_counts_are_int64_strings_and_an_ended_batch_has_ended_every_request():
    stats = {"requestCount": "10", "successfulRequestCount": "6", "failedRequestCount": "1", "pendingRequestCount": "3"}
    running = gemini_batch.status_of({"metadata": {"state": "BATCH_STATE_RUNNING", "batchStats": stats}}, 10)
    assert (running.total, running.done, running.failed) == (10, 7, 1)
    expired = gemini_batch.status_of({"metadata": {"state": "BATCH_STATE_EXPIRED", "batchStats": stats}}, 10)
    assert (expired.total, expired.done, expired.failed) == (10, 10, 4)  # the 3 pending expired without a reply
    itself = gemini_batch.status_of({"state": "BATCH_STATE_RUNNING", "batchStats": {"requestCount": 4}}, 9)
    assert itself.total == 4  # the batch itself, not its operation, and a plain number, read as well


@pytest.mark.parametrize(
    "operation, message",
    [
        ({"name": "batches/b", "metadata": {"state": "BATCH_STATE_PAUSED"}}, "unknown state 'BATCH_STATE_PAUSED'"),
        ({"name": "batches/b", "metadata": {}}, "unknown state 'None'"),
        ({"metadata": {"state": "BATCH_STATE_RUNNING", "batchStats": {"requestCount": "-1"}}}, "requestCount"),
    ],
)
def test_a_gemini_operation_that_is_no_batch_is_an_error(operation, message):
    with pytest.raises(BatchError, match=message):
        gemini_batch.status_of(operation, 1)


@pytest.mark.parametrize(
    "reply, expected",
    [
        ({"response": CONTENT, "metadata": {"key": "k"}}, BatchResult("k", CONTENT)),
        ({"error": {"code": 3, "message": "bad"}, "metadata": {"key": "k"}}, BatchResult("k", None, FAILED, "bad")),
        ({"error": {"code": 1, "status": "CANCELLED"}}, BatchResult("k", None, CANCELED, "CANCELLED")),
        ({"error": {"code": 4, "message": "too late"}}, BatchResult("k", None, EXPIRED, "too late")),
        ({"metadata": {"key": "k"}}, BatchResult("k", None, FAILED, "no response")),
    ],
)
def test_gemini_inline_replies(reply, expected):
    assert GEMINI.result("k", reply) == expected


def test_a_gemini_reply_quoting_the_key_is_masked():
    result = GEMINI.result("k", {"error": {"code": 16, "message": f"API key not valid: {KEY}"}})
    assert result.error == FAILED and "PLANTED" not in result.message


def test_gemini_replies_are_read_from_the_response_or_the_batch_output_or_named_as_a_file():
    replies = {"inlinedResponses": {"inlinedResponses": [{"response": CONTENT}]}}
    assert gemini_batch.inlined({"response": replies}) == [{"response": CONTENT}]
    assert gemini_batch.inlined({"metadata": {"output": replies}}) == [{"response": CONTENT}]
    assert gemini_batch.inlined({"done": True}) == []
    assert gemini_batch.responses_file({"response": replies}) is None
    assert gemini_batch.responses_file({"name": "batches/b", "response": {"responsesFile": "files/out"}}) == "files/out"
    assert gemini_batch.responses_file({"metadata": {"output": {"responsesFile": "files/o2"}}}) == "files/o2"


@pytest.mark.parametrize("operation", [{}, {"name": "operations/x"}, {"name": "batches/"}, {"name": 3}])
def test_a_created_gemini_batch_without_a_batch_name_is_an_error(operation):
    with pytest.raises(BatchError, match="has no name batches/"):
        gemini_batch.batch_id(operation)


def test_a_gemini_batch_id_is_its_name_without_batches():
    assert gemini_batch.batch_id({"name": "batches/abc123"}) == "abc123"
    assert gemini_batch.batch_id({"metadata": {"name": "batches/abc123"}}) == "abc123"
