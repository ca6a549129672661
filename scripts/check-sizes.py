#!/usr/bin/env python3
"""Size guard for production code: fails when a harness source file or function grows too long.

Checks every tracked harness/**/*.h and harness/**/*.cpp (git ls-files) for
  - files over 400 lines, and
  - functions whose body spans over 80 lines (opening brace to closing brace, inclusive; a lambda
    counts as part of the function it is written in).
There are no exceptions: split along a concern what passes a limit. Prints every problem, one per
line, then a summary; exit 1 on any problem.

Run:  scripts/check-sizes.py          # check (also CTest test source_sizes)
      scripts/check-sizes.py --stats  # also print counts and the longest functions

Functions are found by a heuristic brace matcher over the source with comments, string, raw string
and character literals blanked: a '{' opens a function body when the text before it looks like a
signature (ends with ')' plus qualifiers, a trailing return type or a member-initializer list) and
is not a control statement, a lambda, a class/namespace/enum head or an initializer. A function is
named as written before its parameter list (Runner::run_block, operator()); a second definition of
the same name in one file is named NAME#2, and so on.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILE_LIMIT = 400
FUNCTION_LIMIT = 80

# --------------------------------------------------------------------------------------------
# Blanking comments, literals and preprocessor lines (newlines are kept, so lines still count).


def _blank(s):
    return re.sub(r"[^\n]", " ", s)


def _quoted(text, i):
    """The string or character literal opening at text[i], blanked, and the index after it (an
    unterminated one ends at the line's end)."""
    quote, n, j = text[i], len(text), i + 1
    while j < n and text[j] != quote and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    j = min(j + 1, n)
    return quote + _blank(text[i + 1:j - 1]) + quote, j


def strip_source(text):
    """Returns text with comments, string/char literals and preprocessor lines replaced by spaces.

    A string literal keeps its quotes ("" with blanks between) so that a head such as
    extern "C" still reads as one. Newlines are kept.
    """
    out = []
    i, n = 0, len(text)
    line_start = True  # only whitespace since the last newline
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            i += 1
            line_start = True
            continue
        if line_start and c == "#":
            # Preprocessor directive, with backslash continuations.
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                j += 1
            out.append(_blank(text[i:j]))
            i = j
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(_blank(text[i:j]))
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(_blank(text[i:j]))
            i = j
            continue
        if c == '"':
            # Raw string? The prefix R (or u8R, uR, UR, LR) must start an identifier-like token.
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] == "_"):
                k -= 1
            prefix = text[k + 1:i]
            if prefix in ("R", "u8R", "uR", "UR", "LR"):
                m = re.match(r'"([^()\\\s]{0,16})\(', text[i:])
                if m:
                    end = text.find(")" + m.group(1) + '"', i + m.end())
                    end = n if end < 0 else end + len(m.group(1)) + 2
                    out.append('"' + _blank(text[i + 1:end - 1]) + '"')
                    i = end
                    continue
            blanked, i = _quoted(text, i)
            out.append(blanked)
            continue
        if c == "'":
            # A digit separator (1'000'000) sits inside a token that starts with a digit.
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] in "_'."):
                k -= 1
            if k + 1 < i and text[k + 1].isdigit():
                out.append(c)
                i += 1
                continue
            blanked, i = _quoted(text, i)
            out.append(blanked)
            continue
        out.append(c)
        i += 1
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Classifying the text before a '{'.

TOKEN = re.compile(r"\s*(::|->|\.\.\.|&&|\|\||[A-Za-z_]\w*|\d[\w.']*|\"\"|''|\S)")
CONTROL = {"if", "for", "while", "switch", "catch", "do", "else", "try", "return", "co_return",
           "throw", "sizeof", "alignof", "decltype", "static_assert", "noexcept", "alignas",
           "co_await", "co_yield", "requires", "new", "delete", "typeid"}
TYPE_HEADS = {"namespace", "class", "struct", "union", "enum", "extern", "using", "typedef",
              "template", "concept"}
QUALIFIERS = {"const", "volatile", "noexcept", "override", "final", "&", "&&", "mutable",
              "constexpr", "consteval", "try"}
OPENERS = {"(": ")", "[": "]", "{": "}"}
CLOSERS = {")": "(", "]": "[", "}": "{"}


def tokenize(head):
    toks = []
    pos = 0
    while True:
        m = TOKEN.match(head, pos)
        if not m:
            break
        toks.append(m.group(1))
        pos = m.end()
    return toks


