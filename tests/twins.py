"""Plain-Python twins of the numba kernels, written from the spec, one sample at a time.

They share no code with `kernels/`: coverage is measured over elementary intervals
between breakpoints instead of by merging, and every rule is spelled out directly.
"""
INF = 2**63 - 1


def covered(spans, lo, hi):
    """Measure of the union of [s, e] inside [lo, hi], by elementary intervals."""
    cuts = sorted({lo, hi} | {min(max(x, lo), hi) for s, e in spans for x in (s, e)})
    total = 0
    for x, y in zip(cuts, cuts[1:]):
        if any(s <= x and y <= e for s, e in spans):
            total += y - x
    return total


def pause(words, pauses, T):
    starts = [s for s, _ in words]
    p0 = pauses[0][0]
    owned = []
    for i, (a, _) in enumerate(pauses):
        if i + 1 < len(pauses):
            owned.append(lambda t, a=a, nxt=pauses[i + 1][0]: a <= t < nxt)
        else:
            owned.append(lambda t, a=a: a <= t <= T)
    return {
        "pause_intrusion": any(s >= p0 for s in starts),
        "inside_pause_onset": any(a <= s < b for s in starts for a, b in pauses),
        "pre_pause_speech": any(s < p0 for s in starts),
        "carry_in": any(s < p0 < e for s, e in words),
        "any_speech": bool(words),
        "intrusion_words": sum(s >= p0 for s in starts),
        "intruded_pauses": sum(any(f(s) for s in starts) for f in owned),
        "pauses": len(pauses),
        "covered_us": sum(covered(words, a, b) for a, b in pauses),
        "pause_us": sum(b - a for a, b in pauses),
    }


def turn_taking(starts, E):
    if any(s < E for s in starts):
        return "early_start", INF
    if starts:
        return "response", min(starts) - E
    return "no_response", INF


def interruption(segments, starts, S, R, T):
    covering = [(a, b) for a, b in segments if a <= S < b]
    at_end = any(a < R < b for a, b in segments)
    after = [s for s in starts if s >= R]
    if not covering:
        outcome, latency = "not_exercised", INF
    elif at_end:
        outcome, latency = "speaking_at_end", INF
    elif after:
        outcome, latency = "response", min(after) - R
    else:
        outcome, latency = "no_response", INF
    stop = -1
    if covering:
        b = covering[0][1]
        stop = INF if b >= T else b - S
    return {
        "outcome": outcome, "latency": latency, "stop": stop,
        "speech_at_onset": bool(covering), "speech_at_end": at_end,
        "speech_before_onset": any(a < S for a, _ in segments),
        "speech_in": covered(segments, S, R),
        "restarts": sum(S < a < R for a, _ in segments),
    }


def ratios(num, den, idx):
    out = []
    for row in idx:
        a = sum(int(num[j]) for j in row)
        b = sum(int(den[j]) for j in row)
        out.append(None if b == 0 else a / b)
    return out


def ranked(values, rank):
    return sorted(values)[rank - 1]


def ratio_differences(num_a, den_a, num_b, den_b, idx):
    """B's pooled ratio minus A's per resample of pairs; None where either has no denominator."""
    out = []
    for row in idx:
        na, da = sum(int(num_a[j]) for j in row), sum(int(den_a[j]) for j in row)
        nb, db = sum(int(num_b[j]) for j in row), sum(int(den_b[j]) for j in row)
        out.append(None if da == 0 or db == 0 else nb / db - na / da)
    return out


def ranked_differences(a, b, idx, rank):
    """B's rank-th smallest minus A's per resample; never minus a time is +infinity, a time minus never
    is -infinity, never minus never is a tie, 0."""
    out = []
    for row in idx:
        ma, mb = ranked([int(a[j]) for j in row], rank), ranked([int(b[j]) for j in row], rank)
        if ma == INF and mb == INF:
            out.append(0)
        elif mb == INF:
            out.append(INF)
        elif ma == INF:
            out.append(-INF)
        else:
            out.append(mb - ma)
    return out


def overlap_run(segments, starts, o_s, o_e, T):
    """One v1.5 run (docs: Definitions 52-53), from the definitions' words."""
    covering = [(a, b) for a, b in segments if a <= o_s < b]
    stop = -1 if not covering else (INF if covering[0][1] >= T else covering[0][1] - o_s)
    later = [a for a, b in segments if a >= o_e]
    at_end = any(a < o_e < b for a, b in segments)
    words = [s for s in starts if s >= o_e]
    return {"exercised": bool(covering), "stop": stop, "speech_in": covered(segments, o_s, o_e),
            "speaking_at_end": at_end, "resume": min(later) - o_e if later else INF,
            "response": min(words) - o_e if words and not at_end else INF}


