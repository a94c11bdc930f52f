"""Where the tests find the official Full-Duplex-Bench scripts: $FDB_OFFICIAL (a clone or a
folder holding them), else `shared/official/` beside the repository (CI lays shared/ next to
its clone; a developer's worktree finds it beside the main checkout)."""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _candidates():
    yield ROOT.parent / "shared" / "official"
    try:  # a git worktree elsewhere: beside the main checkout
        common = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
        if common:
            yield Path(common).parent.parent / "shared" / "official"
    except (OSError, subprocess.SubprocessError):
        pass


def find_official() -> Path | None:
    if os.environ.get("FDB_OFFICIAL"):
        return Path(os.environ["FDB_OFFICIAL"])
    return next((p for p in _candidates() if (p / "eval_pause_handling.py").is_file()), None)


OFFICIAL = find_official()
needs_official = pytest.mark.skipif(OFFICIAL is None, reason="no official scripts: set FDB_OFFICIAL to a "
                                    "Full-Duplex-Bench checkout or lay shared/official/ beside the repository")



def find_official_v15() -> Path | None:
    """The pinned Full-Duplex-Bench v1.5 scripts: $FDB_OFFICIAL_V15, else `shared/official-v1.5/` beside the
    repository (where CI lays it), found as the v1.0 ones are."""
    if os.environ.get("FDB_OFFICIAL_V15"):
        return Path(os.environ["FDB_OFFICIAL_V15"])
    return next((p.parent / "official-v1.5" for p in _candidates()
                 if (p.parent / "official-v1.5" / "get_timing.py").is_file()), None)


OFFICIAL_V15 = find_official_v15()
needs_official_v15 = pytest.mark.skipif(OFFICIAL_V15 is None, reason="no official v1.5 scripts: set "
                                        "FDB_OFFICIAL_V15 or lay shared/official-v1.5/ beside the repository")


def find_official_v2() -> Path | None:
    """The pinned Full-Duplex-Bench v2 scripts: $FDB_OFFICIAL_V2, else `shared/official-v2/` beside the repository."""
    if os.environ.get("FDB_OFFICIAL_V2"):
        return Path(os.environ["FDB_OFFICIAL_V2"])
    return next((p.parent / "official-v2" for p in _candidates()
                 if (p.parent / "official-v2" / "scoring" / "score.py").is_file()), None)


OFFICIAL_V2 = find_official_v2()
needs_official_v2 = pytest.mark.skipif(OFFICIAL_V2 is None, reason="no official v2 scripts: set FDB_OFFICIAL_V2 "
                                       "or lay shared/official-v2/ beside the repository")
