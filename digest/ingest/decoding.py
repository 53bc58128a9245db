"""Bytes to text: UTF-8 first, then a declared encoding, then a detected one, and say so.

Detection uses charset-normalizer. A blind latin-1 fallback never fails, which is
the problem: it turns Cyrillic or Shift-JIS into silent mojibake. Among equally
good guesses we prefer cp1252, the usual non-UTF-8 encoding of Western
spreadsheets and Windows tools (charset-normalizer alone picks cp1250 for French).
"""

from __future__ import annotations

import codecs
import re

from ..errors import SourceError

__all__ = ["decode"]

_BOMS = [(codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16")]
_MAGIC = [(b"%PDF", "a PDF", "extract its text first, e.g. pdftotext"),
          (b"PK\x03\x04", "a zip archive", "unzip it and pass the file inside"),
          (b"\x1f\x8b", "a gzip file", "gunzip it first"),
          (b"\x89PNG", "a PNG image", "pass a listing, not an image"),
          (b"\xff\xd8\xff", "a JPEG image", "pass a listing, not an image"),
          (b"SQLite format 3", "an SQLite database", "export the records to JSON or CSV")]
_DECLARED = [re.compile(rb"^<\?xml[^>]{0,200}encoding=[\"']([\w.:-]+)[\"']"),
             re.compile(rb"<meta[^>]{0,200}charset=[\"']?([\w.:-]+)", re.IGNORECASE)]
_SNIFF_BYTES = 8192


def decode(data: bytes, source: str, declared: str | None = None) -> tuple[str, str | None]:
    """Decode ``data``; return the text and a warning when it was not UTF-8."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _strict(data, encoding, source), None
    _refuse_binary(data, source)
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    line = data[:first_bad].count(b"\n") + 1
    declared = declared or _declared_in(data[:_SNIFF_BYTES])
    if declared and _ascii_based(declared):
        try:
            return data.decode(declared), _note(source, line, f"decoded as {declared}, "
                                                "as the source declares")
        except UnicodeDecodeError:
            pass
    detected = _detect(data)
    if detected is None:
        raise SourceError(source, "not valid UTF-8, and no other encoding fits", line=line,
                          fix="convert it to UTF-8, e.g. iconv -f cp1252 -t utf-8")
    how = (f"it declares {declared}, which does not fit; decoded as {detected} (detected)"
           if declared and _ascii_based(declared) else f"decoded as {detected} (detected)")
    return data.decode(detected), _note(source, line, how)


def _refuse_binary(data: bytes, source: str) -> None:
    for magic, kind, fix in _MAGIC:
        if data.startswith(magic):
            raise SourceError(source, f"this is {kind}, not a listing", fix=fix)
    if b"\x00" in data[:_SNIFF_BYTES]:
        raise SourceError(source, "this is a binary file (it holds NUL bytes), not a listing",
                          fix="pass a text, JSON, CSV or feed file; UTF-16 needs a BOM")


def _declared_in(head: bytes) -> str | None:
    for pattern in _DECLARED:
        match = pattern.search(head)
        if match:
            return match[1].decode("ascii")
    return None


def _ascii_based(encoding: str) -> bool:
    """A known encoding other than UTF-8 that reads ASCII as ASCII (so not UTF-16 or 32)."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    return name != "utf-8" and not name.startswith(("utf-16", "utf-32"))


def _strict(data: bytes, encoding: str, source: str) -> str:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        start = getattr(exc, "start", 0)
        raise SourceError(source, f"not valid {encoding}, though it says so",
                          line=data[:start].count(b"\n") + 1,
                          fix="re-save it as UTF-8") from None


def _detect(data: bytes) -> str | None:
    from charset_normalizer import from_bytes  # only for bytes that are not UTF-8

    matches = from_bytes(data)
    best = matches.best()
    if best is None:
        return None
    ties = [m for m in matches if m.chaos <= best.chaos and m.coherence >= best.coherence]
    if any("cp1252" in m.could_be_from_charset for m in ties):
        return "cp1252"
    return str(best.encoding)


def _note(source: str, line: int, what: str) -> str:
    return (f"{source}: not UTF-8 (first non-UTF-8 byte on line {line}); {what} "
            "(convert it to UTF-8 to silence this warning)")
