"""Full-Duplex-Bench v2's run layout, read as upstream leaves it: what a folder of it is, and its export into a
reference tree. The files upstream's eval scripts write (the judge's answers, `combine_transcripts` of
eval/asr_batch.py) are read and written by `fdbu.families.v2.files`; the reference column by
`fdbu.families.v2.reference`.

A v2 output root holds `<split>/<task id>/` per session: `A.wav` (the examiner), `B.wav` (the system under test),
`combined.wav` (ffmpeg amerge: A left, B right), and after upstream's ASR `A.json`, `B.json`, `transcripts.json`.
The judge's parsed answers lie elsewhere, `<eval_results>/<split>/<task id>_processed.json`. The family's hooks
(`fdbu.family.Layout`) call this module; no general module names v2.

Export (`fdbu export dataset=ROOT [export.judge=EVAL_RESULTS] [export.transcripts=adopt]`), per session:

- A.wav and B.wav must both be there, readable, non-empty, finite and at one sample rate: otherwise the export is
  refused, naming the session and the file (nothing is written), with the command that leaves it out;
- both are trimmed to the first 120 s as `eval/trim_combined_wavs.py` does (`int(seconds * framerate)` frames,
  skipped at or below 120 s), then made 16 kHz mono as every export is; A's length is T; B may differ from it by
  `CHANNEL_TOLERANCE_MS` (the two tracks start when each arrives), padded with silence or cropped at T and
  recorded, beyond it refused;
- combined.wav, where present, must be A left and B right, sample for sample over their common length (refused,
  naming the session, when it is not; swapped channels said as such); absent is recorded;
- the judge's output, where given: its events checked (`read_judge`) and its bytes copied as judge.json, the events
  also into session.json for the unified metrics; a session the judge did not reach is recorded as not judged;
- with `export.transcripts=adopt`, A.json and B.json become input.json and output.json (checked as the official
  asr.py's output is), and transcripts.json is written as `combine_transcripts` writes it.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ...tree import adopt
from ... import tasks
from ...common.atomic import dumps, regular, sha256_bytes, sha256_file
from ...common.audio import SAMPLE_RATE as SR, non_finite, wav_bytes
from ...errors import FdbuError
from ...common.outputs import new_folder
from ...tree.readers import parse_json, read_session
from ...common.timebase import window_us
from ...tree.load import MANIFEST_KIND, SAFE_NAME
from .files import read_judge, transcripts_bytes

FAMILY = "v2"
TRIM_S = 120                 # eval/trim_combined_wavs.py's --seconds default
CHANNEL_TOLERANCE_MS = 1000  # A.wav and B.wav may differ in length by this much (after the trim); beyond: refused
MADE_BY = "the official Full-Duplex-Bench v2 eval/asr_batch.py (A.json, B.json), not fdbu"  # asr.json's adopted
CHANNELS = ("A.wav", "B.wav")
JUDGE_SUFFIX = "_processed.json"
COMBINED = "transcripts.json"  # asr_batch.py's combine_transcripts output, beside A.json and B.json
# what a judge's answer was made on, recorded by `fdbu evaluate` (judge_run.made_on) and checked when `fdbu export`
# puts the answer beside a session: the user's two tracks (session.json's source) and the transcripts sent
MADE_ON = ("A.wav", "B.wav", "A.json", "B.json")
OWNED_BY_ASR = ("input.json", "output.json", COMBINED)  # a tree's files asr.json lists, not the manifest


def splits() -> dict[str, str]:
    """Upstream split name -> the subset holding it."""
    return {s.synth["split"]: name for name, s in tasks.SUBSETS.items() if s.family == FAMILY}


def _split_of(name: str) -> str | None:
    """A split folder's name as asr_batch.py's find_audio_pairs accepts it (the name, or in lower case)."""
    return next((s for s in splits() if name in (s, s.lower())), None)


def _is_session(folder: Path) -> bool:
    try:
        return folder.is_dir() and any((folder / c).exists() for c in CHANNELS)
    except OSError as e:
        raise FdbuError(str(folder), None, f"cannot be read: {e.strerror or e}") from None


def sessions_in(folder: Path) -> tuple[str, list[tuple[str, Path]]] | None:
    """(what the folder is, [(split, session folder)]) for a v2 output root, one split of it, or one session's
    folder; None for anything else."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    named = folder.resolve()  # its own and its parent's names as on disk: `dataset=.` or `..` names a split too
    if _is_session(folder) and _split_of(named.parent.name):
        return "session folder", [(_split_of(named.parent.name) or "", named)]
    split = _split_of(named.name)
    if split is not None:
        found = [(split, d) for d in sorted(folder.iterdir()) if _is_session(d)]
        if found:
            return f"{split} split", found
    found = [(s, d) for s, sub in _split_folders(folder).items() for d in sorted(sub.iterdir()) if _is_session(d)]
    return ("output root", found) if found else None


