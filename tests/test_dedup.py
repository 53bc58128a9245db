"""Dedup: exact identity, near-duplicates, papers kept apart, merging, determinism.

The papers here are made up; the evaluation set at the end is built at run time
from ../shared/seeds (tests/fixtures/dedup/evalset.py).
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from digest.dedup import deduplicate, explain
from digest.dedup._keys import identity_key, title_markers
from digest.ingest import load_sources
from digest.models import Record, Sighting

from .fixtures.dedup.evalset import build_evalset, hard_cases, pairwise_scores

ABSTRACT = (
    "We study how widget layouts can be generated from short natural language descriptions. "
    "A transformer encoder reads the description and a graph decoder places widgets on a grid, "
    "guided by a learned model of alignment and spacing. On a benchmark of 12,000 mobile screens "
    "our generator beats template retrieval and prior graph decoders in human preference and "
    "layout validity, and ablations show that the spacing model matters most."
)
OTHER_ABSTRACT = (
    "Gadget batteries fail early when they are charged in cold rooms. We log the charging "
    "curves of 900 phones over two winters, fit a degradation model with temperature and depth "
    "of discharge, and propose a charging schedule that delays charging until the battery has "
    "warmed up. In a field trial the schedule extends battery life by a fifth."
)

_positions = iter(range(1, 1_000_000))


def rec(title: str, abstract: str = ABSTRACT, *, source: str = "a.jsonl", **fields) -> Record:
    return Record(title=title, abstract=abstract, sighting=Sighting(source, next(_positions)),
                  **fields)


def papers_of(*records: Record) -> list[list[str]]:
    """The titles of each resulting paper's records, to read in assertions."""
    result = deduplicate(records)
    by_sighting = {r.sighting: r.title for r in records}
    return [[by_sighting[s] for s in paper.sightings] for paper in result.papers]


# Exact identity -----------------------------------------------------------------------------

def test_one_arxiv_id_is_one_paper_whatever_the_titles():
    result = deduplicate([rec("Widget Layouts from Text", arxiv_id="2611.01234"),
                          rec("Something else entirely", OTHER_ABSTRACT, arxiv_id="2611.01234")])
    assert [p.id for p in result.papers] == ["2611.01234"]
    assert result.groups[0].rule == "arxiv-id"


def test_two_arxiv_ids_are_two_papers_even_under_one_title():
    result = deduplicate([rec("Widget Layouts from Text", arxiv_id="2611.01234"),
                          rec("Widget Layouts from Text", arxiv_id="2611.05678")])
    assert sorted(p.id for p in result.papers) == ["2611.01234", "2611.05678"]
    assert result.groups == []


@pytest.mark.parametrize("variant", [
    "WIDGET LAYOUTS FROM TEXT: A GRAPH DECODER",                 # case
    "widget layouts from text: a graph decoder",
    "Widget Layouts from Text - A Graph Decoder",                # punctuation
    "Widget Layouts from Text; a Graph Decoder.",
    "Widget Layouts from Text \u2014 a Graph Decoder",           # em dash
    "Widget Layouts from Text\uff1a a Graph Decoder",            # full-width colon
    "Widget  Layouts\u00a0from\tText: a Graph   Decoder ",       # whitespace
    "Widget Layouts from Text: a Graph Decoder (v2)",            # version tags
    "Widget Layouts from Text: a Graph Decoder [v3]",
    "Wi\u200bdget Layouts from Text: a Graph Decoder",           # zero-width space
    "Widget Layouts from Te\u0445t: a Graph Decoder",            # Cyrillic look-alike
    "\uff37idget Layouts from Text: a Graph Decoder",            # full-width letter
    "Widget Layouts from Text: a Graph De\u0301coder",          # decomposed accent
])
def test_title_identity_ignores_listing_artefacts(variant):
    original = "Widget Layouts from Text: a Graph Decoder"
    assert identity_key(variant) == identity_key(original)
    assert papers_of(rec(original), rec(variant, source="b.jsonl")) == [[original, variant]]


