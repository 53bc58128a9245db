"""RFC 5322 e-mail: a listing mail (arXiv's daily listing, a forwarded Daily Papers mail).

The message is parsed with the standard library (``email``, ``policy.default``), from
bytes, so each part is decoded with its own transfer encoding and charset; a part with
no charset, or one that does not fit its bytes, is read as UTF-8 or a detected
encoding, with a warning (never silently with replacement characters). The text
parts are tried in order, text/plain first, then text/html reduced to its visible
text (``htmltext``); the first one that reads as an arXiv listing or a Daily Papers
page gives the records. Parts inside a forwarded message (message/rfc822) count too.
A "Forwarded message" header block and a signature ("-- ") are removed first.

Records name the mail as their source; warnings name the part ("mail.eml (text/plain
part):12: ..."), and their line numbers count in that part's decoded text.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import email
import email.message
import re
from collections.abc import Iterator
from email import policy

from ..errors import SourceError
from .arxiv_listing import looks_like_arxiv_listing, parse_arxiv_listing
from .base import Parsed, describe
from .daily_papers import looks_like_daily_papers, parse_daily_papers
from .decoding import decode
from .htmltext import html_to_text

__all__ = ["looks_like_email", "parse_email", "parse_email_bytes"]

_FIELD_NAME = re.compile(rb"^([!-9;-~]{1,76}):")
_MAIL_FIELDS = {b"from", b"subject", b"mime-version"}
_HEAD_LINES = 100
_FORWARDED = re.compile(r"^[-\s]*(?:Forwarded message|Original Message|Begin forwarded "
                        r"message)[-\s:]*$", re.IGNORECASE)
_QUOTED_HEADER = re.compile(r"^(?:From|Date|Sent|Subject|To|Cc|Reply-To):\s", re.IGNORECASE)
_SIGNATURE = re.compile(r"^-- ?$")
_SIGNATURE_LINES = 15  # a signature is short: an earlier "--" line belongs to the text


def looks_like_email(head: bytes | str) -> bool:
    """Headers at the very top: field lines (or an mbox "From " line), From/Subject/MIME-Version
    among them, then a blank line or the end of what was given."""
    data = head.encode("utf-8", "replace") if isinstance(head, str) else head
    lines = data[:16384].lstrip(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").split(b"\n")
    if lines and lines[0].startswith(b"From "):  # an mbox envelope line
        lines = lines[1:]
    names = []
    for line in lines[:_HEAD_LINES]:
        if not line.strip():
            break
        match = _FIELD_NAME.match(line)
        if match:
            names.append(match[1].lower())
        elif not (names and line[:1] in (b" ", b"\t")):
            return False
    return len(names) >= 2 and bool(_MAIL_FIELDS & set(names))


def parse_email(text: str, source: str) -> Parsed:
    """An e-mail given as text (stdin as text, ``parse_text``)."""
    return parse_email_bytes(text.encode("utf-8", "surrogateescape"), source)


def parse_email_bytes(data: bytes, source: str) -> Parsed:
    try:
        return _parse_message(email.message_from_bytes(data, policy=policy.default), source)
    except RecursionError:
        raise SourceError(source, "the e-mail's parts are nested too deeply to read",
                          fix="forward the listing mail itself, or save the listing as a file"
                          ) from None


def _parse_message(message: email.message.EmailMessage, source: str) -> Parsed:
    warnings: list[str] = []
    tried = []
    for kind, text in _bodies(message, source, warnings):
        label = f"{source} ({kind} part)"
        tried.append(kind)
        parsed = _parse_body(_strip_wrapping(text), label, _sent(message))
        if parsed is not None:
            parsed.warnings[:0] = warnings
            parsed.fmt = f"email/{parsed.fmt}"
            return _named(parsed, source)
    found = ", ".join(dict.fromkeys(tried)) or "no text part"
    raise SourceError(source, f"an e-mail, but no part of it is an arXiv listing or a Daily "
                      f"Papers page (found: {found})",
                      fix="forward the listing mail itself, or save the listing as a file")


def _bodies(message: email.message.EmailMessage, source: str,
            warnings: list[str]) -> Iterator[tuple[str, str]]:
    """(content type, decoded text) of the text parts: plain ones first, then HTML."""
    parts = [p for p in message.walk() if p.get_content_maintype() == "text"]
    for wanted in ("plain", "html"):
        for part in parts:
            if part.get_content_subtype() == wanted:
                text = _content(part, source, warnings)
                yield f"text/{wanted}", html_to_text(text) if wanted == "html" else text


def _content(part: email.message.EmailMessage, source: str, warnings: list[str]) -> str:
    """The part's text: its declared charset when that fits, else UTF-8 or a detected one."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return ""
    declared = part.get_content_charset()
    if declared:
        try:
            return payload.decode(declared)
        except (LookupError, UnicodeDecodeError):
            pass
    label = f"{source} ({part.get_content_type()} part)"
    try:
        text, note = decode(payload, label)
    except SourceError:
        text, note = payload.decode("utf-8", "replace"), describe(
            label, "neither its charset nor UTF-8 fits; bad bytes replaced",
            fix="re-save the mail as UTF-8")
    if declared and not note:
        note = describe(label, f"its charset {declared!r} does not fit; read as UTF-8")
    warnings += [note] if note else []
    return text


def _parse_body(text: str, label: str, sent: dt.date | None) -> Parsed | None:
    if looks_like_arxiv_listing(text):
        return parse_arxiv_listing(text, label)
    if text.strip() and looks_like_daily_papers(text):
        try:
            return parse_daily_papers(text, label, date_hint=sent)
        except SourceError:
            return None
    return None


def _sent(message: email.message.EmailMessage) -> dt.date | None:
    """The mail's Date: header, which gives a year to a Daily Papers date line ("Mar 14")."""
    try:
        when = getattr(message["date"], "datetime", None)
    except (TypeError, ValueError, IndexError):  # an unparseable Date: header
        return None
    return when.date() if isinstance(when, dt.datetime) else None


def _strip_wrapping(text: str) -> str:
    """The text without a forwarded-message header block and without the signature."""
    lines = text.replace("\r\n", "\n").split("\n")
    for index, line in enumerate(lines[:200]):
        if _FORWARDED.match(line):
            end = index + 1
            while end < len(lines) and (_QUOTED_HEADER.match(lines[end]) or
                                        (end == index + 1 and not lines[end].strip())):
                end += 1
            lines[index:end] = [""]
            break
    for index in range(len(lines) - 1, max(-1, len(lines) - 1 - _SIGNATURE_LINES), -1):
        if _SIGNATURE.match(lines[index]):
            lines = lines[:index]
            break
    return "\n".join(lines)


def _named(parsed: Parsed, source: str) -> Parsed:
    """Records sighted in the mail itself; part line numbers do not apply to the file."""
    parsed.records = [dataclasses.replace(r, sighting=dataclasses.replace(
        r.sighting, source=source, line=None)) for r in parsed.records]
    return parsed
