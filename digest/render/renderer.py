"""The renderer: an ``Issue`` (and the archive pages) through jinja2 templates.

Templates ship in ``digest/templates`` and can be overridden one by one from a
folder of the user's (``--templates DIR``). Undefined variables are errors
(StrictUndefined). The format follows from the file name — ``*.md.j2``,
``*.txt.j2``, ``*.html.j2``, ``*.xml.j2`` — and so does escaping: every
``{{ value }}`` is escaped for its format on the way out (jinja2's
``finalize``), unless digest marked it ``Trusted``; HTML and XML templates
also have autoescape on. A template that forgets a filter still cannot turn a
title into markup or a link, nor can one that uses a filter meant to: in HTML
and XML, the only ``Markup`` a template can hold is escaped text or its own
markup around escaped text (see ``_MarkupTextOnly``).
"""

from __future__ import annotations

import re
import textwrap
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import filters, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.sandbox import SandboxedEnvironment, SecurityError
from markupsafe import Markup, escape

from ..errors import ConfigError, TemplateError
from ..files import utf8_text
from ..models import Issue
from .escape import escape_markdown, html_text, one_line, plain_text, without_rules
from .rising import PastIssue, PastTheme
from .view import Trusted, issue_view, plural

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
FORMATS = {"md": "issue.md.j2", "html": "issue.html.j2", "txt": "issue.txt.j2"}
TEXT_WIDTH = 72
_KIND = re.compile(r"\.(md|txt|html|xml)\.j2$")
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACE = re.compile(r"[ \t]+\n")


def _finalize_md(value: object) -> str:
    return value if isinstance(value, Trusted) else escape_markdown(value)


def _finalize_txt(value: object) -> str:
    return value if isinstance(value, Trusted) else plain_text(value)


def _finalize_html(value: object) -> object:
    # Trusted text is returned as a plain str, so autoescape still escapes it (e.g. & in URLs).
    return value if isinstance(value, (Markup, Trusted)) else html_text(value)


def _finalize_xml(value: object) -> object:
    return value if isinstance(value, (Markup, Trusted)) else one_line(value)


_FINALIZE: dict[str, Callable[[object], object]] = {
    "md": _finalize_md, "txt": _finalize_txt, "html": _finalize_html, "xml": _finalize_xml}


def _text_of(value: Any) -> Any:
    """Markup as the text a reader sees (tags dropped, entities read); anything else as is."""
    return value.striptags() if isinstance(value, Markup) else value


def _as_is(value: Any, *_args: Any, **_kwargs: Any) -> Any:
    return value


# jinja2's filters read for what each makes of a value: replaced in HTML and XML by
# ``_escaping_filters``, or giving Markup only of Markup or of escaped text, or never Markup. A
# user's template gets only these (and digest's own): a filter a later jinja2 brings is missing
# until it is read, rather than trusted unread.
_REVIEWED = """
    abs attr batch capitalize center count d default dictsort e escape filesizeformat first
    float forceescape format groupby indent int items join last length list lower map max min
    pprint random reject rejectattr replace reverse round safe select selectattr slice sort
    string striptags sum title tojson trim truncate unique upper urlencode urlize wordcount
    wordwrap xmlattr
    """
REVIEWED_FILTERS = frozenset(_REVIEWED.split())


