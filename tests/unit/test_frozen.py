"""frozen.py: every few items their garbage is collected and what they keep is frozen; a process
with the collector switched off is left as it is."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref

from pytest_reasoning_evals import frozen
from pytest_reasoning_evals.frozen import Freezer


def test_every_few_items_their_garbage_is_collected_and_what_they_keep_is_frozen(monkeypatch) -> None:
    monkeypatch.setattr(frozen, "FREEZE_EVERY", 3)
    thresholds = gc.get_threshold()
    freezer = Freezer()
    try:
        freezer.start()
        before = gc.get_freeze_count()
        assert gc.get_threshold() == (max(frozen.YOUNG_THRESHOLD, thresholds[0]), *thresholds[1:])

        class Node:
            pass

        kept, lost = Node(), Node()
        kept.cycle, lost.cycle = kept, lost  # only the cyclic collector frees a cycle
        gone = weakref.ref(lost)
        del lost
        for _ in range(3):
            freezer.tick()
        assert gone() is None  # collected before the freeze: garbage is never frozen
        assert gc.get_freeze_count() > before  # `kept` and the rest alive joined the frozen
    finally:
        freezer.thaw()
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds


def test_a_process_with_the_collector_switched_off_is_left_as_it_is() -> None:
    thresholds, freezer = gc.get_threshold(), Freezer()
    gc.disable()
    try:
        freezer.start()
        for _ in range(frozen.FREEZE_EVERY):
            freezer.tick()
        assert (freezer.active, gc.get_freeze_count(), gc.get_threshold()) == (False, 0, thresholds)
    finally:
        freezer.thaw()
        gc.enable()


def test_a_process_that_froze_ends_with_nothing_frozen_so_its_cycles_are_finalised(tmp_path) -> None:
    # Python collects cycles once more as it ends; a frozen object is never collected, so a file
    # held in a cycle would never be flushed (issue 38). The freezer owns no exit handler.
    script = tmp_path / "run.py"
    script.write_text(
        "import atexit, gc\n"
        "class Holder:\n"
        "    def __del__(self):\n"
        "        print('finalised')\n"
        "holder = Holder()\n"
        "holder.me = holder\n"
        "atexit.register(lambda: print('frozen at exit:', gc.get_freeze_count() > 0))\n"
        "from pytest_reasoning_evals.frozen import Freezer\n"
        "registered = atexit._ncallbacks()\n"
        "freezer = Freezer()\n"
        "freezer.start()\n"
        "freezer.thaw()\n"
        "print('exit handlers added:', atexit._ncallbacks() - registered)\n"
    )
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == ["exit handlers added: 0", "frozen at exit: False", "finalised"]