def match_groups(toks):
    """Maps each bracket token's index to its partner's; unmatched openers map to None."""
    match, stack = {}, []
    for i, t in enumerate(toks):
        if t in OPENERS:
            stack.append(i)
        elif t in CLOSERS:
            # Pop to the nearest opener of the right kind (tolerates stray brackets).
            while stack and toks[stack[-1]] != CLOSERS[t]:
                match[stack.pop()] = None
            if stack:
                j = stack.pop()
                match[i], match[j] = j, i
            else:
                match[i] = None
    for j in stack:
        match[j] = None
    return match


def skip_angles_back(toks, j):
    """toks[j] is '>': returns the index of its '<' (counting nesting), or -1."""
    depth = 0
    while j >= 0:
        if toks[j] == ">":
            depth += 1
        elif toks[j] == "<":
            depth -= 1
            if depth == 0:
                return j
        elif toks[j] in (";", "{", "}"):
            return -1
        j -= 1
    return -1


def strip_qualifiers(toks, match, end):
    """Walks back over const/noexcept(...)/override/... ending at index end; returns new end."""
    while end >= 0:
        t = toks[end]
        if t in QUALIFIERS:
            end -= 1
        elif t == ")" and match.get(end) is not None and match[end] > 0 and \
                toks[match[end] - 1] in ("noexcept", "throw"):
            end = match[end] - 2
        else:
            break
    return end


def init_list_start(toks, match, end):
    """If toks[..end] ends with a member-initializer list ': a_(x), b_{y}', returns the index of
    the ':'; otherwise None."""
    j = end
    while j >= 0:
        if toks[j] not in (")", "}") or match.get(j) is None:
            return None
        k = match[j] - 1  # token before the '(' or '{': end of the member or base name
        if k >= 0 and toks[k] == ">":
            k = skip_angles_back(toks, k) - 1
        s = k
        while s >= 0 and (re.match(r"[A-Za-z_]\w*$", toks[s]) or toks[s] == "::"):
            s -= 1
        if s == k or s < 0:
            return None
        if toks[s] == ",":
            j = s - 1
            continue
        if toks[s] == ":":
            return s
        return None
    return None


def function_name(toks, match, close):
    """toks[close] is the ')' of a parameter list. Returns (kind, name): kind is 'function',
    'lambda', 'control' or None (not a function)."""
    open_ = match.get(close)
    if open_ is None or open_ == 0:
        return None, None
    k = open_ - 1
    t = toks[k]
    if t == "]":
        return "lambda", None
    if t == ">":  # a template's name (f<int>) or a lambda's template parameters ([]<class T>)
        lt = skip_angles_back(toks, k)
        if lt > 0 and toks[lt - 1] == "]":
            return "lambda", None
        if lt > 0 and toks[lt - 1] == "operator":  # operator<, operator>, operator<=> ...
            lt = k + 1
            k = lt - 1
        else:
            k = lt - 1 if lt > 0 else k
            t = toks[k]
    # operator() and operator[]
    if toks[k] in (")", "]") and match.get(k) == k - 1 and k >= 2 and toks[k - 2] == "operator":
        name_toks, s = ["operator", toks[k - 1] + toks[k]], k - 3
    else:
        # operator@ for punctuation @, or a conversion operator such as operator bool
        s = k
        while s >= 0 and not re.match(r"[A-Za-z_]\w*$", toks[s]) and toks[s] not in (
                ")", "]", "}", ";", ",", "::"):
            s -= 1
        if s >= 0 and toks[s] == "operator" and s < k:
            name_toks, s = ["operator"] + toks[s + 1:k + 1], s - 1
        elif s >= 1 and toks[s - 1] == "operator" and s == k:
            name_toks, s = ["operator", toks[s]], s - 2
        elif re.match(r"[A-Za-z_]\w*$", toks[k]):
            if toks[k] in CONTROL or toks[k] in TYPE_HEADS:
                return "control", toks[k]
            if toks[k] == "constexpr" and k > 0 and toks[k - 1] == "if":
                return "control", "if"
            name_toks, s = [toks[k]], k - 1
            if s >= 0 and toks[s] == "~":
                name_toks.insert(0, "~")
                s -= 1
        else:
            return None, None
    # Qualifiers written before the name: Runner::run_block, Outer<T>::Inner::f
    while s >= 1 and toks[s] == "::":
        q = s - 1
        if toks[q] == ">":
            lt = skip_angles_back(toks, q)
            if lt <= 0:
                break
            if not re.match(r"[A-Za-z_]\w*$", toks[lt - 1]):
                break
            name_toks = [toks[lt - 1], "::"] + name_toks
            s = lt - 2
        elif re.match(r"[A-Za-z_]\w*$", toks[q]):
            name_toks = [toks[q], "::"] + name_toks
            s = q - 1
        else:
            name_toks = ["::"] + name_toks
            s = q
            break
    name = ""
    for part in name_toks:
        if name and re.match(r"\w", part) and re.match(r".*\w$", name):
            name += " "
        name += part
    return "function", name