def agreement(a, b, o_s):
    """Definition 57: speech IoU of two runs on [0, o_s], 1 where neither speaks there."""
    union = covered(a + b, 0, o_s)
    inter = covered(a, 0, o_s) + covered(b, 0, o_s) - union
    return inter / union if union else 1.0


def cue_timing(spans, cue):
    """Around a cue (docs: Numbers in other benchmarks' terms), from the definitions' words: speaking across it,
    the first onset at or after it, the end of the span overlapping or immediately preceding it (the latest start
    at or before it)."""
    started = [(a, b) for a, b in spans if a <= cue]
    onsets = [a - cue for a, b in spans if a >= cue]
    return {"speaking_at_cue": any(a < cue < b for a, b in spans), "onset_after": min(onsets, default=INF),
            "last_end": max(started)[1] - cue if started else INF}


def fdbench_turn(starts, E, reply_within=None, early_reply=1_000_000):
    """FD-Bench's class of a turn-taking sample (docs: Numbers in other benchmarks' terms), by the words' starts."""
    if not starts:
        return "no_reply"
    d = min(starts) - E
    if d < -early_reply:
        return "early_interrupt"
    if d < 0:
        return "early_reply"
    return "reply" if reply_within is None or d <= reply_within else "late_reply"


def fdbench_stopped(segments, S, R, T) -> str | None:
    """When the segment covering S ends: by R, after R, never (it runs to T); None when none covers S."""
    covering = [b for a, b in segments if a <= S < b]
    if not covering:
        return None
    return "never" if covering[0] >= T else "by_R" if covering[0] <= R else "after_R"


def fdbench_interruption(segments, starts, S, R, T, reply_within=None, stop_by="T"):
    """FD-Bench's class of an interruption sample: not exercised; kept talking (to T, or past R with stop_by R);
    interrupted; and replied when, interrupted, its unified outcome is a response within the window."""
    unified = interruption(segments, starts, S, R, T)
    if unified["outcome"] == "not_exercised":
        return "not_exercised"
    stopped = fdbench_stopped(segments, S, R, T)
    if stopped == "never" or (stopped == "after_R" and stop_by == "R"):
        return "kept_talking"
    if unified["outcome"] == "response" and (reply_within is None or unified["latency"] <= reply_within):
        return "replied"
    return "interrupted"


def videofdb_handoff(words, E, within=1_500_000):
    """smooth-handoff: 0 when a word spans E, else the first onset at or after E; passes within the window."""
    spanning = any(s < E < e for s, e in words)
    after = [s - E for s, _ in words if s >= E]
    latency = 0 if spanning else (min(after) if after else None)
    return {"speaking_at_cue": spanning, "latency": latency, "passes": latency is not None and latency <= within}


def videofdb_yield(segments, S, T, within=1_500_000):
    """yield-required: the end of the segment overlapping S or immediately preceding it, minus S (none seen when it
    runs to T: a fail); no such segment passes (fdbu's reading of the silent agent)."""
    before = [(a, b) for a, b in segments if a <= S]
    if not before:
        return {"silent": True, "latency": None, "passes": True}
    end = max(before)[1]
    latency = None if end >= T else end - S
    return {"silent": False, "latency": latency, "passes": latency is not None and latency <= within}


def videofdb_silent(segments, pauses, words, by_overlap=True):
    """stay-silent: at most 1 s of speech inside the pauses, or every segment overlapping one a backchannel."""
    w = window_speech(segments, pauses, words, by_overlap=by_overlap)
    return w["in_window"] <= 1_000_000 or w["short"] == w["overlapping"]


def window_speech(segments, windows, words, bc_max=1_000_000, bc_words=2, by_overlap=True):
    """stay-silent's quantities from the definitions' words: speech covered inside the windows, the segments
    overlapping one, and those that are backchannels (shorter than bc_max, fewer than bc_words words in them: a
    word (start, end) in a segment when it overlaps it, or, by_overlap false or of no duration, starts in it)."""
    inside = sum(covered(segments, a, b) for a, b in windows)
    hits = [(a, b) for a, b in segments if any(a < y and b > x for x, y in windows)]

    def inside_word(s, e, a, b):
        return max(a, s) < min(b, e) if by_overlap and s < e else a <= s < b

    short = [(a, b) for a, b in hits if b - a < bc_max and sum(inside_word(s, e, a, b) for s, e in words) < bc_words]
    return {"in_window": inside, "overlapping": len(hits), "short": len(short)}


