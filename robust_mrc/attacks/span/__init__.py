"""Span-QA (SQuAD style) attacks; importing this package registers them."""

from robust_mrc.attacks.span import addany, addsent, cue, noise  # noqa: F401
