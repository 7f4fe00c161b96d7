"""Headless Chromium driven over the Chrome DevTools protocol, with a minimal standard-library WebSocket
client (no browser download, no extra package): launch the system's ``chromium``, open a page, read
its text once it shows what a test waits for, evaluate a script, click, and take a screenshot.

Chromium runs through `tests/procs.py` (its own process group, killed whole on `close`), so neither
it nor its renderer and GPU helpers outlive the test."""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlparse

from tests import procs


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class WebSocket:
    """Text frames over one TCP connection (RFC 6455, client side: frames masked, no extensions)."""

    def __init__(self, url: str, timeout: float = 30.0) -> None:
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise ConnectionError(f"websocket handshake refused: {head[:200]!r}")

    def send(self, text: str) -> None:
        data = text.encode()
        n = len(data)
        header = bytes([0x81])
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("websocket closed")
            out += chunk
        return bytes(out)

    def recv(self) -> str:
        message = bytearray()
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode in (0x9, 0xA):  # ping/pong: not used by DevTools
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with one page, driven over DevTools."""

    def __init__(self, width: int = 1400, height: int = 1100) -> None:
        exe = chromium_path()
        if exe is None:
            raise FileNotFoundError("no chromium on PATH")
        self.profile = tempfile.mkdtemp(prefix="spl-hf-chromium-")
        args = [
            exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
            f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank",
        ]  # fmt: skip
        self._stack = ExitStack()
        self.proc = self._stack.enter_context(
            procs.started(args, grace_s=5, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        try:  # whatever fails while connecting, chromium's group is ended before the error goes up
            self.ws = self._connect(Path(self.profile) / "DevToolsActivePort")
        except BaseException:
            self.close()
            raise
        self._id = 0

    def _connect(self, port_file: Path) -> WebSocket:
        deadline = time.monotonic() + 30
        while not (port_file.is_file() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(p for p in pages if p.get("type") == "page")
        return WebSocket(page["webSocketDebuggerUrl"])

    def call(self, method: str, **params) -> dict:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    def open(self, url: str) -> None:
        self.call("Page.enable")
        self.call("Page.navigate", url=url)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (JSON-serialisable values)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails'].get('text')}: {expression[:200]}")
        return result["result"].get("value")

    def text(self) -> str:
        result = self.call("Runtime.evaluate", expression="document.body ? document.body.innerText : ''")
        return result["result"].get("value", "")

    def wait_for(self, *needles: str, timeout: float = 30.0) -> str:
        """The page's visible text once it contains every needle (TimeoutError with the text otherwise)."""
        deadline = time.monotonic() + timeout
        text = ""
        while time.monotonic() < deadline:
            text = self.text()
            if all(n in text for n in needles):
                return text
            time.sleep(0.25)
        missing = [n for n in needles if n not in text]
        raise TimeoutError(f"page never showed {missing}; it shows: {text[:3000]}")

    def click(self, scope: str, text: str) -> bool:
        """A real mouse click (pressed and released) at the centre of the innermost visible element under
        ``scope`` (a CSS selector) whose text is ``text``."""
        expr = (
            f"(() => {{ const all = Array.from(document.querySelectorAll({json.dumps(scope + ' *')})); "
            f"const e = all.reverse().find(x => x.innerText && x.innerText.trim() === {json.dumps(text)} "
            "&& x.getBoundingClientRect().width > 0); if (!e) return null; "
            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
            "return [r.left + r.width / 2, r.top + r.height / 2]; })()"
        )
        at = self.call("Runtime.evaluate", expression=expr, returnByValue=True)["result"].get("value")
        if not at:
            return False
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=at[0], y=at[1], button="left", clickCount=1)
        return True

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        """A PNG of the viewport (or of the whole page, ``full_page``)."""
        params: dict = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params |= {
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "scale": 1, **{k: size[k] for k in ("width", "height")}},
            }
        data = self.call("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        if getattr(self, "ws", None):
            self.ws.close()
        self._stack.close()  # SIGTERM the whole group, then SIGKILL what is left
        shutil.rmtree(self.profile, ignore_errors=True)
