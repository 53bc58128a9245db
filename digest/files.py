"""Files written whole or not at all: a temp file in the same folder, fsync, rename.

``write_atomic`` is the one writer for every file digest publishes or keeps (issues, index,
feed, history, run report, the HTTP cache): a reader, or a run killed half-way, never sees
half a file, and a replaced file keeps its mode (a new one gets rw-r--r-- less the umask).
``utf8_text`` decodes a file a person wrote (the config, a template, a prompt): one saved in
another encoding is an error naming the file and the line, not a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from .errors import DigestError

# A write that failed for one of these may pass once the disk has space or is writable again:
# a temporary failure (exit 75), where any other error needs a person.
TEMPORARY_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})


def _read_umask() -> int:
    mask = os.umask(0o022)  # the only way to read it; set back at once, at import time
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write via a temp file in the same folder, fsync, then rename: never half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, _mode_for(path))  # mkstemp's 0600 would hide a published page
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        Path(tmp).unlink(missing_ok=True)
        if error.filename not in (None, tmp):
            raise
        # the file the caller asked for, not the temp file beside it (gone by now)
        raise OSError(error.errno, error.strerror, str(path)) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _mode_for(path: Path) -> int:
    """The mode of the file being replaced, or rw-r--r-- less the umask for a new one."""
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return 0o644 & ~_UMASK


def utf8_text(data: bytes, where: str, error: type[DigestError]) -> str:
    """``data`` as text; else ``error`` "WHERE: not valid UTF-8 (line N): save it as UTF-8"."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data.count(b"\n", 0, bad.start) + 1
        raise error(f"{where}: not valid UTF-8 (line {line}): save it as UTF-8") from None
