"""Fails the image build unless the environment is exactly the pinned one.

usage: verify_env.py LM_EVAL_VERSION LM_EVAL_COMMIT LOCK_FILE...

Every installed distribution must be listed in the lock files at the
version installed, every listed one must be installed, and lm_eval must be
the pinned release, imported from a clean git checkout at the pinned commit
(the checkout is what the container runner's provenance records: capsule
job reads its commit and dirty flag).
"""

import importlib.metadata
import os
import re
import subprocess
import sys

from packaging.version import Version


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(paths):
    pins = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                name, sep, version = line.partition("==")
                if not sep:
                    sys.exit(f"{path}:{n}: {line!r} is not name==version")
                pins[canonical(name)] = version.strip()
    return pins


def git(checkout, *args):
    out = subprocess.run(["git", "-C", checkout, *args], check=True, capture_output=True, text=True)
    return out.stdout.strip()


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    version, commit, lock_files = argv[1], argv[2], argv[3:]
    pins = read_pins(lock_files)
    installed = {canonical(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}
    problems = []

    lm_eval = installed.pop("lm-eval", None)
    if lm_eval is None or Version(lm_eval) != Version(version):
        problems.append(f"lm_eval {lm_eval} is installed, {version} is pinned")
    for name in sorted(set(pins) | set(installed)):
        want, have = pins.get(name), installed.get(name)
        if want is None:
            problems.append(f"{name} {have} is installed but not pinned")
        elif have is None:
            problems.append(f"{name}=={want} is pinned but not installed")
        elif Version(have) != Version(want):
            problems.append(f"{name} {have} is installed, {want} is pinned")

    import lm_eval as module

    checkout = os.path.dirname(os.path.dirname(os.path.abspath(module.__file__)))
    head = git(checkout, "rev-parse", "HEAD")
    if head != commit:
        problems.append(f"lm_eval is imported from {checkout} at {head}, {commit} is pinned")
    if git(checkout, "status", "--porcelain"):
        problems.append(f"the lm-eval checkout {checkout} has changes")

    for p in problems:
        print("verify_env:", p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"verify_env: {len(installed) + 1} distributions as pinned; lm_eval {version} at {commit}")


if __name__ == "__main__":
    main(sys.argv)