def _split_folders(root: Path) -> dict[str, Path]:
    """Each split's folder under `root` as asr_batch.py's find_audio_pairs takes it: `Daily`, or `daily` only where
    there is no `Daily`."""
    out = {}
    for split in splits():
        for name in (split, split.lower()):
            if (root / name).is_dir():
                out[split] = root / name
                break
    return out


def what(folder: Path) -> str | None:
    """The folder in a few words if it is of v2's run layout (fdbu.tree.layout.what)."""
    got = sessions_in(folder)
    if got is None:
        return None
    kind, found = got
    return f"a Full-Duplex-Bench v2 {kind} ({len(found)} session{'s' if len(found) != 1 else ''}: " \
           "<split>/<task id>/A.wav and B.wav)"


def export_hint(folder: Path) -> str:
    return (f"export it first: fdbu export dataset={folder} out=TREE export.transcripts=adopt (A.json and B.json "
            "from upstream's asr_batch.py; without it, fdbu asr transcribes both channels), adding "
            "export.judge=EVAL_RESULTS for the judge's scores; then fdbu score tree=TREE")


# ---- reading

MIN_RATE = 8000  # telephone speech's rate, the lowest a speech recording is made at


def _read(path: Path, where: str) -> tuple[np.ndarray, int]:
    from ...tree.export import read_audio  # export's reader (a FIFO refused, not read forever); torch loads with it

    try:
        audio, sr = read_audio(path)
    except FdbuError:
        raise
    except Exception as e:
        raise FdbuError(where, path.name, f"cannot be read ({str(e).splitlines()[0]})") from None
    if len(audio) == 0:
        raise FdbuError(where, path.name, "is empty: the session has no recording of this channel")
    if sr < MIN_RATE:  # read as it is, a 1 Hz file of 32 samples would become 32 s of audio at 16 kHz
        raise FdbuError(where, path.name, f"is at {sr} Hz: no speech recording is; fdbu reads a session's channels "
                        f"at {MIN_RATE} Hz and above")
    problem = non_finite(audio, sr)
    if problem:
        raise FdbuError(where, path.name, problem)
    return audio, sr


def trimmed(audio: np.ndarray, sr: int) -> tuple[np.ndarray, bool]:
    """trim_combined_wavs.py: a file longer than 120 s (`duration <= seconds + 1e-6` skips, `:160-163`) keeps its
    first int(seconds * framerate) frames (`trim_with_wave_module`, `:121-122`)."""
    if len(audio) / float(sr) <= TRIM_S + 1e-6:
        return audio, False
    return audio[:int(TRIM_S * sr)], True


def _first_difference(a: np.ndarray, b: np.ndarray) -> int | None:
    diff = np.flatnonzero(a != b)
    return int(diff[0]) if diff.size else None


