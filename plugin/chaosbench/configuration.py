"""What a ChaosBench run's answers depend on, and the names they give it: the prompt, the run
directory's dataset and variant parts (docs/design.md, "Which directory"), and the configuration
checkpoints/config.json records, a resume checks and the manifest hashes."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from pytest_reasoning_evals.casefiles import CaseFileError
from pytest_reasoning_evals.chaosbench.names import DEFAULT_PROFILE
from pytest_reasoning_evals.chaosbench.profiles import UpstreamPrompt
from pytest_reasoning_evals.chaosbench.prompts import MAX_TOKENS, SHIPPED_DATASET, PromptTemplate, own_cassette_dataset
from pytest_reasoning_evals.chaosbench.questions import files_digest
from pytest_reasoning_evals.chaosbench.settings import DEFAULT_REPROMPT
from pytest_reasoning_evals.epochs import copies_warning
from pytest_reasoning_evals.errors import UsageProblem
from pytest_reasoning_evals.options import dataset_name, dataset_stem, folder_label
from pytest_reasoning_evals.registry import answering
from pytest_reasoning_evals.shipped import shipped


class RunConfig:
    """The configuration of the ChaosBench `protocol` (its facade: its selection gives the ids)."""

    def __init__(self, protocol):
        self.protocol = protocol
        self.session, self.settings, self.own = protocol.session, protocol.settings, protocol.own

    # --- the run directory (keyed by model, mode and dataset) ---

    @functools.cached_property
    def dataset(self) -> str | None:
        """How the run directory names case files that are not the shipped bank (<stem>-<hash8>), else None."""
        if self.own.cases.resolve() == shipped("chaosbench").resolve():
            return None
        try:
            digest = self.cases_digest["sha256"]
        except (CaseFileError, OSError):
            digest = None  # collection reports it and the run writes nothing
        return dataset_name(self.own.cases, digest)

    @functools.cached_property
    def variant(self) -> str | None:
        """How the run directory names a prompt or option that is not the default one: <the prompt's
        folder, or "shipped">-<hash8> of what shapes the requests, so an edit runs beside the last
        run instead of over it; None for the shipped prompt with the mode's defaults."""
        # the team's answer words decide labels: a run with them is a configuration of its own
        shape = {**self.request_shape, **self.words_config}
        default = {
            "prompt_sha256": hashlib.sha256(self.shipped_prompt_text.encode("utf-8")).hexdigest(),
            "max_tokens": MAX_TOKENS[self.own.mode],
            "temperature": 0.0,
            "reprompt": DEFAULT_REPROMPT,
        }
        if shape == default:
            return None
        label = "shipped" if self.prompt_is_shipped else folder_label(self.own.prompts_dir.name, "prompt")
        label = self.own.profile if self.own.profile != DEFAULT_PROFILE else label
        label += f"-e{self.settings.epochs}" if self.settings.epochs > 1 else ""
        return f"{label}-{hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:8]}"

    @functools.cached_property
    def request_shape(self) -> dict:
        """What the requests are made of beside the model and the questions."""
        prompt = self.prompt
        return {
            "prompt_sha256": prompt.sha256,
            "max_tokens": prompt.answer_tokens,
            "temperature": prompt.temperature,
            "reprompt": self.own.reprompt,
            **self.profile_config,
            **self.epochs_config,
        }

    @functools.cached_property
    def epochs_config(self) -> dict:
        """{} asked once (the configuration stays what it was), else the epochs (--eval-epochs)."""
        return {"epochs": self.settings.epochs} if self.settings.epochs > 1 else {}

    def epochs_warning(self) -> str | None:
        """One line when the epochs would be copies (epochs.copies_warning)."""
        s = self.settings
        return copies_warning(s.epochs, self.session.models.spec(s.model), self.prompt.temperature)

    @functools.cached_property
    def profile_config(self) -> dict:
        """{} for the harness profile (its configuration stays what it was), else the profile's name."""
        return {} if self.own.profile == DEFAULT_PROFILE else {"profile": self.own.profile}

    @functools.cached_property
    def run_dir(self) -> Path:
        """<out>/<model>_<mode>[_<cases>-<hash8>][_<prompt>-<hash8>][_shard<i>of<K>][-subset] (options.Settings.run_dir)."""
        return self.settings.run_dir(self.own.mode, self.dataset, self.variant)

    def sibling(self, variant: str | None = "", **changes) -> Path:
        """The run directory of this run with other settings (the whole run of a shard or subset);
        `variant` another prompt's part (None: the defaults')."""
        return self.settings._replace(**changes).run_dir(
            self.own.mode, self.dataset, self.variant if variant == "" else variant
        )

    # --- the prompt ---

    @functools.cached_property
    def prompt(self) -> PromptTemplate:
        try:
            s = self.settings
            dataset = self.cassette_dataset[0]
            if self.own.profile == "upstream":
                return UpstreamPrompt.make(self.own.max_tokens, s.temperature, dataset)
            return PromptTemplate.load(self.own.prompts_dir, self.own.mode, self.own.max_tokens, s.temperature, dataset)
        except (OSError, ValueError) as exc:
            raise UsageProblem(str(exc)) from None

    @functools.cached_property
    def cassette_dataset(self) -> tuple[str, str | None]:
        """What names the cassette folder (<it>-<mode>), and a note when older recordings decide it."""
        if self.dataset is None:
            return SHIPPED_DATASET, None
        try:
            ids = [item.id for items in self.protocol.selection.sampled for item in items]
        except (CaseFileError, OSError):
            ids = []  # collection reports the broken file
        cassettes = self.settings.cassette_dir / self.settings.model
        return own_cassette_dataset(dataset_stem(self.own.cases), self.own.mode, cassettes, ids)

    @property
    def prompt_name(self) -> str:
        """Its folder's name (--eval-prompts); "shipped" for the shipped folder."""
        folder = self.own.prompts_dir
        return "shipped" if folder.resolve() == shipped("chaosbench", "prompts").resolve() else folder.name

    @functools.cached_property
    def shipped_prompt_text(self) -> str:
        """The shipped prompt of this mode ("" when it cannot be read)."""
        try:
            return (shipped("chaosbench", "prompts") / f"{self.own.mode}.txt").read_text(encoding="utf-8")
        except OSError:
            return ""

    @functools.cached_property
    def prompt_is_shipped(self) -> bool:
        """The prompt's text is the shipped one (written for ChaosBench's dynamical systems), wherever it was read from."""
        return self.prompt.text == self.shipped_prompt_text

    # --- what the answers depend on ---

    @functools.cached_property
    def cases_digest(self) -> dict:
        """sha256 of the case files, read once per run (manifest, config hash, resume check)."""
        return files_digest(self.own.cases)

    @functools.cached_property
    def words_config(self) -> dict:
        """The team's own answer words (--eval-answer-words), when given: {} without them, so the
        configuration (its hash, a resume's check) of a run without them stays what it was."""
        words = self.own.answer_words
        if not (words.true or words.false):
            return {}
        return {"answer_words": {"TRUE": list(words.true), "FALSE": list(words.false)}}

    @functools.cached_property
    def answers_config(self) -> dict:
        """What decides the answers: model, prompt, data, selection, seed, answer words (not the
        shard, nor the model's prices, URL or key variable)."""
        s = self.settings
        return {
            "model": answering(self.session.models.spec(s.model).to_dict()),
            "mode": self.own.mode,
            "prompt_sha256": self.prompt.sha256,
            "max_tokens": self.prompt.answer_tokens,
            "temperature": self.prompt.temperature,
            "dataset_sha256": self.cases_digest["sha256"],
            "splits": list(self.own.splits),
            "families": list(self.own.families),
            "max_items": s.max_items,
            "seed": s.seed,
            "reprompt": self.own.reprompt,
            **self.words_config,
            **self.profile_config,
            **self.epochs_config,
        }

    @functools.cached_property
    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.answers_config, sort_keys=True).encode()).hexdigest()

    def run_config(self) -> dict:
        """checkpoints/config.json: a resumed run must match it."""
        return {
            **self.answers_config,
            "config_hash": self.config_hash,
            "shard": list(self.settings.shard or ()) or None,
        }
