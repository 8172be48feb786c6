"""The README and docs/: the README stays short, and every relative link in them resolves, to a file that exists and,
for a `#anchor`, to a heading of that file (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "ui" / "runtime" / "README.md"]
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def prose(text: str) -> str:
    """The text without its fenced code blocks (a lesson's example has "## " headings of its own) or inline code."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def anchors(path: Path) -> set[str]:
    """The #anchors GitHub gives a Markdown file's headings (a repeated heading gets -1, -2, ...)."""
    found, seen = set(), {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def broken_links(path: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    return broken


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken_links(path) == [], f"{path.relative_to(ROOT)} links to what is not there"


def test_the_readme_is_at_most_250_lines_and_links_each_doc():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for doc in ("architecture", "api", "lessons", "models", "benchmarks"):
        assert f"](docs/{doc}.md" in readme, f"the README does not link docs/{doc}.md"


def test_a_broken_link_and_a_missing_anchor_are_found(tmp_path):
    (tmp_path / "other.md").write_text("# A heading, with punctuation!\n\n## Twice\n\n## Twice\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-heading-with-punctuation) [ok](other.md#twice-1) [no](missing.md) "
                    "[no](other.md#nowhere) [web](https://example.com/x)\n```\n[in code](missing.md)\n```\n",
                    encoding="utf-8")
    assert broken_links(page) == ["missing.md: no such file", "other.md#nowhere: no heading #nowhere in other.md"]