def check_combined(path: Path, a: np.ndarray, b: np.ndarray, sr: int, where: str) -> dict:
    """combined.wav against A.wav and B.wav (both as read, before any resampling): A left, B right over the common
    length, sample for sample."""
    audio, csr = _read(path, where)
    if audio.shape[1] != 2:
        raise FdbuError(where, "combined.wav", f"has {audio.shape[1]} channel(s), not 2 (A.wav left, B.wav right)")
    if csr != sr:
        raise FdbuError(where, "combined.wav", f"is at {csr} Hz, and A.wav and B.wav at {sr} Hz")
    audio, _ = trimmed(audio, csr)
    n = min(len(audio), len(a), len(b))
    left, right, a0, b0 = audio[:n, 0], audio[:n, 1], a[:n, 0], b[:n, 0]
    if _first_difference(left, a0) is None and _first_difference(right, b0) is None:
        return {"checked_samples": n}
    if _first_difference(left, b0) is None and _first_difference(right, a0) is None:
        raise FdbuError(where, "combined.wav", "has its channels swapped: B.wav left, A.wav right (upstream's amerge "
                        "puts A.wav left)")
    side, ref, k = next((s, r, d) for s, r, d in (("left", "A.wav", _first_difference(left, a0)),
                                                  ("right", "B.wav", _first_difference(right, b0))) if d is not None)
    raise FdbuError(where, "combined.wav", f"is not A.wav and B.wav: its {side} channel differs from {ref} from "
                    f"sample {k} ({k / sr:.3f} s) on")


def find_judge(judge: Path, split: str, task: str, where: str) -> Path | None:
    """`<judge>/<split>/<task>_processed.json` (the split folder as the run's: `Daily`, or `daily`). Refused: one in a
    sub-folder of the split's (score.py's rglob counts it, score_time.py's second pass never bins it: the two would
    disagree), and one anywhere else under `judge` (a processed JSON kept under another split's folder)."""
    name = task + JUDGE_SUFFIX
    home = _split_folders(judge).get(split)
    stray = sorted(judge.rglob(name))
    if home is not None and (home / name).exists():  # a FIFO or a folder there too: `regular` names what it is
        again = [p for p in stray if p != home / name and p.is_relative_to(home)]
        if again:
            raise FdbuError(where, name, f"is in {home} and again in {again[0].parent}: score.py would count both "
                            "copies' events under one task and score_time.py bin only the first")
        return home / name
    if stray and home is None and stray[0].parent == judge and _split_of(judge.name) == split:  # named the split
        raise FdbuError("export.judge", None, f"{judge} holds the judge outputs directly, as a split folder does; give "
                        f"the folder holding the split folders: export.judge={stray[0].parent.parent}")
    if stray:
        nested = home is not None and stray[0].is_relative_to(home)
        raise FdbuError(where, name, f"is in {stray[0].parent}, not directly in {home or judge / split}: " + (
            "score_time.py would count its events and bin none of them (its second pass does not look in sub-folders)"
            if nested else f"the judge output of a {split} session lies in its split's folder (score.py keys it by "
                           "that folder)"))
    return None


def _no_split_left_out(root: Path) -> None:
    """A folder of the root that holds sessions but is not a split folder upstream reads (`Entity_Tracking`, `Bogus`)
    is refused, not left out in silence: asr_batch.py's find_audio_pairs would skip it too, and a renamed split would
    be missing from every number."""
    taken = {p.name for p in _split_folders(root).values()}
    for other in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in taken):
        if any(_is_session(d) for d in other.iterdir()):
            names = ", ".join(splits())
            raise FdbuError(str(other.name), None, f"holds v2 sessions but is not a split folder upstream reads "
                            f"({names}, or in lower case): rename it to its split's name, or move it out of {root}")


def _every_answer_taken(judge: Path, sessions: list[tuple[str, Path]]) -> None:
    """Every processed answer score.py would count is this tree's or refused: score.py takes each `*_processed.json`
    anywhere under each folder of eval_results as a row of that folder's name (scoring/score.py:29-39), so a copy in
    another split's folder, an answer whose session is not in the dataset, or a folder that is no split would each
    add rows that the tree's reference column lacks."""
    where = {task: split for split, folder in sessions for task in [folder.name]}
    homes = _split_folders(judge)
    expected = {homes[split] / (task + JUDGE_SUFFIX) for task, split in where.items() if split in homes}
    for folder in sorted(p for p in judge.iterdir() if p.is_dir()):
        for path in sorted(folder.rglob("*" + JUDGE_SUFFIX)):
            if path in expected:
                continue
            task = path.name[:-len(JUDGE_SUFFIX)]
            counted = f"score.py would count it as a row of {folder.name!r}, which fdbu's reference column lacks"
            if task in where:
                raise FdbuError(f"{where[task]}/{task}", path.name, f"is in {path.parent} too, not only in its split's "
                                f"folder: {counted}; remove the copy")
            raise FdbuError(str(path.relative_to(judge).parent), path.name, "has no session in the dataset (no "
                            f"<split>/{task}/A.wav and B.wav): {counted}; remove it, or export its session too")