def _escaping_filters(kind: str) -> dict[str, Callable[..., Any]]:
    """The filters of HTML and XML templates that would mark text as markup (``safe``,
    ``urlize``, ``tojson``, which is unsafe in a double-quoted attribute) or undo escaping
    (``striptags`` reads entities back; ``truncate``, ``wordwrap`` and ``reverse`` could cut or
    turn a tag, which the value's text then fills), in versions that give escaped text. The
    escaping ones escape as digest does (no bidi overrides, no linkable URLs)."""
    finalize = _FINALIZE[kind]

    def as_text(value: Any) -> Markup:
        return escape(finalize(value))

    @jinja2.pass_eval_context
    def tojson(eval_ctx: jinja2.nodes.EvalContext, value: Any, indent: int | None = None
               ) -> Markup:
        return escape(str(filters.do_tojson(eval_ctx, value, indent)))

    @jinja2.pass_environment
    def truncate(env: jinja2.Environment, value: Any, *args: Any, **kwargs: Any) -> Markup:
        return as_text(filters.do_truncate(env, _text_of(value), *args, **kwargs))

    @jinja2.pass_environment
    def wordwrap(env: jinja2.Environment, value: Any, *args: Any, **kwargs: Any) -> Markup:
        return as_text(filters.do_wordwrap(env, _text_of(value), *args, **kwargs))

    def reverse(value: Any) -> Any:
        return as_text(_text_of(value)[::-1]) if isinstance(value, str) else filters.do_reverse(
            value)

    def indent(value: Any, width: Any = 4, first: bool = False, blank: bool = False) -> Any:
        """jinja2's indent takes an indent string given with markup for markup itself."""
        if isinstance(width, str) and not isinstance(width, Markup):
            width = as_text(width)
        return filters.do_indent(value, width, first, blank)

    def escape_text(value: Any) -> Markup:
        return value if isinstance(value, Markup) else as_text(value)

    def forceescape(value: Any) -> Markup:
        return escape(str(value)) if isinstance(value, Markup) else as_text(value)

    return {"safe": _as_is, "urlize": _as_is, "tojson": tojson,
            "striptags": lambda value: as_text(filters.do_striptags(value)),
            "truncate": truncate, "wordwrap": wordwrap, "reverse": reverse, "indent": indent,
            "e": escape_text, "escape": escape_text, "forceescape": forceescape}


class _MarkupCode(CodeGenerator):
    """HTML and XML templates compiled so that ``{% autoescape false %}`` is a template error
    (without autoescape, ``|replace`` and filter blocks work on escaped text as plain text)
    and a slice goes through ``environment.getitem`` like an index (jinja2 compiles it to a
    plain ``[a:b]``)."""

    def visit_Getitem(self, node: nodes.Getitem, frame: Frame) -> None:
        if not isinstance(node.arg, nodes.Slice):
            super().visit_Getitem(node, frame)
            return
        self.write("environment.getitem(")
        self.visit(node.node, frame)
        self.write(", slice(")
        for n, part in enumerate((node.arg.start, node.arg.stop, node.arg.step)):
            self.write(", " if n else "")
            if part is None:
                self.write("None")
            else:
                self.visit(part, frame)
        self.write("))")

    def visit_EvalContextModifier(self, node: nodes.EvalContextModifier, frame: Frame) -> None:
        for option in node.options:
            if option.key == "autoescape" and not (
                    isinstance(option.value, nodes.Const) and option.value.value is True):
                self.fail("autoescape cannot be turned off in an HTML or XML template (digest "
                          "escapes every value); remove the {% autoescape %} tag", node.lineno)
        super().visit_EvalContextModifier(node, frame)


class _TextCode(CodeGenerator):
    """Markdown and plain-text templates compiled so that ``{% filter %}`` is a template
    error: its output is written as the filter makes it, after the escaping of the values
    inside, so ``wordwrap`` could start a line with a title's ``#`` and ``replace`` could
    take the escapes out of a link. A filter applied to the value is escaped after it."""

    def visit_FilterBlock(self, node: nodes.FilterBlock, frame: Frame) -> None:
        self.fail("a {% filter %} block cannot be used in a Markdown or text template (its "
                  "output would not be escaped); apply the filter to the value instead, as in "
                  "{{ paper.title | wordwrap(60) }}", node.lineno)


class _MarkupTextOnly(SandboxedEnvironment):
    """HTML and XML: ``Markup`` a template makes itself (a ``{% set %}`` block, a macro's
    output, escaped text) has no methods, and a slice or an item of it is its text: splitting
    or cutting it could open a tag that a value's text then fills."""

    code_generator_class = _MarkupCode

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        return not isinstance(obj, Markup) and super().is_safe_attribute(obj, attr, value)

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, Markup) and isinstance(argument, int | slice):
            return _text_of(obj)[argument]
        return super().getitem(obj, argument)


