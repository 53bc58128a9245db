"""Tests for the offline (extractive) summarizer in ``digest.offline``."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest import offline
from digest.models import Paper
from digest.offline import paper_gist, split_sentences, theme_summary, theme_tldr
from digest.sentences import rewrite

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


def paper(abstract: str, title: str = "A Paper", id: str = "p") -> Paper:
    return Paper(id=id, title=title, abstract=abstract)


def words(text: str) -> list[str]:
    """Words for comparing a gist with its abstract: case and clause punctuation ignored (and a
    final period: a rewrite may end a sentence before a clause that pointed back)."""
    return [w.strip(",;:.").lower() for w in text.removesuffix("…").split()]


def is_subsequence(needle: list[str], haystack: list[str], same=str.__eq__) -> bool:
    rest = iter(haystack)
    return all(any(same(w, h) for h in rest) for w in needle)


def _same_or_third_person(word: str, abstract_word: str) -> bool:
    """"We propose X and study Y" may read "One paper proposes X and studies Y"."""
    return word in (abstract_word, offline._third_person(abstract_word))


ATTRIBUTION = re.compile(r"^(?:One paper|Another|A third) \w+ ")


def from_one_sentence(text: str, abstract: str) -> bool:
    """The text's words appear in order in one sentence of the abstract.

    A theme summary may say whose work a sentence describes ("One paper proposes X, its ...")
    where the abstract said "We propose X, our ...": those words are left out of the check,
    and a verb joined to the first by "and" may be in its third person.
    """
    own = words(ATTRIBUTION.sub("", text))
    readings = [(own, str.__eq__), (own[1:], str.__eq__)]  # "This framework" → "The framework"
    if ATTRIBUTION.match(text):
        readings.append((["our" if w == "its" else w for w in own], _same_or_third_person))
    return any(is_subsequence(reading, words(s), same)
               for reading, same in readings for s in split_sentences(abstract))


# ---------------------------------------------------------------- split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "We compare to strong baselines, e.g. PPO and DPO, i.e. the usual ones. It works.",
            ["We compare to strong baselines, e.g. PPO and DPO, i.e. the usual ones.", "It works."],
        ),
        (
            "Chen et al. proposed a planner. We extend it.",
            ["Chen et al. proposed a planner.", "We extend it."],
        ),
        (
            "It builds on Chen et al. We extend it.",
            ["It builds on Chen et al.", "We extend it."],
        ),
        (
            "Tools, memories, etc. are stored. We use them, etc. The end.",
            ["Tools, memories, etc. are stored.", "We use them, etc.", "The end."],
        ),
        ("PPO vs. DPO is compared. Done.", ["PPO vs. DPO is compared.", "Done."]),
        (
            "See Fig. 3 and Eq. 2 for the loss. Done.",
            ["See Fig. 3 and Eq. 2 for the loss.", "Done."],
        ),
        (
            "The U.S. Army funded the study. Data came from the U.S. We thank them.",
            ["The U.S. Army funded the study.", "Data came from the U.S.", "We thank them."],
        ),
    ],
)
def test_split_sentences_abbreviations(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_split_sentences_decimals_versions_and_urls() -> None:
    text = (
        "GPT-3.5 reaches 72.5% on v1.2.3 of the suite. Code is at https://github.com/ab/cd.py. "
        "See www.example.org/x?y=1.2 for more. Done"
    )
    assert split_sentences(text) == [
        "GPT-3.5 reaches 72.5% on v1.2.3 of the suite.",
        "Code is at https://github.com/ab/cd.py.",
        "See www.example.org/x?y=1.2 for more.",
        "Done",
    ]


def test_split_sentences_initials() -> None:
    text = (
        "The game was designed by J. R. Smith and A. Jones. "
        "We model its state space S. By contrast, the agent."
    )
    assert split_sentences(text) == [
        "The game was designed by J. R. Smith and A. Jones.",
        "We model its state space S.",
        "By contrast, the agent.",
    ]


def test_split_sentences_ellipses_questions_and_exclamations() -> None:
    text = "The agent waits... and then acts… Then it stops. Can RL help? Yes! It can."
    assert split_sentences(text) == [
        "The agent waits... and then acts…",
        "Then it stops.",
        "Can RL help?",
        "Yes!",
        "It can.",
    ]


def test_split_sentences_closing_quotes_and_brackets() -> None:
    text = 'They call it "the stream barrier." We break it. (Details follow.) [A note.] End.'
    assert split_sentences(text) == [
        'They call it "the stream barrier."',
        "We break it.",
        "(Details follow.)",
        "[A note.]",
        "End.",
    ]


def test_split_sentences_splits_a_stop_with_no_space_after_a_lower_case_word() -> None:
    """The seeds' "… aligned with human preference.GRUE is the first leaderboard …" was one
    sentence, and a summary showed it cut: "human preference.GRUE is the first leaderbo…"."""
    text = ("Models are aligned with human preference.GRUE is the first leaderboard. It "
            "works.Then it stops. See github.com/ab/repo.Name and resp.The and U.S.Army, "
            "e.g.GPT, math.AG/0603273, each torch.Tensor and v2.Beta too.")
    assert split_sentences(text) == [
        "Models are aligned with human preference.", "GRUE is the first leaderboard.",
        "It works.", "Then it stops.",
        "See github.com/ab/repo.Name and resp.The and U.S.Army, e.g.GPT, math.AG/0603273, each "
        "torch.Tensor and v2.Beta too."]


def test_split_sentences_collapses_whitespace_and_drops_empties() -> None:
    assert split_sentences("  We   propose\n a\tmodel.\n\n  It  works.  ") == [
        "We propose a model.",
        "It works.",
    ]
    assert split_sentences("") == []
    assert split_sentences(" \n\t ") == []


_WORDS = (
    'We propose a model e.g. i.e. et al. etc. Fig. 3.5 U.S. J. ... … ? ! . ( ) " In this paper, '
    "https://x.io/a.b. # - 1. RL. iPLAN (Smith 2020). \n \t"
)
ABSTRACT_TOKENS = st.sampled_from([*str.split(_WORDS, " "), "et al.", "(Smith et al., 2020)."])
TEXT = st.one_of(st.text(), st.lists(ABSTRACT_TOKENS, max_size=60).map(" ".join))


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_split_sentences_keeps_every_word_in_order(text: str) -> None:
    sentences = split_sentences(text)
    assert "".join(" ".join(sentences).split()) == "".join(text.split())  # glued ones split
    for sentence in sentences:
        assert sentence and sentence == " ".join(sentence.split())


# ---------------------------------------------------------------- paper_gist

AGENTPOISON = (
    "Large language model agents have shown remarkable abilities across many applications. "
    "However, their reliance on unverified memory raises safety concerns. "
    "To uncover such vulnerabilities, we propose MemTrap, a red-teaming attack that poisons "
    "an agent's long-term memory. "
    "MemTrap achieves an 82% attack success rate while reducing benign accuracy by only 1%. "
    "Code is available at https://github.com/example/memtrap."
)


def test_gist_prefers_the_contribution_sentence() -> None:
    gist = paper_gist(paper(AGENTPOISON, "MemTrap: Poisoning the Memory of LLM Agents"))
    assert (
        gist == "We propose MemTrap, a red-teaming attack that poisons an agent's long-term memory."
    )


def test_gist_prefers_this_paper_cue_over_background_and_results() -> None:
    abstract = (
        "Reinforcement learning has become a powerful tool for sequential decision making. "
        "This thesis studies how reward misspecification leads to misaligned behaviour. "
        "Our experiments show gains of 12% over the baselines on 5 benchmarks."
    )
    assert paper_gist(paper(abstract)) == (
        "This thesis studies how reward misspecification leads to misaligned behaviour."
    )


def test_gist_prefers_the_sentence_naming_the_method_in_the_title() -> None:
    abstract = (
        "Planning with language models is brittle in long-horizon household tasks. "
        "We study why plans fail when objects are missing. "
        "Tidy is a replanning framework that grounds each step in a scene graph. "
        "It outperforms prior planners by a wide margin."
    )
    gist = paper_gist(paper(abstract, "Tidy: Robust Replanning for Household Robots"))
    assert gist == "Tidy is a replanning framework that grounds each step in a scene graph."


def test_gist_avoids_background_openers_and_results_without_cues() -> None:
    abstract = (
        "Large language models have demonstrated remarkable reasoning abilities. "
        "Curriculum design for multi-turn agents remains poorly understood. "
        "Experiments show our curriculum outperforms baselines by 9.5% and 14% respectively."
    )
    assert paper_gist(paper(abstract)) == (
        "Curriculum design for multi-turn agents remains poorly understood."
    )


def test_gist_never_picks_a_link_or_code_available_sentence() -> None:
    abstract = (
        "We release WebGym at https://webgym.example.org for the community. "
        "WebGym collects browser tasks that require planning over many pages."
    )
    gist = paper_gist(paper(abstract, "WebGym: A Benchmark for Web Agents"))
    assert "http" not in gist
    assert gist.startswith("WebGym collects browser tasks")


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("In this paper, we propose a planner for robots.", "We propose a planner for robots."),
        ("In this work we introduce a planner for robots.", "We introduce a planner for robots."),
        ("To address this, we develop a planner for robots.", "We develop a planner for robots."),
        (
            "To bridge this gap, we present a planner for robots.",
            "We present a planner for robots.",
        ),
        (
            "We propose a planner for robots (Smith et al., 2021).",
            "We propose a planner for robots.",
        ),
        ("We propose a planner for robots [4, 7].", "We propose a planner for robots."),
        ("# We propose a planner for robots.", "We propose a planner for robots."),
        ("- We propose a planner for robots.", "We propose a planner for robots."),
    ],
)
def test_gist_light_rewrites(sentence: str, expected: str) -> None:
    abstract = f"Robots often fail at long tasks. {sentence} It works well."
    assert paper_gist(paper(abstract)) == expected


def test_gist_keeps_conditions_that_change_the_meaning() -> None:
    abstract = "When no demonstrations exist, we propose a meta-learning curriculum for web agents."
    assert paper_gist(paper(abstract)).startswith("When no demonstrations exist, we propose")


def test_gist_cuts_long_sentences_at_a_clause_boundary() -> None:
    abstract = (
        "We propose Relay, a planner for household robots that reasons over scene graphs, "
        "predicts the affordances of unseen objects, and repairs failed plans online."
    )
    gist = paper_gist(paper(abstract), max_chars=100)
    assert (
        gist == "We propose Relay, a planner for household robots that reasons over scene graphs…"
    )
    assert len(gist) <= 100


def test_gist_cuts_at_a_word_boundary_without_dangling_words() -> None:
    abstract = (
        "We propose a planner that reasons over scene graphs of cluttered household rooms with "
        "many small objects and repairs failed plans online."
    )
    for max_chars in range(20, 130, 7):
        gist = paper_gist(paper(abstract), max_chars=max_chars)
        assert len(gist) <= max_chars and gist.endswith("…")
        assert abstract.startswith(gist.removesuffix("…") + " ")
        assert gist.removesuffix("…").split()[-1] not in {"a", "and", "of", "the", "with"}


def test_gist_falls_back_to_first_sentence_then_title() -> None:
    only_links = "Code: https://github.com/a/b. Data at https://example.org/d."
    assert paper_gist(paper(only_links)) == "Code: https://github.com/a/b."
    # No abstract: no gist, rather than the title a second time (issue 14).
    assert paper_gist(paper("", "  Tidy:\n Robust   Replanning ")) == ""
    assert paper_gist(paper("", "")) == ""


def test_gist_is_a_single_line_without_trailing_whitespace() -> None:
    abstract = "We propose\na planner\r\nfor robots.\n\nIt works.   "
    gist = paper_gist(paper(abstract))
    assert gist == "We propose a planner for robots."


REFERS_BACK = re.compile(
    r"^(?:We|Our \w+) (?:then|hence|therefore|thus|next|further|finally)\b"
    r"|^(?:Then|Hence|Therefore|Thus|Such|Those|It|They|Its|Their)\b"
    r"|^(?:This|These)\b(?! (?:paper|work|thesis|study|article|survey|report)\b)")


@pytest.mark.parametrize(("abstract", "expected"), [
    ("Transfer across contexts is costly. We hence introduce MBTL, which layers on top of RL.",
     "We introduce MBTL, which layers on top of RL."),
    ("Agents ask too many questions. We then propose ClarifyRL, a recipe that rewards asking.",
     "We propose ClarifyRL, a recipe that rewards asking."),
    ("Thoughts collapse in agent training. This simple and scalable GTR framework trains "
     "reasoning and action together.",
     "The simple and scalable GTR framework trains reasoning and action together."),
    ("Then, we propose a planner for household robots that replans.",
     "We propose a planner for household robots that replans."),
])
def test_gist_stands_alone(abstract: str, expected: str) -> None:
    """Issue 14: "We hence introduce…", "We then propose ClarifyRL…" began mid-thought."""
    assert paper_gist(paper(abstract)) == expected


def test_gist_prefers_a_sentence_that_does_not_point_back() -> None:
    abstract = ("We study planning for household robots with scene graphs. It outperforms "
                "every baseline on long tasks by a wide margin.")
    assert paper_gist(paper(abstract)) == abstract.split(". ")[0] + "."


def test_no_seed_gist_begins_mid_thought(seeds: Path) -> None:
    gists = [paper_gist(p) for p in seed_papers()]
    assert [g for g in gists if REFERS_BACK.search(g)] == []


def test_gist_is_deterministic() -> None:
    p = paper(AGENTPOISON, "MemTrap: Poisoning the Memory of LLM Agents")
    assert len({paper_gist(p) for _ in range(5)}) == 1


@settings(max_examples=300, deadline=None)
@given(abstract=TEXT, title=st.text(), max_chars=st.integers(min_value=0, max_value=300))
def test_gist_is_always_one_nonempty_line_within_budget(
    abstract: str, title: str, max_chars: int
) -> None:
    gist = paper_gist(Paper(id="x", title=title, abstract=abstract), max_chars=max_chars)
    assert gist == gist.strip()
    assert bool(gist) == bool(re.search(r"\w", abstract))
    assert "\n" not in gist and "\r" not in gist
    assert len(gist) <= max_chars + 1


# ---------------------------------------------------------------- theme_summary

THEME = [
    paper(
        "Reward design is a central difficulty when training reinforcement learning agents. "
        "We propose RewardSketch, which turns language goals into dense reward functions. "
        "It improves success by 23% on 11 of 12 tasks.",
        id="a",
    ),
    paper(
        "Hand-crafted rewards for reinforcement learning agents are costly and brittle. "
        "We introduce a method that learns reward models from preference feedback. "
        "Code is available at https://example.org/prefs.",
        id="b",
    ),
    paper(
        "Sparse rewards make exploration hard for reinforcement learning agents. "
        "This work uses language model feedback to shape intrinsic rewards for exploration. "
        "Results on NetHack show large gains.",
        id="c",
    ),
]


def sentences_of(summary: str) -> list[str]:
    return split_sentences(summary)


def test_theme_summary_is_extractive_and_one_sentence_per_paper() -> None:
    summary = theme_summary(THEME)
    chosen = sentences_of(summary)
    assert 1 <= len(chosen) <= 3 and len(summary) <= 700
    sources = []
    for sentence in chosen:
        owners = [p.id for p in THEME if from_one_sentence(sentence, p.abstract)]
        assert owners, sentence
        sources.append(owners[0])
    assert len(sources) == len(set(sources))
    assert "http" not in summary and "23%" not in summary


def test_theme_summary_respects_max_sentences_and_max_chars() -> None:
    assert len(sentences_of(theme_summary(THEME, max_sentences=1))) == 1
    short = theme_summary(THEME, max_chars=120)
    assert 0 < len(short) <= 120
    assert not short.endswith("…")  # whole sentences were dropped, none was cut
    tiny = theme_summary(THEME, max_chars=30)
    assert 0 < len(tiny) <= 30 and tiny.endswith("…")


def test_theme_summary_keywords_steer_the_choice() -> None:
    plain = theme_summary(THEME, max_sentences=1)
    steered = theme_summary(THEME, keywords=["preference feedback"], max_sentences=1)
    assert "preference feedback" not in plain
    assert "preference feedback" in steered


def test_theme_summary_skips_near_duplicates() -> None:
    twin = Paper(id="a2", title="Twin", abstract=THEME[0].abstract)
    summary = theme_summary([THEME[0], twin, *THEME[1:]])
    chosen = sentences_of(summary)
    assert len(chosen) == len(set(chosen))


def test_theme_summary_breaks_ties_by_paper_order() -> None:
    alpha = paper("Alpha agents learn reward models from human feedback.", id="alpha")
    beta = paper("Beta agents learn reward models from human feedback.", id="beta")
    assert theme_summary([alpha, beta], max_sentences=1).startswith("Alpha")
    assert theme_summary([beta, alpha], max_sentences=1).startswith("Beta")


def test_theme_summary_strips_markup_and_is_plain_text() -> None:
    markup = paper("# Agents learn reward models from human feedback for robots.", id="m")
    assert theme_summary([markup]) == "Agents learn reward models from human feedback for robots."


def test_theme_summary_empty_inputs() -> None:
    assert theme_summary([]) == ""
    assert theme_summary([paper(""), paper("   ", id="q")]) == ""
    assert theme_summary(THEME, max_sentences=0) == ""


def test_theme_summary_is_deterministic() -> None:
    assert len({theme_summary(THEME, keywords=["reward"]) for _ in range(5)}) == 1


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXT, max_size=5), st.integers(min_value=0, max_value=800))
def test_theme_summary_never_crashes(abstracts: list[str], max_chars: int) -> None:
    papers = [paper(a, id=str(i)) for i, a in enumerate(abstracts)]
    summary = theme_summary(papers, keywords=["model"], max_chars=max_chars)
    assert len(summary) <= max(max_chars, 0) + 1
    assert "\n" not in summary


def test_logger_is_named_and_has_no_handlers() -> None:
    assert not logging.getLogger("digest.offline").handlers


# ---------------------------------------------------------------- the seed pages


def seed_papers() -> list[Paper]:
    papers = []
    for path in sorted(SEEDS.glob("*.txt")):
        paragraphs = [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n")]
        body = [p for p in paragraphs if p][5:]
        for k in range(0, len(body) - 1, 2):
            papers.append(Paper(id=f"{path.stem}:{k}", title=body[k], abstract=body[k + 1]))
    return papers


@pytest.mark.parametrize("max_chars", [80, 220])
def test_seed_gists_come_from_their_abstracts(max_chars: int, seeds: Path) -> None:
    papers = seed_papers()
    assert len(papers) > 100
    for p in papers:
        gist = paper_gist(p, max_chars=max_chars)
        assert gist and len(gist) <= max_chars + 1, p.title
        assert "\n" not in gist and gist == gist.strip(), p.title
        assert from_one_sentence(gist, p.abstract), (p.title, gist)


def test_seed_theme_summary_comes_from_the_abstracts(seeds: Path) -> None:
    papers = seed_papers()[:40]
    summary = theme_summary(papers, keywords=["reinforcement learning", "agents"])
    assert 0 < len(summary) <= 700
    for sentence in sentences_of(summary):
        assert any(from_one_sentence(sentence, p.abstract) for p in papers), sentence


def test_theme_summary_avoids_sentences_that_answer_an_unseen_one() -> None:
    papers = [
        paper("Sensor networks route packets between distant relay nodes. Most sensor networks, "
              "however, route packets between nodes with fixed schedules.", id="a"),
        paper("Wireless sensor networks route packets between nodes on fixed schedules. "
              "Batteries drain fast.", id="b"),
    ]
    summary = theme_summary(papers, max_sentences=2)
    assert summary.startswith("Wireless sensor networks route packets")
    assert "however" not in summary


# A sentence that points back at one the reader never saw: by how it opens, or by "this
# problem" anywhere (independent of digest.offline's own patterns).
POINTS_BACK = re.compile(
    r"^(?:(?:\S+\s+){0,5}also\b|finally|then|hence|thus|therefore|however|moreover|"
    r"furthermore|in addition|additionally|let\b|(?:this|these|those|such|it|they|its|their)\b"
    r"(?! (?:paper|work|thesis|study|article|survey|report|chapter)\b)|the (?:above|"
    r"aforementioned|former|latter|same|interpretation|resulting|obtained|results?)\b)"
    r"|\b(?:this|these|those|such)\s+(?:[\w-]+\s+)?(?:question|problem|issue|gap|challenge|"
    r"limitation|shortcoming|drawback|difficult(?:y|ies)|bottleneck|concern|dilemma)s?\b",
    re.IGNORECASE)


def test_a_purpose_clause_is_dropped_only_after_a_comma_or_to_never_the_main_verb() -> None:
    """"We bridge this gap with InternLM-XComposer2.5-Reward …" became "We with InternLM-…" in
    the seeds issue: the clause pattern took the sentence's own verb and object for a purpose
    clause ("…, bridging this gap", "… to bridge this gap"), which has an opener."""
    assert rewrite("We bridge this gap with XYZ, a reward model.") == (
        "We bridge this gap with XYZ, a reward model.")
    assert rewrite("We address this problem by pruning the graph.") == (
        "We address this problem by pruning the graph.")
    assert rewrite("We propose XYZ, bridging this gap.") == "We propose XYZ."
    assert rewrite("We propose XYZ to bridge this gap.") == "We propose XYZ."
    assert rewrite("We propose XYZ that addresses these issues.") == "We propose XYZ."
    gist = paper_gist(paper("Agents fail in the wild. We address this challenge by proposing "
                            "XYZ, a learning system for agents that practise skills."))
    assert gist.startswith("We address this challenge by proposing XYZ")  # not "We by …"


@pytest.mark.parametrize(("abstract", "expected"), [
    ("Can LLMs build training environments for small agents? We propose EnvGen, a novel "
     "framework to address this question.", "We propose EnvGen, a novel framework."),
    ("Long histories overflow the context. We introduce diff history, a simple and highly "
     "effective solution to these issues.",
     "We introduce diff history, a simple and highly effective solution."),
    ("Earlier work fits the data. We also present a table of matches between infrared and "
     "X-ray surveys of the cloud.",
     "We present a table of matches between infrared and X-ray surveys of the cloud."),
    ("Energies were high. It is shown that a collapsing black hole accelerates particles to "
     "ultrahigh energies.", "A collapsing black hole accelerates particles to ultrahigh "
                            "energies."),
    ("Earlier work fits the data. Finally we investigate the gamma-ray spectrum in the "
     "ultrahigh energy range.", "We investigate the gamma-ray spectrum in the ultrahigh "
                                "energy range."),
])
def test_gist_rewrites_what_points_back_mid_sentence(abstract: str, expected: str) -> None:
    """Issue 14 leftovers: "a novel framework to address this question", "We also …"."""
    assert paper_gist(paper(abstract)) == expected


def test_theme_summary_never_opens_on_or_keeps_a_sentence_that_points_back() -> None:
    """Seen on real pages: "Robotics researchers have also explored …", "Finally we provide a
    possible interpretation of the construction.", "The interpretation is supported by …",
    "Let K be any field …"."""
    papers = [
        paper("The interpretation is supported by numerical solutions of the wave equation "
              "for sound in pipes. Sound in pipes is modelled by a wave equation.", id="a"),
        paper("Let K be any field and G be a finite group acting on sound waves in pipes. "
              "Finite groups act on sound waves in pipes.", id="b"),
        paper("Finally we provide a possible interpretation of sound waves in pipes. Pipes "
              "carry sound waves whose equation is known.", id="c"),
    ]
    summary = theme_summary(papers, keywords=["sound waves", "pipes"])
    assert summary.segments
    assert [s.text for s in summary.segments if POINTS_BACK.search(s.text)] == []
    assert not summary.startswith(("The interpretation", "Let ", "Finally"))


def test_no_seed_or_arxiv_summary_sentence_points_back() -> None:
    """Measured before the fix: 6 of 119 theme-summary sentences over the seed pages, each
    page and the arXiv sample (3 of them opening a summary); after: 0."""
    from digest import Options, Store, build_issue

    from .conftest import SEEDS as SEED_DIR
    from .conftest import SHARED_DATA

    sources = [[str(SEED_DIR)], [str(SHARED_DATA / "arxiv_metadata_sample.csv")]]
    sources += [[str(page)] for page in sorted(SEED_DIR.glob("*.txt"))]
    pointing = []
    for source in sources:
        with Store(":memory:") as store:
            built = build_issue(source, Options(week="2026-W47", include_published=True),
                                backend=None, store=store)
        pointing += [s.text for section in built.issue.sections
                     for s in section.summary.segments if POINTS_BACK.search(s.text)]
    assert pointing == []


def test_an_offline_tldr_line_says_what_the_theme_is_about_not_who_is_in_it() -> None:
    """Issue 14 leftovers: "Papers such as AffordKey, TwirlNet and GraspFormer." and one-word
    lists ("Knowledge, with EnvGen, …")."""
    papers = [Paper(id="a", title="RAFT: Reward rAnked FineTuning for Generative Foundation "
                                  "Model Alignment", abstract=""),
              Paper(id="b", title="Is RL Really Needed? A Study", abstract=""),
              Paper(id="c", title="SALMON: Self-Alignment with Instructable Reward Models",
                    abstract="")]
    line = theme_tldr("Human feedback & RLHF", ["human feedback", "knowledge", "reward model",
                                                "preference data", "RLHF"], papers)
    assert line == ("Reward model and preference data, with RAFT (reward rAnked FineTuning) "
                    "and SALMON (self-alignment with instructable reward models).")
    assert theme_tldr("Objects & grasping", ["objects", "grasping"], papers[:2]) == (
        "RAFT (reward rAnked FineTuning).")  # a question names no topic; "objects" says none
    assert theme_tldr("X", [], []) == ""


@pytest.mark.parametrize(("keyword", "leads"), [
    ("Chiral", False),  # capitalized where a sentence opened: an adjective, not a topic
    ("Light", True), ("X-ray", True), ("Kaluza-Klein", True), ("DeepSeek-R1", True),
    ("calculate", False),  # a verb the abstracts share ("we calculate") names nothing
])
def test_a_tldr_line_leads_with_a_lone_word_only_if_it_names_something(keyword, leads) -> None:
    """"Chiral, with crystal channeling of LHC forward protons ..." and "Light and calculate,
    with ..." opened TL;DR lines of the arXiv sample (stop 29 left them open)."""
    papers = [Paper(id="a", title="Crystal Channeling of Forward Protons", abstract="")]
    line = theme_tldr("Particles & detectors", [keyword], papers)
    assert line.startswith(f"{keyword[:1].upper()}{keyword[1:]}, with ") is leads, line