# ---- combine_transcripts


# ---- export

def _fit(mono: np.ndarray, T: int, where: str) -> tuple[np.ndarray, dict | None]:
    n, tol = len(mono), CHANNEL_TOLERANCE_MS * SR // 1000
    if n == T:
        return mono, None
    if abs(n - T) > tol:
        raise FdbuError(where, "B.wav", f"is {n / SR:.3f} s and A.wav {T / SR:.3f} s (after the {TRIM_S} s trim): "
                        f"the channels differ by more than {CHANNEL_TOLERANCE_MS} ms, so they are not one session's "
                        "two tracks on one clock")
    if n < T:
        return np.concatenate([mono, np.zeros(T - n, np.float32)]), {"action": "padded", "samples": T - n}
    return mono[:T], {"action": "cropped", "samples": n - T}


def _session(tmp: Path, split: str, folder: Path, judge: Path | None, adopting: bool,
             made_on: tuple[Path, dict[str, dict[str, str]]] | None = None) -> tuple[dict, dict]:
    """One session into the tree: its manifest row, and its adopted transcripts' receipts. A judge's answer from a
    summary.json (`made_on`) is this session's only if it was made on the same two tracks and, adopting, the same
    transcripts: another run's answers under the same task ids are refused, not put beside these."""
    from ...tree.export import to_16k_mono  # torch's resampler, loaded only by an export

    subset, task = splits()[split], folder.name
    sid = f"{subset}/{task}"
    where = f"{split}/{task}"
    if not SAFE_NAME.match(task):
        raise FdbuError(where, None, "is not a plain session folder name")
    for c in CHANNELS:
        if not (folder / c).exists():
            raise FdbuError(where, c, f"is missing: a v2 session needs both channels (A.wav the examiner, B.wav the "
                            f"system); leave it out with \"export.only=[{sid}]\" ... listing the others")
    (a, a_sr), (b, b_sr) = (_read(folder / c, where) for c in CHANNELS)
    if a_sr != b_sr:
        raise FdbuError(where, "B.wav", f"is at {b_sr} Hz and A.wav at {a_sr} Hz: one session's two tracks are "
                        "recorded at one rate")
    source: dict[str, Any] = {c: {"sample_rate": sr, "channels": int(x.shape[1]), "samples": len(x),
                                  "sha256": sha256_file(folder / c)}  # the user's file, as a judge's answer names it
                              for c, x, sr in (("A.wav", a, a_sr), ("B.wav", b, b_sr))}
    (a, a_cut), (b, b_cut) = trimmed(a, a_sr), trimmed(b, b_sr)
    source["A.wav"]["trimmed"], source["B.wav"]["trimmed"] = a_cut, b_cut
    combined = folder / "combined.wav"
    source["combined.wav"] = check_combined(combined, a, b, a_sr, where) if combined.exists() else "absent"
    A = to_16k_mono(a, a_sr)
    T = len(A)
    B, fit = _fit(to_16k_mono(b, b_sr), T, where)
    T_us = window_us(T, SR)
    session: dict[str, Any] = {"task_id": task, "split": split, "trim_s": TRIM_S, "source": source}
    if fit:
        session["length_fit"] = fit
    files: dict[str, bytes] = {"input.wav": wav_bytes(A), "output.wav": wav_bytes(B)}
    if judge is not None:
        found = find_judge(judge, split, task, where)
        session["judged"] = found is not None
        if found is not None and made_on is not None:
            _made_on_here(made_on, where, {c: source[c]["sha256"] for c in CHANNELS})
        if found is not None:
            regular(found, where, found.name)
            data = found.read_bytes()
            read = read_judge(data, where, T_us, found.name)
            files["judge.json"] = data
            session["judge"] = {"events": [[s / 1e6, e / 1e6, tt, if_] for s, e, tt, if_ in read["events"]],
                                "task_score": read["task_score"], "file": str(found.relative_to(judge)),
                                "past_T": read["past_T"]}
    receipts: dict[str, Any] = {}
    if adopting:
        cut = a_cut or b_cut or fit  # words after the trim, or after a crop of B to A's length, are dropped and counted
        originals = {c: window_us(source[c]["samples"], a_sr) if cut else None for c in CHANNELS}
        adopted, receipts, dropped, differs = _adopt(folder, where, sid, T_us, originals)
        files.update(adopted)
        if dropped:  # said by export's console (export_said), kept in the session's record
            session["dropped_words"] = dropped
        if differs:
            session["own_transcripts_json"] = "differs from combine_transcripts of A.json and B.json"
    if made_on is not None and session.get("judged") and adopting:
        _made_on_here(made_on, where, {c: receipts[name]["sha256"] for c, name in (("A.json", "input.json"),
                                                                                    ("B.json", "output.json"))})
    ann = (json.dumps(session, indent=1) + "\n").encode()
    read_session(ann, sid, T_us)  # read as score reads it: refused here, not by score later
    files["session.json"] = ann
    out = tmp / subset / task
    out.mkdir(parents=True)
    for name, data in files.items():
        (out / name).write_bytes(data)
    row = {"sample_id": sid, "subset": subset, "task": tasks.subset(subset).task.name, "sample_rate": SR,
           "input_samples": T, "input_s": T / SR, "eligible": True, "reasons": [],
           "source_sample_rate": {"input": a_sr, "output": b_sr},
           # the transcripts and the file made from them are asr.json's (as fdbu asr records them): a later
           # `fdbu asr asr.resume=true` rewrites all three and its asr.json says so; the manifest keeps what it owns
           "files": {n: sha256_bytes(d) for n, d in files.items() if n not in OWNED_BY_ASR}}
    return row, receipts


