"""The repository explains itself: its Markdown links resolve, the numbered sections code cites
(``docs/kubernetes-node-health.md §3.2``) exist, and no file points outside the repository or at an issue
tracker's numbers instead of saying what it means.

The checks are plain functions over text, so the tests at the end can show that each one fails on a broken
example; the tests above them run the checks over the whole repository.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".git", ".venv", "node_modules", "staticfiles", "artifacts", "vendor", "__pycache__", ".pytest_cache"}
CITING_SUFFIXES = {".py", ".js", ".html", ".md"}
TEXT_SUFFIXES = {".py", ".js", ".html", ".md", ".txt", ".yaml", ".yml", ".toml", ".sh"}
TEXT_NAMES = {"Makefile"}

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.MULTILINE)
NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")
# a docs file named in text or as a link target, then the sections cited right after it: "§3.2", "§3.2-§3.6",
# "§5.3, §4.5", "§6.4 and §6.5", also across a comment's line break
DOCS_FILE = re.compile(r"(?<![\w/.-])(?:\.\./)?(docs/)?([\w-]+\.md)\b")
SECTION_RUN = re.compile(r"\)?`?(?:(?:\s|[,;/#*–-]|\band\b|\bto\b)*§\s*\d+(?:\.\d+)*)+")
SECTION = re.compile(r"§\s*(\d+(?:\.\d+)*)")
ISSUE_NUMBER = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
OUTSIDE = ("../" + "shared", "/wo" + "rk/")


def repo_files(suffixes: set[str], names: frozenset[str] | set[str] = frozenset()) -> Iterator[Path]:
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            path = Path(folder) / name
            if path.suffix in suffixes or name in names:
                yield path


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose(markdown: str) -> str:
    """The Markdown without code blocks and inline code, where links are not links."""
    return INLINE_CODE.sub("", FENCE.sub("", markdown))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text of its links, lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for match in HEADING.finditer(FENCE.sub("", markdown)):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def section_numbers(markdown: str) -> set[str]:
    """Numbers of the numbered headings: "## 3. Controller" gives "3", "### 3.2 Probe" gives "3.2"."""
    numbers = set()
    for match in HEADING.finditer(FENCE.sub("", markdown)):
        number = NUMBERED.match(match.group(2) + " ")
        if number:
            numbers.add(number.group(1))
    return numbers


def broken_links(path: Path, markdown: str) -> list[str]:
    """Relative links of a Markdown file whose file or heading does not exist."""
    problems = []
    for match in LINK.finditer(prose(markdown)):
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text(encoding="utf-8")):
            problems.append(f"{target}: no heading with the anchor #{anchor}")
    return problems


def citations(text: str, docs: Path) -> Iterator[tuple[str, list[str], tuple[int, int]]]:
    """(docs file name, sections cited, where in ``text``) for every mention of a docs file."""
    for match in DOCS_FILE.finditer(text):
        name = match.group(2)
        if not (match.group(1) or (docs / name).exists()):
            continue  # some other .md (README.md, a Kubernetes doc): not a citation of docs/
        run = SECTION_RUN.match(text, match.end())
        end = run.end() if run else match.end()
        yield name, SECTION.findall(run.group(0)) if run else [], (match.start(), end)


def cited_sections(text: str, docs: Path) -> Iterator[tuple[str, str | None]]:
    """(docs file name, section) for every citation of a docs file in ``text``; section None: the file alone."""
    for name, sections, (start, _end) in citations(text, docs):
        if not sections and text.startswith(("docs/", "../docs/"), start):
            yield name, None
        for section in sections:
            yield name, section


def own_sections(text: str, docs: Path) -> list[str]:
    """Sections a document cites without naming a file ("see §3.2"): its own."""
    taken = [span for _name, _sections, span in citations(text, docs)]
    return [m.group(1) for m in SECTION.finditer(text) if not any(a <= m.start() < b for a, b in taken)]


def broken_citations(text: str, docs: Path, own_name: str | None = None) -> list[str]:
    """Citations of docs files that do not resolve; ``own_name``: ``text`` is that docs file."""
    problems = []
    cited = list(cited_sections(text, docs))
    if own_name is not None:
        cited += [(own_name, section) for section in own_sections(text, docs)]
    for name, section in cited:
        path = docs / name
        if not path.exists():
            problems.append(f"docs/{name}: no such file")
        elif section is not None and section not in section_numbers(path.read_text(encoding="utf-8")):
            problems.append(f"docs/{name} §{section}: no heading numbered {section}")
    return problems


def outside_pointers(text: str) -> list[str]:
    found = [m.group(0) for m in ISSUE_NUMBER.finditer(text)]
    return found + [marker for marker in OUTSIDE if marker in text]


# -- the repository -------------------------------------------------------------------------------------------


MARKDOWN = list(repo_files({".md"}))


@pytest.mark.parametrize("path", MARKDOWN, ids=rel)
def test_markdown_links_resolve(path: Path) -> None:
    assert broken_links(path, path.read_text(encoding="utf-8")) == []


def test_the_docs_are_found() -> None:
    names = {rel(path) for path in MARKDOWN}
    assert {"README.md", "bench/README.md", "docs/architecture.md", "docs/kubernetes-node-health.md"} <= names


def test_cited_sections_exist() -> None:
    docs = ROOT / "docs"
    texts = {rel(path): path.read_text(encoding="utf-8") for path in repo_files(CITING_SUFFIXES)
             if path != Path(__file__).resolve()}  # this file's examples are broken on purpose
    problems = [f"{name}: {problem}" for name, text in texts.items()
                for problem in broken_citations(text, docs, name[len("docs/"):] if name.startswith("docs/") else None)]
    assert problems == []
    # the code does cite sections, so the check above has found something to check
    cited = [section for text in texts.values() for _, section in cited_sections(text, docs) if section]
    assert len(cited) > 50


def test_nothing_points_outside_the_repository() -> None:
    problems = [f"{rel(path)}: {found}" for path in repo_files(TEXT_SUFFIXES, TEXT_NAMES)
                for found in outside_pointers(path.read_text(encoding="utf-8", errors="replace"))]
    assert problems == []


# -- the checks find what they must -----------------------------------------------------------------------------


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# There\n\n## 2. Second part\n", encoding="utf-8")
    page = tmp_path / "page.md"
    text = ("[ok](there.md) [ok](there.md#2-second-part) [web](https://example.org/x.md) `[code](gone.md)`\n"
            "[gone](gone.md) [no anchor](there.md#third)\n")
    assert broken_links(page, text) == ["gone.md: no such file", "there.md#third: no heading with the anchor #third"]


def test_a_missing_section_is_found(tmp_path: Path) -> None:
    (tmp_path / "rules.md").write_text("# Rules\n\n## 3. Controller\n\n### 3.2 Probe\n", encoding="utf-8")
    text = ("# docs/rules.md §3.2 and docs/rules.md §3.2-§3.6\n"
            "[rules](rules.md) §3, §4.1 // docs/rules.md\n// §9\n"
            "see docs/nothing.md and README.md")
    assert broken_citations(text, tmp_path) == [
        "docs/rules.md §3.6: no heading numbered 3.6",
        "docs/rules.md §4.1: no heading numbered 4.1",
        "docs/rules.md §9: no heading numbered 9",
        "docs/nothing.md: no such file",
    ]
    # in a docs file, a section cited without a file name is one of its own
    own = "## 1. Intro\n\nSee §1 and §7, and [rules](rules.md) §3.2.\n"
    (tmp_path / "intro.md").write_text(own, encoding="utf-8")
    assert broken_citations(own, tmp_path, own_name="intro.md") == ["docs/intro.md §7: no heading numbered 7"]


def test_pointers_outside_are_found() -> None:
    numbered, hashed = "iss" + "ue 12", "Iss" + "ue #7"  # split, or this file would be found
    text = f"fixed in {numbered}; see {hashed}; " + "../" + "shared/notes; " + "/wo" + "rk/main"
    assert outside_pointers(text) == [numbered, hashed, *OUTSIDE]
    assert outside_pointers("kubernetes/kubernetes#126287 changed it; issues are welcome") == []


def test_anchors_are_github_slugs() -> None:
    markdown = "# Detail levels\n## A node's details on demand\n## `docs/` and [links](x.md)\n## Detail levels\n"
    assert anchors(markdown) == {"detail-levels", "a-nodes-details-on-demand", "docs-and-links", "detail-levels-1"}
