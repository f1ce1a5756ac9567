"""normalize_answer on adversarial replies: its cost must grow linearly with the reply.

    python benchmarks/normalize_speed.py [--sizes 10000 100000 1000000 10000000] [--only NAME ...]

For each adversarial shape (a unit repeated to the size: stray </think> fragments, unclosed
tags, questions and sentences without ends, punctuation runs, "yes no" runs, conclusion and
revision cues without labels, ...) it times one normalize_answer call per size and prints the
wall and CPU seconds and the CPU seconds per MB. Linear growth shows as a flat s/MB column; a quadratic pattern
shows as s/MB growing 10x per row. Nothing is asserted: run it by hand and read the table.
"""

from __future__ import annotations

import argparse
import time

from pytest_reasoning_evals.normalize import normalize_answer

# name -> (head, unit, tail): the reply is head + unit * k + tail, cut to the size.
SHAPES = {
    "orphan-think-close": ("", "the user wants TRUE </think", "\nFALSE"),
    "think-close-no-gt": ("", "</think ", "\nFALSE"),
    "unclosed-think-tags": ("TRUE ", "<think <thinking x ", ""),
    "think-blocks": ("", "<think>yes</think> no ", ""),
    "no-sentence-end": ("", "the orbit is bounded and ", "."),
    "many-questions": ("", "is it true? ", "\nFALSE"),
    "question-no-end": ("", "is it true or not ", "?"),
    "punctuation-run": ("TRUE", "!.,;:-", "x"),
    "rule-run": ("", "-=", "x"),
    "underscore-run": ("a", "_", "b"),
    "whitespace-run": ("it", " ", "x"),
    "newline-run": ("yes", "\n", "no"),
    "short-lines": ("yes\n", "a\n", "no"),
    "short-sentences": ("Yes. ", "It is. ", "No."),
    "yes-no-line": ("", "yes no ", ""),
    "not-run": ("", "not ", "x"),
    "so-run": ("TRUE. ", "so ", "x"),
    "even-so-if-so": ("FALSE. ", "even so, if so, so-called, and so on, ", "."),
    "therefore-run": ("", "therefore, the orbit ", "."),
    "conclusion-per-sentence": ("", "Therefore, the orbit is bounded. ", "TRUE"),
    "wait-run": ("", "wait, ", "."),
    "revision-per-sentence": ("Yes. ", "Wait, let me check the exponent again. ", ""),
    "at-first-no-but": ("", "at first ", "."),
    "marker-run": ("", "Final answer: ", "x"),
    "hedge-run": ("TRUE. ", "it depends, ", "."),
    "mixed-cot": ("", "Hmm, so is it true? Wait, the exponent is positive, so... not false</think>\n", "TRUE"),
}


def reply(shape: str, size: int) -> str:
    head, unit, tail = SHAPES[shape]
    body = unit * (max(size - len(head) - len(tail), 0) // len(unit) + 1)
    return head + body[: max(size - len(head) - len(tail), 0)] + tail


def timed(text: str) -> tuple[float, float, str | None]:
    """Wall and CPU seconds of one call (CPU time is steadier on a busy machine)."""
    wall, cpu = time.perf_counter(), time.process_time()
    label = normalize_answer(text)
    return time.perf_counter() - wall, time.process_time() - cpu, label


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000, 10_000_000])
    parser.add_argument("--only", nargs="+", choices=sorted(SHAPES), help="shapes to run (default: all)")
    options = parser.parse_args()
    print(f"{'shape':24} {'chars':>10} {'wall s':>8} {'cpu s':>8} {'cpu s/MB':>9}  label")
    worst = {}
    for shape in options.only or SHAPES:
        for size in options.sizes:
            wall, cpu, label = timed(reply(shape, size))
            per_mb = cpu / (size / 1e6)
            worst[size] = max(worst.get(size, (0.0, "")), (per_mb, shape))
            print(f"{shape:24} {size:>10,} {wall:>8.4f} {cpu:>8.4f} {per_mb:>9.3f}  {label}")
    print(
        "worst cpu s/MB per size: "
        + ", ".join(f"{size:,}: {per_mb:.3f} ({shape})" for size, (per_mb, shape) in worst.items())
    )


if __name__ == "__main__":
    main()
