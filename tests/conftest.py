# pytester's in-process runs restore sys.modules afterwards, dropping every module first imported
# inside a run. The plugin imports requests and vcrpy only when a model is built, so import them
# here once: otherwise a later in-process run re-imports them and objects of the earlier import
# (cookie jars, patched connections) no longer pass isinstance checks.
import requests  # noqa: F401
import vcr  # noqa: F401

try:  # the report's libraries (the `report` extra): numpy, under matplotlib, cannot be imported twice
    import jinja2  # noqa: F401
    import matplotlib.figure  # noqa: F401
except ImportError:
    pass

import signal

import pytest
from installed import installed  # noqa: F401 - the wheel in a fresh venv (session fixture), for every folder

# A suite started in the background of a non-interactive shell (`cmd &`) inherits SIGINT ignored, and
# so would every pytest it starts: the tests that press Ctrl-C need it delivered, as on a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = ["pytester"]


@pytest.fixture
def fake_key(monkeypatch) -> None:
    """The `fake` model's key variable (helpers.FAKE_KEY_VAR) set, for a test that starts its own fake provider."""
    from helpers import FAKE_KEY_VAR

    monkeypatch.setenv(FAKE_KEY_VAR, "fake-key-for-tests")


@pytest.fixture
def server(fake_key):
    """The fake provider on 127.0.0.1 with the `fake` model's key variable set; a test module that
    needs its own replies overrides it (`def server(server): server.responder = ...`)."""
    from fakeprovider import FakeProvider

    with FakeProvider() as provider:
        yield provider