@pytest.mark.parametrize(("title", "topic"), [
    # cut at a title's full stop, never across it
    ("Instanton representation of Plebanski gravity. Consistency of the initital value "
     "constraints under time evolution", "instanton representation of plebanski gravity"),
    # a topic longer than a TL;DR can take names none: no phrase cut after "of"
    ("Novel algorithm to calculate hypervolume indicator of Pareto approximation set", ""),
    # a title that is a sentence names no topic
    ("Complete shrinking Ricci solitons have finite fundamental group", ""),
    # a parenthesis inside a word does not end the topic
    ("Z(3)-symmetric lattice models", "Z(3)-symmetric lattice models"),
    ("Sparse autoencoders (SAEs) for interpretability", "sparse autoencoders"),
    # a past participle that led into the linking word is not the topic's end
    ("Ellipsoidal oscillations induced by substellar companions", "ellipsoidal oscillations"),
    ("Probability distributions generated by random walks", "probability distributions"),
    ("Seed selection for embedded speed tests", "seed selection"),
])
def test_a_tldr_topic_is_a_whole_phrase_of_its_title(title, topic):
    """TL;DR lines of the arXiv sample read "… of Plebanski gravity. consistency of and …",
    "… hypervolume indicator of.", "… have finite fundamental." and "analysis of a Z and …"
    (a probe, this stop): a topic was the title's first seven words wherever they ended."""
    assert offline._paper_topic(Paper(id="a", title=title, abstract="")) == topic