def test_title_identity_ignores_typographic_quotes_and_unicode_forms():
    plain = 'Schrodinger\'s Widgets: "Superposed" Layouts and Pre-training'
    fancy = "Schr\u00f6dinger\u2019s Widgets: \u201cSuperposed\u201d Layouts and Pre\u2011training"
    decomposed = "Schro\u0308dinger's Widgets: \u201eSuperposed\u201c Layouts and Pretraining"
    assert identity_key(plain) == identity_key(fancy) == identity_key(decomposed)
    assert identity_key("E\ufb03cient Widgets") == identity_key("Efficient Widgets")  # ligature
    assert len(deduplicate([rec(plain), rec(fancy), rec(decomposed)]).papers) == 1


def test_different_words_are_different_identity_keys():
    assert identity_key("Widget Layouts from Text") != identity_key("Widget Layouts from Tests")
    assert identity_key("Part II") != identity_key("Part III")


def test_exact_title_match_is_explained_as_the_title_rule():
    result = deduplicate([rec("Widget Layouts from Text"), rec("WIDGET LAYOUTS FROM TEXT (v2)")])
    assert [g.rule for g in result.groups] == ["title"]
    assert result.groups[0].score == 1.0


# Near-duplicates ----------------------------------------------------------------------------

def test_a_reworded_title_with_the_same_abstract_is_one_paper():
    records = [rec("Generating Widget Layouts from Text with Graph Decoders"),
               rec("Text-to-Layout Generation of Widgets via Graph Decoders", source="b")]
    result = deduplicate(records)
    assert len(result.papers) == 1
    assert result.groups[0].rule == "near-duplicate"
    assert 0 < result.groups[0].score <= 1


def test_a_revised_abstract_under_the_same_title_is_one_paper():
    revised = ABSTRACT.replace("12,000", "15,000").replace(
        "ablations show", "an extended ablation study shows") + " Code is public."
    assert len(deduplicate([rec("Widget Layouts from Text"),
                            rec("Widget Layouts from Text", revised)]).papers) == 1


def test_a_revised_abstract_under_a_reworded_title_is_one_paper():
    revised = " ".join(ABSTRACT.split(". ")[:3]) + ". We also release the benchmark."
    records = [rec("LayoutGen: Widget Layouts from Natural Language Descriptions"),
               rec("LayoutGen: Generating Widget Layouts from Text Descriptions", revised)]
    assert len(deduplicate(records).papers) == 1


def test_unrelated_papers_stay_apart():
    assert len(deduplicate([rec("Widget Layouts from Text"),
                            rec("Charging Gadgets in the Cold", OTHER_ABSTRACT)]).papers) == 2


# Different papers that look alike ---------------------------------------------------------

X = "Topological Widgets in Flat-Band Lattices"


def test_comment_and_reply_to_comment_are_different_papers():
    comment_abstract = ("We point out that the widget states reported in a recent paper are "
                        "artifacts of open boundary conditions; with periodic boundary "
                        "conditions the widget gap closes at weak disorder.")
    reply_abstract = ("We reply to the comment on our paper: with periodic boundary conditions "
                      "the widget gap survives moderate disorder, as exact diagonalization on "
                      "larger lattices shows.")
    records = [rec(X), rec(f'Comment on "{X}"', comment_abstract),
               rec(f'Reply to Comment on "{X}"', reply_abstract)]
    result = deduplicate(records)
    assert len(result.papers) == 3
    assert len({p.id for p in result.papers}) == 3


def test_comment_and_reply_stay_apart_even_with_one_shared_abstract():
    """A listing that repeats the abstract of the paper commented on must not merge them."""
    records = [rec(f"Comment on {X}"), rec(f"Reply to Comment on {X}"), rec(X)]
    assert len(deduplicate(records).papers) == 3


def test_part_two_and_part_three_are_different_papers_even_with_one_abstract():
    records = [rec("Scalable Widget Placement, Part II: Greedy Heuristics"),
               rec("Scalable Widget Placement, Part III: Greedy Heuristics")]
    assert len(deduplicate(records).papers) == 2


def test_numbered_editions_are_different_papers():
    assert len(deduplicate([rec("The WidgetEval 2024 Shared Task: Overview"),
                            rec("The WidgetEval 2025 Shared Task: Overview")]).papers) == 2
    assert len(deduplicate([rec("Gizmo-2 Technical Report"),
                            rec("Gizmo-3 Technical Report")]).papers) == 2


