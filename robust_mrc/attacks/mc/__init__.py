"""Multiple-choice (RACE style) attacks; importing this package registers them."""

from robust_mrc.attacks.mc import addsent, charswap, cue, diagnosis, distractors, options, word_replace  # noqa: F401