def wrap(text: object, indent: int = 0, first: str | None = None,
         width: int = TEXT_WIDTH) -> Trusted:
    """Plain text wrapped to ``width`` columns, lines indented by ``indent`` spaces, the first
    line by ``first`` (e.g. a bullet) when given, and no rule line of its own (see
    ``without_rules``). Apply it last: its line breaks are kept."""
    pad = " " * indent
    return Trusted(textwrap.fill(without_rules(plain_text(text)), width,
                                 initial_indent=pad if first is None else first,
                                 subsequent_indent=pad, break_on_hyphens=False))


class TemplateFiles(jinja2.FileSystemLoader):
    """Templates from folders, the first that has the name winning; a file that is not UTF-8 is
    a ``TemplateError`` naming it and the line (the prompts are read with it too)."""

    def get_source(self, environment: jinja2.Environment, template: str
                   ) -> tuple[str, str, Callable[[], bool]]:
        try:
            return super().get_source(environment, template)
        except UnicodeDecodeError:
            path = next(path for path in (Path(folder, template) for folder in self.searchpath)
                        if path.is_file())
            utf8_text(path.read_bytes(), str(path), TemplateError)
            raise  # mended since: let the next run read it


class _LastRendered:
    """The last issue rendered, and as what: publishing renders the issue the pipeline has
    just rendered (the same object, format, templates and history), which is then a look-up
    instead of a second rendering. A rendering depends on nothing else."""

    def __init__(self) -> None:
        self.issue: Issue | None = None
        self.key: tuple[object, ...] = ()
        self.text = ""

    def get(self, issue: Issue, key: tuple[object, ...]) -> str | None:
        return self.text if issue is self.issue and key == self.key else None

    def keep(self, issue: Issue, key: tuple[object, ...], text: str) -> str:
        self.issue, self.key, self.text = issue, key, text
        return text


_LAST = _LastRendered()


class Renderer:
    """Renders issues and archive pages with the shipped templates, or a user's first."""

    def __init__(self, templates_dir: Path | None = None):
        if templates_dir is not None and not Path(templates_dir).is_dir():
            raise ConfigError(f"templates folder {templates_dir}: no such folder (it should hold "
                              f"templates like those in {TEMPLATES_DIR})", setting="templates")
        search = [str(TEMPLATES_DIR)]
        if templates_dir is not None:
            search.insert(0, str(templates_dir))
        self._search = tuple(search)
        loader = TemplateFiles(search)
        self._envs = {kind: _environment(loader, kind, sandboxed=templates_dir is not None)
                      for kind in _FINALIZE}

    def render(self, issue: Issue, fmt: str = "md", *, history: Sequence[PastIssue] = (),
               themes: Sequence[PastTheme] | None = None) -> str:
        """``issue`` as ``md``, ``html`` or ``txt``; rising themes judged against ``history``
        (``themes``: the issue's own term profiles as published, for an issue kept without
        every abstract; by default made from its papers)."""
        if fmt not in FORMATS:
            raise ConfigError(f"unknown output format {fmt!r}; choose from {', '.join(FORMATS)}")
        key = (fmt, self._search, tuple(history), None if themes is None else tuple(themes))
        done = _LAST.get(issue, key)
        if done is not None:
            return done
        view = issue_view(issue, history, themes)
        return _LAST.keep(issue, key, self.page(FORMATS[fmt], issue=view))

    def markdown(self, issue: Issue, *, history: Sequence[PastIssue] = (),
                 themes: Sequence[PastTheme] | None = None) -> str:
        return self.render(issue, "md", history=history, themes=themes)

    def html(self, issue: Issue, *, history: Sequence[PastIssue] = (),
             themes: Sequence[PastTheme] | None = None) -> str:
        return self.render(issue, "html", history=history, themes=themes)

    def text(self, issue: Issue, *, history: Sequence[PastIssue] = (),
             themes: Sequence[PastTheme] | None = None) -> str:
        return self.render(issue, "txt", history=history, themes=themes)

    def page(self, name: str, **context: Any) -> str:
        """Render the template ``name``; its format (and escaping) comes from its suffix."""
        kind = _kind(name)
        try:
            text = self._envs[kind].get_template(name).render(**context)
        except jinja2.TemplateNotFound as exc:
            missing = exc.name if isinstance(exc.name, str) else name
            needed = "" if missing == name else f"included by {name}; "
            raise TemplateError(f"template {missing} not found ({needed}looked in "
                                f"{', '.join(self._envs[kind].loader.searchpath)})"  # type: ignore[union-attr]
                                ) from None
        except jinja2.TemplateError as exc:
            where = (f"{exc.filename}:{exc.lineno}" if isinstance(exc, jinja2.TemplateSyntaxError)
                     else template_line(exc) or name)
            raise TemplateError(f"{where}: {exc}{_fix(exc)}") from None
        except Exception as exc:
            line = self._users_line(exc)
            if line is None:
                raise  # digest's own templates or code: a bug to report, not a template to fix
            message = " ".join(str(exc).split())
            raise TemplateError(f"{line}: {type(exc).__name__}: {message} (the template "
                                "failed while rendering this issue: fix that line)") from None
        return _tidy(text)

    def _users_line(self, error: BaseException) -> str | None:
        """"FILE:LINE" of the last line of a template of the user's the error passed through
        (jinja2 puts the template's own lines in the traceback), if any."""
        if len(self._search) < 2:
            return None
        return template_line(error, Path(self._search[0]))


