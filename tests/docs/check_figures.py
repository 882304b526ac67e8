#!/usr/bin/python3
"""tests/docs/check_figures.py — every measured figure in the docs stands in docs/performance.md.

docs/performance.md is the one home of the project's figures; the other docs (and the README)
link to it. This check finds every time, rate and ratio in their prose and tables (a number with
a unit such as 12.3 ms, 986 Mbit/s, 1.46x, or a range such as 0.96-1.02x) and fails unless
performance.md holds it: the figure as written, or each number of it (a ratio's tables give
"**1.46**"; a range's ends may be two cells), or the allow-list (tests/docs/figures-allowed.txt)
names it for that page: settings, defaults, examples and simulated times, which are not
measurements. Code blocks (fenced,
or indented by four spaces) are commands and sample output, and are not read.

    tests/docs/check_figures.py [REPOSITORY]

It also fails on history in any doc, performance.md included ("an earlier run", "it used to",
"before <commit>", "was 0.86x at <commit>"): how a figure came about belongs in git history.

Prints each figure found nowhere, and each line of history, as FILE:LINE: TEXT and exits 1;
exits 0 when all stand.
"""
import pathlib
import re
import sys

FIGURE = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?(?:[-\u2013]\d+(?:\.\d+)?)?)\s?"
    r"(x|ms|s|us|\u00b5s|ns|Mbit/s|Gbit/s|GB/s|MB/s|M transfers/s)(?![\w/])")


HISTORY = re.compile(r"earlier run|it used to|\bbefore [0-9a-f]{7}\b|\bwas [^.;]{0,30}\bat [0-9a-f]{7}\b",
                     re.IGNORECASE)


def normal(text):
    """White space, line breaks and the micro sign do not make two figures differ."""
    return re.sub(r"\s+", "", text.replace("\u00b5", "u").replace("\u2013", "-"))


def numbers_stand(figure_match, home_text):
    """Each number of the figure stands in performance.md with its unit: a time or rate as
    "2.56 s", a ratio as "1.46x", or as a table's "**1.46**", "(1.46)" or "| 1.46 |"."""
    unit = figure_match.group(2).replace("\u00b5", "u")
    if unit == "x":
        after = r"(?:x|\*\*|\)| \|)"
    else:
        after = r"\s?(?:" + re.escape(unit) + "|" + re.escape(figure_match.group(2)) + ")"
    for number in re.split(r"[-\u2013]", figure_match.group(1)):
        if not re.search(r"(?<![\d.])" + re.escape(number) + after, home_text):
            return False
    return True


def prose_lines(text):
    """(line number, line) outside fenced and indented code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            continue
        yield number, line


def allowed(path):
    """{page: {figure, ...}} from lines "PAGE FIGURE  # why"."""
    table = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        page, figure = line.split(None, 1)
        table.setdefault(page, set()).add(normal(figure))
    return table


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    home_text = (root / "docs/performance.md").read_text()
    home = normal(home_text)
    allow = allowed(root / "tests/docs/figures-allowed.txt")
    pages = sorted((root / "docs").glob("*.md")) + [root / "README.md"]
    missing = 0
    for page in pages + [root / "docs/performance.md"]:
        name = str(page.relative_to(root))
        for number, line in prose_lines(page.read_text()):
            for match in HISTORY.finditer(line):
                print(f"{name}:{number}: history: {match.group(0)}")
                missing += 1
    for page in pages:
        if page.name == "performance.md":
            continue
        name = str(page.relative_to(root))
        for number, line in prose_lines(page.read_text()):
            for match in FIGURE.finditer(line):
                figure = normal(match.group(0))
                if figure in home or figure in allow.get(name, ()):
                    continue
                if numbers_stand(match, home_text):
                    continue
                print(f"{name}:{number}: {match.group(0)}")
                missing += 1
    if missing:
        print(f"{missing} problem(s): move a figure to docs/performance.md and link to it (or list "
              "a setting or an example in tests/docs/figures-allowed.txt); leave history to git")
        return 1
    print("every figure stands in docs/performance.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
