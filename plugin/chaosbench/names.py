"""The names of ChaosBench-Logic's families, splits and prompt modes (no imports: the option
parser needs the modes at every pytest start). The families and splits are the bank's own; a
team's question file may use any names (questions.py), and a summary lists these ten first."""

FAMILIES = (
    "atomic",
    "multi_hop",
    "indicator_diagnostics",
    "regime_transition",
    "fol_inference",
    "cross_indicator",
    "extended_systems",
    "consistency_paraphrase",
    "adversarial",
    "perturbation_robustness",
)
SPLITS = ("core", "robustness", "heldout_systems", "heldout_templates", "hard")
MODES = ("zeroshot", "cot")
PROFILES = ("harness", "upstream")  # --eval-profile (profiles.py)
DEFAULT_PROFILE = "harness"
BANK = "ChaosBench-Logic"


def is_bank(families) -> bool:
    """Questions in any of ChaosBench's families are the bank (or made like it); others are a team's
    own data, named in its own words (its families, its file's name)."""
    families = list(families)
    return not families or any(family in FAMILIES for family in families)


def run_title(model: str, mode: str, families, dataset: str | None) -> str:
    """What a run is called (report.html, the terminal summary): a team's data adds its file's name."""
    return f"{model} ({mode})" + ("" if is_bank(families) or not dataset else f" on {dataset}")
