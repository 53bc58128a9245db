"""Name themes offline: class-based TF-IDF terms, shown as the papers write them."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace

import numpy as np
from scipy import sparse

from ..models import Paper, Theme
from ..normalize import singular
from ._text import STOP_WORDS, WEAK_WORDS, TermCounts

KEYWORDS_PER_THEME = 5
ADJECTIVE_ENDINGS = ("ous", "ive", "al", "ic", "ible", "able", "ary", "less", "ful")
PHRASE_BONUS = 1.5  # a two-word term names a theme better than a single word
SHARED_SHARE = 0.8  # a term names only the themes where it scores this share of its best
# Words that may separate papers but make a poor name on their own ("Capabilities", "World").
_GENERIC = """
    capability capabilities ability abilities generate generates generating generation making
    real world evaluate evaluation evaluating algorithm algorithms training trained train learn
    learns learned learning design designed designing enable enables enabling challenge
    challenges challenging complex diverse specific potential strong wide widely effectiveness
    efficiency efficient benchmark benchmarks dataset datasets technique techniques optimization
    policy policies reinforcement tasks open
    """
GENERIC_WORDS = frozenset(_GENERIC.split()) | WEAK_WORDS
COMPLETION_SHARE = 0.7  # a bigram is completed by a third word seen after it this often
JOINED_AT_LEAST = 2  # times a describing keyword is written before a noun keyword to join them


def distinctive_terms(
    counts: TermCounts, groups: Sequence[np.ndarray], top: int = 60
) -> list[list[str]]:
    """Each group's terms ranked by class-based TF-IDF (BERTopic's c-TF-IDF) on paper counts.

    A paper counts once for a term in its abstract and once more when the term is in its title;
    phrases are weighed up (``PHRASE_BONUS``), and a term stays only in the groups where it
    scores at least ``SHARED_SHARE`` of its best group's score, so themes do not share names.
    """
    per_group = _group_sums(counts.matrix > 0, groups) + _group_sums(counts.in_title, groups)
    frequency = per_group / np.maximum(per_group.sum(axis=1, keepdims=True), 1)
    weight = np.log1p(per_group.sum(axis=1).mean() / np.maximum(per_group.sum(axis=0), 1))
    phrase = np.where(np.char.find(counts.terms.astype(str), " ") >= 0, PHRASE_BONUS, 1.0)
    scores = frequency * weight * phrase
    exclusive = scores >= SHARED_SHARE * scores.max(axis=0, keepdims=True)
    ranked = []
    for row, support, own in zip(scores, per_group, exclusive, strict=True):
        best = np.argsort(-row, kind="stable")[:top]
        floor = min(2, support.max())
        ranked.append([str(counts.terms[j]) for j in best
                       if row[j] > 0 and own[j] and support[j] >= floor
                       and not set(str(counts.terms[j]).split()) <= GENERIC_WORDS])
    return ranked


def _group_sums(matrix: sparse.spmatrix, groups: Sequence[np.ndarray]) -> np.ndarray:
    """Column sums of ``matrix`` over each group's rows (groups × terms)."""
    matrix = sparse.csr_matrix(matrix, dtype=np.float64)
    rows = np.concatenate(groups)
    group_of = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    membership = sparse.csr_matrix((np.ones(len(rows)), (group_of, rows)),
                                   shape=(len(groups), matrix.shape[0]))
    return np.asarray((membership @ matrix).todense())


def _stems(term: str) -> set[str]:
    """Crude singular forms of a term's words, to spot "agent" vs "agents"."""
    return {singular(word) for word in term.split()}


def _same_root(a: str, b: str) -> bool:
    """"robot" and "robotic", "agent" and "agents": one word starts with the other."""
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and (len(short) >= 4 or short == long)


def _shares_root(a: AbstractSet[str], b: AbstractSet[str]) -> bool:
    return any(_same_root(x, y) for x in a for y in b)


def _covered(words: AbstractSet[str], taken: AbstractSet[str]) -> bool:
    return all(any(_same_root(w, t) for t in taken) for w in words)


def pick_terms(ranked: Sequence[str], count: int) -> list[str]:
    """The first ``count`` terms sharing no word; a bigram replaces the lone unigram it holds."""
    chosen: list[str] = []
    for term in ranked:
        if len(chosen) == count:
            break
        overlapping = [c for c in chosen if _shares_root(_stems(c), _stems(term))]
        if not overlapping:
            chosen.append(term)
        elif len(overlapping) == 1 and " " in term and " " not in overlapping[0]:
            chosen[chosen.index(overlapping[0])] = term
    return chosen


