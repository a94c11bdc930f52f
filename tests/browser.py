"""Headless Chromium driven over the Chrome DevTools Protocol (websocket-client), for the report's browser test.

Started with a fresh profile, no network features (no QUIC, no background networking, no component
updates, no sync), on a DevTools port the browser picks itself (`--remote-debugging-port=0`, read back
from the profile's DevToolsActivePort file).
"""
from __future__ import annotations

import base64
import contextlib
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0", "--hide-scrollbars", "--force-device-scale-factor=1")


def executable() -> str | None:
    return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


@contextlib.contextmanager
def opened(path: Path, profile: Path):
    """A report's page open in headless Chromium for the block (closed after it); the test is skipped, saying why,
    where Chromium is not installed."""
    import pytest

    exe = executable()
    if exe is None:
        pytest.skip("Chromium is not installed (make system-tools installs Debian's chromium)")
    chrome = Chromium(exe, profile)
    try:
        chrome.open(Path(path).resolve().as_uri())
        yield chrome
    finally:
        chrome.close()


class Chromium:
    def __init__(self, exe: str, profile: Path, timeout_s: float = 60.0):
        import websocket

        self.proc = subprocess.Popen([exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(profile) / "DevToolsActivePort"
        end = time.monotonic() + timeout_s
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > end or self.proc.poll() is not None:
                self.close()
                raise RuntimeError(f"chromium did not open its DevTools port (exit status {self.proc.poll()})")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json", timeout=timeout_s) as r:
            page = next(t for t in json.load(r) if t["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=timeout_s, suppress_origin=True)
        self.next_id, self.events = 0, []
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]
            self.events.append(msg)

    def open(self, url: str, timeout_s: float = 30.0) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete'", timeout_s)

    def eval(self, expression: str):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait(self, expression: str, timeout_s: float = 15.0):
        end = time.monotonic() + timeout_s
        while True:
            value = self.eval(expression)
            if value:
                return value
            if time.monotonic() > end:
                raise TimeoutError(f"waited {timeout_s} s for {expression}")
            time.sleep(0.05)

    KEYS = {"Tab": 9, "Enter": 13, " ": 32}

    def key(self, key: str, shift: bool = False) -> None:
        """A key pressed and released as a keyboard does (trusted events: Tab moves focus, Enter follows a link)."""
        code = self.KEYS[key]
        extra = {"text": key} if key in ("Enter", " ") else {}
        if key == "Enter":
            extra = {"text": "\r"}
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code="Space" if key == " " else key,
                      windowsVirtualKeyCode=code, modifiers=8 if shift else 0, **(extra if kind == "keyDown" else {}))

    def viewport(self, width: int, height: int = 900) -> None:
        """Lay the page out at this size (a phone is 390 px wide)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=width < 500)

    def errors(self) -> list[str]:
        """Console errors and uncaught exceptions seen so far."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e.get("method") == "Runtime.exceptionThrown":
                out.append(json.dumps(p["exceptionDetails"])[:500])
            elif e.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(json.dumps(p.get("args"))[:500])
            elif e.get("method") == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(f"{p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def screenshot(self, path: Path, selector: str | None = None, width: int = 1200, height: int = 900) -> Path:
        """A PNG of the viewport, or of one element (scrolled into view first)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        params = {"format": "png"}
        if selector:
            box = self.eval(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); e.scrollIntoView(); "
                            "const r = e.getBoundingClientRect(); return {x: r.x + scrollX, y: r.y + scrollY, "
                            "width: r.width, height: r.height}; })()")
            params.update(clip={**box, "scale": 1}, captureBeyondViewport=True)
        data = self.call("Page.captureScreenshot", **params)["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
