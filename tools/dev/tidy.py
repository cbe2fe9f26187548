#!/usr/bin/python3
"""clang-tidy over the project's translation units, with a result cache (CI: .ci/run, --production).

Usage: tools/dev/tidy.py [-p BUILD_DIR] [-j N] [--cache DIR] [--production] [FILE...]

Runs clang-tidy (the checks of .clang-tidy) on every project .cc file of BUILD_DIR's
compile_commands.json (default build/release), or on the FILEs given, N at a time (default 2).
--production: only the engine's units (runtime/, operators/, sources/, config/): what CI checks.
tools/ (the CLI, the daemon, the bench) and tests/ still have warnings to mend.
A translation unit that passed is remembered under a key made of everything that decides the
result: clang-tidy's version, .clang-tidy, the compile flags and the preprocessed text of the
unit (every header it includes, with the checkout's path taken out so clones share the cache).
A later run skips a unit whose key passed before, so only changed units (and units that include a
changed header) are analysed again. Failures are never cached. Exit status 1 when any unit has a
warning (.clang-tidy makes every warning an error), 2 on a usage error.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The engine's folders (--production); tools/ joins once its warnings are mended.
PRODUCTION = ("runtime", "operators", "sources", "config")


def preprocess_key(entry, tidy_version, config):
    """The cache key of one compile_commands entry, or None when it cannot be preprocessed."""
    args = entry.get("arguments") or shlex.split(entry["command"])
    # Drop the output and dependency-file flags; keep every flag that changes what is compiled.
    pp = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-o"):
            continue
        pp.append(a)
    # ccache may be the first word (CMAKE_CXX_COMPILER_LAUNCHER); preprocess with the compiler.
    if os.path.basename(pp[0]) == "ccache":
        pp = pp[1:]
    proc = subprocess.run(pp + ["-E", "-P"], cwd=entry["directory"], capture_output=True)
    if proc.returncode != 0:
        return None
    h = hashlib.sha256()
    h.update(tidy_version)
    h.update(config)
    flags = " ".join(a for a in pp if a != entry["file"]).replace(ROOT, "@ROOT@")
    h.update(flags.encode())
    h.update(os.path.relpath(entry["file"], ROOT).encode())
    h.update(proc.stdout.replace(ROOT.encode(), b"@ROOT@"))
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-p", dest="build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("-j", dest="jobs", type=int, default=2)
    ap.add_argument("--cache", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "tidemark", "clang-tidy"))
    ap.add_argument("--clang-tidy", default="clang-tidy")
    ap.add_argument("--production", action="store_true")
    ap.add_argument("files", nargs="*")
    opts = ap.parse_args()

    db_path = os.path.join(opts.build, "compile_commands.json")
    if not os.path.exists(db_path):
        print(f"tidy: {db_path} not found: configure the build first (cmake --preset release)",
              file=sys.stderr)
        return 2
    with open(db_path) as f:
        db = json.load(f)
    wanted = {os.path.abspath(x) for x in opts.files}
    entries = []
    for e in db:
        path = os.path.abspath(os.path.join(e["directory"], e["file"]))
        rel = os.path.relpath(path, ROOT)
        if rel.startswith("..") or rel.startswith("build" + os.sep) or not rel.endswith(".cc"):
            continue
        if wanted and path not in wanted:
            continue
        if opts.production and rel.split(os.sep)[0] not in PRODUCTION:
            continue
        e = dict(e, file=path)
        entries.append(e)
    if wanted and len(entries) != len(wanted):
        found = {e["file"] for e in entries}
        for w in sorted(wanted - found):
            print(f"tidy: {os.path.relpath(w, ROOT)}: not in {db_path}", file=sys.stderr)
        return 2

    tidy_version = subprocess.run([opts.clang_tidy, "--version"], capture_output=True,
                                  check=True).stdout
    with open(os.path.join(ROOT, ".clang-tidy"), "rb") as f:
        config = f.read()
    os.makedirs(opts.cache, exist_ok=True)

    def run(entry):
        rel = os.path.relpath(entry["file"], ROOT)
        key = preprocess_key(entry, tidy_version, config)
        marker = os.path.join(opts.cache, key) if key else None
        if marker and os.path.exists(marker):
            return rel, True, True, ""
        proc = subprocess.run([opts.clang_tidy, "-p", opts.build, "--quiet", entry["file"]],
                              cwd=ROOT, capture_output=True, text=True)
        ok = proc.returncode == 0
        if ok and marker:
            with open(marker, "w") as f:
                f.write(rel + "\n")
        # Keep the diagnostics, not clang-tidy's "N warnings generated" chatter.
        out = "\n".join(l for l in (proc.stdout + proc.stderr).splitlines()
                        if "warnings generated" not in l and "warnings treated as errors" not in l
                        and not l.startswith("Suppressed ") and "-header-filter" not in l)
        return rel, ok, False, out

    failed = []
    cached = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        for rel, ok, hit, out in pool.map(run, sorted(entries, key=lambda e: e["file"])):
            cached += hit
            if not ok:
                failed.append(rel)
                print(out.strip(), flush=True)
    print(f"tidy: {len(entries)} translation units, {cached} unchanged since a passing run, "
          f"{len(failed)} with warnings")
    for rel in failed:
        print(f"tidy: warnings in {rel}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
