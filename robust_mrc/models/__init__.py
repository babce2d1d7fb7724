from robust_mrc.models.generation import GenerationModule
from robust_mrc.models.mc import MultipleChoiceModule
from robust_mrc.models.span import SpanQAModule

MODULES = {"mc": MultipleChoiceModule, "span": SpanQAModule, "dg": GenerationModule}

__all__ = ["MODULES", "GenerationModule", "MultipleChoiceModule", "SpanQAModule"]
