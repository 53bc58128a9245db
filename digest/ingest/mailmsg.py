"""RFC 5322 e-mail: a listing mail (arXiv's daily listing, a forwarded Daily Papers mail).

The message is parsed with the standard library (``email``, ``policy.default``), from
bytes, so each part is decoded with its own transfer encoding and charset; a part with
no charset, or one that does not fit its bytes, is read as UTF-8 or a detected
encoding, with a warning (never silently with replacement characters). The text
parts are tried in order, text/plain first, then text/html reduced to its visible
text (``htmltext``); the first one that reads as an arXiv listing or a Daily Papers
page gives the records, and so does the first of each mail forwarded in it
(message/rfc822), so a mail forwarding two listings adds both.
A "Forwarded message" header block and a signature ("-- ") are removed first.
Attachments (a JSON, CSV, feed or page file) are read in their own format and add
their papers. A mail with no listing in a part or an attachment is refused ("no paper
listing in this message"), and so is every bounce or automatic reply, whatever it quotes.

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
from ..textsafety import untrusted_preview
from .arxiv_listing import looks_like_arxiv_listing, parse_arxiv_listing
from .base import Parsed, describe
from .daily_papers import looks_like_daily_papers, parse_daily_papers
from .decoding import decode
from .htmltext import html_to_text
from .plausible import not_a_listing, screen

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
        _check_parts(data, source)
        return _parse_message(email.message_from_bytes(data, policy=policy.default), source)
    except RecursionError:
        raise SourceError(source, "the e-mail's parts are nested too deeply to read",
                          fix="forward the listing mail itself, or save the listing as a file"
                          ) from None


# MIME parts a mail may have: a listing mail has a few. The parser reads each part's headers
# through the header registry, ~0.4 ms a part, so a 64 MB mail of tiny parts took minutes.
MAX_MIME_PARTS = 1_000


def _check_parts(data: bytes, source: str) -> None:
    """Refuse a mail of more than ``MAX_MIME_PARTS`` parts before the full parse, counted by
    the plain (compat32) parser, 13 times faster; only a mail with that many lines that open
    with "--" (each part follows one) is counted."""
    if data.count(b"\n--") <= MAX_MIME_PARTS:
        return
    parts = sum(1 for _ in email.message_from_bytes(data, policy=policy.compat32).walk())
    if parts > MAX_MIME_PARTS:
        raise SourceError(source, f"the e-mail has {parts:,} MIME parts, more than "
                          f"{MAX_MIME_PARTS:,} (a listing mail has a few)",
                          fix="forward the listing mail itself, or save the listing as a file")


def _parse_message(message: email.message.EmailMessage, source: str) -> Parsed:
    automatic = _automatic(message)
    if automatic:
        raise not_a_listing(source, "message", reason=f"it is {automatic}")
    warnings: list[str] = []
    tried: list[str] = []
    texts, attached = _text_parts(message), _attachments(message)
    budget = iter(range(MAX_PARTS))  # text parts tried, over the mail and those it forwards
    found = [_first_listing_body(mail, _text_parts(mail, own=True), source, warnings, tried,
                                 budget) for mail in _mails(message)]
    found += [_attachment(part, source, warnings, tried) for part in attached[:MAX_PARTS]]
    listings = [parsed for parsed in found if parsed is not None]
    untried = _untried(texts, attached)
    archives = _archives(message)
    if not listings:
        shown = ", ".join(dict.fromkeys(tried)) or "no text part"
        raise not_a_listing(source, "message", reason="no part of it is an arXiv listing, "
                            f"a Daily Papers page or an attached listing file (found: {shown})"
                            + (f"; {untried}" if untried else "")
                            + (f"; {archives}: {_UNPACK}" if archives else ""))
    if untried:
        warnings.append(describe(source, untried, fix="send the listing in a mail of its own"))
    if archives:
        warnings.append(describe(source, archives, fix=_UNPACK))
    merged = Parsed(warnings=warnings, fmt="email/" + "+".join(p.fmt for p in listings))
    for parsed in listings:
        merged.records += parsed.records
        merged.warnings += parsed.warnings
    return _named(merged, source)


# Parts tried as a listing, of each kind: a listing mail has a few, and each try costs ~0.5 ms
# (a 64 MB mail of tiny parts would take minutes).
MAX_PARTS = 100


def _untried(texts: list[email.message.EmailMessage],
             attached: list[email.message.EmailMessage]) -> str:
    """What a mail of too many parts left unread, if anything, naming the parts left."""
    left = [f"{len(found):,} {kind}, of which the first {MAX_PARTS} were tried (not tried: "
            f"{_names(found[MAX_PARTS:])})"
            for kind, found in (("text parts", texts), ("attachments", attached))
            if len(found) > MAX_PARTS]
    return "it has " + " and ".join(left) if left else ""


_NAMED = 10  # names of parts not tried shown at most


def _names(parts: list[email.message.EmailMessage]) -> str:
    """The parts' file names ("n100.txt, n101.txt and 12 more"), or their numbers among the
    parts of their kind when some have none ("parts 101-500")."""
    names = [part.get_filename() for part in parts]
    if not all(names):
        return f"parts {MAX_PARTS + 1}-{MAX_PARTS + len(parts)}"
    shown = ", ".join(untrusted_preview(name, 80) for name in names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED:,} more" if len(names) > _NAMED else "")


def _mails(message: email.message.EmailMessage) -> list[email.message.EmailMessage]:
    """The mail and each mail forwarded in it (message/rfc822 parts, at any depth): each may
    carry a listing of its own ("forward as attachment" of two listing mails)."""
    forwarded = [part.get_payload(0) for part in message.walk()
                 if part.get_content_type() == "message/rfc822" and part.is_multipart()]
    return [message, *(mail for mail in forwarded
                       if isinstance(mail, email.message.EmailMessage))]


def _first_listing_body(message: email.message.EmailMessage,
                        texts: list[email.message.EmailMessage], source: str,
                        warnings: list[str], tried: list[str],
                        budget: Iterator[int]) -> Parsed | None:
    """The first of the mail's own text parts that reads as a listing (its text/plain and
    text/html alternatives are one listing twice)."""
    for kind, text in _bodies(texts, source, warnings):
        if next(budget, None) is None:
            return None
        tried.append(kind)
        parsed = _parse_body(_strip_wrapping(text), f"{source} ({kind} part)", _sent(message))
        if parsed is not None:
            return parsed
    return None


def _automatic(message: email.message.EmailMessage) -> str | None:
    """Why this mail is a bounce or an automatic reply (RFC 3464, RFC 3834), if it is one."""
    if message.get_content_type() == "multipart/report":
        return "a delivery report (a bounce)"
    sender = str(message.get("from", "")).lower()
    if re.search(r"\b(?:mailer-daemon|postmaster)@", sender) or "mailer-daemon" in sender:
        return "a bounce from the mail system"
    submitted = str(message.get("auto-submitted", "")).strip().lower()
    precedence = str(message.get("precedence", "")).strip().lower()
    if submitted.startswith("auto-replied") or precedence == "auto_reply" or (
            message.get("x-autoreply") or message.get("x-autorespond")):
        return "an automatic reply (out of office or similar)"
    return None


def _text_parts(message: email.message.EmailMessage, *, own: bool = False
                ) -> list[email.message.EmailMessage]:
    """The text parts of the mail (``own``: not those of the mails forwarded in it)."""
    parts = _own_parts(message) if own else message.walk()
    return [p for p in parts if p.get_content_maintype() == "text" and not _is_attachment(p)]


def _own_parts(part: email.message.EmailMessage) -> Iterator[email.message.EmailMessage]:
    yield part
    if part.is_multipart() and part.get_content_type() != "message/rfc822":
        for child in part.get_payload():
            if isinstance(child, email.message.EmailMessage):
                yield from _own_parts(child)


def _bodies(parts: list[email.message.EmailMessage], source: str,
            warnings: list[str]) -> Iterator[tuple[str, str]]:
    """(content type, decoded text) of the text parts: plain ones first, then HTML."""
    for wanted in ("plain", "html"):
        for part in parts:
            if part.get_content_subtype() == wanted:
                text = _content(part, source, warnings)
                yield f"text/{wanted}", html_to_text(text) if wanted == "html" else text


def _is_attachment(part: email.message.EmailMessage) -> bool:
    if part.get_content_maintype() in ("multipart", "message"):
        return False
    return (part.get_content_disposition() == "attachment" or bool(part.get_filename())
            or part.get_content_type() not in ("text/plain", "text/html"))


_LISTING_TYPES = {"application/json", "application/x-ndjson", "application/jsonl",
                  "application/xml", "application/atom+xml", "application/rss+xml",
                  "application/csv"}
_LISTING_SUFFIXES = (".txt", ".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".xml", ".atom",
                     ".rss", ".eml")


def _attachments(message: email.message.EmailMessage) -> list[email.message.EmailMessage]:
    """Attached parts that may be listing files (text, JSON, feeds; not images or PDFs)."""
    return [part for part in message.walk() if _is_attachment(part) and (
        part.get_content_maintype() == "text" or part.get_content_type() in _LISTING_TYPES
        or (part.get_filename() or "").lower().endswith(_LISTING_SUFFIXES))]


_ARCHIVE_TYPES = {"application/zip", "application/x-zip-compressed", "application/gzip",
                  "application/x-gzip", "application/x-tar", "application/x-7z-compressed",
                  "application/x-bzip2", "application/x-xz", "application/zstd"}
_ARCHIVE_SUFFIXES = (".zip", ".gz", ".tgz", ".tar", ".7z", ".bz2", ".xz", ".zst")
_UNPACK = "unpack it and attach the listing file itself"


def _archives(message: email.message.EmailMessage) -> str:
    """Attached archives, which may hold a listing digest does not unpack: named, so that a
    zipped listing is not passed over in silence (images and PDFs are, quietly)."""
    names = [part.get_filename() or part.get_content_type() for part in message.walk()
             if _is_attachment(part) and (
                 part.get_content_type() in _ARCHIVE_TYPES
                 or (part.get_filename() or "").lower().endswith(_ARCHIVE_SUFFIXES))]
    if not names:
        return ""
    shown = ", ".join(untrusted_preview(name, 80) for name in names[:_NAMED])
    more = f" and {len(names) - _NAMED:,} more" if len(names) > _NAMED else ""
    return f"attached archives not read (digest does not unpack them): {shown}{more}"


def _attachment(part: email.message.EmailMessage, source: str, warnings: list[str],
                tried: list[str]) -> Parsed | None:
    """The papers of an attached listing file, read in its own format; None if it has none."""
    from . import parse_attachment  # the package's format registry, which imports this module

    name = part.get_filename() or part.get_content_type()
    tried.append(f"attachment {name}")
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes) or not payload.strip():
        return None
    try:
        return parse_attachment(payload, f"{source} (attachment {name})",
                                part.get_content_type(), part.get_filename() or "")
    except SourceError as error:
        warnings.append(str(error))
        return None


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
    try:
        if looks_like_arxiv_listing(text):
            return screen(parse_arxiv_listing(text, label), label, kind="message")
        if text.strip() and looks_like_daily_papers(text):
            return screen(parse_daily_papers(text, label, date_hint=sent), label,
                          kind="message")
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
