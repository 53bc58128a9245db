"""Untrusted prose: invisible characters cleaned, anything address-like found.

``clean_untrusted`` drops what no reader should get from text we did not write
(a model's answer, say): lone surrogates (they cannot even be encoded),
control characters, and every Unicode *format* character: bidi embeddings,
overrides and isolates, zero-width characters, tag characters.

``find_address`` returns the first address-like piece of a text, or None. Mail
clients and Markdown renderers turn a bare ``evil-prize.xyz/win`` or ``bit.ly/x``
into a link, and a reader copies ``example[.]com`` or "evilprize dot xyz" into a
browser, so all of these count:

* a URL scheme (``https://``, defanged ``hxxps[:]//``) or ``www.``;
* a host name: labels joined by dots whose last label is a real top-level domain
  (all ~1,450 of the ICANN section of the Public Suffix List, IDN ones included,
  from the ``publicsuffixlist`` package), with a letter somewhere before it;
* the same after undoing the usual defanging: ``[.]``, ``(.)``, ``{.}``,
  ``[dot]``, ``(dot)``, `` dot ``, and the full-width and ideographic dots;
* an IPv4 address, or an IPv6 one with ``::`` or all eight groups.

Why a real TLD list and not "any two letters after a dot": prose is full of
dotted tokens that are not hosts ("e.g.", "Fig.2", "v1.5", "GPT-4.0", "Node.js",
"U.S."), and a structural rule either refuses those or misses ``evil.xyz``. With
the list, "arXiv.org" or "huggingface.co" is refused (they *are* addresses, and
linkified), while a missing space after a full stop ("works.It") is a rare false
positive that costs one repair request. Single letters are never a TLD.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

__all__ = ["clean_untrusted", "find_address", "top_level_domains"]

_DROPPED_CATEGORIES = frozenset({"Cf", "Cs", "Co"})  # format, lone surrogates, private use
_SCHEME = re.compile(r"(?i)\b(?:h[tx]{2}ps?|ftp|file|data|javascript)\s*[\[(]?:[\])]?\s*//"
                     r"|\w[\[(]?:[\])]?//|\bwww\s*\.")
_DEFANGED_DOT = re.compile(r"(?i)\s*[\[({<]\s*(?:\.|dot)\s*[\])}>]\s*|\s+dot\s+(?=\w)")
_ODD_DOTS = str.maketrans({"\u3002": ".", "\uff61": ".", "\uff0e": ".", "\u2024": "."})
# A host: labels of letters, digits, '-' and '_', then '.', then the last label.
_HOST = re.compile(r"(?<![\w.-])((?:[^\W_][\w-]*\.)+)([^\W\d_]{2,63}|xn--[a-z0-9-]{2,59})"
                   r"(?![\w-])", re.IGNORECASE)
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?i)(?<![\w:])(?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}(?![\w:])")


def clean_untrusted(text: str) -> str:
    """NFC text on one line, without controls, format characters or lone surrogates."""
    if not text.isascii():
        text = "".join(char for char in text
                       if unicodedata.category(char) not in _DROPPED_CATEGORIES)
        text = unicodedata.normalize("NFC", text)
    text = "".join(" " if unicodedata.category(char) == "Cc" else char for char in text)
    return " ".join(text.split())


def find_address(text: str) -> str | None:
    """The first address-like piece of ``text`` (URL, host name, IP address), else None."""
    plain = _undefanged(text)
    for finder in (_scheme, _host, _ip_address):
        found = finder(plain)
        if found:
            return found
    return None


@cache
def top_level_domains() -> frozenset[str]:
    """Every ICANN top-level domain, lower case; IDN ones both in Unicode and as xn--."""
    from publicsuffixlist import PSLFILE

    tlds: set[str] = set()
    in_icann = False
    with open(PSLFILE, encoding="utf-8") as rules:
        for line in rules:
            rule = line.strip()
            if rule.startswith("// ===BEGIN ICANN"):
                in_icann = True
            elif rule.startswith("// ===END ICANN"):
                break
            elif in_icann and rule and not rule.startswith("//") and "." not in rule:
                tlds.add(unicodedata.normalize("NFC", rule.lower()))
    return frozenset(tlds | {_punycode(tld) for tld in tlds if not tld.isascii()} - {""})


def _undefanged(text: str) -> str:
    text = unicodedata.normalize("NFKC", clean_untrusted(text)).translate(_ODD_DOTS)
    return _DEFANGED_DOT.sub(".", text)


def _scheme(text: str) -> str | None:
    match = _SCHEME.search(text)
    return match[0] if match else None


def _host(text: str) -> str | None:
    tlds = top_level_domains()
    for match in _HOST.finditer(text):
        labels, tld = match[1], match[2].lower()
        if tld in tlds and re.search(r"[^\W\d_]", labels):
            return match[0]
    return None


def _ip_address(text: str) -> str | None:
    for match in _IPV4.finditer(text):
        if all(int(part) <= 255 for part in match[0].split(".")):
            return match[0]
    for match in _IPV6.finditer(text):
        if "::" in match[0] or match[0].count(":") == 7:
            return match[0]
    return None


def _punycode(label: str) -> str:
    try:
        return "xn--" + label.encode("punycode").decode("ascii")
    except UnicodeError:
        return ""


def ellipsize(text: str, limit: int) -> str:
    """At most ``limit`` characters, the last an ellipsis when something was cut."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def cut_at_word(text: str, limit: int, *, near: float = 0.0, strip: str | None = None) -> str:
    """At most ``limit`` characters, ending in an ellipsis when something was cut: at the last
    space before the limit when there is one past ``near`` × ``limit`` (0: anywhere), else
    mid-word; ``strip`` (whitespace by default) is taken off the end before the ellipsis."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space >= 0 and (near == 0.0 or space > near * limit):
        head = head[:space]
    return head.rstrip(strip) + "…"


def untrusted_preview(text: object, limit: int) -> str:
    """A bit of untrusted text (a server's error body, a model's answer) as a log or a message
    shows it: cleaned like all untrusted text, then cut to ``limit`` characters."""
    return ellipsize(clean_untrusted(str(text)[:limit * 4]), limit)