def display_terms(terms: Sequence[str], papers: Sequence[Paper], sample: int = 50) -> list[str]:
    """Terms as the papers write them: hyphens, acronyms, capitals ("LLM agents", "Q-learning")."""
    abstracts = " ".join(p.abstract for p in papers[:sample])
    titles = " ".join(p.title for p in papers[:sample])
    forms = [_surface_form(term, abstracts) or _surface_form(term, titles) or term
             for term in terms]
    return [" ".join(_sentence_case(word, abstracts) for word in form.split()) for form in forms]


def joined_modifiers(keywords: Sequence[str], papers: Sequence[Paper],
                     sample: int = 50) -> list[str]:
    """A lone describing keyword joined to the later one it is written with most: "multi-agent"
    and "collaboration" make "multi-agent collaboration" when the papers write that at least
    ``JOINED_AT_LEAST`` times. Alone, "multi-agent" names nothing and a heading passes it over,
    though it is often what the theme's papers share."""
    text = "\n".join(f"{p.title}\n{p.abstract}" for p in papers[:sample])
    joined = list(keywords)
    for describing in keywords:
        if " " in describing or describing not in joined or not _modifier(describing):
            continue
        together = {noun: _written_together(describing, noun, text)
                    for noun in joined[joined.index(describing) + 1:]
                    if " " not in noun and nameable(noun) and not generic_name(noun)}
        noun = max(together, key=together.__getitem__, default=None)  # the first of a tie
        if noun is not None and together[noun] >= JOINED_AT_LEAST:
            joined[joined.index(describing)] = f"{describing} {noun}"
            joined.remove(noun)
    return joined


def _written_together(first: str, second: str, text: str) -> int:
    """How often ``text`` writes "first second" as a whole phrase: not "long-horizon web" of
    "long-horizon web tasks", but before punctuation, a line's end or a stop word."""
    pattern = rf"\b{re.escape(first)}[ -]{re.escape(second)}\b(?:[ \t]+([A-Za-z]+))?"
    return sum(1 for match in re.finditer(pattern, text, flags=re.IGNORECASE)
               if match.group(1) is None or match.group(1).lower() in STOP_WORDS)


def _sentence_case(word: str, text: str) -> str:
    """``word`` in lower case if the text ever writes it so ("Online" → "online"); acronyms,
    inner capitals and names the text always capitalizes ("RLHF", "DeepSeek-R1") stay."""
    if word.islower() or any(c.isupper() for c in word[1:]):
        return word
    return word.lower() if re.search(rf"\b{re.escape(word.lower())}\b", text) else word


def _surface_form(term: str, text: str) -> str:
    """The commonest spelling of ``term`` in ``text``, completed by the word that nearly always
    follows it ("deep reinforcement" → "deep reinforcement learning") and by the part hyphened
    to it that nearly always comes before, which the terms lost ("ray surveys" → "X-ray
    surveys", "dimensional" → "two-dimensional")."""
    matches = _found(_surface_pattern(term), term, text)
    if not matches:
        return ""
    forms = Counter(" ".join(m.group(2).split()) for m in matches)
    form = min(forms, key=lambda f: (-forms[f], f))
    prefixes = Counter(m.group(1) for m in matches if m.group(1))
    if prefixes:
        prefix, count = min(prefixes.items(), key=lambda item: (-item[1], item[0]))
        if count >= COMPLETION_SHARE * len(matches):
            form = f"{prefix}-{form}"
    followers = Counter(m.group(3).lower() for m in matches if m.group(3))
    if " " in term and followers:
        follower, count = min(followers.items(), key=lambda item: (-item[1], item[0]))
        if count >= COMPLETION_SHARE * len(matches) and follower not in STOP_WORDS:
            return f"{form} {_spelling(follower, text)}"
    return form


def _surface_pattern(term: str) -> re.Pattern[str]:
    """``term`` written any way, the word hyphened before it and the word after it."""
    words = r"[\s-]+".join(re.escape(w) for w in term.split())
    return re.compile(rf"(?:\b([A-Za-z0-9]+)-)?\b({words})\b(?:[\s-]+([A-Za-z][A-Za-z0-9]*))?",
                      flags=re.IGNORECASE)


