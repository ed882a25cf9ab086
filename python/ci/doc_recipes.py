#!/usr/bin/env python3
"""Writes the recipes of a Markdown page into a folder, one file each, for
CI to run as written: a fenced block right after a line
``<!-- python-test: FILE -->`` becomes FILE. Prints the files' names, one a
line, in the page's order.

Every ``python`` block must be marked, either so or with
``<!-- not run: REASON -->``: a recipe nobody runs is how a page goes
wrong.

    python3 python/ci/doc_recipes.py docs/python.md OUT
"""

import os
import re
import sys

MARK = re.compile(r"<!-- python-test: ([A-Za-z0-9_.-]+) -->$")
NOT_RUN = re.compile(r"<!-- not run: .+ -->$")


def recipes(text):
    lines = text.split("\n")
    found = []
    problems = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = re.match(r"```(\w*)$", line)
        if fence:
            end = next((j for j in range(i + 1, len(lines)) if lines[j] == "```"), None)
            if end is None:
                problems.append("line {}: a fenced block that never ends".format(i + 1))
                break
            above = lines[i - 1] if i > 0 else ""
            mark = MARK.match(above)
            if mark:
                found.append((mark.group(1), "\n".join(lines[i + 1:end]) + "\n"))
            elif fence.group(1) == "python" and not NOT_RUN.match(above):
                problems.append("line {}: a python block marked neither python-test nor not run".format(i + 1))
            i = end + 1
            continue
        if MARK.match(line) and not (i + 1 < len(lines) and lines[i + 1].startswith("```")):
            problems.append("line {}: {} is not followed by a fenced block".format(i + 1, line))
        i += 1
    names = [name for name, _ in found]
    for name in set(names):
        if names.count(name) > 1:
            problems.append("{} is marked {} times".format(name, names.count(name)))
    return found, problems


def main(argv):
    if len(argv) != 3:
        print("usage: doc_recipes.py PAGE OUT", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        found, problems = recipes(f.read())
    if not found:
        problems.append("no block is marked python-test")
    if problems:
        for problem in problems:
            print("{}: {}".format(argv[1], problem), file=sys.stderr)
        return 1
    os.makedirs(argv[2], exist_ok=True)
    for name, code in found:
        with open(os.path.join(argv[2], name), "w", encoding="utf-8") as f:
            f.write(code)
        print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