def _adopt(folder: Path, where: str, sid: str, T_us: int, originals: dict[str, int | None]
           ) -> tuple[dict[str, bytes], dict[str, Any], dict[str, Any], bool]:
    """A session's A.json and B.json adopted (export.transcripts=adopt): the tree's input.json, output.json and
    transcripts.json, their receipts, the words dropped per channel, and whether the run's own transcripts.json
    differs from combine_transcripts of the two (read and compared rather than replaced unsaid, issue 76)."""
    files: dict[str, bytes] = {}
    receipts: dict[str, Any] = {}
    dropped_words: dict[str, Any] = {}
    docs = {}
    for channel, name in (("A.json", "input.json"), ("B.json", "output.json")):
        path = folder / channel
        if not path.is_file():
            raise FdbuError(where, channel, "is missing: export.transcripts=adopt takes upstream's asr_batch.py "
                            "A.json and B.json; run it, or export without adopt and run fdbu asr")
        raw = path.read_bytes()
        original = originals["A.wav" if channel == "A.json" else "B.wav"]
        try:
            kept, dropped = adopt.check(raw, sid, T_us, None, observed_us=original, file=name)
        except FdbuError as e:  # said of the user's file, not the tree's name for it
            raise FdbuError(where, channel, e.problem) from None
        files[name] = kept
        docs[channel] = parse_json(raw, where, channel)
        if any(c["timestamp"][1] is None for c in docs[channel]["chunks"]):
            raise FdbuError(where, channel, "has a word without an end time: asr_batch.py's combine_transcripts "
                            "cannot read it (Parakeet's word times always have one)")
        receipts[name] = {"sha256": sha256_bytes(kept), "adopted_from": sha256_bytes(raw), "dropped": dropped}
        if dropped:
            dropped_words[channel] = dropped
    files[COMBINED] = transcripts_bytes(docs["A.json"], docs["B.json"])
    receipts[COMBINED] = {"sha256": sha256_bytes(files[COMBINED])}
    own = folder / COMBINED
    return files, receipts, dropped_words, own.is_file() and own.read_bytes() != files[COMBINED]