_PLAIN_TERM = re.compile(r"[a-z0-9]+(?: [a-z0-9]+)*")
_CASELESS_ASCII = "\u212a\u017f\u0131\u0130"
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def _found(pattern: re.Pattern[str], term: str, text: str) -> list[re.Match[str]]:
    """``pattern.finditer(text)``'s matches, tried only where one can start: at the term's
    first word (found with ``str.find`` in the lowered text) or at the start of the word
    hyphened to it before. A regex search tries every place of ~50 abstracts, ten terms a
    theme. A text with one of the four letters that match an ASCII one when case is ignored
    (the Kelvin sign, the long s, the dotless i, the dotted capital I), or whose lowered form
    has another length (the places move), is left to the search."""
    lowered = text.lower()
    if (not _PLAIN_TERM.fullmatch(term) or len(lowered) != len(text)
            or any(letter in text for letter in _CASELESS_ASCII)):
        return list(pattern.finditer(text))
    first = term.split(" ", 1)[0]
    starts = []
    at = lowered.find(first)
    while at >= 0:
        if at >= 2 and text[at - 1] == "-" and text[at - 2] in _ALNUM:
            before = at - 2
            while before > 0 and text[before - 1] in _ALNUM:
                before -= 1
            starts.append(before)
        starts.append(at)
        at = lowered.find(first, at + 1)
    matches, end = [], 0
    for start in sorted(set(starts)):
        if start >= end and (match := pattern.match(text, start)):
            matches.append(match)
            end = match.end()
    return matches


def _spelling(word: str, text: str) -> str:
    forms = Counter(re.findall(rf"\b{re.escape(word)}\b", text, flags=re.IGNORECASE))
    return min(forms, key=lambda f: (-forms[f], f)) if forms else word


def theme_title(keywords: Sequence[str], taken: AbstractSet[str] = frozenset()) -> str:
    """A section heading from the two best noun phrases: "Reward models & RLHF".

    Terms whose words all name an earlier theme already (``taken`` stems) are passed over, and
    so are terms that are no noun phrase (``nameable``). Generic nouns ("objects", "success
    rate", "theory": ``generic_name``) name a theme only when nothing specific can: one
    specific term alone beats it with a generic one.
    """
    nouns = [k for k in keywords if nameable(k)]
    fresh = [k for k in nouns if not _covered(_stems(k.lower()), taken)] or nouns or list(keywords)
    specific = [k for k in fresh if not generic_name(k)]
    if specific:
        fresh = specific
    chosen = fresh[:2] if len(fresh) > 1 and len(fresh[0]) + len(fresh[1]) <= 48 else fresh[:1]
    title = " & ".join(chosen)
    return title[:1].upper() + title[1:]


def _adjective(term: str) -> bool:
    """A lone word that reads like an adjective ("adversarial", "autonomous"): a poor heading."""
    return " " not in term and term.islower() and (
        term.endswith(ADJECTIVE_ENDINGS) or (len(term) > 5 and term.endswith("ar")))


# Gerunds that name a thing ("imitation learning", "red teaming"), unlike "enhancing X".
_NOUN_GERUNDS = """
    learning reasoning planning training teaming modeling modelling tuning understanding
    computing processing grounding prompting scaling decoding sampling ranking steering
    editing driving coding matching clustering forecasting captioning making reading writing
    mining hashing pruning routing shaping imaging teaching tracking rendering filtering
    labeling labelling embedding mapping caching pretraining finetuning play off answering
    tagging parsing testing debugging programming grasping merging unlearning watermarking
    jailbreaking benchmarking inpainting denoising sequencing
    """
NOUN_GERUNDS = frozenset(_NOUN_GERUNDS.split())
# Verbs that open or close title fragments ("Improve student", "X & Advancing" is an -ing one).
_TITLE_VERBS = """
    improve improves enhance enhances advance advances boost boosts make makes scale scales
    unlock unlocks rethink revisit bridge align aligns exploit leverage mitigate reduce
    reduces teach generate evaluate towards toward beyond using use enable enables achieve
    solve understand harness empower accelerate optimize optimise learn learns based driven
    near via across under over without within beyond create creates develop develops
    require requires explore explores compare compares elicit provide provides propose
    proposes present presents introduce introduces show shows study investigate
    calculate calculates calculated derive derives derived obtain obtains obtained discuss
    discusses discussed consider considers considered describe describes described
    demonstrate demonstrates demonstrated determine determines determined
    """
TITLE_VERBS = frozenset(_TITLE_VERBS.split())
# Adjectives no ending gives away, which papers use as modifiers, never as a name.
_MODIFIERS = """
    online offline random open deep large small low high free new novel robust efficient
    general generalist multi single real cooperative finite infinite unseen unknown hidden
    given known mobile spoken long short fine coarse
    """
MODIFIERS = frozenset(_MODIFIERS.split())
# Adjectives that name nothing on their own ("Heavy & region") but do in a phrase ("heavy
# quarks", "compact groups", "forward scattering").
_PLAIN = """
    compact heavy forward backward dense sparse fast slow smooth rigid exact stable weak hard
    soft simple complete
    """
