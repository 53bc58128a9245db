"""Work done once (issue 15 point 2): the issue `digest newsletter` writes is rendered once,
though the pipeline renders it and publishing writes it (with the same earlier issues)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import jinja2
import pytest

import digest
from digest.report import RunReport

from .render_samples import earlier_issue

ROOT = Path(__file__).parent.parent


@pytest.fixture
def renderings(monkeypatch) -> Counter:
    """How often each template is rendered: a spy on jinja2 (it still renders)."""
    counts: Counter = Counter()
    render = jinja2.Template.render

    def counted(self, *args, **kwargs):
        counts[self.name] += 1
        return render(self, *args, **kwargs)

    monkeypatch.setattr(jinja2.Template, "render", counted)
    return counts


def test_the_newsletter_renders_its_issue_once(tmp_path, renderings):
    from digest.outputs import publish

    out = tmp_path / "out"
    out.mkdir()
    publish(earlier_issue("2026-W46"), out, formats=["md"])  # rising themes need a history
    renderings.clear()
    run = digest.Digest(digest.resolve_settings({"backend": "offline"}))
    with digest.Store(tmp_path / "state.sqlite") as store:
        built = run.build([str(ROOT / "examples")], run.options("2026-W47"), store, out=out)
        path = digest.write_issue(built, out, store, RunReport())
    assert path.read_text(encoding="utf-8") == built.markdown
    assert "Rising themes" in built.markdown
    assert renderings["issue.md.j2"] == 1


def test_another_history_is_rendered_again(tmp_path, renderings):
    """Built without the output folder (no rising themes), the issue is rendered afresh when
    published there: the file is never the stale rendering."""
    from digest.outputs import publish

    out = tmp_path / "out"
    out.mkdir()
    publish(earlier_issue("2026-W46"), out, formats=["md"])
    renderings.clear()
    run = digest.Digest(digest.resolve_settings({"backend": "offline"}))
    with digest.Store(tmp_path / "state.sqlite") as store:
        built = run.build([str(ROOT / "examples")], run.options("2026-W47"), store)
        path = digest.write_issue(built, out, store, RunReport())
    assert "Rising themes" not in built.markdown
    assert "Rising themes" in path.read_text(encoding="utf-8")
    assert renderings["issue.md.j2"] == 2


def test_the_issue_view_and_term_profiles_are_made_once_for_every_format_and_the_history(
        tmp_path, monkeypatch):
    """The sections' views and the themes' term profiles do not depend on the format or the
    earlier issues: made once, though the issue is rendered as md, html and txt and recorded
    in the history (three times each before; 11 s a time for the profiles at 50,000 papers)."""
    from digest.outputs import publish
    from digest.render import view

    calls: Counter = Counter()
    for name in ("term_profiles", "section_views"):
        real = getattr(view, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(view, name, counted)
    out = tmp_path / "out"
    out.mkdir()
    publish(earlier_issue("2026-W46"), out, formats=["md"])
    calls.clear()
    run = digest.Digest(digest.resolve_settings({"backend": "offline"}))
    with digest.Store(tmp_path / "state.sqlite") as store:
        built = run.build([str(ROOT / "examples")], run.options("2026-W47"), store, out=out)
        digest.write_issue(built, out, store, RunReport(), formats=("md", "html", "txt"))
    assert sorted(path.suffix for path in out.glob("2026-W47*")) == [".html", ".md", ".txt"]
    assert "Rising themes" in (out / "2026-W47.md").read_text(encoding="utf-8")
    assert calls == {"term_profiles": 1, "section_views": 1}


@pytest.mark.parametrize("files", [{}, {"a.md": "x"}, {"2026-W47.md": "# Digest — ü\n\"q\"\n",
                                                      "2026-W47.html": "<p>\\u00e9 😀</p>",
                                                      "b.txt": ""}])
def test_the_content_hash_made_file_by_file_is_the_hash_of_the_whole_dump(files):
    import hashlib
    import json

    from digest.publishing import files_hash

    whole = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    assert files_hash(files) == whole
