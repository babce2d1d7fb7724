"""Embedded synthetic reading-comprehension data: no downloads, deterministic, learnable.

Every passage is a short story (about 40-65 words) about a few people and containers, built
from the word lists and sentence templates below::

    On Monday the weather was windy. Maria lives in Lisbon. Tom lives in Oslo. The red box
    holds seven apples. Tom and Maria met at the museum on Friday. Anna lives in Cairo. ...

and the question asks about one fact ("Where does Tom live?", or the cloze "Tom lives in _ .").
Values of the question's type appear elsewhere in the passage too, in two kinds of sentences:

* **rival facts** of the same relation about other entities ("Maria lives in Lisbon"): telling
  them apart means binding entity and value (the span set uses four such facts);
* **decoys** that name a value of the same type in another relation, often about the same people
  ("Tom flew to Paris for a wedding", "The train from Cairo was late"): telling them apart means
  reading the relation. The multiple-choice default is three decoys and no rival: a reading task
  that MiniLM learns on a CPU in about thirty steps (rivals are learned much later, see
  :func:`make_synthetic_mc`).

So every candidate answer occurs in the passage, and an answer can only be found by reading
which value the passage gives for the question's entity and relation. The vocabulary is small
(a few hundred words); half of the multiple-choice questions are clozes whose filled-in blank
repeats the fact sentence.

* :func:`make_synthetic_mc` -- :class:`MCExample`; the wrong options are the rivals' and decoys'
  values in the same passage.
* :func:`make_synthetic_span` -- :class:`SpanExample`; the answer is the value's span.
* :func:`synthetic_splits` -- disjoint train/validation/test lists.

Generation uses only ``random.Random(seed)`` over lists (never ``hash()`` or set order), so the
output is identical across processes and ``PYTHONHASHSEED``. Within one passage no value and no
entity occurs twice as a whole word, and no two entities share a value of the same attribute.
"""

from robust_mrc.data.synthetic.generator import make_synthetic_mc, make_synthetic_span, synthetic_splits
from robust_mrc.data.synthetic.vocabulary import ATTRIBUTES, MAX_DECOYS, MAX_FACTS

__all__ = ["ATTRIBUTES", "MAX_DECOYS", "MAX_FACTS", "make_synthetic_mc", "make_synthetic_span", "synthetic_splits"]
