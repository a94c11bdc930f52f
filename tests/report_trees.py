"""Two scored synthetic systems on the same samples, for the report's tests."""
from pathlib import Path

from fdbu.scoring.pipeline import score_path
from fdbu.scoring.unified import write as write_unified
from fdbu.synth import synthesize


def scored_pair(root: Path, vad, boot, n: int = 6) -> tuple[Path, Path]:
    """mixed (some ineligible samples) and prompt, seed 3, each scored in place."""
    a = synthesize(root / "mixed", n=n, seed=3, system="mixed", ineligible=0.1)
    b = synthesize(root / "prompt", n=n, seed=3, system="prompt", ineligible=0.1)
    for tree in (a, b):
        write_unified(score_path(tree, vad, boot), tree)
    return a, b
