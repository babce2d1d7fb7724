"""Homoglyphs: one look-alike code point for ASCII letters (and digits), for character noise.

Sources, first found wins (:func:`homoglyph_source` names the one in use):

1. **Unicode's ``intentional.txt``** (UTS #39 security data, the list Wu et al. 2021 cite):
   ``$ROBUST_MRC_INTENTIONAL`` when set (e.g. a newer copy from
   https://www.unicode.org/Public/security/latest/intentional.txt), else the copy of version
   17.0.0 shipped in ``resources/data/`` (no package reachable here ships it; see
   ``data/README.md`` for where it comes from, how it was checked, and its licence). Each ASCII
   letter or digit on the left of a line maps to its single-code-point look-alike (the first
   line when several). It covers 29 characters: ``a c d e h i j o p s x y`` and
   ``A B C E H I J K M N O P S T X Y Z``; no digits, and lower-case letters like ``b``, ``g``,
   ``n``, ``r``, ``t`` have no intentional confusable, so they are never chosen.
2. **``confusable-homoglyphs``** (PyPI; its data is Unicode's broader ``confusables.txt``): one
   look-alike per ASCII letter and digit, Cyrillic and Greek first (the table before the
   intentional list; about 60 characters, including pairs that are only similar, e.g. ``r`` ->
   Cyrillic ``г``).
3. :data:`FALLBACK_HOMOGLYPHS`, a fixed table of the same kind.

Where both have a look-alike they differ for 14 of the 29: intentional.txt takes Greek letters for
``o``, ``j`` and 12 capitals (``A`` -> GREEK CAPITAL LETTER ALPHA) where the confusables table
took Cyrillic ones; the other 15 agree.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from pathlib import Path

log = logging.getLogger(__name__)

INTENTIONAL_FILE = Path(__file__).with_name("data") / "intentional.txt"

FALLBACK_HOMOGLYPHS = {
    # Cyrillic, Greek and other single code points that look like ASCII letters and digits
    "a": "\u0430",
    "c": "\u0441",
    "d": "\u0501",
    "e": "\u0435",
    "h": "\u04bb",
    "i": "\u0456",
    "j": "\u0458",
    "l": "\u04cf",
    "o": "\u043e",
    "p": "\u0440",
    "q": "\u051b",
    "s": "\u0455",
    "w": "\u051d",
    "x": "\u0445",
    "y": "\u0443",
    "g": "\u0261",
    "n": "\u0578",
    "u": "\u057d",
    "v": "\u03bd",
    "k": "\u03ba",
    "r": "\u0433",
    "m": "\u217f",
    "t": "\u1d1b",
    "f": "\u0584",
    "b": "\u042c",
    "z": "\u1d22",
    "A": "\u0410",
    "B": "\u0412",
    "C": "\u0421",
    "E": "\u0415",
    "H": "\u041d",
    "I": "\u0406",
    "J": "\u0408",
    "K": "\u041a",
    "M": "\u041c",
    "N": "\u039d",
    "O": "\u041e",
    "P": "\u0420",
    "S": "\u0405",
    "T": "\u0422",
    "X": "\u0425",
    "Y": "\u04ae",
    "Z": "\u0396",
    "D": "\u13a0",
    "G": "\u050c",
    "L": "\u13de",
    "R": "\u13a1",
    "U": "\u054d",
    "V": "\u2164",
    "W": "\u051c",
    "F": "\u03dc",
    "Q": "\u051a",
    "0": "\u039f",
    "1": "\u0406",
    "3": "\u0417",
    "5": "\u01bc",
    "6": "\u0431",
    "8": "\u0222",
}

_LINE_RE = re.compile(r"^\s*([0-9A-Fa-f]{4,6})\s*;\s*([0-9A-Fa-f]{4,6}(?:\s+[0-9A-Fa-f]{4,6})*)\s*(?:#.*)?$")
_SCRIPT_RANK = {"CYRILLIC": 0, "GREEK": 1, "ARMENIAN": 2, "CHEROKEE": 3, "LATIN": 4, "COPTIC": 5}
_EXCLUDED_NAMES = (
    "MATHEMATICAL",
    "FULLWIDTH",
    "COMBINING",
    "MODIFIER",
    "SUBSCRIPT",
    "SUPERSCRIPT",
    "ROMAN NUMERAL",
    "CIRCLED",
    "SYMBOL",
    "DOUBLE-STRUCK",
    "SCRIPT",
)


def intentional_file() -> Path | None:
    """``$ROBUST_MRC_INTENTIONAL`` or the shipped copy; None when neither is a file."""
    env = os.environ.get("ROBUST_MRC_INTENTIONAL")
    path = Path(env) if env else INTENTIONAL_FILE
    return path if path.is_file() else None


def parse_intentional(text: str) -> dict[str, str]:
    """ASCII letter/digit -> its first single-code-point look-alike in ``intentional.txt`` text."""
    table: dict[str, str] = {}
    for line in text.splitlines():
        m = _LINE_RE.match(line)
        if not m:
            continue
        src = chr(int(m.group(1), 16))
        targets = m.group(2).split()
        if len(targets) != 1 or not (src.isascii() and src.isalnum()) or src in table:
            continue
        tgt = chr(int(targets[0], 16))
        if ord(tgt) > 127:
            table[src] = tgt
    return table


def _confusables_table() -> dict[str, str] | None:
    """The table from the ``confusable-homoglyphs`` package, or None when it is not installed."""
    try:
        from confusable_homoglyphs import confusables
    except ImportError:
        return None
    import string
    import unicodedata

    table = {}
    for ch in string.ascii_letters + string.digits:
        found = confusables.is_confusable(ch, preferred_aliases=[], greedy=True) or []
        cands = []
        for entry in found:
            for h in entry.get("homoglyphs", []):
                c = h["c"]
                if len(c) != 1 or ord(c) < 128 or ord(c) > 0xFFFF:
                    continue
                name = unicodedata.name(c, "")
                if not name or any(w in name for w in _EXCLUDED_NAMES):
                    continue
                rank = _SCRIPT_RANK.get(name.split()[0], 9)
                # a look-alike of the same case when the name says so
                case_ok = ("SMALL" in name) == ch.islower() or ch.isdigit()
                cands.append((0 if case_ok else 1, rank, ord(c), c))
        if cands:
            table[ch] = min(cands)[3]
        elif ch in FALLBACK_HOMOGLYPHS:
            table[ch] = FALLBACK_HOMOGLYPHS[ch]
    return table


@functools.lru_cache(maxsize=1)
def _load() -> tuple[str, dict[str, str]]:
    path = intentional_file()
    if path is not None:
        table = parse_intentional(path.read_text(encoding="utf-8-sig"))
        if table:
            version = re.search(r"^#\s*Version:\s*(\S+)", path.read_text(encoding="utf-8-sig"), re.M)
            return f"intentional.txt {version.group(1) if version else '?'}", table
        log.warning("%s holds no ASCII homoglyph: using the confusables table", path)
    table = _confusables_table()
    if table is not None:
        return "confusable-homoglyphs", table
    log.info("confusable-homoglyphs is not installed: using the built-in homoglyph table")
    return "built-in", dict(FALLBACK_HOMOGLYPHS)


def homoglyphs() -> dict[str, str]:
    """One look-alike code point for each ASCII letter and digit that has one (see the module)."""
    return dict(_load()[1])


def homoglyph_source() -> str:
    """Which source :func:`homoglyphs` reads: "intentional.txt <version>", "confusable-homoglyphs"
    or "built-in"."""
    return _load()[0]
