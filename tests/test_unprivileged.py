"""The permission tests skip, naming the folder, where the user they run fdbu as cannot reach the
checkout (issue: a clone inside a 0700 folder failed five tests as root instead of skipping them)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from unprivileged import NOBODY, blocking_folder, public_folder, unreachable

ROOT = os.geteuid() == 0
CHECKOUT = Path(__file__).resolve().parents[1]
PERMISSION_TESTS = ("unreadable_file_is_named or cache_dir_that_is_a_file_or_read_only or "
                    "unwritable_out_is_refused_before_any_work or cannot_write_before_loading_the_model")


@pytest.fixture()
def public(tmp_path_factory):
    """A folder every user may enter, outside pytest's own (which is private to its owner)."""
    with public_folder("fdbu-unprivileged-") as path:
        yield path


@pytest.mark.slow
def test_a_private_folder_blocks_and_is_named_with_its_mode(public):
    private = public / "private"
    (private / "inner").mkdir(parents=True)
    (private / "inner" / "f").write_text("x")
    private.chmod(0o700)
    assert blocking_folder(private / "inner" / "f") == private
    assert blocking_folder(public / "elsewhere") is None
    reason, checkout = unreachable(private / "inner" / "f"), unreachable()
    if checkout is None:  # the checkout is reachable: the test's own file is what blocks
        assert f"the test's files ({private / 'inner' / 'f'}) is under {private} (mode 0700), which uid " \
               f"{NOBODY} cannot enter" in reason
    else:  # a checkout in a private folder: that is named first
        assert reason == checkout
    private.chmod(0o711)  # search without listing is enough to reach a known path
    assert blocking_folder(private / "inner" / "f") is None


def test_a_link_into_a_private_folder_blocks(public):
    private = public / "private"
    (private / "target").mkdir(parents=True)
    private.chmod(0o700)
    os.symlink(private / "target", public / "link")
    assert blocking_folder(public / "link" / "f") == private


@pytest.mark.skipif(not ROOT, reason="chown needs root")
def test_the_owner_bits_decide_for_the_owner(public):
    own = public / "own"
    own.mkdir()
    os.chown(own, NOBODY, 0)
    own.chmod(0o700)
    assert blocking_folder(own / "f") is None  # nobody owns it and may enter
    own.chmod(0o607)  # the owner bits decide even when the others' would allow
    assert blocking_folder(own / "f") == own


def test_this_suite_reaches_what_it_needs_or_says_why():
    """Where this very checkout is reachable (a 0755 folder, as in CI) the permission tests run;
    the reason, when there is one, is one line naming a folder and its mode."""
    reason = unreachable()
    assert reason is None or ("mode " in reason and "\n" not in reason)


@pytest.mark.slow
@pytest.mark.skipif(not ROOT, reason="only root runs fdbu as another user")
def test_the_permission_tests_skip_from_a_checkout_in_a_0700_folder(public):
    """The suite run through a 0700 folder (links to this checkout and its environment inside it, as a
    clone in `mktemp -d` would be): the five permission tests skip with the folder named, none fails."""
    private = public / "home"
    private.mkdir()
    os.symlink(CHECKOUT, private / "fdbu")
    os.symlink(sys.prefix, private / "venv")
    private.chmod(0o700)
    out = subprocess.run([str(private / "venv" / "bin" / "python"), "-m", "pytest", "-q", "-rs", "-p",
                          "no:cacheprovider", "tests/test_refusals.py", "-k", PERMISSION_TESTS],
                         cwd=private / "fdbu", capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "5 skipped" in out.stdout and "failed" not in out.stdout, out.stdout[-3000:]
    skips = [line for line in out.stdout.splitlines() if line.startswith("SKIPPED")]  # "SKIPPED [k] file:line: reason"
    assert sum(int(line.split("[")[1].split("]")[0]) for line in skips) == 5 and all(f"is under {private} (mode 0700), which uid {NOBODY} cannot enter" in line
                                   for line in skips), out.stdout[-3000:]