def test_markers_read_parts_comments_and_numbers():
    assert title_markers("Scalable Placement, Part II").parts == {2}
    assert title_markers("Scalable Placement, Part III").parts == {3}
    assert title_markers("Reply to Comment on X").kinds == {"reply", "comment"}
    assert title_markers("Comment on X").kinds == {"comment"}
    assert title_markers("Response to: Widget Layouts").kinds == {"reply"}
    assert title_markers("Correction to Widget Layouts").kinds == {"erratum"}
    assert title_markers("Gizmo-3: 7B Models").numbers == {"3", "7"}
    assert title_markers("I Know What X Means").parts == set()  # a pronoun, not Part I


def test_no_chain_of_near_duplicates_joins_two_arxiv_ids():
    """A record without an id that matches both papers joins one of them, never both."""
    records = [rec("Widget Layouts from Text", arxiv_id="2611.00001"),
               rec("Widget Layouts from Text", arxiv_id="2611.00002"),
               rec("Widget layouts from text")]
    result = deduplicate(records)
    assert sorted(p.id for p in result.papers) == ["2611.00001", "2611.00002"]
    assert result.records_read == 3


# Merging ------------------------------------------------------------------------------------

def test_merge_keeps_the_richest_record_and_counts_sightings():
    short = ABSTRACT.split(". ")[0] + "."
    records = [
        rec("WIDGET LAYOUTS FROM TEXT (v2)", short, source="hf.txt"),
        rec("Widget Layouts from Text", ABSTRACT, source="feed.xml",
            authors=("A. Author",)),
        rec("Widget Layouts from Text", short, source="arxiv.jsonl", arxiv_id="2611.01234",
            url="https://arxiv.org/abs/2611.01234", authors=("A. Author", "B. Author")),
        rec("Widget layouts from text", short, source="hf.txt"),
    ]
    [paper] = deduplicate(records).papers
    assert paper.id == paper.arxiv_id == "2611.01234"
    assert paper.url == "https://arxiv.org/abs/2611.01234"
    assert paper.authors == ("A. Author", "B. Author")
    assert paper.abstract == ABSTRACT
    assert paper.title == "Widget Layouts from Text"  # the cleanest title, not the shouted one
    assert len(paper.sightings) == 4
    assert paper.times_seen == 3  # distinct listings


def test_counts_records_papers_and_merges():
    records = [rec("Widget Layouts from Text"), rec("widget layouts from text"),
               rec("Charging Gadgets in the Cold", OTHER_ABSTRACT)]
    result = deduplicate(records)
    assert (result.records_read, len(result.papers), result.duplicates_merged) == (3, 2, 1)


def test_papers_without_arxiv_id_get_a_title_hash_id():
    [paper] = deduplicate([rec("Widget Layouts from Text")]).papers
    assert paper.id.startswith("t:") and paper.arxiv_id is None


def test_explain_names_the_rule_and_score_of_each_merge():
    text = explain(deduplicate([rec("Widget Layouts from Text"),
                                rec("WIDGET LAYOUTS FROM TEXT", source="b.jsonl"),
                                rec("Charging Gadgets in the Cold", OTHER_ABSTRACT)]))
    assert "records: 3\nunique papers: 2\nduplicates merged: 1\n" in text
    assert "[1] Widget Layouts from Text" in text
    assert "title 1.00 with #1" in text and "b.jsonl" in text


def test_explain_escapes_invisible_characters_in_titles():
    text = explain(deduplicate([rec("Widget\u202e Layouts"), rec("widget layouts")]))
    assert "\u202e" not in text and "\\u202e" in text


# Determinism --------------------------------------------------------------------------------

def _ids_by_record(records: list[Record]) -> dict[Sighting, str]:
    return {s: paper.id for paper in deduplicate(records).papers for s in paper.sightings}


def test_input_order_does_not_change_the_ids(seeds):
    records = load_sources([str(seeds)]).records
    expected = _ids_by_record(records)
    for seed in (1, 2, 3):
        shuffled = random.Random(seed).sample(records, len(records))
        assert _ids_by_record(shuffled) == expected


def test_input_order_does_not_change_near_duplicate_groups_or_ids(seeds):
    records = [item.record for item in build_evalset(load_sources([str(seeds)]).records, seed=3)]
    expected = _ids_by_record(records)
    for seed in (1, 2):
        assert _ids_by_record(random.Random(seed).sample(records, len(records))) == expected


