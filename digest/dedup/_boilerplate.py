"""Abstracts that say nothing about their paper, so they are no evidence of identity.

Two kinds, decided differently:

- Known notices, by their wording: withdrawn papers, proceedings front matter, errata and
  corrigenda, placeholders ("No abstract available"). A short list of patterns, anchored
  near the start of the abstract, where listings put them.
- Anything else that many unrelated titles share, by its structure: an abstract near-identical
  (content-word Jaccard >= ``NEAR_IDENTICAL``) to those of ``SHARED_BY`` - 1 other records
  whose titles differ is a template, whatever its words (``_near.boilerplate_sides``).
  One real paper is rarely listed under three unrelated titles in a week; a template is.

A boilerplate abstract counts as no abstract: its records still merge on their titles.
"""

from __future__ import annotations

import re

SHARED_BY = 3          # records with unrelated titles sharing an abstract: a template
NEAR_IDENTICAL = 0.8   # content-word Jaccard of "the same text"

_NOTICES = re.compile(r"""
    ^\W*(?:abstract\W*)?(?:
        (?:this|the)\s+(?:paper|article|manuscript|submission|preprint|work|version)\s+
            (?:has\s+been|was|is)\s+(?:withdrawn|retracted|removed)
      | withdrawn\b | retracted\b
      | the\s+authors?\s+(?:has|have)\s+withdrawn
      | this\s+(?:volume|book|proceedings?)\s+(?:contains|collects|includes|comprises|presents)
      | proceedings\s+of\b
      | (?:this\s+is\s+)?(?:an?\s+|the\s+)?(?:erratum|corrigendum|errata|addendum)\b
      | this\s+(?:erratum|corrigendum|note\s+corrects)
      | we\s+correct\s+an?\s+(?:\w+\s+)?(?:error|mistake)\s+in\s+(?:the\s+)?(?:statement|proof|
            published|our\s+(?:earlier|previous))
      | (?:no\s+)?abstract\s+(?:is\s+)?(?:not\s+)?(?:available|missing|forthcoming)
      | no\s+abstract\b | n/?a\W*$ | tbd\W*$
    )""", re.IGNORECASE | re.VERBOSE)


def known_notice(abstract: str) -> bool:
    """Whether the abstract is one of the known notices (withdrawn, front matter, erratum)."""
    return bool(_NOTICES.search(abstract[:300]))
