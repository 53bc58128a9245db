"""Where listings come from: files, directories (recursive, sorted), globs, stdin and URLs.

``expand`` turns what the user typed into source names in a stable order;
``read`` returns a source's raw bytes (or text, for a text stdin) and, for URLs,
the Content-Type and any warning from the fetcher.
"""

from __future__ import annotations

import glob
import logging
import os
import sys
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import SourceError
from ..redaction import url_for_logs
from .base import MAX_SOURCE_BYTES
from .fetch import Fetcher, amount, is_url

logger = logging.getLogger("digest.ingest")

STDIN = "<stdin>"
LISTING_SUFFIXES = {".txt", ".md", ".json", ".jsonl", ".ndjson", ".csv", ".tsv", ".xml", ".atom",
                    ".rss", ".eml"}
StdinReader = Callable[[], "str | bytes"]


@dataclass(frozen=True)
class Raw:
    """A source as read: bytes to decode (or text already), and what the server said."""

    name: str
    data: bytes | str
    content_type: str | None = None
    warning: str | None = None


def expand(sources: Sequence[str]) -> Iterator[str]:
    """Files as given, directories walked recursively in sorted order, globs expanded."""
    return (name for name, _ in expand_marked(sources))


def expand_marked(sources: Sequence[str], suffixes: Collection[str] = LISTING_SUFFIXES, *,
                  outputs: Collection[Path] = ()) -> Iterator[tuple[str, bool]]:
    """(name, found by walking a folder or a glob) for each source, in ``expand``'s order; a
    folder gives its files whose names end in one of ``suffixes``. A walk leaves out digest's
    output folders: those holding its history, and ``outputs`` (resolved paths: the run's
    own, which may have lost its history)."""
    for source in sources:
        if source == "-" or is_url(source):
            yield source, False
        elif Path(source).is_dir():
            yield from ((name, True) for name in _walk(Path(source), suffixes, outputs))
        elif glob.has_magic(source) and not Path(source).exists():
            yield from ((name, name != source) for name in _glob(source, suffixes, outputs))
        else:
            yield source, False  # a missing file is reported when it is read


def read(name: str, *, stdin: StdinReader | None, fetcher: Callable[[], Fetcher],
         max_bytes: int = MAX_SOURCE_BYTES) -> Raw:
    """The source's data, refused when it is larger than ``max_bytes``."""
    if name == "-":
        return Raw(STDIN, read_stdin(stdin, max_bytes))
    if is_url(name):
        fetched = fetcher().fetch(name, max_bytes=max_bytes)
        return Raw(url_for_logs(name), fetched.data, fetched.content_type, fetched.warning)
    return Raw(name, _read_file(Path(name), name, max_bytes))


# What digest writes beside every issue: a folder holding it is an output folder (feed.xml,
# index.md, the issues), never listings, even inside the listings folder.
OUTPUT_MARKER = ".history.json"


def _walk(folder: Path, suffixes: Collection[str], outputs: Collection[Path] = ()
          ) -> Iterator[str]:
    """Files under ``folder`` sorted by path (a/y.csv, b/z.tsv, x.atom); hidden ones and
    digest's own output folders left out."""
    found, skipped = [], 0
    for root, dirs, files in os.walk(folder):
        if OUTPUT_MARKER in files or (outputs and Path(root).resolve() in outputs):
            logger.info("%s: left out, digest publishes into it", root)
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for file in files:
            if file.startswith("."):
                continue
            if Path(file).suffix.lower() in suffixes:
                found.append(Path(root, file))
            else:
                skipped += 1
    if skipped:
        logger.info("%s: skipped %d files whose names do not end in %s", folder, skipped,
                    ", ".join(sorted(suffixes)))
    yield from (str(path) for path in sorted(found, key=lambda p: p.relative_to(folder).parts))


def _glob(pattern: str, suffixes: Collection[str], outputs: Collection[Path] = ()
          ) -> Iterator[str]:
    matches = sorted(glob.glob(pattern, recursive=True))
    if not matches:
        yield pattern  # reported as "no file matches" when read
    for match in matches:
        path = Path(match)
        if path.is_dir():
            yield from _walk(path, suffixes, outputs)  # which leaves out an output folder
        elif (path.parent / OUTPUT_MARKER).exists() or (
                outputs and path.parent.resolve() in outputs):
            logger.info("%s: left out, digest publishes into its folder", match)
        else:
            yield match


def _read_file(path: Path, name: str, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise too_big(name, f"the file is {amount(size)}, more", max_bytes)
        return path.read_bytes()
    except FileNotFoundError:
        problem = ("no file matches this pattern" if glob.has_magic(name)
                   else "no such file or directory")
        raise SourceError(name, problem, fix="check the path") from None
    except IsADirectoryError:
        raise SourceError(name, "this is a directory", fix="check the path") from None
    except OSError as exc:
        raise SourceError(name, f"cannot read it: {exc.strerror}",
                          fix="check the permissions") from None


def read_stdin(stdin: StdinReader | None, max_bytes: int = MAX_SOURCE_BYTES) -> bytes | str:
    if stdin is not None:
        data = stdin()
    elif sys.stdin is None:  # started with its standard input closed (`<&-`)
        raise SourceError(STDIN, "standard input is closed, so there is nothing to read",
                          fix="pipe or redirect the listing into digest (`digest ingest - < "
                          "mail.eml`), or give its file instead of -")
    else:
        buffer = getattr(sys.stdin, "buffer", None)
        data = buffer.read(max_bytes + 1) if buffer is not None else sys.stdin.read()
    if len(data) > max_bytes:
        raise too_big(STDIN, "the input is more", max_bytes)
    return data


def too_big(name: str, what: str, max_bytes: int) -> SourceError:
    return SourceError(name, f"{what} than the {amount(max_bytes)} a listing may be (or the "
                       "run has left)", fix="split it into smaller files, or raise [limits] "
                       "max_source_mb (per source) or max_input_mb (per run) in the config")