def _made_on_here(made_on: tuple[Path, dict[str, dict[str, str]]], where: str, here: dict[str, str]) -> None:
    """A summary.json's answer for `where` goes beside this session only if it was made on these files (`here`: the
    user's two tracks, or the transcripts adopted from A.json and B.json, by SHA-256); else one line naming the file."""
    summary, made = made_on
    for name, digest in here.items():
        if digest == made[where][name]:
            continue
        if name.endswith(".wav"):
            raise FdbuError(where, name, f"is not the {name} the judge's answer in {summary} was made on (its "
                            "judge_run.made_on): that evaluate ran on another run's sessions under the same task ids; "
                            "give the summary.json of an evaluate of this run")
        raise FdbuError(where, name, f"as adopted is not the transcript the judge read for its answer in {summary} "
                        "(the evaluated tree's were not adopted from it: fdbu asr's?); export without "
                        "export.transcripts=adopt and give the tree the transcripts the judge read")


def _answers_of(summary: Path, dest: Path) -> tuple[Path, dict[str, dict[str, str]]]:
    """The judge's answers that `fdbu evaluate` ran and kept in summary.json (each subset's `judge_run.processed`,
    keyed `<split folder>/<task id>`), written to `dest` as upstream's eval_results holds them
    (`<split>/<task id>_processed.json`), so export reads them as it reads upstream's, with what each was made on
    (`judge_run.made_on`), which export checks against the session it puts the answer beside; anything else is
    refused."""
    try:
        regular(summary, "export.judge", summary.name)
        doc = json.loads(summary.read_bytes())
    except (OSError, ValueError) as e:
        raise FdbuError("export.judge", str(summary), f"cannot be read as a summary.json ({e})") from None
    runs = [e.get("judge_run") for e in doc.get("subsets", {}).values() if isinstance(e, dict)] \
        if isinstance(doc, dict) and doc.get("kind") == "reference-evaluation" else []
    answers = {k: v for r in runs if isinstance(r, dict) and isinstance(r.get("processed"), dict)
               for k, v in r["processed"].items()}
    made_on = {k: v for r in runs if isinstance(r, dict) and isinstance(r.get("made_on"), dict)
               for k, v in r["made_on"].items()}
    if not answers:
        raise FdbuError("export.judge", str(summary), "is neither a folder of judge outputs nor a summary.json holding "
                        "the answers of a judge fdbu evaluate ran (evaluate.judge.base_url=...)")
    for key, answer in answers.items():
        split, _, task = key.partition("/")
        if split not in splits() or not SAFE_NAME.fullmatch(task):
            raise FdbuError("export.judge", str(summary), f"names a session {key!r} that is not <split>/<task id> "
                            f"(splits: {', '.join(splits())})")
        shown = made_on.get(key)
        if not (isinstance(shown, dict) and all(isinstance(shown.get(n), str) for n in MADE_ON)):
            raise FdbuError("export.judge", str(summary), f"does not say what the judge's answer for {key} was made on "
                            "(judge_run.made_on: written by an earlier fdbu, or on a tree an earlier fdbu exported); "
                            "export the run again, then run fdbu evaluate with the judge")
        (dest / split).mkdir(exist_ok=True)
        (dest / split / f"{task}{JUDGE_SUFFIX}").write_text(json.dumps(answer, ensure_ascii=False, indent=2))
    return dest, {k: {n: made_on[k][n] for n in MADE_ON} for k in answers}