@pytest.mark.parametrize(("abstract", "topic"), [
    ("A Flory-Huggins model is solved for cellulose.", "Flory-Huggins theory of solubility"),
    ("The Flory-Huggins model is solved.", "Flory-Huggins theory of solubility"),
    ("We solve the Flory-Huggins model.", "Flory-Huggins theory of solubility"),
])
def test_a_name_capitalized_after_an_article_keeps_its_capital(abstract, topic):
    """"Lattice, with flory-Huggins theory": "A Flory-Huggins model" was taken for a sentence
    opening on the name (stop 29 left names lower-cased open)."""
    paper = Paper(id="a", title="Flory-Huggins Theory of Solubility", abstract=abstract)
    assert offline._paper_topic(paper) == topic


def test_no_arxiv_tldr_topic_ends_on_a_word_that_needs_another():
    """64 of the arXiv sample's 2,000 titles gave a topic ending on "of", "a", "the" … or
    holding a sentence's full stop."""
    import csv

    from .conftest import SHARED_DATA

    with open(SHARED_DATA / "arxiv_metadata_sample.csv", encoding="utf-8") as rows:
        titles = [row["title"] for row in csv.DictReader(rows)]
    topics = [offline._paper_topic(Paper(id="a", title=" ".join(t.split()), abstract=""))
              for t in titles]
    dangling = [t for t in topics if t and (t.split()[-1].lower() in offline._TOPIC_END
                                            | {"of", "a", "an", "the", "to", "is", "are"}
                                            or ". " in t.replace("vs. ", ""))]
    assert dangling == []