def session(examiner, system, T, word_starts, gap, window, stop_within, bc_max, bc_words):
    """Definitions 77-80 on one v2 session, spelled out over time points (no sorting tricks, no numpy): turns by
    walking the segments, each rule a direct test."""
    def make_turns(segs):
        out = []
        for s, e in sorted(segs):
            if out and s - out[-1][1] < gap:
                out[-1][1] = max(out[-1][1], e)
            else:
                out.append([s, e])
        return out

    A, B = make_turns(examiner), make_turns(system)
    speaking = lambda t: any(s < t < e for s, e in B)  # noqa: E731
    outcomes, latencies = [], []
    for i, (_a0, a1) in enumerate(A):
        if a1 >= T:
            continue
        if speaking(a1):
            outcomes.append("overlapped")
            continue
        nxt = A[i + 1][0] if i + 1 < len(A) else None
        limit = min([a1 + window, T] + ([nxt] if nxt is not None else []))
        onsets = [s for s, _ in B if a1 <= s <= limit]
        if onsets:
            outcomes.append("response")
            latencies.append(min(onsets) - a1)
        elif nxt is not None and nxt < a1 + window:
            outcomes.append("examiner_resumed")
        elif T < a1 + window:
            outcomes.append("unobserved")
        else:
            outcomes.append("no_response")
            latencies.append(INF)
    stops, resumed = [], 0
    for a0, a1 in A:
        for s, e in B:
            if s < a0 < e:
                stops.append(INF if e >= T else e - a0)
                resumed += any(e < s2 < a1 for s2, _ in B)
    backchannels = 0
    for s, e in B:
        inside = any(a0 < s and e < a1 for a0, a1 in A)
        words = sum(1 for w in word_starts if s <= w <= e)
        backchannels += inside and e - s <= bc_max and words <= bc_words
    talk_over = sum(covered(system, a, b) for a, b in examiner)
    return {"outcomes": outcomes, "latencies": latencies, "stops": stops, "resumed": resumed,
            "stopped": sum(1 for x in stops if x <= stop_within), "backchannels": backchannels,
            "talk_over": talk_over, "examiner": sum(b - a for a, b in examiner), "turns": len(A)}


def control_compare(rows_a, rows_b, ks_us, min_agreement, pad_us, idx):
    """Two systems' matched controls compared (docs: Definitions 87-90), from unified-samples.jsonl rows, one
    sample at a time: a sample is in a system's control when both its runs are exercised, the inputs' lengths
    differ by at most pad_us and the runs agree at least min_agreement; over the samples in both controls, per k
    the mean of (B's event - clean stop within k) - (A's), its exact sign-flip p by counting every sign pattern's
    sum, and the mean's resampled values; the stop latency shifts' difference (medians at rank ceil(n/2)) and its
    resampled values (a resample with a median not reached left out); `idx` the resample rows."""
    from fractions import Fraction
    import math

    def us(x):
        return round(x * 1_000_000)

    def in_control(r):
        return (r["exercised"] and r["clean_exercised"] and abs(us(r["T_s"]) - us(r["clean_T_s"])) <= pad_us
                and r["agreement"] >= min_agreement)

    def stop(r, prefix):
        return us(r[prefix + "stop_s"]) if r[prefix + "stop_observed"] else INF

    joint = [i for i in range(len(rows_a)) if in_control(rows_a[i]) and in_control(rows_b[i])]
    n = len(joint)
    out = {"n": n, "lines": {}}
    for k in ks_us:
        def x(r, k=k):
            return int(stop(r, "") <= k) - int(stop(r, "clean_") <= k)

        d = [x(rows_b[i]) - x(rows_a[i]) for i in joint]
        counts = {0: 1}
        for v in d:
            if v:
                nxt = {}
                for s, c in counts.items():
                    for t in (s + abs(v), s - abs(v)):
                        nxt[t] = nxt.get(t, 0) + c
                counts = nxt
        total = sum(d)
        m = sum(1 for v in d if v)
        p = 1.0 if total == 0 else float(min(Fraction(1), Fraction(sum(c for s, c in counts.items()
                                                                        if abs(s) >= abs(total)), 2 ** m)))
        means = sorted(sum(d[j] for j in row) / n for row in idx) if n else []
        out["lines"][k] = {"value": sum(d) / n if n else None, "p": p, "informative": m, "resampled": means}
    r = max(1, math.ceil(n / 2))

    def median(values):
        return sorted(values)[r - 1]

    def minus(x, y):
        """x - y with +-INF: the same infinity on both sides a tie (0), one infinity wins, else the difference."""
        if x == y and abs(x) == INF:
            return 0
        if x == INF or y == -INF:
            return INF
        if x == -INF or y == INF:
            return -INF
        return x - y

    def shift(rows, pick):
        ev = median([stop(rows[joint[j]], "") for j in pick])
        cl = median([stop(rows[joint[j]], "clean_") for j in pick])
        return minus(ev, cl), ev == cl == INF

    if n and not any(shift(rows, range(n))[1] for rows in (rows_a, rows_b)):
        value = minus(shift(rows_b, range(n))[0], shift(rows_a, range(n))[0])
        kept = sorted(minus(shift(rows_b, row)[0], shift(rows_a, row)[0]) for row in idx)
    else:
        value, kept = None, []
    out["shift"] = {"value": value, "resampled": kept}
    return out
