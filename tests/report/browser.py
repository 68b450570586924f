"""A real headless Chromium for the HTML report's tests, driven over the DevTools protocol.

Chromium is started with `--remote-debugging-pipe`: the protocol runs over the child's file descriptors
3 (commands in) and 4 (replies out) as NUL-terminated JSON, so no port, no websocket library and nothing
listening on the network. Only the standard library.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        exe = shutil.which(name)
        if exe:
            return exe
    return None


class CdpError(RuntimeError):
    pass


class Browser:
    """One headless Chromium and one page (tab) in it. `with Browser() as b: b.open(url)`."""

    def __init__(self, width: int = 1366, height: int = 768, timeout: float = 30.0) -> None:
        exe = find_chromium()
        if exe is None:
            raise FileNotFoundError("chromium is not installed (apt-get install -y chromium)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="cmlens-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        # In the child: fd 3 = its input, fd 4 = its output. The dup2 copies are the only inheritable
        # descriptors (Python opens everything non-inheritable), so close_fds=False leaks nothing else.
        def wire_fds() -> None:
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
                "--disable-extensions", "--hide-scrollbars", "--mute-audio", f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}", "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=wire_fds)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.console: list[str] = []
        self.errors: list[str] = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    # ------------------------------------------------------------------ protocol
    def _send(self, msg: dict[str, Any]) -> None:
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")

    def _read(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise CdpError(f"Chromium exited (code {self.proc.poll()})")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        msg = json.loads(raw)
        if msg.get("method") == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in msg["params"]["args"]))
        elif msg.get("method") == "Runtime.exceptionThrown":
            d = msg["params"]["exceptionDetails"]
            self.errors.append((d.get("exception") or {}).get("description") or d.get("text", ""))
        elif msg.get("method") == "Log.entryAdded" and msg["params"]["entry"].get("level") == "error":
            self.errors.append(msg["params"]["entry"].get("text", ""))
        return msg

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self._send(msg)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, timeout: float | None = None) -> dict[str, Any]:
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._read(deadline)
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)

    # ------------------------------------------------------------------ page
    def open(self, url: str, ready: str = "document.body && document.body.dataset.viewer === 'ready'") -> None:
        """Load `url` and wait until `ready` (a JS expression) is true."""
        for u in ("about:blank", url):             # via a blank page: a new hash alone would not reload
            self.events.clear()
            self.call("Page.navigate", session=True, url=u)
            self.wait_event("Page.loadEventFired")
        self.errors.clear()
        self.wait_for(ready)

    def eval(self, expr: str) -> Any:
        r = self.call("Runtime.evaluate", session=True, expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise CdpError(f"{expr[:80]}: {r['exceptionDetails'].get('exception', {}).get('description', r['exceptionDetails'])}")
        return r["result"].get("value")

    def wait_for(self, expr: str, timeout: float | None = None) -> Any:
        """Poll `expr` until truthy. The page draws synchronously; this only covers loading."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            v = self.eval(expr)
            if v:
                return v
            if time.monotonic() > deadline:
                raise CdpError(f"timed out waiting for {expr}; page errors: {self.errors}")
            time.sleep(0.05)

    def click(self, x: float, y: float) -> None:
        """A real mouse click at viewport coordinates (press + release, as a user's)."""
        self.call("Input.dispatchMouseEvent", session=True, type="mouseMoved", x=x, y=y)
        self.call("Input.dispatchMouseEvent", session=True, type="mousePressed", x=x, y=y, button="left", clickCount=1)
        self.call("Input.dispatchMouseEvent", session=True, type="mouseReleased", x=x, y=y, button="left", clickCount=1)

    def center_of(self, selector: str) -> tuple[float, float]:
        """The middle of the first element matching `selector`, scrolled into view, in viewport pixels."""
        r = self.eval(f"""(function () {{ var e = document.querySelector({json.dumps(selector)});
            if (!e) return null; e.scrollIntoView({{block: 'center', inline: 'center'}});
            var b = e.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2, b.width, b.height]; }})()""")
        if r is None:
            raise CdpError(f"no element matches {selector}")
        return r[0], r[1]

    def click_element(self, selector: str) -> None:
        self.click(*self.center_of(selector))

    def type_text(self, text: str, enter: bool = False) -> None:
        """Type into the focused element as a keyboard does, then Enter if asked."""
        self.call("Input.insertText", session=True, text=text)
        if enter:
            for kind in ("keyDown", "keyUp"):
                self.call("Input.dispatchKeyEvent", session=True, type=kind, key="Enter", code="Enter",
                          windowsVirtualKeyCode=13, text="\r" if kind == "keyDown" else "")

    def screenshot(self, path: str | Path) -> Path:
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        p = Path(path)
        p.write_bytes(base64.b64decode(data))
        return p

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (CdpError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
