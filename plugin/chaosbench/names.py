"""The names of ChaosBench-Logic's families, splits and prompt modes (no imports: the option
parser needs them at every pytest start)."""

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
