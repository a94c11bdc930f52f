"""`fdbu report` on a full-size tree (727 samples: the v1.0 release sizes) x 3 systems: the site's size, the
time to write it, and the page opened in headless Chromium, lazy (as written: each system's drill-downs load
on first use) against eager (every system's drill-downs loaded at once).

    python -m benchmarks.report [--workdir DIR]

Three synthetic systems (mixed, prompt, slow; seed 0, so the same samples) of `n=release` are synthesized
and scored once (not timed; kept in --workdir). Timed: loading the three scored trees, the comparison,
the site (index.html, the samples-K-C.js parts, the figures, leaderboard.md/.tex/.csv) as bytes, and Chromium
opening it from disk (file://).
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from fdbu.comparison.pairwise import compare
from fdbu.comparison.systems import load
from fdbu.metrics.stats import Bootstrap
from fdbu.scoring.pipeline import score_path
from fdbu.scoring.unified import write
from fdbu.reporting.site import build
from fdbu.synth import synthesize
from fdbu.vad import SpeechDetector

from .common import Timer, load as machine_load, machine, parse

SYSTEMS = ("mixed", "prompt", "slow")


def browser_times(site: Path, first_id: str) -> dict:
    parts = sorted(p.name for p in site.glob("samples-*.js"))  # every system's drill-downs, for the eager load
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from browser import Chromium, executable

    exe = executable()
    if exe is None:
        return {}
    with tempfile.TemporaryDirectory() as profile:
        chrome = Chromium(exe, Path(profile))
        try:
            url = (site / "index.html").resolve().as_uri()
            chrome.open("about:blank")
            t0 = time.perf_counter()
            chrome.open(url)
            chrome.wait("document.querySelectorAll('table.board').length > 0")
            lazy = time.perf_counter() - t0
            t0 = time.perf_counter()
            chrome.eval(f"location.hash = 'sample=0/{first_id}'")
            chrome.wait("document.getElementById('rule') !== null")
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            chrome.eval(f"location.hash = 'sample=1/{first_id}'")
            chrome.wait(f"document.querySelector('#drilldown h3').textContent.startsWith('{SYSTEMS[1]}')")
            other = time.perf_counter() - t0
            # eager: the same page, then every system's drill-downs loaded before it is usable
            t0 = time.perf_counter()
            chrome.open(url)
            chrome.wait("document.querySelectorAll('table.board').length > 0")
            chrome.eval(f"Promise.all({json.dumps(parts)}.map(n => new Promise((ok, fail) => {{ const s = "
                        "document.createElement('script'); s.src = n; s.onload = ok; "
                        "s.onerror = fail; document.head.appendChild(s); }})))")
            eager = time.perf_counter() - t0
            assert chrome.errors() == [], chrome.errors()
        finally:
            chrome.close()
    return {"lazy": lazy, "first": first, "other": other, "eager": eager}


def main() -> None:
    args, work = parse(__doc__, files=0)
    trees = []
    for system in SYSTEMS:
        tree = work / system
        if not (tree / "unified.json").exists():
            if not tree.exists():
                synthesize(tree, n="release", seed=0, system=system, progress=False)
            write(score_path(tree, SpeechDetector(backend="batched", device=args.device), Bootstrap()), tree)
        trees.append(tree)
    load(trees[0], "warm-up")  # imports and numba's compiled kernels outside the timing
    with Timer() as loading:
        systems = [load(t, name) for t, name in zip(trees, SYSTEMS)]
    with Timer() as comparing:
        result = compare(systems)
    site = work / "site"
    with Timer() as no_figures:
        build(systems, result, site, plot=False)
    with Timer() as building:
        files = build(systems, result, site, plot=True)
    site.mkdir(exist_ok=True)
    for name, data in files.items():
        (site / name).write_bytes(data)
    samples = sum(len(r) for r in systems[0].rows.values())
    size = {name: len(data) for name, data in files.items()}
    drill = sum(v for k, v in size.items() if k.startswith("samples-"))
    first_id = systems[0].rows["synthetic_user_interruption"][0]["sample_id"]
    times = browser_times(site, first_id)
    print(f"machine: {machine()}; {machine_load()}")
    print(f"  {samples} samples x {len(systems)} systems ({', '.join(SYSTEMS)})")
    print(f"  load and check the three trees: {loading.s:.2f} s; compare (2 pairs): {comparing.s:.2f} s")
    print(f"  the site as bytes: {building.s:.2f} s with the figures, {no_figures.s:.2f} s without")
    print(f"  size: {sum(size.values()) / 1e6:.2f} MB in all; index.html {size['index.html'] / 1e3:.0f} kB; "
          f"drill-downs {drill / 1e6:.2f} MB ({drill / samples / len(systems) / 1e3:.2f} kB per sample); "
          f"figures {sum(v for k, v in size.items() if k.endswith(('.png', '.pdf'))) / 1e6:.2f} MB")
    if times:
        print(f"  Chromium, file://: leaderboard shown {times['lazy']:.2f} s after navigating (lazy); first "
              f"drill-down {times['first']:.2f} s (loads samples-0-0.js); another system's {times['other']:.2f} s")
        print(f"  eager (every samples-K-C.js before use): {times['eager']:.2f} s; eager / lazy "
              f"{times['eager'] / times['lazy']:.2f}x")
    else:
        print("  Chromium is not installed: no page timings")


if __name__ == "__main__":
    main()
