from robust_mrc.models.mc import MultipleChoiceModule
from robust_mrc.models.span import SpanQAModule

MODULES = {"mc": MultipleChoiceModule, "span": SpanQAModule}

__all__ = ["MODULES", "MultipleChoiceModule", "SpanQAModule"]
