#!/usr/bin/env python3
"""Prints one literal string per `match` expression of culprit's rules.

For each expression, the longest run of characters that must appear
verbatim in a matching line (escapes like \\( count as their character;
a character followed by ?, * or {0,...} is optional and breaks the run).
Expressions with top-level alternation contribute the longest literal of
each branch. Runs shorter than 3 bytes are dropped. The set is what rg and
grep get in bench/bench.sh, so they search for (about) the same strings
culprit's matcher needs to find.

Usage: literals.py RULES_DIR > LITERALS
"""
import glob
import os
import re
import sys

META = set(".^$*+?()[]{}|")
CLASS_ESCAPES = set("dDwWsSbBAzZGQEnrtfvx0123456789pPkKRhHXN")


def branches(expr):
    """Splits on '|' outside groups and classes."""
    out, depth, cur, i, in_class = [], 0, "", 0, False
    while i < len(expr):
        c = expr[i]
        if c == "\\" and i + 1 < len(expr):
            cur += expr[i:i + 2]
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(cur)
            cur = ""
            i += 1
            continue
        cur += c
        i += 1
    out.append(cur)
    return out


OPTIONAL_GROUP = re.compile(r"\((?:[^()\\]|\\.)*\)(?:[?*]|\{0,?\d*\})")


def longest_literal(expr):
    # an optional group's text need not appear: treat it as a wildcard
    while True:
        stripped = OPTIONAL_GROUP.sub(".", expr)
        if stripped == expr:
            break
        expr = stripped
    best, run, i = "", "", 0
    def close():
        nonlocal best, run
        if len(run) > len(best):
            best = run
        run = ""
    while i < len(expr):
        c = expr[i]
        lit = None
        if c == "\\" and i + 1 < len(expr):
            n = expr[i + 1]
            if n in CLASS_ESCAPES:
                close()
            else:
                lit = n
            i += 2
        elif c in META:
            close()
            if c == "[":  # skip the class
                j = i + 1
                if j < len(expr) and expr[j] == "]":
                    j += 1
                while j < len(expr) and expr[j] != "]":
                    j += 2 if expr[j] == "\\" else 1
                i = j + 1
            elif c == "(" and expr[i + 1:i + 2] == "?":  # (?<name> (?: (?i)
                j = i + 2
                if expr[j:j + 1] in ("<", "P"):
                    j = expr.find(">", j) + 1
                elif expr[j:j + 1] == ":":
                    j += 1
                else:
                    j = expr.find(")", j) + 1
                i = max(j, i + 1)
            else:
                i += 1
            continue
        else:
            lit = c
            i += 1
        if lit is not None:
            nxt = expr[i:i + 1]
            if nxt in ("?", "*") or (nxt == "{" and expr[i + 1:i + 2] == "0"):
                close()
            else:
                run += lit
    close()
    return best


def main():
    seen = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.rules"))):
        for line in open(path, encoding="utf-8"):
            key, _, value = line.partition("=")
            if key.strip() != "match" or line[:1].isspace():
                continue
            for b in branches(value.strip()):
                lit = longest_literal(b).strip()
                if len(lit) >= 3 and lit not in seen:
                    seen.append(lit)
    sys.stdout.write("".join(s + "\n" for s in seen))


if __name__ == "__main__":
    main()