def template_line(error: BaseException, folder: Path | None = None) -> str | None:
    """"FILE:LINE" of the last template line (of a template in ``folder``, if given) the error
    passed through: jinja2 puts the templates' own lines in the traceback."""
    within = folder.resolve() if folder is not None else None
    lines = [frame for frame in traceback.extract_tb(error.__traceback__)
             if frame.filename.endswith(".j2")
             and (within is None or Path(frame.filename).resolve().parent == within)]
    return f"{lines[-1].filename}:{lines[-1].lineno}" if lines else None


def _fix(exc: jinja2.TemplateError) -> str:
    if not isinstance(exc, SecurityError):
        return ""
    return (" Use a filter instead (|upper, |truncate, |replace...): a template gets no "
            "Python internals, and markup it makes has no methods")


def _kind(name: str) -> str:
    match = _KIND.search(name)
    if not match:
        raise TemplateError(f"template {name}: the name must end in .md.j2, .txt.j2, .html.j2 "
                            "or .xml.j2, which says how its values are escaped")
    return match[1]


def _environment(loader: jinja2.BaseLoader, kind: str, *, sandboxed: bool) -> jinja2.Environment:
    """``sandboxed`` for a user's templates: none reaches Python's internals (``__class__``,
    ``__globals__``) to make ``Trusted`` text or ``Markup`` of a value by hand, and in HTML and
    XML markup it makes has no methods. digest's own templates need no sandbox, which costs a
    check on every attribute a template reads (a quarter of a large issue's rendering)."""
    markup = kind in ("html", "xml")
    sandbox = _MarkupTextOnly if markup else SandboxedEnvironment
    env = (sandbox if sandboxed else jinja2.Environment)(
        loader=loader, undefined=jinja2.StrictUndefined, autoescape=markup,
        finalize=_FINALIZE[kind], trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    if not markup:
        env.code_generator_class = _TextCode
    env.filters["md"] = lambda value: Trusted(escape_markdown(value))
    if markup:
        env.filters.update(_escaping_filters(kind))
    if kind == "txt":  # its output is printed as is: plain text only, never Markdown or HTML
        env.filters["wrap"] = wrap
    env.globals["plural"] = plural
    if sandboxed:
        env.filters = {name: function for name, function in env.filters.items()
                       if name in REVIEWED_FILTERS or name in ("md", "wrap")}
    return env


def _tidy(text: str) -> str:
    """No trailing spaces, no runs of blank lines, exactly one final newline. Each pattern
    runs only where a look for what it needs finds it: on the 18 MB of a 50k issue, which
    has neither, the two substitutions took 0.33 s and the looks take 0.05."""
    if " \n" in text or "\t\n" in text:
        text = _TRAILING_SPACE.sub("\n", text)
    if "\n\n\n" in text:
        text = _BLANK_RUNS.sub("\n\n", text)
    return text.strip() + "\n"
