"""issue 15: the offline summarizer does each piece of work once, and its shortcuts change nothing.

No timings here (they live in benchmarks/bench_scale.py): these tests check that the work is
shared, that the windowed selection picks exactly what a scan of every candidate picks, and that
the ranking, which works out a sentence's relevance only when it can still matter, ranks as a
sort of every sentence does.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from digest import offline, sentences
from digest.models import Paper
from digest.themes._text import count_terms, tokenize

WORDS = ["graph", "agents", "reinforcement", "learning", "policy", "reward", "diffusion", "image",
         "model", "quantum", "spin", "lattice", "language", "tokens", "retrieval", "memory",
         "planning", "robot"]


def made_up_papers(count: int, seed: int) -> list[Paper]:
    rng = random.Random(seed)

    def sentence() -> str:
        opener = rng.choice(["We propose", "This paper studies", "Recent work uses", "It shows",
                             "However, the", "Results show that"])
        return f"{opener} {' '.join(rng.choices(WORDS, k=rng.randint(3, 16)))}."
    return [Paper(id=f"p{i}", title=f"Name{i}: {' '.join(rng.choices(WORDS, k=4))}",
                  abstract=" ".join(sentence() for _ in range(rng.randint(1, 7))))
            for i in range(count)]


def full_scan_select(pool, relevance, max_sentences, max_chars):
    """The selection before issue 15: every open candidate scored at every pick."""
    chosen, redundancy, open_, length = [], [0.0] * len(pool), set(range(len(pool))), -1
    while open_ and len(chosen) < max_sentences:
        best = max(open_, key=lambda i: (0.75 * relevance[i] - 0.25 * redundancy[i], -i))
        open_.discard(best)
        pick = pool[best]
        if length + 1 + len(pick.text) > max_chars or redundancy[best] > 0.5:
            continue
        chosen.append(pick)
        length += 1 + len(pick.text)
        open_ = {i for i in open_ if pool[i].paper != pick.paper
                 and not (pool[i].role == pick.role == offline.BACKGROUND)}
        for i in open_:
            redundancy[i] = max(redundancy[i], offline._cosine(pool[i].vector, pick.vector))
    return chosen


# The theme summary's TF-IDF as it was computed before issue 15's round 4: a dict per
# sentence and per paper, summed in Python. offline._TfIdf must give the very same floats.
def _vectors_before(rows):
    df = Counter(t for _, row in rows for t, _ in row.counts)
    idf = {t: math.log((1 + len(rows)) / (1 + n)) + 1.0 for t, n in df.items()}
    return [_normalized_before({t: (1 + math.log(c)) * idf[t] for t, c in row.counts})
            for _, row in rows]


def _normalized_before(vector):
    norm = math.sqrt(sum(w * w for w in vector.values()))
    return {t: w / norm for t, w in vector.items()} if norm else {}


def _centroid_before(rows, vectors, n_papers):
    papers = [Counter() for _ in range(n_papers)]
    for (paper, _), vector in zip(rows, vectors, strict=True):
        papers[paper].update(vector)
    total = Counter()
    for vector in papers:
        total.update(_normalized_before(vector))
    return _normalized_before(total)


def _relevance_before(rows, vectors, centroid, indices, keywords):
    """The relevance of every sentence at ``indices``, each worked out in full."""
    scores = []
    for i in indices:
        row, vector = rows[i][1], vectors[i]
        score = offline._cosine(vector, centroid)
        if keywords:
            score += 0.15 * sum(kw <= vector.keys() for kw in keywords) / len(keywords)
        score += {offline.BACKGROUND: 0.05, offline.CONTRIBUTION: 0.05,
                  offline.DETAIL: -0.1}[row.role]
        if row.results:
            score -= 0.1
        if row.anaphora == 2:
            score -= 0.1
        elif row.anaphora == 1:
            score -= 0.05
        scores.append(score)
    return scores


KEYWORD_SETS = st.lists(st.lists(st.sampled_from(WORDS + ["absent"]), min_size=1, max_size=3)
                        .map(set), max_size=3)


def _rows(papers):
    return [(p, row) for p, paper in enumerate(papers)
            for row in offline._sentence_table(paper.abstract)]


def _candidate(rows, tfidf, index):
    paper, row = rows[index]
    return offline._Candidate(paper, row, tfidf.vector(index), row.role)


def _with_words(row):
    return bool(row.counts)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(0, 10_000), st.integers(1, 5),
       st.sampled_from([60, 200, 700]))
def test_windowed_selection_picks_what_a_full_scan_picks(count, seed, max_sentences, max_chars):
    rows = _rows(made_up_papers(count, seed))
    tfidf = offline._TfIdf(rows, count)
    closeness = tfidf.closeness([{"graph"}])
    indices = [i for i, (_, row) in enumerate(rows) if row.counts]
    pool = [_candidate(rows, tfidf, i) for i in indices]
    relevance = [offline._relevance(closeness[i], rows[i][1]) for i in indices]
    expected = full_scan_select(pool, relevance, max_sentences, max_chars)
    ranking = offline._Ranking(rows, closeness, _with_words)
    assert offline._select(offline._Pool(rows, tfidf), ranking, max_sentences,
                           max_chars) == expected


def theme_summary_before(papers, keywords, max_sentences, max_chars):
    """``offline.theme_summary`` as it was before its ranking was lazy: every sentence's
    traits and relevance worked out, every candidate scanned at every pick."""
    rows = _rows(papers)
    fit = [i for i, (_, row) in enumerate(rows)
           if row.counts and offline._eligible(row.text, 10**9) and len(row.text) <= max_chars]
    indices = fit or [i for i, (_, row) in enumerate(rows) if row.counts]
    indices = [i for i in indices if rows[i][1].anaphora < 2] or indices
    if not indices or max_sentences <= 0 or max_chars <= 0:
        return offline.CitedText(())
    tfidf = offline._TfIdf(rows, len(papers))
    vectors = _vectors_before(rows)
    centroid = _centroid_before(rows, vectors, len(papers))
    kw_sets = [set(offline._tokens(k)) for k in keywords if offline._tokens(k)]
    relevance = _relevance_before(rows, vectors, centroid, indices, kw_sets)
    pool = [_candidate(rows, tfidf, i) for i in indices]
    chosen = full_scan_select(pool, relevance, max_sentences, max_chars)
    if not chosen:
        best = max(range(len(pool)), key=lambda i: (relevance[i], -i))
        return offline._cited([(offline.shorten_sentence(pool[best].text, max_chars),
                                pool[best].paper)], papers)
    chosen.sort(key=lambda c: (c.role, c.paper, c.index))
    texts = offline._attribute([c.text for c in chosen])
    while len(texts) > 1 and len(" ".join(texts)) > max_chars:
        texts.pop()
    return offline._cited([(text, c.paper) for text, c in zip(texts, chosen, strict=False)],
                          papers)


# Sentences that a summary may not show or that point back, so that themes reach every tier
# of candidates: none fits, none fits that does not point back, none has words.
AWKWARD = ["It uses {w} {w} {w} {w} {w} {w}.", "However, {w} {w} {w} {w} {w} {w} {w}.",
           "{w} {w} {w}", "Code is available at https://example.org/{w} for {w} {w} {w}.",
           "We report 12 and 34 and 56 on {w} {w} {w} {w}.", "— 12 —",
           "Such {w} {w} {w} {w} {w} {w} matter.", "Recent work has shown that {w} {w} {w} {w}."]


def awkward_papers(count: int, seed: int, awkward_share: float) -> list[Paper]:
    rng = random.Random(seed)
    papers = made_up_papers(count, seed)

    def sentence() -> str:
        return re.sub("{w}", lambda _: rng.choice(WORDS), rng.choice(AWKWARD))
    return [Paper(id=p.id, title=p.title, abstract=" ".join(sentence() for _ in range(3)))
            if rng.random() < awkward_share else p for p in papers]


@settings(max_examples=120, deadline=None)
@given(st.integers(1, 150), st.integers(0, 10_000), st.sampled_from([0.0, 0.5, 0.9, 1.0]),
       KEYWORD_SETS, st.integers(0, 4), st.sampled_from([0, 40, 90, 200, 700]))
@example(1, 0, 1.0, [], 3, 700)
def test_the_theme_summary_is_the_one_every_relevance_worked_out_gives(
        count, seed, awkward, keywords, max_sentences, max_chars):
    papers = awkward_papers(count, seed, awkward)
    keywords = [" ".join(sorted(words)) for words in keywords]
    summary = offline.theme_summary(papers, keywords=keywords, max_sentences=max_sentences,
                                    max_chars=max_chars)
    assert summary == theme_summary_before(papers, keywords, max_sentences, max_chars)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 200), st.integers(0, 10_000), st.sampled_from([0.0, 0.5, 1.0]),
       st.sampled_from([60, 200, 700]))
def test_the_ranking_ranks_as_a_sort_of_every_sentence(count, seed, awkward, max_chars):
    rows = _rows(awkward_papers(count, seed, awkward))
    closeness = offline._TfIdf(rows, count).closeness([{"graph"}])
    for admits in (lambda row: row.fits(max_chars), _with_words):
        admitted = [i for i, (_, row) in enumerate(rows) if admits(row)]
        relevance = {i: offline._relevance(closeness[i], rows[i][1]) for i in admitted}
        expected = sorted(admitted, key=lambda i: (-relevance[i], i))
        ranking = offline._Ranking(rows, closeness, admits)
        assert ranking.first(len(rows) + 1) == expected
        assert ranking[len(expected)] is None
        assert {i: ranking.relevance[i] for i in expected} == relevance


def test_a_big_theme_works_out_the_relevance_of_few_of_its_sentences(seeds):
    from digest.ingest import load_sources

    papers = [Paper(id=str(i), title=r.title, abstract=r.abstract)
              for i, r in enumerate(load_sources([str(seeds)]).records)]
    rows = _rows(papers)
    tfidf = offline._TfIdf(rows, len(papers))
    ranking = offline._candidates(rows, tfidf.closeness([{"graph"}]), 700)
    chosen = offline._select(offline._Pool(rows, tfidf), ranking, 3, 700)
    assert len(chosen) == 3
    assert 0 < len(ranking.relevance) < len(rows) / 4



@settings(max_examples=80, deadline=None)
@given(st.integers(1, 300), st.integers(0, 10_000), KEYWORD_SETS)
def test_the_theme_tfidf_gives_the_floats_of_the_dict_code(count, seed, keywords):
    papers = made_up_papers(count, seed)
    papers[0] = Paper(id="empty", title="Empty: none", abstract="")  # a paper with no terms
    rows = _rows(papers)
    tfidf = offline._TfIdf(rows, count)
    vectors = _vectors_before(rows)
    assert [tfidf.vector(i) for i in range(len(rows))] == vectors
    centroid = _centroid_before(rows, vectors, count)
    ids = [tfidf.vocabulary[t] for t in centroid]
    assert tfidf.centroid[ids].tolist() == list(centroid.values())
    indices = [i for i, (_, row) in enumerate(rows) if row.counts][::2]
    closeness = tfidf.closeness(keywords)
    assert [offline._relevance(closeness[i], rows[i][1]) for i in indices] == _relevance_before(
        rows, vectors, centroid, indices, keywords)


def test_the_theme_tfidf_gives_the_floats_of_the_dict_code_on_real_abstracts(seeds):
    from digest.ingest import load_sources

    papers = [Paper(id=str(i), title=r.title, abstract=r.abstract)
              for i, r in enumerate(load_sources([str(seeds)]).records)]
    rows = _rows(papers)
    tfidf = offline._TfIdf(rows, len(papers))
    vectors = _vectors_before(rows)
    centroid = _centroid_before(rows, vectors, len(papers))
    indices = [i for i, (_, row) in enumerate(rows) if row.counts]
    keywords = [{"language", "model"}, {"agent"}]
    closeness = tfidf.closeness(keywords)
    assert [offline._relevance(closeness[i], rows[i][1]) for i in indices] == _relevance_before(
        rows, vectors, centroid, indices, keywords)


def test_gists_and_the_theme_summary_share_one_split_of_each_abstract():
    papers = made_up_papers(50, seed=7)
    offline._sentence_table.cache_clear()
    gists = offline.paper_gists(papers)
    offline.theme_summary(papers, keywords=["graph"])
    info = offline._sentence_table.cache_info()
    assert set(gists) == {p.id for p in papers}
    assert info.misses == len({p.abstract for p in papers})
    assert info.hits >= len(papers)


def test_term_counts_see_title_terms_twice_and_mark_them_as_in_the_title():
    papers = made_up_papers(30, seed=3)
    counts = count_terms(papers)
    assert counts is not None
    column = {term: j for j, term in enumerate(counts.terms)}
    first = papers[0]
    for term in set(tokenize(first.title)) & column.keys():
        assert counts.in_title[0, column[term]] == 1
        assert counts.matrix[0, column[term]] >= 2


NAME_PIECES = st.sampled_from(["Net", "net", "nets", "netes", "-", " ", "_", "é", "2", "x", "Σ"])


@settings(max_examples=400, deadline=None)
@given(st.lists(NAME_PIECES, min_size=1, max_size=4).map("".join),
       st.lists(st.one_of(NAME_PIECES, st.text(max_size=2)), max_size=12).map("".join))
def test_finding_the_method_name_without_a_pattern_per_paper_matches_the_regex(name, sentence):
    # issue 15: _find_name compiled a regex per sentence (a new one per paper even when cached)
    squashed = offline._squash(name)
    pattern = rf"(?<!\w){re.escape(squashed)}(?:e?s)?(?!\w)"
    expected = re.search(pattern, offline._squash(sentence))
    assert offline._find_name(name, sentence) == (expected.start() if expected else None)


def test_offline_issue_is_the_same_whatever_the_batch_size(seeds, tmp_path):
    """Batches of a theme get only their gists; the theme is summarised once, as a whole: the
    issue cannot depend on how the chunker cut it (46 batches here against 8 or so)."""
    from typer.testing import CliRunner

    from digest.cli import app

    small = tmp_path / "small.toml"
    small.write_text("batch_tokens = 1500\n", encoding="utf-8")
    runs = [CliRunner().invoke(app, ["summarize", str(seeds), "--backend", "offline", *extra,
                                     "--report", str(tmp_path / f"r{i}.json")])
            for i, extra in enumerate(([], ["--config", str(small)]))]
    assert all(run.exit_code == 0 for run in runs), [run.output for run in runs]
    import json
    batches = [json.loads((tmp_path / f"r{i}.json").read_text())["counts"]["batches"]
               for i in range(2)]
    assert batches[1] > 3 * batches[0]
    assert runs[0].stdout == runs[1].stdout


# The prefilters (issue 15): a cheap test of the words a pattern needs before the pattern is
# run. Each must give exactly the pattern's answer, on every kind of text.
_BACKGROUND_BEFORE = re.compile(
    r"^(?:(?:large|recent|modern|current|existing|many|most|nowadays|despite|while|"
    r"although|with the|the (?:rapid|recent|success|emergence|advent|development))\b|"
    r"in recent years|over the (?:past|last)|in the (?:past|last))"
    r"|\b(?:ha(?:ve|s)|ha(?:ve|s) recently) (?:shown|demonstrated|achieved|become|emerged|"
    r"gained|attracted|seen|made|introduced|proposed|explored|studied|investigated|focused|"
    r"relied|developed|used|produced|considered)\b", re.IGNORECASE)
PIECES = st.sampled_from([
    "this problem", "these issues", "such a gap", "the above", "the latter", "It ", "They ",
    "also ", "We then propose", "This method", "Such models", "have shown", "has recently made",
    "outperforms", "experiments", "results show", "show that our", "the effectiveness",
    "In this paper, ", "in this work", "Recent ", "in recent years", "However, ", "(Smith 2020)",
    "[3]", ".", "!", "?", " ", ", ", "2", "3.5%", "10x", "İ", "ı", "ſ", "K", "é", "-", "\n",
    "Issue", "QUESTION", "trade-off", "need", "difficulties", "To address this challenge, we",
    "We propose", "we\tstudy", "This paper examines", "our work", "is proposed", "are newly "
    "developed", "us", "those", "aforementioned", "We build", "we Introduced", "We open-sourced",
    "we formalize", "We analysed", "we argued", "This study leverages", "our survey", "presents",
    "broadcast", "claim", "we then carefully re-frame", "is offered", "are then devised", "aims",
    "We STUDIES", "Our Paper describes", "constructed", "To do so, we", "Motivated by this, ",
    ", in this paper", ", our work", ", This study", "When tested, we", "Finally, ", "building on"])
TEXTS = st.one_of(st.lists(PIECES, max_size=12).map("".join), st.text(max_size=60))


def _rewrite_before(sentence: str) -> str:
    """``sentences.rewrite`` before its shortcuts (issue 15)."""
    text = sentences._TRAILING_CITATION.sub("", sentence) or sentence
    for _ in range(3):
        rest = sentences._LEAD_IN.sub("", text, count=1)
        if rest == text:
            clause = sentences._LEAD_CLAUSE.sub("", text, count=1)
            unframed = sentences._LEAD_IN.sub("", clause, count=1)
            if sentences._CONTRIBUTION.match(unframed) or sentences._AIM.match(unframed):
                rest = clause
        if rest == text or not re.search(r"\w", rest):
            break
        text = rest
    text = _standalone_before(text)
    first = text.split(" ", 1)[0]
    if first.islower() and first[:1].isalpha():
        text = text[0].upper() + text[1:]
    return text


def _standalone_before(text: str) -> str:
    text = sentences._BACK_ADVERB.sub(lambda m: m[1] + " ", text, count=1)
    text = sentences._BACK_ALSO.sub(lambda m: m[1], text, count=1)
    text = sentences._BACK_OPENER.sub("", text, count=1)
    text = sentences._BACK_PURPOSE.sub("", text)
    text = sentences._BACK_OBJECT.sub(lambda m: m[1], text)
    text = sentences._IT_IS_SHOWN.sub("", text, count=1)
    return sentences._BACK_DETERMINER.sub("The ", text, count=1)


@settings(max_examples=600, deadline=None)
@given(TEXTS)
@example("(Smith 2020)\n")  # found by CI: "$" also matches before a final newline
def test_each_prefilter_gives_the_patterns_answer(text):
    assert sentences.refers_back(text) == bool(sentences.REFERS_BACK.search(text))
    assert offline._reports_results(text) == bool(offline._RESULTS.search(text))
    assert offline._opens_on_background(text) == bool(_BACKGROUND_BEFORE.search(text))
    assert offline._numbers(text) == len(offline._NUMBER.findall(text))
    assert sentences.contributes(text) == bool(sentences._CONTRIBUTION.search(text))
    assert sentences.aims(text) == bool(sentences._AIM.search(text))
    assert offline._has_anaphora(text) == bool(offline._ANAPHORA.search(text))
    first_person = bool(offline._FIRST_PERSON.search(text))
    assert offline._role(text, 0, False) == (offline.DETAIL if first_person else offline.BACKGROUND)
    assert sentences.standalone(text) == _standalone_before(text)
    assert sentences._lead_clause_dropped(text) == sentences._LEAD_CLAUSE.sub("", text, count=1)
    assert sentences.rewrite(text) == _rewrite_before(text)
    if not text.removesuffix("\n").endswith(sentences._CITATION_ENDS):
        assert sentences._TRAILING_CITATION.search(text) is None


def test_each_prefilter_gives_the_patterns_answer_on_every_real_sentence(seeds):
    from digest.ingest import load_sources

    real = [sentences.clean_sentence(s) for paper in load_sources([str(seeds)]).records
            for s in offline.split_sentences(f"{paper.title}. {paper.abstract}")]
    assert len(real) > 1000
    for text in real:
        assert sentences.refers_back(text) == bool(sentences.REFERS_BACK.search(text)), text
        assert offline._reports_results(text) == bool(offline._RESULTS.search(text)), text
        assert offline._opens_on_background(text) == bool(_BACKGROUND_BEFORE.search(text)), text
        assert sentences.standalone(text) == _standalone_before(text), text
        assert sentences.contributes(text) == bool(sentences._CONTRIBUTION.search(text)), text
        assert sentences.aims(text) == bool(sentences._AIM.search(text)), text
        assert offline._has_anaphora(text) == bool(offline._ANAPHORA.search(text)), text


def _verbs(pattern: re.Pattern) -> list[str]:
    """The verbs of a contribution or aim pattern, as its source lists them."""
    listed = re.search(r"\(\?:((?:[a-z\-\[\]]+\|)+[a-z\-\[\]]+)\)\(\?:s\|d\|ed\)", pattern.pattern)
    assert listed, pattern.pattern
    forms = []
    for verb in listed[1].split("|"):
        forms += [verb.replace("[sz]", "s"), verb.replace("[sz]", "z")] if "[" in verb else [verb]
    return forms


def test_the_verb_prefilters_let_every_form_of_every_verb_through():
    # The prefilters pass a sentence only if it holds one of the verbs' stems; hypothesis may
    # not build every verb, so each one, in each form and case, is tried here.
    for check, pattern in ((sentences.contributes, sentences._CONTRIBUTION),
                           (sentences.aims, sentences._AIM)):
        verbs = _verbs(pattern)
        assert len(verbs) >= 16
        for verb in verbs:
            for ending in ("", "s", "d", "ed"):
                for text in (f"We {verb}{ending} a graph.", f"THIS PAPER {verb.upper()}{ending}",
                             f"In short, our work then {verb.title()}{ending} it"):
                    assert check(text) == bool(pattern.search(text)), text
            assert check(f"We {verb} a graph."), verb
    for participle in ("proposed", "introduced", "presented", "developed"):
        assert sentences.contributes(f"A model is {participle} here.")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["agents", "agent", "the", "of", "2024", "x", "self-play", "it's",
                                 "Models", "model", "é", "-", "'", " ", ".", "\n", "ℓ2"]),
                max_size=30).map("".join) | st.text(max_size=60))
def test_the_set_of_content_terms_is_the_set_of_the_list(text):
    assert offline.content_term_set(text) == set(offline.content_terms(text))


def test_a_sentence_is_ranked_only_once_no_sentence_left_can_equal_it():
    """Equal relevance goes to the earlier sentence, even when the later one is looked at
    first (its bound was higher) and the earlier one's bound is exactly that relevance."""
    (plain,) = offline._sentence_table("We propose a graph method for planning tasks.")
    (results,) = offline._sentence_table("We propose a method that outperforms baselines.")
    assert (plain.role, plain.results, plain.anaphora) == (offline.CONTRIBUTION, False, 0)
    assert (results.role, results.results, results.anaphora) == (offline.CONTRIBUTION, True, 0)
    earlier = 0.5
    target = offline._relevance(earlier, plain)  # its relevance is its bound
    later = target + 0.05  # about: plus the bonus, less the results
    for _ in range(1000):  # the closeness that gives the later sentence that very relevance
        if offline._relevance(later, results) == target:
            break
        later = math.nextafter(later, 1.0 if offline._relevance(later, results) < target else 0.0)
    assert offline._relevance(later, results) == target
    ranking = offline._Ranking([(0, plain), (1, results)], [earlier, later], _with_words)
    assert ranking.first(2) == [0, 1]


