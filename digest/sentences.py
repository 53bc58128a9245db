"""Sentences of an abstract, as the offline summarizer reads them.

* :func:`split_sentences` cuts text into sentences without being fooled by
  abbreviations (e.g., et al., Fig., U.S.), decimals, URLs, initials or ellipses.
* :func:`clean_sentence` strips list markers; :func:`rewrite` drops lead-ins ("In this
  paper, "), a trailing citation and what points back at a sentence the reader never saw
  (:func:`standalone`, :func:`refers_back`); :func:`shorten_sentence` cuts at a clause.
* :func:`contributes` and :func:`aims` say whether a sentence states what the paper does.

Most patterns here need a word to match: :func:`may_contain` tests for it first, which is
most of why a sentence costs tens of microseconds, not hundreds (issue 15; each prefilter
gives its pattern's answer: tests/test_offline_speed.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from .normalize import collapse_whitespace

__all__ = ["CLOSERS", "ELLIPSIS", "HAS_WORD", "REFERS_BACK", "aims", "clean_sentence",
           "contributes", "may_contain", "refers_back", "rewrite", "shorten_sentence",
           "split_sentences", "standalone", "wordset"]

ELLIPSIS = "…"


def wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


# ---------------------------------------------------------------- sentences

# "[.!?…]+" spelled "[.!?…][.!?…]*": a pattern that opens on a character class (not a repeat
# of one) is searched for that class first, not tried at every position (-57% a search).
_TERMINATOR = re.compile(r"[.!?…][.!?…]*[\"'”’»)\]]*(?=\s|$)")
_OPENERS = "([{\"'“‘«"
CLOSERS = ")]}\"'”’»"
# Never end a sentence: "e.g. GPT-4", "Fig. 3", "Dr. Smith".
_NEVER_FINAL = wordset(
    "e.g eg i.e ie vs cf viz fig figs eq eqs eqn sec sect secs tab tbl alg thm lem approx "
    "resp dr mr mrs ms prof w.r.t wrt a.k.a aka incl esp ca vol pp ref refs appx"
)
# End a sentence only when a number does not follow: "No. 5", "Prop. 2".
_BEFORE_NUMBER = wordset("no nos prop cor def ch app")
# End a sentence only when a capitalized word follows: "tools, etc. We ...".
_FINAL_IF_CAPITAL = wordset("etc al")
# Initials and dotted acronyms ("J. Smith", "U.S. Army") end a sentence only
# before a word that usually opens one.
_STARTERS = wordset(
    "A An As At By Code Despite Existing Experiments Extensive Finally For Furthermore "
    "Here However In It Its Many Moreover Most Our Overall Recent Results Specifically "
    "Such That The Their Then There These They This Thus To Unlike Using We While With"
)
_INITIAL = re.compile(r"[A-Z]|(?:[A-Za-z]\.)+[A-Za-z]")


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences, whitespace collapsed; never an empty one."""
    text = collapse_whitespace(str(text))  # no work for what ingest collapsed already
    ends = [match.end() for match in _TERMINATOR.finditer(text) if _ends_sentence(text, match)]
    if _GLUED.search(text):
        ends = sorted({*ends, *_glued_ends(text)})
    sentences, start = [], 0
    for end in ends:
        sentences.append(text[start:end].strip())
        start = end
    sentences.append(text[start:].strip())
    return [s for s in sentences if s]


# A stop with no space before the next sentence ("human preference.GRUE is the first …"), as
# abstracts pasted from a PDF have it: after a lower-case word, before a word that opens
# sentences or an acronym ("torch.Tensor" is a name, not two sentences).
_GLUED = re.compile(r"[.!?](?=[A-Z](?:[a-z]|[A-Z]+\b))")
_GLUED_NEXT = re.compile(r"[A-Za-z]+")


