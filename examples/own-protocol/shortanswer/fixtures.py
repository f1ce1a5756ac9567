"""The fixtures its items use besides `shortanswer_case` (which the protocol parametrizes)."""

import types

import pytest


def fixtures_for(session) -> types.ModuleType:
    @pytest.fixture(scope="session")
    def shortanswer():
        """The protocol: `.model`, `.request(case)`, `.score(case, completion)`."""
        return session.protocol("shortanswer")

    plugin = types.ModuleType(f"{__name__}.session")
    plugin.shortanswer = shortanswer
    return plugin
