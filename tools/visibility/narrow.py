#!/usr/bin/env python3
"""The visibility sweep of issue 22, re-runnable after a merge (ARCHITECTURE.md, "What is
public"): an item of src/ stays `pub` only if something outside the library names it.

    python3 tools/visibility/narrow.py sweep        # items, then restore until rustc agrees
    python3 tools/visibility/narrow.py items        # `pub` → `pub(crate)` where unnamed outside
    python3 tools/visibility/narrow.py restore A B  # back to `pub`: names rustc says must be

`items` reads every word of src/bin, tests, benches, examples and fuzz, and narrows each
`pub fn|const|static|struct|enum|type|trait NAME` of the library (outside `#[cfg(test)]`
modules) whose NAME none of them contains; it records what it narrowed in
target/visibility-narrowed.txt. A name is kept public when it appears anywhere outside, so
the pass never narrows too much by name; rustc then reports the types a public signature
still needs (E0364/E0365 on re-exports, "is private", "more private than"), which
`restore` widens again; `sweep` does both, running `cargo check --workspace --all-targets`
until no such report is left. Then `cargo fix --lib --allow-dirty` (unreachable_pub's
suggestions) and the dead code rustc lists. Read the diff before committing.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RECORD = ROOT / "target" / "visibility-narrowed.txt"
KINDS = r"(?:async fn|unsafe fn|const fn|fn|const|static|struct|enum|type|trait)"


def outside_words():
    words = set()
    for folder in ["src/bin", "tests", "benches", "examples", "fuzz"]:
        for f in (ROOT / folder).rglob("*.rs"):
            words.update(re.findall(r"\b\w+\b", f.read_text()))
    return words


def items():
    words = outside_words()
    pat = re.compile(r"^(\s*)pub (" + KINDS + r") (\w+)")
    narrowed = []
    for f in sorted((ROOT / "src").rglob("*.rs")):
        if "/bin/" in str(f):
            continue
        lines = f.read_text().split("\n")
        in_tests = False
        for i, line in enumerate(lines):
            in_tests = in_tests or line.startswith("#[cfg(test)]")
            m = pat.match(line)
            if m and not in_tests and m.group(3) not in words:
                lines[i] = line.replace("pub ", "pub(crate) ", 1)
                narrowed.append(f"{f}:{m.group(3)}")
        f.write_text("\n".join(lines))
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text("\n".join(narrowed))
    print(f"{len(narrowed)} items narrowed (listed in {RECORD})")


def restore(names):
    for entry in RECORD.read_text().split("\n"):
        path, name = entry.rsplit(":", 1)
        if name not in names:
            continue
        f = pathlib.Path(path)
        pat = re.compile(r"^(\s*)pub\(crate\) (" + KINDS + " " + name + r"\b)", re.M)
        text, n = pat.subn(r"\1pub \2", f.read_text(), count=1)
        if n:
            f.write_text(text)
            print("restored", path, name)


# What rustc says of an item a public signature or re-export still needs.
PRIVATE = re.compile(
    r"(?:type|trait) `(?:[\w:]*::)?(\w+)(?:<[^`]*>)?` is (?:more )?private"
    r"|`(\w+)` is only public within the crate"
    r"|`(\w+)` is private"
)


def sweep():
    items()
    for _ in range(8):
        check = subprocess.run(
            ["cargo", "check", "--workspace", "--all-targets", "--message-format", "short"],
            cwd=ROOT, capture_output=True, text=True,
        )
        names = {next(g for g in m.groups() if g) for m in PRIVATE.finditer(check.stderr)}
        if not names:
            return
        restore(names)
    sys.exit("still private items after 8 rounds: see cargo check")


if __name__ == "__main__":
    if sys.argv[1:2] == ["sweep"]:
        sweep()
    elif sys.argv[1:2] == ["items"]:
        items()
    elif sys.argv[1:2] == ["restore"]:
        restore(set(sys.argv[2:]))
    else:
        sys.exit(__doc__)