def _glued_ends(text: str) -> list[int]:
    """Where a stop glued to the next sentence ends one: after a lower-case word (no
    abbreviation), before a word that opens sentences or an acronym, in no address or
    identifier ("math.AG/0603273", "github.com/a/repo.Name")."""
    ends = []
    for match in _GLUED.finditer(text):
        start = text.rfind(" ", 0, match.start()) + 1
        stop = text.find(" ", match.end())
        word, token = text[start : match.start()], text[start : stop if stop >= 0 else len(text)]
        following = _GLUED_NEXT.match(text, match.end())
        opener = following is not None and (following[0] in _STARTERS
                                            or (following[0].isupper() and len(following[0]) > 1))
        if (opener and len(word) >= 3 and word[-3:].isalpha() and word[-3:].islower()
                and "." not in word
                and not any(mark in token for mark in "/@:")
                and word.lower().lstrip(_OPENERS) not in _NEVER_FINAL | _FINAL_IF_CAPITAL):
            ends.append(match.end())
    return ends


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    end = match.end()  # a space follows, or nothing: the text's spaces are collapsed
    if (stop := text.find(" ", end + 1)) < 0:
        stop = len(text)
    nxt = text[end + 1 : min(stop, end + 100)].lstrip(_OPENERS)  # the next word's first 99
    if not nxt:
        return True
    punct = match.group().rstrip(CLOSERS)
    capital, digit = nxt[0].isupper(), nxt[0].isdigit()
    if "?" in punct or "!" in punct:
        return not nxt[0].islower()
    if punct != ".":  # an ellipsis: "..." or "…"
        return capital or digit
    token_start = text.rfind(" ", 0, match.start()) + 1
    word = text[token_start : match.start()].lstrip(_OPENERS).rstrip(CLOSERS)
    low = word.lower()
    if low in _NEVER_FINAL:
        return False
    if low in _BEFORE_NUMBER:
        return not digit
    if low in _FINAL_IF_CAPITAL:
        return capital and (
            low != "al" or text[max(token_start - 3, 0) : token_start].lower() == "et "
        )
    if (len(word) == 1 or "." in word) and _INITIAL.fullmatch(word):  # none other can match
        return nxt.rstrip(",;:") in _STARTERS
    # A plain word: a lowercase next word means an unknown abbreviation, unless
    # it looks like a name ("iPLAN", "mBERT").
    return capital or digit or not nxt[0].isalpha() or any(c.isupper() or c.isdigit() for c in nxt)


# ---------------------------------------------------------------- cleaning

_MARKUP = re.compile(r"^(?:[#>]+|[-*+•]|\d{1,3}[.)])\s+")
_LEAD_IN = re.compile(
    r"^(?:in this (?:paper|work|study|thesis|article|report|survey|chapter)(?=,| we\b)|"
    r"here(?:in)?|"
    r"to this end|in response|in particular|specifically|concretely|however|moreover|then|next|"
    r"furthermore|additionally|in addition|therefore|thus|hence|consequently|accordingly|"
    r"finally|lastly|firstly|secondly|thirdly|similarly|likewise|to do so|for this purpose|"
    r"in this context|as a result|also|"
    r"(?:to (?:help )?(?:address|tackle|overcome|bridge|fill|close|solve|mitigate|"
    r"alleviate|remedy|resolve|handle|answer)|motivated by|inspired by|building on)"
    r"\b[^,;]{0,60})(?:,\s+|\s+(?=we\b))",
    re.IGNORECASE,
)
# A short framing clause before "we ...": "To uncover such vulnerabilities, we propose".
_LEAD_CLAUSE = re.compile(
    r"^(?!(?:when|if|unless|once|only|whenever|after|before|until|because|since|where)\b)"
    r"[^,;:()]{1,160}, "
    r"(?=(?:in this (?:paper|work)|we|(?:this|our) (?:paper|work|thesis|study))\b)",
    re.IGNORECASE,
)
_TRAILING_CITATION = re.compile(
    r"\s*[(\[](?:[^()\[\]]*?(?:\b(?:19|20)\d\d[a-z]?\b|\bet al\b)[^()\[\]]*|"
    r"\d+(?:\s*[,–-]\s*\d+)*)[)\]](?=[.!?]?$)"
)
_CITATION_ENDS = (")", "]", ").", "].", ")!", "]!", ")?", "]?")
_DANGLING = wordset("a an and as at by for from in into of on or the to via with")


def clean_sentence(sentence: str) -> str:
    """Strip markup-like list markers and '#' from the start of a sentence."""
    while (stripped := _MARKUP.sub("", sentence, count=1)) != sentence:
        sentence = stripped
    return sentence.strip()


HAS_WORD = re.compile(r"\w")  # a sentence with no word is not one
_LEAD_CLAUSE_HINTS = (", we", ", in this ", ", this ", ", our ")


