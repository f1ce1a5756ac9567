"""options.py: shards are disjoint, cover everything and do not depend on order."""

from __future__ import annotations

from helpers import DEFAULT_CASES

from pytest_reasoning_evals.chaosbench.questions import load_questions
from pytest_reasoning_evals.options import Settings, dataset_name, shard_of

# --- shards ---


def test_shards_are_disjoint_cover_everything_and_do_not_depend_on_order() -> None:
    ids = [q.id for q in load_questions(DEFAULT_CASES)]
    shards = [{i for i in ids if shard_of(i, 3) == k} for k in range(3)]
    assert set().union(*shards) == set(ids) and sum(map(len, shards)) == len(ids)
    assert all(len(s) > len(ids) / 4 for s in shards), "roughly even"
    assert [shard_of(i, 3) for i in reversed(ids)] == [shard_of(i, 3) for i in ids][::-1]


# --- run directory names (issue 28 item 4) ---


def test_a_dataset_is_named_by_its_stem_and_the_first_8_digits_of_its_hash(tmp_path) -> None:
    (tmp_path / "billing v2.jsonl").write_text("{}\n")
    (tmp_path / "bank").mkdir()
    assert dataset_name(tmp_path / "billing v2.jsonl", "ab" * 32) == "billing-v2-abababab"
    assert dataset_name(tmp_path / "bank", "0123456789" * 7) == "bank-01234567"
    assert dataset_name(tmp_path / "gone.jsonl", None) == "gone"  # unreadable: the run stops before writing
    assert dataset_name(tmp_path / "..jsonl", "f" * 64) == "cases-ffffffff"


def test_the_run_directory_adds_the_dataset_before_the_shard_and_the_subset(tmp_path) -> None:
    settings = Settings("m", None, tmp_path, None, None, tmp_path, None, 42)
    assert settings.run_dir("zeroshot") == tmp_path / "m_zeroshot"
    sharded = settings._replace(num_shards=2, shard_index=1, subset="-k")
    assert sharded.run_dir("cot", "faq-01234567") == tmp_path / "m_cot_faq-01234567_shard1of2-subset"
