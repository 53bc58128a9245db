"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``).

No extra Python package and no network port: Chromium reads JSON commands on file
descriptor 3 and writes replies and events on descriptor 4, each message ending in NUL.
The page's own DevTools domains report every request it makes (Network), every script
it parses (Debugger) and every console or CSP message (Log), which is what the browser
test needs to prove that an issue runs nothing and loads nothing.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
INSTALL_HINT = (
    "headless Chromium is needed by the HTML test: install it with "
    "`make browser` (as root it runs `apt-get install -y chromium chromium-driver`) or "
    "`sudo apt-get install -y chromium chromium-driver` on Debian/Ubuntu")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--disable-dev-shm-usage", "--no-default-browser-check",
    "--hide-scrollbars", "--mute-audio",
    # Nothing can reach the network even if a page asked: every host name fails to resolve.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--remote-debugging-pipe",
]
TIMEOUT = 20.0


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium with one page attached; use as a context manager."""

    def __init__(self, binary: str = CHROMIUM):
        self.binary = binary
        self.events: list[dict[str, Any]] = []
        self._next_id = 0
        self._buffer = b""

    def __enter__(self) -> Chromium:
        self._profile = tempfile.mkdtemp(prefix="digest-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire_pipes() -> None:  # in the child: the protocol's fds 3 (commands) and 4
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self._process = subprocess.Popen(
            [self.binary, *FLAGS, f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=wire_pipes)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.session = self._attach_to_page()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(BrowserError, OSError):  # it may close the pipe at once
            self.send("Browser.close", session=None)
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        shutil.rmtree(self._profile, ignore_errors=True)

    # --- the protocol -----------------------------------------------------------------------

    def send(self, method: str, params: dict[str, Any] | None = None, *,
             session: str | None | bool = True) -> dict[str, Any]:
        """Send one command (to the page's session unless ``session=None``); its result."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method,
                                   "params": params or {}}
        if session is True:
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        reply = self._read_until(lambda m: m.get("id") == self._next_id, f"reply to {method}")
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    def _read_until(self, wanted: Any, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT
        while True:
            for message in self._messages():
                if "method" in message:
                    self.events.append(message)
                if wanted(message):
                    return message
            left = deadline - time.monotonic()
            if left <= 0 or self._process.poll() is not None:
                raise BrowserError(f"no {what} from Chromium within {TIMEOUT:.0f} s "
                                   f"(exit code {self._process.poll()})")
            readable, _, _ = select.select([self._from_chrome], [], [], left)
            if readable:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise BrowserError(f"Chromium closed the pipe while waiting for {what}")
                self._buffer += chunk

    def _messages(self) -> list[dict[str, Any]]:
        *complete, self._buffer = self._buffer.split(b"\0")
        return [json.loads(raw) for raw in complete if raw]

    def _attach_to_page(self) -> str:
        targets = self.send("Target.getTargets", session=None)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        return str(self.send("Target.attachToTarget", {"targetId": page["targetId"],
                                                       "flatten": True}, session=None)
                   ["sessionId"])

    # --- what the tests use -----------------------------------------------------------------

    def open(self, path: Path, *, width: int = 412, height: int = 900, dark: bool = False,
             settle: float = 0.3) -> None:
        """Load ``path`` in a phone-sized window, recording requests and scripts."""
        self.events.clear()
        for domain in ("Page", "Network", "Debugger", "Log", "Runtime"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
        self.send("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
        self.send("Page.navigate", {"url": path.resolve().as_uri()})
        self._read_until(lambda m: m.get("method") == "Page.loadEventFired", "page load")
        end = time.monotonic() + settle  # late requests (fonts, lazy images) would show here
        while time.monotonic() < end:
            readable, _, _ = select.select([self._from_chrome], [], [], end - time.monotonic())
            if readable:
                self._buffer += os.read(self._from_chrome, 1 << 20)
        for message in self._messages():
            if "method" in message:
                self.events.append(message)

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"]

    def scripts(self) -> list[dict[str, Any]]:
        return [e["params"] for e in self.events if e["method"] == "Debugger.scriptParsed"]

    def log(self) -> list[str]:
        return [e["params"]["entry"]["text"] for e in self.events
                if e["method"] == "Log.entryAdded"]

    def dom(self) -> str:
        """The document as Chromium parsed it (read through DOM, not through a script)."""
        root = self.send("DOM.getDocument", {"depth": -1})["root"]
        return str(self.send("DOM.getOuterHTML", {"nodeId": root["nodeId"]})["outerHTML"])

    def screenshot(self, path: Path, *, full_page: bool = True) -> bytes:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": size["width"],
                              "height": size["height"], "scale": 1}
        data = base64.b64decode(self.send("Page.captureScreenshot", params)["data"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return data