def _lead_clause_dropped(text: str) -> str:
    """``_LEAD_CLAUSE.sub("", text, count=1)``, run only when the words it needs are there."""
    if not may_contain(text, _LEAD_CLAUSE_HINTS):
        return text
    return _LEAD_CLAUSE.sub("", text, count=1)


def rewrite(sentence: str) -> str:
    """Drop lead-ins ("In this paper, ") and a trailing citation; capitalize."""
    text = sentence
    # What the pattern needs at the end ("$" also matches before a final newline).
    if sentence.removesuffix("\n").endswith(_CITATION_ENDS):
        text = _TRAILING_CITATION.sub("", sentence) or sentence
    for _ in range(3):
        rest = _LEAD_IN.sub("", text, count=1)
        if rest == text:
            clause = _lead_clause_dropped(text)
            if clause == text:  # nothing left to drop
                break
            unframed = _LEAD_IN.sub("", clause, count=1)
            if _CONTRIBUTION.match(unframed) or _AIM.match(unframed):
                rest = clause
        if rest == text or not HAS_WORD.search(rest):
            break
        text = rest
    text = standalone(text)
    first = text.split(" ", 1)[0]
    if first.islower() and first[:1].isalpha():
        text = text[0].upper() + text[1:]
    return text


# "We then/hence/therefore propose" and "This framework …" point back at a sentence the reader
# of a gist or summary never saw (issue 14): the adverb goes, the determiner becomes "The".
_BACK_ADVERB = re.compile(
    r"^(We|Our \w+)\s+(?:then|hence|therefore|thus|next|further|finally|subsequently|"
    r"accordingly|consequently|additionally)\s+", re.IGNORECASE)
# What can follow "This" and is no noun it points with: an article, a verb ("This raises the
# question", "These can be", "This is"): then "The" would make no sentence, and it stays.
_NOT_A_NOUN = (r"(?:a|an|the|is|are|was|were|be|been|has|have|had|can|could|will|would|may|"
               r"might|must|shall|should|does|do|did|not|also|allows?|enables?|raises?|"
               r"provides?|makes?|leads?|suggests?|shows?|means?|gives?|yields?|implies|imply|"
               r"requires?|includes?|becomes?|remains?|motivates?|opens?|poses?|results? in|"
               r"helps?|demonstrates?|indicates?|highlights?|reveals?|explains?|serves?|"
               r"works?|holds?|applies|apply|extends?|generali[sz]es?|contributes?)\b")
_BACK_DETERMINER = re.compile(
    r"^(?:This|These|Those|Such)\s+(?!(?:paper|work|thesis|study|article|survey|report|"
    r"chapter)\b)(?!" + _NOT_A_NOUN + r")(?=[\w-]+\s+\w)", re.IGNORECASE)
# "We also present", "Evidence is also presented": "also" answers a sentence not shown.
_BACK_ALSO = re.compile(r"^((?:[\w-]+\s+){1,4}?)also\s+(?!known\b)", re.IGNORECASE)
# "It is shown that X": the finding is X.
_IT_IS_SHOWN = re.compile(r"^It is (?:here )?(?:shown|argued|demonstrated|found|suggested|noted|"
                          r"observed|proved|proven) that\s+(?=\w)")
# "Then ongoing efforts are presented": a bare adverb pointing back, before a lower-case word.
_BACK_OPENER = re.compile(r"^(?:then|finally|thus|hence|therefore|next|lastly)\s+(?=[a-z])",
                          re.IGNORECASE)
_PROBLEM_NOUNS = (r"(?:question|problem|issue|gap|challenge|limitation|shortcoming|drawback|"
                  r"difficult(?:y|ie)|bottleneck|concern|dilemma|trade-?off|need)s?")
# "a framework to address this question", "avoiding these difficulties": the clause names
# a problem stated in a sentence the reader never saw; without it the sentence stands alone.
_BACK_PURPOSE = re.compile(  # after a comma or "to": never the sentence's own verb
    r"(?:,\s+(?:(?:in order )?(?:to|that|which|for)\s+)?|(?:^|\s+)(?:in order )?"
    r"(?:to|that|which|for)\s+)(?:specifically\s+)?"
    r"(?:address|tackl|solv|overcom|mitigat|handl|bridg|fill|clos|answer|alleviat|remed|"
    r"resolv|avoid|circumvent|investigat|stud|explor|examin|adapted to|suited to|"
    r"tailored to)\w*\s+"
    r"(?:this|these|those|such|the above|the aforementioned|both)\s+(?:[\w-]+\s+){0,2}?"
    + _PROBLEM_NOUNS + r"\b", re.IGNORECASE)