def test_no_seed_tldr_line_is_a_list_of_names() -> None:
    from digest import Options, Store, build_issue
    from digest.render.view import issue_view

    with Store(":memory:") as store:
        built = build_issue([str(SEEDS)], Options(week="2026-W47", include_published=True),
                            backend=None, store=store)
    lines = [item.text for item in issue_view(built.issue).tldr]
    assert lines and not [line for line in lines if line.startswith("Papers such as")]
    assert all(len(line.split()) >= 3 for line in lines), lines


@pytest.mark.parametrize(("sentence", "attributed"), [
    ("We propose X and show that it works.", "One paper proposes X and shows that it works."),
    ("We provide schemes (which give a bond, M=1), and study the structure.",
     "One paper provides schemes (which give a bond, M=1), and studies the structure."),
    ("We introduce A, and analyze its limits and our gains.",
     "One paper introduces A, and analyzes its limits and its gains."),
    ("We release A and evaluate our agents.", "One paper releases A and evaluates its agents."),
    ("We study graphs and establish the bounds and prove that they hold.",
     "One paper studies graphs and establishes the bounds and proves that they hold."),
    # the joined verb may have a subject of its own: left as it is
    ("We propose a method where agents learn and identify the goals.",
     "One paper proposes a method where agents learn and identify the goals."),
    ("We propose a planner whose agents explore and identify the goals.",
     "One paper proposes a planner whose agents explore and identify the goals."),
    ("We propose a method and use cases for it.",
     "One paper proposes a method and use cases for it."),
    # a relative clause whose verb agrees with a thing, not with "we": the verb after is ours
    ("We introduce X, which comprises a planner and a critic, and propose a benchmark.",
     "One paper introduces X, which comprises a planner and a critic, and proposes a benchmark."),
    ("We build a tool that improves the recall and evaluate the tool.",
     "One paper builds a tool that improves the recall and evaluates the tool."),
    ("We study a state which is slow, and show that it is unordered.",
     "One paper studies a state which is slow, and shows that it is unordered."),
    ("We propose a tool which users adopt and evaluate the results.",
     "One paper proposes a tool which users adopt and evaluate the results."),
    ("We show that models fail and evaluate the cause.",  # the clause may own it: left
     "One paper shows that models fail and evaluate the cause."),
])
def test_a_verb_joined_to_the_opening_one_is_made_third_person_too(sentence, attributed):
    """"One paper provides optical schemes … and study the entanglement" was in the arXiv
    sample's issue: the verb after "and" had "we" for its subject too."""
    assert offline._attribute([sentence]) == [attributed]