def classify(head, parent_kind):
    """Returns (kind, name) for a '{' preceded by head (the text since the last ';', '{' or '}'
    of the enclosing statement). kind: 'function', 'lambda', 'block' (statements inside, the
    enclosing statement ends at its '}') or 'init' (a braced initializer)."""
    toks = tokenize(head)
    if not toks:
        return ("init" if parent_kind == "init" else "block"), None
    match = match_groups(toks)
    # Inside an unclosed '(' or '[': an argument, so a braced initializer or a lambda body.
    if any(toks[i] in ("(", "[") and m is None for i, m in match.items()):
        last = strip_qualifiers(toks, match, len(toks) - 1)
        if last >= 0 and toks[last] == "]":
            return "lambda", None
        if last >= 0 and toks[last] == ")" and function_name(toks, match, last)[0] == "lambda":
            return "lambda", None
        arrow = [i for i, t in enumerate(toks) if t == "->"]
        if arrow and arrow[-1] > 0 and toks[strip_qualifiers(toks, match, arrow[-1] - 1)] in (
                ")", "]"):
            return "lambda", None
        return "init", None
    # Leading access specifiers and labels: 'public:', 'case X:', 'default:'
    first = toks[0]
    if first in ("case", "default"):
        return "block", None
    while len(toks) >= 2 and toks[0] in ("public", "private", "protected") and toks[1] == ":":
        toks = toks[2:]
        match = match_groups(toks)
    if not toks:
        return "block", None
    # Attributes and template headers in front
    i = 0
    while i < len(toks):
        if toks[i] == "[" and i + 1 < len(toks) and toks[i + 1] == "[" and match.get(i):
            i = match[i] + 1
        elif toks[i] == "template" and i + 1 < len(toks) and toks[i + 1] == "<":
            depth, j = 0, i + 1
            while j < len(toks):
                depth += {"<": 1, ">": -1}.get(toks[j], 0)
                if depth == 0:
                    break
                j += 1
            i = j + 1
        else:
            break
    lead = toks[i] if i < len(toks) else ""
    if lead in TYPE_HEADS or lead in ("else", "do", "try"):
        return "block", None
    end = len(toks) - 1
    last = toks[end]
    if last in ("=", ",", "return", "co_return", "co_yield", "throw", "<<", "(", "[", "?", ":"):
        return "init", None
    if last == "]" or (last == "mutable" and end > 0 and toks[end - 1] == "]"):
        return "lambda", None
    # Member-initializer list: ') : a_(x), b_{y}'
    colon = init_list_start(toks, match, end)
    if colon is not None:
        end = colon - 1
    # Trailing return type or requires-clause: cut at the last top-level '->' / 'requires'
    depth = 0
    for j in range(end, -1, -1):
        t = toks[j]
        if t in CLOSERS:
            depth += 1
        elif t in OPENERS:
            depth -= 1
        elif depth == 0 and t in ("->", "requires") and j > 0:
            e = strip_qualifiers(toks, match, j - 1)
            if e >= 0 and toks[e] in (")", "]"):
                end = j - 1
                break
    end = strip_qualifiers(toks, match, end)
    if end < 0:
        return "block", None
    if toks[end] == "]":
        return "lambda", None
    if toks[end] != ")":
        # 'Type name{', 'std::vector<int>{', 'x{': braced initializers; anything else a block.
        if re.match(r"[A-Za-z_]\w*$|>$", toks[end]):
            return "init", None
        return "block", None
    kind, name = function_name(toks, match, end)
    if kind == "lambda":
        return "lambda", None
    if kind == "function":
        # A top-level '=' before the parameter list (other than in operator=) means this is
        # an expression, not a signature.
        depth = 0
        for j in range(0, match[end]):
            t = toks[j]
            if t in OPENERS:
                depth += 1
            elif t in CLOSERS:
                depth -= 1
            elif depth == 0 and t == "=" and "operator" not in toks[max(0, j - 2):j]:
                return "init", None
        return "function", name
    return "block", None