# "a solution to these issues", "an analysis of this problem": the solution, the analysis.
_BACK_OBJECT = re.compile(
    r"\b(solutions?|answers?|remed(?:y|ies)|fix(?:es)?|analysis)\s+(?:to|of|for)\s+"
    r"(?:this|these|those|such)\s+(?:[\w-]+\s+)?" + _PROBLEM_NOUNS + r"\b", re.IGNORECASE)
# What still refers back after those rewrites: "It …", "They …", "This is …", "The latter …",
# "Let K be …", or "this problem" anywhere.
_REFERS_BACK_START = re.compile(
    r"(?:it|they|its|their|this|these|those|such|then|hence|therefore|thus|that|let|finally)\b"
    r"(?! (?:paper|work|thesis|study|article|survey|report|chapter)\b)"
    r"|the (?:above|aforementioned|former|latter|same|interpretation|resulting|obtained|"
    r"results?)\b", re.IGNORECASE)
_REFERS_BACK_ANYWHERE = re.compile(
    r"\b(?:this|these|those|such)\s+(?:[\w-]+\s+)?" + _PROBLEM_NOUNS + r"\b"
    r"|\bthe (?:above|aforementioned|former|latter)\b", re.IGNORECASE)
REFERS_BACK = re.compile(f"^(?:{_REFERS_BACK_START.pattern})|{_REFERS_BACK_ANYWHERE.pattern}",
                         re.IGNORECASE)


# Words one of which each problem-noun pattern needs: without any, those patterns are not run.
_PROBLEM_HINTS = ("question", "problem", "issue", "gap", "challenge", "limitation", "shortcoming",
                  "drawback", "difficult", "bottleneck", "concern", "dilemma", "trade", "need")
_POINTER_HINTS = ("above", "aforementioned", "former", "latter")
# What else the purpose and object patterns need: a determiner before the problem noun, and a
# verb or noun of their own. Their substitutions join text before a space or punctuation, so
# they make no new occurrence of a hint made of letters: the hints of the text before the
# purpose substitution hold for the text the object pattern reads.
_DETERMINER_HINTS = ("this", "these", "those", "such", "the above", "the aforementioned",
                     "both")
_PURPOSE_VERBS = ("address", "tackl", "solv", "overcom", "mitigat", "handl", "bridg", "fill",
                  "clos", "answer", "alleviat", "remed", "resolv", "avoid", "circumvent",
                  "investigat", "stud", "explor", "examin", "adapted to", "suited to",
                  "tailored to")
_OBJECT_NOUNS = ("solution", "answer", "remed", "fix", "analysis")


def may_contain(text: str, hints: Sequence[str]) -> bool:
    """False only when a case-insensitive pattern that needs one of ``hints`` (lower-case
    words) cannot match ``text``: a cheap test before an expensive search. Text with other
    than ASCII letters is always searched ("İ" and "ı" match "i" in an IGNORECASE pattern,
    which ``str.lower`` does not say)."""
    return not text.isascii() or has_any(text.lower(), hints)


def has_any(low: str, hints: Sequence[str]) -> bool:
    """Whether lower-case text ``low`` holds one of ``hints``."""
    for hint in hints:  # noqa: SIM110 - a generator for any() cost more than the tests
        if hint in low:
            return True
    return False