_PLAIN_ADJECTIVES = frozenset(_PLAIN.split())
_MODIFIER_PREFIXES = ("non-", "semi-", "quasi-")
# "-based", "-driven": whatever comes before, the word describes ("LLM-based", "GPU-aware").
_MODIFIER_SUFFIXES = frozenset([
    "based", "driven", "free", "aware", "guided", "augmented", "enhanced", "like", "specific",
    "oriented", "centric"])


# Nouns of any paper's prose: they say what kind of thing, never which topic ("objects",
# "success rate", "theory", "spaces"); a name made only of them (and modifiers) is generic.
_GENERIC_NOUNS = """
    action actions object objects knowledge environment environments space spaces research
    field fields theory theories information solution solutions group groups state states
    source sources network networks energy production distribution distributions probability
    phase phases transition line lines spectrum class classes proof development applications
    application progress community paradigm vision user users goal goals step steps level
    levels skill skills behavior behaviors behaviour behaviours text feedback control
    strategy strategies access decision decisions power dynamics rate rates success
    findings finding baselines inference temperature boundary matter property properties
    effect effects process processes structure structures function functions value values
    case cases order number time type types form forms way ways feature features analysis
    study studies review problem problems performance result results model models system
    systems framework frameworks approach approaches task tasks data future methodologies
    methodology contact sim advantage consistency requires project website page code region
    regions
    """
GENERIC_NOUNS = frozenset(_GENERIC_NOUNS.split())
# Units written after a number ("6-DoF robot", "13 TeV"): without the number, a fragment.
_UNITS = frozenset(["dof", "fps", "hz", "khz", "mhz", "ghz", "gb", "mb", "kb", "ms", "gev", "mev",
                    "kev", "tev"])


def generic_name(term: str) -> bool:
    """A term made only of generic nouns and modifiers: "success rate", "combinatorial action
    space", "objects". Acronyms and names ("RLHF", "DeepSeek-R1") are never generic."""
    return all(
        word.islower() and (word in GENERIC_NOUNS or word in MODIFIERS or _adjective(word)
                            or _modifier(word) or word.rstrip("s") in GENERIC_NOUNS)
        for word in term.split())


def nameable(term: str) -> bool:
    """A noun phrase a section editor could use: no verb or adjective fragment ("enhancing
    performance", "fine-tuned", "vision-language"), no token of two letters ("io", "AI")."""
    words = term.split()
    if not words or len(term.replace(" ", "")) <= 2:
        return False
    if any(len(w) <= 2 and not w.isupper() for w in words):
        return False
    if any(w.lower() in _UNITS for w in words):
        return False
    first, last = words[0].lower(), words[-1]
    if first in TITLE_VERBS or first.endswith("ly") or _verb_ing(first):
        return False
    if any(w.lower().startswith(_CUT_COMPOUNDS) for w in words):
        return False
    return not (_adjective(term) or _modifier(last) or term in _PLAIN_ADJECTIVES)


# A compound cut at its first hyphen ("text-to-image" read as "to-image", "Sim-to-Real" as
# "to-Real", "state-of-the-art" as "of-the-art"): a word that opens with a linking word and a
# hyphen is the rest of another ("in-context", "on-policy", "a-Si" are words of their own).
_CUT_COMPOUNDS = ("to-", "of-", "for-", "and-", "or-", "with-", "the-")


def _verb_ing(word: str) -> bool:
    return word.islower() and word.endswith("ing") and word.split("-")[-1] not in NOUN_GERUNDS


def _modifier(word: str) -> bool:
    """A word that describes rather than names: "fine-tuned", "robotic", "multi-agent",
    "LLM-based"."""
    if "-" in word and word.rsplit("-", 1)[-1].lower() in _MODIFIER_SUFFIXES:
        return True
    if word.lower().startswith(_MODIFIER_PREFIXES):
        return True  # "non-Gaussian", "quasi-static", whatever their case
    if not word.islower():
        return False  # an acronym or a name ("RLHF", "DeepSeek-R1", "Self-Play")
    if word in TITLE_VERBS or word in MODIFIERS or word.endswith("ed") or _verb_ing(word):
        return True
    return "-" in word and word.split("-")[-1] not in NOUN_GERUNDS


def unique_titles(drafts: Sequence[tuple[list[str], Theme]]) -> list[Theme]:
    """Titles for themes in reading order: fresh words first, a number when titles collide."""
    taken: set[str] = set()
    seen: set[str] = set()
    themes = []
    for keywords, theme in drafts:
        title = theme_title(keywords, taken) if keywords else theme.title
        if title.lower() in seen:
            title = f"{title} ({len(seen) + 1})"
        seen.add(title.lower())
        taken |= _stems(title.lower().replace(" & ", " "))
        themes.append(replace(theme, title=title, label=title))
    return themes