def test_a_theme_of_one_abstract_many_times_is_summarised_in_linear_work():
    """A theme whose papers all carry one abstract (a template, a hostile listing): every
    sentence after the first pick is too like it. The selection used to pass them over one
    at a time, each time scanning all of them (a theme of 2,000 took 8.7 s); a sentence too
    like a pick is now out of the running at once, as one too long for the room left."""
    abstract = ("We study a problem and propose a method that works well on standard "
                "benchmarks. Our approach improves over strong baselines in many settings.")
    papers = [Paper(id=f"p{i}", title=f"Title {i}", abstract=abstract) for i in range(1500)]
    rows = _rows(papers)
    tfidf = offline._TfIdf(rows, len(papers))
    ranking = offline._candidates(rows, tfidf.closeness([]), 700)
    pool = offline._Pool(rows, tfidf)
    picking = offline._Picking(pool, ranking, 700)
    for _ in range(2):  # the abstract's two sentences, from two papers
        picking.chosen.append(pool[picking.best_open()])
    assert picking.best_open() is None  # one look at each of the rest, not one pick each
    chosen = offline._select(offline._Pool(rows, tfidf), ranking, 3, 700)
    everything = [_candidate(rows, tfidf, i) for i in ranking.ranked]
    assert chosen == full_scan_select(everything, [ranking.relevance[i] for i in ranking.ranked],
                                      3, 700) == picking.chosen


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("a.!?…\"')] ”\nA")), max_size=40)
       | st.text(max_size=40))