def lower_case_twin(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """A case-insensitive ``pattern`` whose letters are written in lower case, compiled to
    search lower-cased ASCII text: there it matches where ``pattern`` matches the text, and
    costs a third less than ``re.IGNORECASE``, which folds the case of every character it
    compares (issue 15; tests/test_offline_speed.py compares the two)."""
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


@lru_cache(maxsize=8192)  # a gist asks again for what the sentence table has just rewritten
def standalone(text: str) -> str:
    text = _BACK_ADVERB.sub(lambda m: m[1] + " ", text, count=1)
    if may_contain(text, ("also",)):
        text = _BACK_ALSO.sub(lambda m: m[1], text, count=1)
    text = _BACK_OPENER.sub("", text, count=1)
    if may_contain(text, _PROBLEM_HINTS) and may_contain(text, _DETERMINER_HINTS):
        if may_contain(text, _PURPOSE_VERBS):
            text = _BACK_PURPOSE.sub("", text)
        if may_contain(text, _OBJECT_NOUNS):
            text = _BACK_OBJECT.sub(lambda m: m[1], text)
    text = _IT_IS_SHOWN.sub("", text, count=1)
    return _BACK_DETERMINER.sub("The ", text, count=1)


@lru_cache(maxsize=8192)  # the table asks of the rewritten text, the gist of the clean one
def refers_back(text: str) -> bool:
    """``REFERS_BACK.search(text)``, its unanchored branches run only when the words they
    need are there."""
    return bool(_REFERS_BACK_START.match(text)) or (
        may_contain(text, _PROBLEM_HINTS + _POINTER_HINTS)
        and bool(_REFERS_BACK_ANYWHERE.search(text)))


def shorten_sentence(text: str, max_chars: int) -> str:
    """Cut ``text`` to ``max_chars`` at a clause or word boundary, ending with '…'."""
    if len(text) <= max_chars:
        return text
    budget = max(max_chars - 1, 0)
    window = text[: budget + 1]
    clause = max(window.rfind(sep) for sep in (", ", "; ", ": ", " — ", " – "))
    if clause >= 0.6 * budget:
        cut = window[:clause]
    elif " " in window:
        cut = window.rsplit(" ", 1)[0]
        words = cut.split(" ")
        while len(words) > 1 and words[-1].lower() in _DANGLING:
            words.pop()
        cut = " ".join(words)
    else:
        cut = text[:budget]
    for opener, closer in ("()", "[]"):
        if cut.count(opener) > cut.count(closer) and cut.rfind(opener) >= budget / 3:
            cut = cut[: cut.rfind(opener)]
    cut = cut.rstrip(" ,;:—–-([{“‘") or text[:budget]
    return cut + ELLIPSIS



# ---------------------------------------------------------------- what a sentence does

_SUBJECT = (
    r"\b(?:we|(?:this|our) (?:paper|work|thesis|article|study|report|survey))\s+"
    r"(?:(?!that |the |our |which )\w+\s+){0,4}?"
)
_CONTRIBUTION = re.compile(
    _SUBJECT + r"(?:propose|introduce|present|develop|release|design|build|contribute|create|"
    r"construct|devise|formulate|offer|unveil|open-source|provide)(?:s|d|ed)?\b"
    r"|\b(?:is|are) (?:\w+ )?(?:proposed|introduced|presented|developed)\b",
    re.IGNORECASE,
)
_AIM = re.compile(
    _SUBJECT + r"(?:study|studie|investigate|explore|examine|tackle|address|analy[sz]e|survey|"
    r"focus|aim|seek|consider|revisit|reframe|frame|cast|formali[sz]e|adopt|utili[sz]e|"
    r"leverage|describe|illustrate|argue|experiment)(?:s|d|ed)?\b",
    re.IGNORECASE,
)
_SUBJECT_HINTS = ("we", "this ", "our ")
# Every branch of each pattern needs one of its verbs: the stems, lower case, that every form
# the pattern takes contains ("propose", "proposed", "proposes" all contain "propos").
_CONTRIBUTION_VERBS = ("propos", "introduc", "present", "develop", "releas", "design", "build",
                       "contribut", "creat", "construct", "devis", "formulat", "offer",
                       "unveil", "open-sourc", "provid")
_AIM_VERBS = ("stud", "investigat", "explor", "examin", "tackl", "address", "analy", "survey",
              "focus", "aim", "seek", "consider", "revisit", "frame", "cast", "formali", "adopt",
              "utili", "leverag", "describ", "illustrat", "argu", "experiment")


_CONTRIBUTION_LOWER = lower_case_twin(_CONTRIBUTION)
_AIM_LOWER = lower_case_twin(_AIM)


def contributes(sentence: str) -> bool:
    """"We propose …", "X is introduced": what the paper contributes."""
    if not sentence.isascii():
        return bool(_CONTRIBUTION.search(sentence))
    low = sentence.lower()
    return has_any(low, _CONTRIBUTION_VERBS) and bool(_CONTRIBUTION_LOWER.search(low))


def aims(sentence: str) -> bool:
    """"We study …", "This paper examines …": what the paper sets out to do."""
    if not sentence.isascii():
        return bool(_AIM.search(sentence))
    low = sentence.lower()
    return (has_any(low, _AIM_VERBS) and has_any(low, _SUBJECT_HINTS)
            and bool(_AIM_LOWER.search(low)))