@pytest.mark.parametrize(("sentence", "shown"), [
    ("This raises the question: how can we design it?",
     "This raises the question: how can we design it?"),
    ("These can be tested at LHC and ILC.", "These can be tested at LHC and ILC."),
    ("Such an equation is characterized by two numbers.",
     "Such an equation is characterized by two numbers."),
    ("This provides a probabilistic explanation.", "This provides a probabilistic explanation."),
    ("This is a supplement to the paper.", "This is a supplement to the paper."),
    ("This approach improves recall.", "The approach improves recall."),
    ("These results show a gain.", "The results show a gain."),
    ("This analysis shows a gain.", "The analysis shows a gain."),
    ("Such models fail often.", "The models fail often."),
])
def test_a_pointing_determiner_becomes_the_only_before_a_noun(sentence, shown):
    """"This raises the question" became "The raises the question" in the seeds issue; "These
    can be tested" "The can be tested" (a probe, stop 28): before a verb or an article the
    determiner stays (and the sentence still counts as pointing back)."""
    from digest.sentences import standalone
    assert standalone(sentence) == shown


def test_a_gist_is_not_a_sentence_about_prior_work():
    """"Prior work has introduced latent adversarial training (LAT) ..." was a seeds paper's gist,
    where its own contribution came next ("Here, we experiment with targeted LAT"; a probe,
    stop 28): "has introduced" reads as background like "has shown"."""
    from digest.models import Paper
    abstract = ("Large language models can often be made to behave in undesirable ways. Prior "
                "work has introduced latent adversarial training (LAT) as a way to improve "
                "robustness to broad classes of failures. Here, we experiment with targeted LAT "
                "where the adversary seeks to minimize loss on a specific competing task. We find "
                "that it can augment a wide variety of state-of-the-art methods.")
    gist = offline.paper_gist(Paper(id="x", title="Targeted Latent Adversarial Training "
                                    "Improves Robustness", abstract=abstract))
    assert gist.startswith("We experiment with targeted LAT"), gist  # its own aim
