"""The --eval-max-items sampler (sampling.py): allocation across strata, seeded choice, the same
on every run and Python process whatever the input order."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from pytest_reasoning_evals.sampling import allocate, ids_sha256, stratified_sample

# 40 items: family a has 24 (18 TRUE, 6 FALSE), b 12 (6/6), c 4 (all TRUE)
ITEMS = (
    [(f"a{i:02d}", "a", "TRUE" if i < 18 else "FALSE") for i in range(24)]
    + [(f"b{i:02d}", "b", "TRUE" if i < 6 else "FALSE") for i in range(12)]
    + [(f"c{i:02d}", "c", "TRUE") for i in range(4)]
)
LEVELS = (lambda item: item[1], lambda item: item[2])


def draw(items, n: int, seed: int = 42) -> list:
    return stratified_sample(items, n, seed, LEVELS, lambda item: item[0])


def test_every_stratum_gets_one_then_shares_by_size_with_largest_remainders() -> None:
    # 10 - 3 = 7 shared by the sizes beyond one (23, 11, 3 of 37): 4.35, 2.08, 0.57 -> 4 + 2 + 1
    assert allocate({"a": 24, "b": 12, "c": 4}, 10, seed=1) == {"a": 5, "b": 3, "c": 2}
    # the remainders tie: the first name gets the one left
    assert allocate({"x": 3, "y": 3}, 3, seed=1) == {"x": 2, "y": 1}
    assert allocate({"a": 24, "b": 12, "c": 4}, 40, seed=1) == {"a": 24, "b": 12, "c": 4}
    for n in range(3, 41):
        counts = allocate({"a": 24, "b": 12, "c": 4}, n, seed=5)
        assert sum(counts.values()) == n and all(1 <= counts[k] <= size for k, size in (("a", 24), ("b", 12), ("c", 4)))


def test_fewer_than_the_strata_takes_one_of_as_many_as_it_can_chosen_by_the_seed() -> None:
    sizes = {name: 5 for name in "abcdefghij"}
    chosen = {seed: frozenset(k for k, v in allocate(sizes, 3, seed).items() if v) for seed in range(20)}
    assert all(len(names) == 3 for names in chosen.values())
    assert len(set(chosen.values())) > 1, "the seed chooses which strata"


def test_a_small_sample_covers_every_family_and_both_labels_of_the_mixed_ones() -> None:
    sample = draw(ITEMS, 6)
    assert len(sample) == 6
    assert {item[1] for item in sample} == {"a", "b", "c"}
    assert {(item[1], item[2]) for item in sample} >= {("a", "TRUE"), ("a", "FALSE"), ("b", "TRUE"), ("b", "FALSE")}


def test_the_sample_keeps_the_items_order_and_does_not_depend_on_it() -> None:
    sample = draw(ITEMS, 11)
    assert sample == [item for item in ITEMS if item in sample]
    shuffled = ITEMS[:]
    random.Random(3).shuffle(shuffled)
    assert set(draw(shuffled, 11)) == set(sample)


def test_the_seed_changes_the_sample_and_n_at_least_the_items_takes_them_all() -> None:
    assert draw(ITEMS, 11, seed=1) != draw(ITEMS, 11, seed=2)
    assert draw(ITEMS, 11, seed=1) == draw(ITEMS, 11, seed=1)
    assert draw(ITEMS, 40) == draw(ITEMS, 99) == ITEMS


def test_one_label_is_not_the_first_of_every_family_when_each_gets_one() -> None:
    items = [(f"{f}{i}", f, "TRUE" if i % 2 else "FALSE") for f in "abcdefgh" for i in range(6)]
    labels = {item[2] for item in draw(items, 8)}
    assert labels == {"TRUE", "FALSE"}


@pytest.mark.parametrize("hash_seed", ["0", "1", "random"])
def test_the_same_sample_in_any_python_process(hash_seed: str) -> None:
    """sha256 keys, no hash() or set order: another process (another PYTHONHASHSEED) draws the same."""
    code = (
        "from pytest_reasoning_evals.sampling import stratified_sample as s\n"
        "items = [(f'i{n}', 'abc'[n % 3], 'TF'[n % 2]) for n in range(60)]\n"
        "print(','.join(i[0] for i in s(items, 9, 7, (lambda i: i[1], lambda i: i[2]), lambda i: i[0])))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONHASHSEED": hash_seed}, check=True
    )
    # pinned: a change to the sampler changes every sample drawn with it (and sampling.METHOD)
    assert done.stdout.strip() == "i3,i4,i6,i13,i20,i35,i43,i45,i53"


def test_the_ids_hash_ignores_their_order() -> None:
    assert ids_sha256(["b", "a"]) == ids_sha256(["a", "b"]) != ids_sha256(["a"])
