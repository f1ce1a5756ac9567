"""`--eval-max-items N`: a seeded sample of the selected items, stratified level by level (ChaosBench:
family, then label; dialectic: expected mode, then category), the same on every machine, Python
version and shard.

Allocation, at each level: when N is at least the number of strata, every stratum gets one item and
the rest of N is shared in proportion to what each stratum has beyond that one (largest remainder,
ties by name); when N is smaller, N strata get one each, chosen by their seeded key. Inside a stratum
the items with the smallest seeded keys are taken. A key is sha256 of the seed and a name, never
`hash()` or a set's order. The sample is returned in the items' own order, and is computed from the
whole selection before any shard keeps its part: shards of a sample are disjoint and make it up.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import TypeVar

T = TypeVar("T")
METHOD = "stratified-sha256-v1"  # how the manifest names this sampler: a change to it changes the name


def seeded_key(seed: int, name: str) -> str:
    """An order over names that depends on the seed only (sha256, not the process's hash())."""
    return hashlib.sha256(f"{seed}\0{name}".encode()).hexdigest()


def allocate(sizes: dict[str, int], n: int, seed: int, parent: str = "") -> dict[str, int]:
    """How many of n each stratum (name -> its size) gives: at least one each while n allows, the
    rest in proportion to the sizes beyond that one, by largest remainder. `parent` names the
    stratum they divide (so one label is not the first in every family)."""
    names = sorted(sizes)
    if n >= sum(sizes.values()):
        return dict(sizes)
    if n < len(names):
        # too few for one each: the strata first in the seed's order
        first = set(sorted(names, key=lambda name: seeded_key(seed, f"{parent}/{name}"))[:n])
        return {name: int(name in first) for name in names}
    rest, spare = n - len(names), sum(sizes.values()) - len(names)
    # integer arithmetic: the same shares on every platform
    shares = {name: divmod(rest * (sizes[name] - 1), spare) for name in names}
    counts = {name: 1 + whole for name, (whole, _) in shares.items()}
    left = rest - sum(whole for whole, _ in shares.values())
    for name in sorted(names, key=lambda s: (-shares[s][1], s))[:left]:
        counts[name] += 1
    return counts


def stratified_sample(
    items: Sequence[T], n: int, seed: int, levels: Sequence[Callable[[T], str]], item_id: Callable[[T], str]
) -> list[T]:
    """n of `items` (all of them when n is at least their number), stratified by `levels` in turn."""
    chosen = {item_id(item) for item in _pick(list(items), n, seed, list(levels), item_id, "")}
    return [item for item in items if item_id(item) in chosen]


def _pick(items: list[T], n: int, seed: int, levels: list, item_id: Callable[[T], str], path: str) -> list[T]:
    if n >= len(items):
        return items
    if not levels:
        return sorted(items, key=lambda item: seeded_key(seed, item_id(item)))[:n]
    strata: dict[str, list[T]] = {}
    for item in items:
        strata.setdefault(levels[0](item), []).append(item)
    counts = allocate({name: len(group) for name, group in strata.items()}, n, seed, path)
    return [
        item
        for name in sorted(strata)
        for item in _pick(strata[name], counts[name], seed, levels[1:], item_id, f"{path}/{name}")
    ]


def stratified_order(
    items: Sequence[T], seed: int, stratum: Callable[[T], str], item_id: Callable[[T], str]
) -> list[T]:
    """`items` in an order whose every prefix holds each stratum in about its share: inside a
    stratum the items go by their seeded key, and the i-th of a stratum of n sits at (i + 1/2) / n
    of the way (--eval-stop-when-decided asks in this order, so it may stop after any prefix)."""
    strata: dict[str, list[T]] = {}
    for item in items:
        strata.setdefault(stratum(item), []).append(item)
    placed = []
    for name, group in strata.items():
        ordered = sorted(group, key=lambda item: seeded_key(seed, item_id(item)))
        placed += [
            (Fraction(2 * i + 1, 2 * len(ordered)), seeded_key(seed, name), item) for i, item in enumerate(ordered)
        ]
    return [item for *_, item in sorted(placed, key=lambda entry: entry[:2])]


def ids_sha256(ids) -> str:
    """sha256 of a sample's ids, sorted, one a line: the manifest's fingerprint of what was asked."""
    return hashlib.sha256("".join(f"{i}\n" for i in sorted(ids)).encode()).hexdigest()
