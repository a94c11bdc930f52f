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
    """One v1.5 run (README: Definitions 52-53), from the definitions' words."""
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
