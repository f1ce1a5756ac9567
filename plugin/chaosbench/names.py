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
