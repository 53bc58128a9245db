"""Render: an ``Issue`` to Markdown (the product), HTML (mail and web) and plain text.

One data model, three jinja2 templates (``digest/templates/issue.{md,html,txt}.j2``),
overridable from a folder of the user's. Untrusted text is escaped for each
format (``escape``), the templates see a ready-made view of the issue
(``view``): TL;DR, table of contents, the bar chart of theme sizes (``chart``)
and the themes that rose since earlier issues (``rising``).
"""

from .escape import escape_markdown, github_slug, html_text, one_line, plain_text, safe_url
from .renderer import FORMATS, TEMPLATES_DIR, Renderer
from .rising import PastIssue, PastTheme, Rising, RisingTheme, rising_themes
from .view import IssueView, Trusted, issue_view, past_themes

__all__ = [
    "FORMATS", "TEMPLATES_DIR", "IssueView", "PastIssue", "PastTheme", "Renderer", "Rising",
    "RisingTheme", "Trusted", "one_line", "escape_markdown", "github_slug", "html_text",
    "issue_view", "past_themes", "plain_text", "rising_themes", "safe_url",
]
