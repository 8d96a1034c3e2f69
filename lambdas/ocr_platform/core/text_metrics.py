"""How close a text is to a reference, in words: the measure the benchmarks and OCR tests report.

Word F1 counts words as a bag (case folded, split on anything that is not a letter or digit), so it
does not depend on reading order, which differs between a PDF's text layer and OCR on multi-column pages.

>>> round(word_f1("The total is 4.50 EUR", "the total: 4.50 EUR"), 3)
0.909
>>> word_f1("", "")
1.0
"""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"\w+")


def words(text: str) -> Counter[str]:
    """The words of ``text``, lower-cased, with their counts."""
    return Counter(_WORD.findall(text.lower()))


def word_f1(reference: str, hypothesis: str) -> float:
    """The F1 of ``hypothesis``'s words against ``reference``'s (1.0 when both have none)."""
    ref, hyp = words(reference), words(hypothesis)
    if not ref and not hyp:
        return 1.0
    matched = sum((ref & hyp).values())
    return 2 * matched / (sum(ref.values()) + sum(hyp.values()))
