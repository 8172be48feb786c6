"""The training text: English glosses and example sentences from Debian's WordNet.

WordNet's data files hold one synset a line; after the "|" comes the gloss, a
definition followed by quoted example sentences. Each definition becomes a line
"word: definition" and each example sentence a line of its own. Fortune cookies
(Debian's `fortunes-min`) add some longer, everyday prose when installed.
"""
from __future__ import annotations

import re
import zlib
from pathlib import Path

WORDNET_DIR = Path("/usr/share/wordnet")
FORTUNES_DIR = Path("/usr/share/games/fortunes")
INSTALL_HINT = "apt-get install wordnet-base fortunes-min"
VALIDATION_PERCENT = 5

_QUOTED = re.compile(r'"([^"]+)"')


def gloss_lines(data_line: str) -> list[str]:
    """The training lines one WordNet synset line contributes."""
    if data_line.startswith("  ") or "|" not in data_line:
        return []  # licence header or malformed line
    head, gloss = data_line.split("|", 1)
    word = head.split()[4].replace("_", " ")
    examples = [e.strip() for e in _QUOTED.findall(gloss)]
    definition = gloss.split('"', 1)[0].strip(" ;\n")  # examples (and attributions) follow it
    lines = [f"{word}: {definition}"] if definition else []
    return lines + [e for e in examples if len(e.split()) >= 3]


def fortune_lines(text: str) -> list[str]:
    """Fortune files separate entries with '%' lines; keep each entry as one line."""
    entries = (" ".join(e.split()) for e in text.split("\n%\n"))
    return [e for e in entries if 3 <= len(e.split()) <= 80]


def read_lines(wordnet_dir: Path = WORDNET_DIR, fortunes_dir: Path = FORTUNES_DIR) -> list[str]:
    """Every corpus line, deduplicated, in a stable order."""
    data_files = sorted(Path(wordnet_dir).glob("data.*"))
    if not data_files:
        raise FileNotFoundError(
            f"WordNet data not found in {wordnet_dir}. Install it with: {INSTALL_HINT}"
        )
    lines: list[str] = []
    for path in data_files:
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            lines.extend(gloss_lines(raw))
    for path in sorted(Path(fortunes_dir).glob("*")) if Path(fortunes_dir).is_dir() else []:
        if path.is_file() and path.suffix == "" and not path.is_symlink():
            lines.extend(fortune_lines(path.read_text(encoding="utf-8", errors="replace")))
    return list(dict.fromkeys(lines))


def is_validation(line: str) -> bool:
    """A stable hash of the line decides: the split never changes between runs."""
    return zlib.crc32(line.encode("utf-8")) % 100 < VALIDATION_PERCENT


def split(lines: list[str]) -> tuple[list[str], list[str]]:
    """(train, validation), deterministic and disjoint."""
    train = [line for line in lines if not is_validation(line)]
    validation = [line for line in lines if is_validation(line)]
    return train, validation
