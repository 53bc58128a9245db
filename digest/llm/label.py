"""The model's name as readers see it: the ``model_label`` setting, or the model id made safe.

A local server often reports the model by its file path (``/home/me/models/x.Q4.gguf``):
that path never reaches the issue, its footer or the feed. Without a label, a model id that
looks like a file path (a ``/`` or ``\\`` and a .gguf/.bin ending, or an absolute path) is
shown as its file stem; any other id (``gpt-4o-mini``, ``Qwen/Qwen2.5-7B-Instruct``) as is.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath, PureWindowsPath

MODEL_FILE_ENDINGS = (".gguf", ".bin")


def shown_model(model: str | None, label: str | None = None) -> str | None:
    """What the issue says the model was: the label, else the id without any path."""
    if label and label.strip():
        return label.strip()
    if not model:
        return model
    return file_stem(model) if looks_like_path(model) else model


def looks_like_path(model: str) -> bool:
    text = model.strip()
    in_folder = ("/" in text or "\\" in text) and text.lower().endswith(MODEL_FILE_ENDINGS)
    absolute = PurePosixPath(text).is_absolute() or PureWindowsPath(text).is_absolute()
    return in_folder or absolute


def file_stem(path: str) -> str:
    name = re.split(r"[\\/]", path.strip().rstrip("/\\"))[-1]
    stem = name.rsplit(".", 1)[0] if "." in name.strip(".") else name
    return stem or "local model"
