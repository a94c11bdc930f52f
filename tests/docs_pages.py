"""The README and the docs pages (docs/**/*.md) as the tests read them: a section by its heading, wherever it lives,
and the fenced blocks of a text."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """The README and every docs page, in a fixed order."""
    return [README, *sorted(p for p in DOCS.rglob("*.md") if "_ext" not in p.parts)]


def all_text() -> str:
    return "\n".join(p.read_text() for p in pages())


def headings(text: str) -> list[tuple[int, int, str]]:
    """(offset, level, title) of every heading outside fenced blocks."""
    out, fence, at = [], False, 0
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fence = not fence
        m = re.match(r"(#{1,6}) (.*)", line)
        if m and not fence:
            out.append((at, len(m.group(1)), m.group(2).strip()))
        at += len(line)
    return out


def where(name: str) -> Path:
    """The one page holding a heading `name`."""
    found = [p for p in pages() if any(t == name for _, _, t in headings(p.read_text()))]
    assert len(found) == 1, f"heading {name!r} in {found}"
    return found[0]


def section(name: str) -> str:
    """The text under heading `name` (in whichever page holds it) up to the next heading of its level or above."""
    text = where(name).read_text()
    hs = headings(text)
    i = next(i for i, (_, _, t) in enumerate(hs) if t == name)
    end = next((at for at, level, _ in hs[i + 1:] if level <= hs[i][1]), len(text))
    return text[hs[i][0]:end]


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)
