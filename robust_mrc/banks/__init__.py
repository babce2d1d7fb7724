"""Distractor banks made by the project's own models (Si et al. 2021 (AdvRACE)): the files that
``distractor_extraction bank=PATH`` and ``distractor_generation bank=PATH`` read (JSONL lines
``{"id": ..., "distractors": [...]}``, see :func:`robust_mrc.attacks.pools.load_bank`).

* :mod:`robust_mrc.banks.span_data` -- multiple choice turned into span QA (answer inserted).
* :mod:`robust_mrc.banks.de` -- the DE bank (``robust-mrc banks de data=... out=...``).
* :mod:`robust_mrc.banks.dg` -- the DG bank (``robust-mrc banks dg data=... out=...``).
* :mod:`robust_mrc.banks.stats` -- bank statistics (any bank: DE or DG).
* :mod:`robust_mrc.banks.auto` -- banks made on first use and cached (:class:`DistractorBanks`,
  the bank maker the commands hand to the attacks): ``distractor_extraction bank=auto`` (the DE
  bank's path, for the attacked examples), ``distractor_generation bank=auto generator=CKPT``.

The commands that write bank files are in :mod:`robust_mrc.cli.banks`.
"""

from robust_mrc.core.errors import UserError


class BankError(UserError, ValueError):
    """A bank that cannot be built as asked (bad arguments, no usable examples, unreadable file)."""
