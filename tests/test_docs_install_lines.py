"""Every `pip install` line of README.md and docs/ works as written from a copy of opkit:
none installs the distribution `opkit-dl` from the package index (there is no release
there), and every extra a line names exists in pyproject.toml."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _install_lines():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for match in re.finditer(r"pip install([^`#\n]*)", line):
                yield f"{path.relative_to(ROOT)}:{n}", match.group(1)


def _from_the_index(args: str) -> list[str]:
    """The requirements of a pip install line that name opkit-dl from the index (not a
    path, a URL or a `name @ url` requirement)."""
    out = []
    for word in args.replace('"', " ").replace("'", " ").split():
        if word.startswith("-"):
            continue
        if re.match(r"opkit-dl(\[[^\]]*\])?([<>=!~].*)?$", word):
            out.append(word)
    return out


def test_no_install_line_takes_opkit_from_the_index():
    bad = [f"{where}: pip install{args}" for where, args in _install_lines()
           if _from_the_index(args)]
    assert bad == [], "\n".join(bad)


def test_the_scan_finds_an_index_install():
    assert _from_the_index(' "opkit-dl[paddle]"') == ["opkit-dl[paddle]"]
    assert _from_the_index(" opkit-dl==0.1") == ["opkit-dl==0.1"]
    assert _from_the_index(' -e "/path/to/opkit[paddle]"') == []
    assert _from_the_index(' "./opkit[gpu]"') == []


def test_every_extra_named_exists():
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                 ["optional-dependencies"])
    missing = []
    for where, args in _install_lines():
        for group in re.findall(r"(?:^|[\s\"'/.])[\w./-]*\[([\w,-]+)\]", args):
            missing += [f"{where}: [{e}]" for e in group.split(",") if e not in extras]
    assert missing == [], missing
