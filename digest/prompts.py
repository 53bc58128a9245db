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
from .render.renderer import TemplateFiles

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
        try:
            return self._env.get_template(f"{name}.j2").render(**variables).strip()
        except jinja2.TemplateNotFound:
            raise TemplateError(f"prompt template {name}.j2 not found") from None
        except jinja2.TemplateError as exc:
            raise TemplateError(f"prompt template {name}.j2: {exc}") from None

    def fingerprint(self) -> str:
        """A hash of every template's source: part of the LLM cache key."""
        digest = hashlib.sha256()
        for name in TEMPLATE_NAMES:
            source, _, _ = self._env.loader.get_source(self._env, f"{name}.j2")  # type: ignore[union-attr]
            digest.update(name.encode() + b"\0" + source.encode() + b"\0")
        return digest.hexdigest()[:16]