# --------------------------------------------------------------------------------------------
# Scanning one file


def find_functions(text):
    """Returns [(name, first_line, last_line)] for the function bodies in C++ source text.

    Line numbers are 1-based; a function nested in another (a local class's member) is listed
    too, lambdas are not.
    """
    s = strip_source(text)
    # frame: [kind, head_start, paren_depth, open_line, name]
    stack = [["top", 0, 0, 0, None]]
    found = []
    line = 1
    for i, c in enumerate(s):
        if c == "\n":
            line += 1
        elif c in "([":
            stack[-1][2] += 1
        elif c in ")]":
            stack[-1][2] = max(0, stack[-1][2] - 1)
        elif c == ";":
            if stack[-1][2] == 0:
                stack[-1][1] = i + 1
        elif c == "{":
            parent = stack[-1]
            kind, name = classify(s[parent[1]:i], parent[0])
            stack.append([kind, i + 1, 0, line, name])
        elif c == "}":
            if len(stack) == 1:
                continue  # unbalanced: ignore
            kind, _, _, open_line, name = stack.pop()
            if kind == "function":
                found.append((name, open_line, line))
            if kind in ("function", "block"):
                stack[-1][1] = i + 1
                stack[-1][2] = 0
    return found


def measure_file(path):
    """Returns (line_count, {name: body_lines}) with duplicate names numbered NAME#2, ..."""
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = len(text.splitlines())
    seen = collections.Counter()
    functions = {}
    for name, first, last in sorted(find_functions(text), key=lambda f: f[1]):
        seen[name] += 1
        key = name if seen[name] == 1 else f"{name}#{seen[name]}"
        functions[key] = last - first + 1
    return lines, functions


def tracked_sources():
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--", "harness/*.h", "harness/*.cpp"],
                             cwd=ROOT, check=True, capture_output=True).stdout.decode()
        paths = [p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        print("check-sizes: git ls-files failed; scanning harness/ instead", file=sys.stderr)
        paths = []
        for folder, _, files in os.walk(os.path.join(ROOT, "harness")):
            for f in files:
                if f.endswith((".h", ".cpp")):
                    paths.append(os.path.relpath(os.path.join(folder, f), ROOT))
    return sorted(p for p in paths if os.path.isfile(os.path.join(ROOT, p)))


def describe(key):
    kind, path, name = key
    return f"{path}: file" if kind == "file" else f"{path}: function {name}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stats", action="store_true",
                        help="also print counts of long functions and the 20 longest")
    args = parser.parse_args()

    current = {}  # (kind, path, name) -> lines, every file and function
    for path in tracked_sources():
        try:
            lines, functions = measure_file(path)
        except FileNotFoundError:  # deleted while we ran
            continue
        current[("file", path, "")] = lines
        for name, n in functions.items():
            current[("function", path, name)] = n
    limit = {"file": FILE_LIMIT, "function": FUNCTION_LIMIT}
    over = {k: n for k, n in current.items() if n > limit[k[0]]}
    n_files = sum(1 for k in current if k[0] == "file")
    n_functions = len(current) - n_files
    over_files = sum(1 for k in over if k[0] == "file")
    over_functions = len(over) - over_files

    if args.stats:
        lengths = [n for k, n in current.items() if k[0] == "function"]
        for t in (40, 60, 80, 100):
            print(f"check-sizes: functions over {t} lines: {sum(1 for n in lengths if n > t)}")
        longest = sorted(((n, k) for k, n in current.items() if k[0] == "function"),
                         reverse=True)[:20]
        for n, k in longest:
            print(f"  {n:4d}  {k[1]}: {k[2]}")

    problems = [f"{describe(key)} is {n} lines, over the limit of {limit[key[0]]}: split it "
                "along a concern" for key, n in sorted(over.items())]
    for p in problems:
        print(f"check-sizes: {p}")
    summary = (f"{n_files} files, {n_functions} functions scanned; {over_files} file(s) over "
               f"{FILE_LIMIT} lines and {over_functions} function(s) over {FUNCTION_LIMIT} lines")
    if problems:
        print(f"check-sizes: {len(problems)} problem(s); {summary}")
        return 1
    print(f"check-sizes: ok; {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
