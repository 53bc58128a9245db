"""A small on-disk HTTP cache: one body and one metadata file per URL.

It keeps the validators (ETag, Last-Modified) for conditional GETs, honours
``Cache-Control: max-age`` (capped at a day) and ``no-store``, and forgets
entries unused for ``keep_days``. Metadata stores the URL with its secrets
redacted; file names are hashes of the full URL.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from ..files import write_atomic

_MAX_AGE = re.compile(r"max-age\s*=\s*(\d+)")
_FRESHNESS_CAP_S = 86_400


@dataclass(frozen=True)
class Entry:
    url: str
    stored_at: float
    max_age: float = 0.0
    etag: str | None = None
    last_modified: str | None = None
    content_type: str | None = None


class HttpCache:
    def __init__(self, folder: Path, *, keep_days: float = 30,
                 now: Callable[[], float] = time.time) -> None:
        self.folder = Path(folder)
        self.keep_s = keep_days * 86_400
        self.now = now

    def lookup(self, url: str) -> tuple[Entry, bytes] | None:
        meta, body = self._paths(url)
        try:
            entry = Entry(**json.loads(meta.read_text(encoding="utf-8")))
            return entry, body.read_bytes()
        except (OSError, ValueError, TypeError):
            return None  # missing or damaged: fetch again

    def is_fresh(self, entry: Entry) -> bool:
        return self.now() - entry.stored_at < entry.max_age

    @staticmethod
    def validators(entry: Entry) -> dict[str, str]:
        headers = {}
        if entry.etag:
            headers["If-None-Match"] = entry.etag
        if entry.last_modified:
            headers["If-Modified-Since"] = entry.last_modified
        return headers

    def store(self, url: str, shown_url: str, headers: Mapping[str, str], body: bytes) -> None:
        control = headers.get("cache-control", "").lower()
        if "no-store" in control:
            return
        entry = Entry(url=shown_url, stored_at=self.now(), max_age=_max_age(control),
                      etag=headers.get("etag"), last_modified=headers.get("last-modified"),
                      content_type=headers.get("content-type"))
        meta, body_path = self._paths(url)
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomic(body_path, body)
        self._write_meta(meta, entry)
        self.prune()

    def revalidated(self, url: str, entry: Entry, headers: Mapping[str, str]) -> None:
        """A 304: the copy is good again from now."""
        control = headers.get("cache-control", "").lower()
        renewed = Entry(**{**asdict(entry), "stored_at": self.now(),
                           "max_age": _max_age(control) if control else entry.max_age,
                           "etag": headers.get("etag") or entry.etag})
        self._write_meta(self._paths(url)[0], renewed)

    def prune(self) -> None:
        cutoff = self.now() - self.keep_s
        for path in sorted(self.folder.glob("*.json")):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    path.with_suffix(".body").unlink(missing_ok=True)
            except OSError:
                continue

    def _write_meta(self, path: Path, entry: Entry) -> None:
        write_atomic(path, json.dumps(asdict(entry)).encode())
        os.utime(path, (entry.stored_at, entry.stored_at))  # prune() reads the mtime

    def _paths(self, url: str) -> tuple[Path, Path]:
        key = hashlib.sha256(url.encode()).hexdigest()[:40]
        return self.folder / f"{key}.json", self.folder / f"{key}.body"


def _max_age(control: str) -> float:
    if "no-cache" in control:
        return 0.0
    match = _MAX_AGE.search(control)
    return float(min(int(match[1]), _FRESHNESS_CAP_S)) if match else 0.0