def test_input_order_does_not_change_ids_of_title_only_papers():
    records = [rec("Widget Layouts from Text"), rec("Generating Widget Layouts from Text"),
               rec(f"Comment on {X}", OTHER_ABSTRACT), rec(f"Comment on {X}"),
               rec("Widget layouts from text (v2)")]
    expected = _ids_by_record(records)
    for seed in range(6):
        assert _ids_by_record(random.Random(seed).sample(records, len(records))) == expected


def test_ids_do_not_depend_on_which_listing_came_first():
    a, b = rec("Widget Layouts from Text"), rec("Widget Layouts From Text", source="b")
    assert deduplicate([a, b]).papers[0].id == deduplicate([b, a]).papers[0].id
    renamed = replace(b, title="Generating Widget Layouts from Text")
    assert deduplicate([a, renamed]).papers[0].id == deduplicate([renamed, a]).papers[0].id


# The near-duplicate evaluation set ---------------------------------------------------------
# Variants of the seed papers (re-cased, typographic, Unicode tricks, version tags, revised
# abstracts, renamed titles, no abstract) plus the hand-written hard cases. Seeds 7 and 8 were
# not used to choose the thresholds. Measured on them (2026-11-23): precision 1.0000 (0 false
# pairs), recall 0.899 (705 of 784 pairs); over seeds 1-12: precision 1.0000, recall 0.903.
# Almost every missed pair is a renamed title with no abstract (27 of 60 found).

def _evaluate(seeds, seed: int):
    items = build_evalset(load_sources([str(seeds)]).records, seed=seed)
    result = deduplicate([item.record for item in items])
    paper_of = {s: paper.id for paper in result.papers for s in paper.sightings}
    return items, [paper_of[item.record.sighting] for item in items]


def test_evalset_precision_and_recall_stay_above_the_measured_floors(seeds):
    true = false = missed = 0
    for seed in (7, 8):
        scores = pairwise_scores(*_evaluate(seeds, seed))
        true, false, missed = (true + scores.true_pairs, false + scores.false_pairs,
                               missed + scores.missed_pairs)
    assert true / (true + false) >= 0.99, (true, false)
    assert true / (true + missed) >= 0.88, (true, missed)


def test_evalset_variants_are_found_with_their_original(seeds):
    """Measured on seeds 7 + 8: 437 of 441 variants (0.991), apart from renamed titles without
    an abstract: 27 of 60 of those (0.45)."""
    found = {"others": [0, 0], "no-abstract-renamed": [0, 0]}
    for seed in (7, 8):
        items, predicted = _evaluate(seeds, seed)
        original = {i.label: p for i, p in zip(items, predicted, strict=True)
                    if i.kind == "original"}
        for item, paper in zip(items, predicted, strict=True):
            if item.kind in ("original", "hard"):
                continue
            kind = item.kind if item.kind == "no-abstract-renamed" else "others"
            found[kind][0] += paper == original[item.label]
            found[kind][1] += 1
    assert found["others"][0] / found["others"][1] >= 0.97, found
    assert found["no-abstract-renamed"][0] / found["no-abstract-renamed"][1] >= 0.35, found


def test_hard_cases_are_grouped_exactly_as_labelled():
    items = hard_cases()
    result = deduplicate([item.record for item in items])
    paper_of = {s: paper.id for paper in result.papers for s in paper.sightings}
    scores = pairwise_scores(items, [paper_of[item.record.sighting] for item in items])
    assert (scores.precision, scores.recall) == (1.0, 1.0), scores
    assert len(result.papers) == len({item.label for item in items})


def test_titles_that_differ_by_a_negating_or_opposite_word_stay_apart():
    """rapidfuzz rates supervised/unsupervised 91 and encoder/decoder 86: not one word.

    Companion papers with template abstracts: each abstract says its own title word.
    """
    base = ABSTRACT.replace("A transformer encoder reads", "A transformer reads")
    assert len(deduplicate([
        rec("Supervised Widget Layout Generation", base + " Training is supervised."),
        rec("Unsupervised Widget Layout Generation", base + " Training is unsupervised."),
    ]).papers) == 2
    assert len(deduplicate([
        rec("Widget Layout Encoders", base + " We study the encoders."),
        rec("Widget Layout Decoders", base + " We study the decoders."),
    ]).papers) == 2
    assert len(deduplicate([rec("Widget Layout Modeling", base),
                            rec("Widget Layout Modelling", base + " Code is public.")]).papers) == 1