def test_the_terminator_pattern_opening_on_its_class_finds_what_the_repeat_found(text):
    """``[.!?…][.!?…]*`` (searched for its first character) is ``[.!?…]+``."""
    plain = re.compile(r"[.!?…]+[\"'”’»)\]]*(?=\s|$)")
    assert ([m.span() for m in sentences._TERMINATOR.finditer(text)]
            == [m.span() for m in plain.finditer(text)])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.floats(min_value=0, max_value=1e12, allow_subnormal=True),
                         max_size=40), max_size=30))
def test_row_sums_add_each_row_in_order_as_sum_does(rows):
    """The column-by-column row sums are Python's ``sum`` of each row, bit for bit."""
    import numpy as np

    values = np.array([v for row in rows for v in row], dtype=np.float64)
    starts = np.concatenate(([0], np.cumsum([len(row) for row in rows]))).astype(np.int64)
    assert offline._row_sums(values, starts).tolist() == [float(sum(row)) for row in rows]


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXTS, min_size=1, max_size=4).map(". ".join))
def test_a_rows_contributions_are_those_of_its_clean_and_its_rewritten_text(abstract):
    """The table asks ``contributes`` of the clean sentence only; a row's rewritten text gets
    its own answer when the summary asks (issue 15)."""
    for row in offline._split_table(abstract):
        assert row.clean_contribution == sentences.contributes(row.clean)
        assert row.contribution == sentences.contributes(row.text)
