#!/usr/bin/env python3
"""ctest `docs_check`: the front page and docs/ stay true.

1. Every relative link in README.md, tests/README.md, jobs/README.md and docs/*.md names a file
   that exists and, with a #fragment, a heading of that file (GitHub's anchors).
2. README.md's sessions are replayed: in every fenced block without a language, a line `$ CMD`
   is a command and the lines up to the next `$ ` are its expected output. `$ cat FILE` of a file
   that does not exist yet writes FILE (the user's input); a ```yaml block whose first line is
   `name: ...` is written to the file that the next `run` / `validate` command names. Commands
   run in a scratch folder (jobs/ paths from the repository root) with
   `build/release/tools/tidemark` replaced by TIDEMARK; stdout and stderr together must equal the
   expected lines, where a line `...` stands for any number of lines.

usage: check_docs.py TIDEMARK   (run from the repository root)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

ROOT = os.getcwd()
PAGES = ["README.md", "tests/README.md", "jobs/README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir("docs") if f.endswith(".md"))


def anchors(path):
    out = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^#{1,6} (.*)", line)
            if m:
                out.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return out


def check_links():
    problems = []
    for page in PAGES:
        with open(page, encoding="utf-8") as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            path, _, fragment = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(full):
                problems.append(f"{page}: link to {target}: no such file")
            elif fragment and (not full.endswith(".md") or fragment not in anchors(full)):
                problems.append(f"{page}: link to {target}: no heading #{fragment} in {full}")
    return problems


def sessions(readme):
    """Yields ("yaml", text) and ("session", [(command, expected lines)]) in README order."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", readme, flags=re.S | re.M)
    for lang, body in blocks:
        if lang == "yaml" and body.startswith("name: "):
            yield "yaml", body
        elif lang == "" and body.startswith("$ "):
            steps = []
            for line in body.rstrip("\n").split("\n"):
                if line.startswith("$ "):
                    steps.append((line[2:], []))
                else:
                    steps[-1][1].append(line)
            yield "session", steps


def matches(expected, actual):
    if "..." not in expected:
        return expected == actual
    cut = expected.index("...")
    head, tail = expected[:cut], expected[cut + 1:]
    return (actual[:len(head)] == head and len(actual) >= len(head) + len(tail)
            and (not tail or actual[-len(tail):] == tail))


def replay_readme(tidemark):
    with open("README.md", encoding="utf-8") as f:
        readme = f.read()
    problems = []
    work = tempfile.mkdtemp(prefix="tidemark-docs-")
    os.symlink(os.path.join(ROOT, "jobs"), os.path.join(work, "jobs"))
    pending_yaml = None
    commands = 0
    try:
        for kind, item in sessions(readme):
            if kind == "yaml":
                pending_yaml = item
                continue
            for command, expected in item:
                argv = shlex.split(command)
                if argv[0] == "cat" and len(argv) == 2 and not os.path.exists(os.path.join(work, argv[1])):
                    with open(os.path.join(work, argv[1]), "w", encoding="utf-8") as f:
                        f.write("\n".join(expected) + "\n")
                    continue
                if argv[0] == "build/release/tools/tidemark":
                    argv[0] = tidemark
                    if pending_yaml is not None and argv[1] in ("run", "validate"):
                        with open(os.path.join(work, argv[-1]), "w", encoding="utf-8") as f:
                            f.write(pending_yaml)
                        pending_yaml = None
                r = subprocess.run(argv, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=60)
                commands += 1
                actual = r.stdout.rstrip("\n").split("\n") if r.stdout else []
                if r.returncode != 0:
                    problems.append(f"README.md: `{command}` exited {r.returncode}:\n{r.stdout}")
                elif not matches(expected, actual):
                    problems.append(f"README.md: `{command}` printed\n" + "\n".join(actual)
                                    + "\ninstead of\n" + "\n".join(expected))
    finally:
        shutil.rmtree(work)
    if commands == 0:
        problems.append("README.md: no command replayed (the session format changed?)")
    return problems, commands


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    problems = check_links()
    replayed, commands = replay_readme(os.path.abspath(sys.argv[1]))
    problems += replayed
    for p in problems:
        print("FAIL", p)
    print(f"{len(PAGES)} pages' links checked, {commands} README commands replayed, "
          f"{len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
