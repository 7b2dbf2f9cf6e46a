"""The rule pages (``rules/*.md``): found in a checkout or inside the installed package."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety", "Frameworks")
_BLOCK = re.compile(r"^```python[ \t]+(?P<kind>bad|good)(?:[ \t]+(?P<label>[\w.-]+))?[ \t]*\n(?P<code>.*?)^```",
                    re.MULTILINE | re.DOTALL)


@dataclass
class Block:
    kind: str  # bad | good
    label: str
    code: str


@dataclass
class Page:
    path: Path
    code: str
    name: str
    text: str

    def sections(self) -> list[str]:
        return re.findall(r"^## (.+?)\s*$", self.text, re.MULTILINE)

    def blocks(self) -> list[Block]:
        return [Block(m["kind"], m["label"] or "", m["code"]) for m in _BLOCK.finditer(self.text)]

    def settings(self) -> dict:
        """The settings the examples assume, from a header line such as
        ``**Examples assume:** `[tool.nanlint.frameworks] tensorflow = "2.3"` `` (version-aware rules)."""
        m = re.search(r"^\*\*Examples assume:\*\*(.*)$", self.text, re.MULTILINE)
        return {"frameworks": dict(re.findall(r'(\w+) = "([\d.]+)"', m.group(1)))} if m else {}


def pages_dir() -> Path:
    packaged = Path(__file__).resolve().parent.parent / "_rule_pages"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "rules"


@lru_cache(maxsize=None)
def pages() -> dict[str, Page]:
    out = {}
    for path in sorted(pages_dir().glob("NAN*.md")):
        code, _, name = path.stem.partition("-")
        out[code] = Page(path, code, name, path.read_text(encoding="utf-8"))
    return out
