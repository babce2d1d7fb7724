"""A robust-mrc checkpoint as a standard Hugging Face model directory with a model card.

    robust-mrc export ckpt=RUN/checkpoints/best.ckpt out=DIR [report=EVAL_DIR/report.json]

:func:`export_checkpoint` writes ``DIR``: the weights (safetensors), ``config.json``, the tokenizer
(its ``model_max_length`` the task's), ``robust_mrc.json`` (the preprocessing settings and the
no-answer threshold, read back by ``evaluate.py model.pretrained=DIR`` so that the directory
predicts exactly as the checkpoint) and ``README.md``, a model card (:mod:`robust_mrc.export.card`).
``AutoModelForMultipleChoice`` / ``AutoModelForQuestionAnswering`` / ``AutoModelForSeq2SeqLM``
``.from_pretrained(DIR)`` loads it anywhere.
"""

from robust_mrc.export.model import ExportError, export_checkpoint

__all__ = ["ExportError", "export_checkpoint"]
