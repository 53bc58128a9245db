"""The LLM prompt templates (jinja2, ``prompts/*.j2``), overridable with ``--prompts DIR``.

Templates are trusted files; paper text only ever enters them as variables.
StrictUndefined turns a misspelt variable into an error instead of a silent gap.
``system`` is the same for every call of a run and each task's instructions come
before its data, so the prompt prefix stays identical and providers' prompt
caching applies. ``theme_naming`` is included by ``theme_summary`` and ``merge``:
a theme is named in the same call that summarises it, at no extra call.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import jinja2

from .errors import TemplateError
from .render.renderer import TemplateFiles, template_line

TEMPLATE_NAMES = ("system", "theme_summary", "theme_naming", "merge", "intro", "repair")


def default_prompts_dir() -> Path:
    """Inside the wheel prompts/ ships as digest/prompts; in a checkout it sits beside digest/."""
    packaged = Path(__file__).with_name("prompts")
    return packaged if packaged.is_dir() else Path(__file__).parent.parent / "prompts"


class Prompts:
    """Renders the prompt templates; a user directory overrides the shipped ones by name."""

    def __init__(self, directory: Path | None = None):
        search_path = [str(default_prompts_dir())]
        if directory is not None:
            if not Path(directory).is_dir():
                raise TemplateError(f"prompts folder {directory}: no such folder",
                                    setting="prompts")
            search_path.insert(0, str(directory))
        self._env = jinja2.Environment(
            loader=TemplateFiles(search_path),
            undefined=jinja2.StrictUndefined,
            autoescape=False,  # prompts are plain text for a model, not markup
            keep_trailing_newline=False,
        )

    def render(self, name: str, **variables: object) -> str:
        """The prompt ``name`` with ``variables``; a template that cannot be read, parsed or
        rendered is a ``TemplateError`` naming its file and line."""
        try:
            return self._env.get_template(f"{name}.j2").render(**variables).strip()
        except jinja2.TemplateNotFound as exc:
            missing = exc.name if isinstance(exc.name, str) else f"{name}.j2"
            needed = "" if missing == f"{name}.j2" else f" (included by {name}.j2)"
            raise TemplateError(f"prompt template {missing} not found{needed}: looked in "
                                f"{', '.join(self._env.loader.searchpath)}"  # type: ignore[union-attr]
                                ) from None
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"{exc.filename or name + '.j2'}:{exc.lineno}: {exc.message} "
                                "(fix that line of the prompt template)") from None
        except Exception as exc:  # noqa: BLE001 - a template's own line fails: say which
            where = template_line(exc) or f"prompt template {name}.j2"
            what = str(exc) if isinstance(exc, jinja2.TemplateError) else (
                f"{type(exc).__name__}: {' '.join(str(exc).split())}")
            raise TemplateError(f"{where}: {what} (the prompt template failed while "
                                "rendering: fix that line)") from None

    def fingerprint(self) -> str:
        """A hash of every template's source: part of the LLM cache key."""
        digest = hashlib.sha256()
        for name in TEMPLATE_NAMES:
            source, _, _ = self._env.loader.get_source(self._env, f"{name}.j2")  # type: ignore[union-attr]
            digest.update(name.encode() + b"\0" + source.encode() + b"\0")
        return digest.hexdigest()[:16]