def export(root: Path, out: Path, *, judge: Path | None = None, transcripts: str = "none",
           model: str = adopt.OFFICIAL_MODEL, only: list[str] | None = None, progress: bool = False,
           made_on: tuple[Path, dict[str, dict[str, str]]] | None = None) -> Path:
    """A reference tree at `out` from a v2 output root (or one split, or one session), all at once or not at all.
    `made_on`: the summary.json `judge` came from, and what each of its answers was made on."""
    from ...common.progress import Bar

    got = sessions_in(root)
    if got is None:
        raise FdbuError("dataset", None, f"{root} is not a Full-Duplex-Bench v2 output root")
    kind, found = got
    # nothing upstream would take left out unsaid: a folder of a split holding both channels only in sub-folders
    # (asr_batch.py's find_audio_pairs finds them there); a session folder given alone is read alone
    parents = {} if kind == "session folder" else _split_folders(Path(root)) if kind == "output root" else \
        {found[0][0]: Path(root)}
    if kind == "output root":
        _no_split_left_out(Path(root))
    for split, parent in parents.items():
        for other in sorted(p for p in parent.iterdir() if p.is_dir()):
            if not _is_session(other) and all(any(other.rglob(c)) for c in CHANNELS):
                raise FdbuError(f"{split}/{other.name}", None, "holds A.wav and B.wav only in a sub-folder "
                                "(upstream's asr_batch.py takes them from there; fdbu reads a session's two channels "
                                "directly in its folder): move them up")
    everyone = list(found)  # every session of the root, those export.only leaves out too
    if only is not None:
        have = {f"{splits()[s]}/{d.name}": (s, d) for s, d in found}
        missing = [w for w in only if w not in have]
        if missing:
            raise FdbuError("config", None, f"export.only names sessions the root does not have: {missing[:5]}")
        found = [have[w] for w in dict.fromkeys(only)]
    if judge is not None and Path(judge).is_file():  # a judge run by fdbu evaluate: its answers, laid out as upstream's
        import tempfile

        with tempfile.TemporaryDirectory(prefix="fdbu-v2-answers-") as answers:
            folder, made = _answers_of(Path(judge), Path(answers))
            return export(root, out, judge=folder, transcripts=transcripts, model=model, only=only,
                          progress=progress, made_on=(Path(judge), made))
    if judge is not None and Path(judge).is_dir() and not any(
            any(d.glob("*" + JUDGE_SUFFIX)) for d in _split_folders(Path(judge)).values()):
        inside = _split_of(Path(judge).name) is not None and any(Path(judge).glob("*" + JUDGE_SUFFIX))
        raise FdbuError("export.judge", None, f"{judge} holds no split folder of judge outputs (<split>/<task id>"
                        f"{JUDGE_SUFFIX})" + (f"; it is one: give the folder holding it, export.judge="
                                              f"{Path(judge).parent}" if inside else
                                              "; give upstream's eval_results folder"))
    if judge is not None and not Path(judge).is_dir():
        raise FdbuError("export.judge", None, f"{judge} is not a folder (the judge's eval_results: "
                        "<split>/<task id>_processed.json)")
    with new_folder(out, "fdbu export") as tmp:
        rows, receipts = [], {}
        with Bar(found, desc="export", unit="session", disable=not progress) as bar:  # closed before a Ctrl-C's message
            for split, folder in bar:
                row, got_receipts = _session(tmp, split, folder, Path(judge) if judge else None, transcripts == "adopt",
                                             made_on)
                rows.append(row)
                if got_receipts:
                    receipts[row["sample_id"]] = got_receipts
        if judge is not None:
            _every_answer_taken(Path(judge), everyone)
        manifest = {"schema_version": 1, "kind": MANIFEST_KIND, "declared": dict(sorted(
            tasks.release_sizes(FAMILY).items())), "samples": rows}
        (tmp / "manifest.json").write_text(dumps(manifest))
        if transcripts == "adopt":
            by_subset: dict[str, dict[str, str]] = {}
            others: dict[str, dict[str, dict[str, str]]] = {}
            sources: dict[str, dict[str, dict]] = {}
            for sid, r in receipts.items():
                subset, name = sid.split("/")
                by_subset.setdefault(subset, {})[name] = r["output.json"]["sha256"]
                others.setdefault(subset, {}).setdefault("input.json", {})[name] = r["input.json"]["sha256"]
                sources.setdefault(subset, {})[name] = {"B.json": r["output.json"]["adopted_from"],
                                                        "A.json": r["input.json"]["adopted_from"]}
            receipt = adopt.receipt(model, by_subset, sources, others, MADE_BY)
            for sid, r in receipts.items():  # transcripts.json, listed where fdbu asr lists it (Task.combined)
                subset, name = sid.split("/")
                receipt["subsets"][subset].setdefault("combined", {}).setdefault(COMBINED, {})[name] = \
                    r[COMBINED]["sha256"]
            (tmp / "asr.json").write_text(dumps(receipt))
    return out
