"""Distractor banks made by the project's own models (the files ``distractor_generation bank=`` and
``distractor_extraction bank=`` read)."""
