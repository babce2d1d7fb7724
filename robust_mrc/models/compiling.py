"""``compile=true | regional``: ``torch.compile`` of the backbone, whole or layer by layer.

``regional`` compiles each layer of the encoder's stack (the largest ``ModuleList`` of one kind of
module) on its own: the layers share one compiled graph per input shape, so compile time is that of
one layer, not of the model, at about the same speed. Both compile in place (``Module.compile``):
the state dict keeps its keys, checkpoints load into an eager model.
"""

from __future__ import annotations

import logging

import torch

log = logging.getLogger(__name__)

COMPILE_MODES = ("False", "True", "regional")  # compared as text (YAML gives booleans)


def repeated_layers(model: torch.nn.Module) -> torch.nn.ModuleList | None:
    """The model's stack of repeated layers: the ``ModuleList`` of two or more modules of one class
    holding the most parameters (BERT's ``encoder.layer``, GPT-2's ``h``, T5's ``block``)."""
    best, best_size = None, 0
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) >= 2 and len({type(m) for m in module}) == 1:
            size = sum(p.numel() for p in module.parameters())
            if size > best_size:
                best, best_size = module, size
    return best


def compile_backbone(backbone: torch.nn.Module, mode) -> list[str]:
    """Compile ``backbone`` in place by ``mode`` (``compile=``: true | regional | false); returns the
    names of the modules compiled. ``regional`` on a model without a layer stack compiles it whole."""
    mode = str(mode)
    if mode == "False":
        return []
    if mode == "regional":
        layers = repeated_layers(backbone)
        if layers is not None:
            for layer in layers:
                layer.compile()
            names = {id(m): n for n, m in backbone.named_modules()}
            log.info("compile=regional: %d layers of %s compiled one by one", len(layers), names.get(id(layers), "the backbone"))
            return [names[id(layer)] for layer in layers]
        log.warning("compile=regional: no stack of repeated layers found in %s: compiling it whole", type(backbone).__name__)
    backbone.compile()
    return [""]
