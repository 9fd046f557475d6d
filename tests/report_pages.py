"""Helpers shared by the report tests (tests/render, tests/cli): reading the markdown tables,
a strict HTML parser, and headless Chromium driven over the DevTools protocol on a pipe with the
standard library only.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import re
import select
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest


# ------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------


def md_section(markdown: str, title: str) -> str:
    """The text under ``## title`` up to the next ``## `` heading."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", markdown, flags=re.M | re.S)
    assert match, f"no section {title!r} in the markdown"
    return match.group(1)


def md_cells(row: str) -> list[str]:
    """Split a GitHub table row on its unescaped pipes."""
    assert row.startswith("|") and row.endswith("|"), row
    return [c.strip() for c in re.split(r"(?<!\\)\|", row[1:-1])]


def md_tables(text: str) -> list[list[list[str]]]:
    """Every table in a piece of markdown, as rows of cells (header first, rule dropped)."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(md_cells(line))
        elif current:
            tables.append([current[0], *current[2:]])
            current = []
    return tables


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class StrictParser(HTMLParser):
    """Records every element and fails on unbalanced or misnested tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: list[str | None] = []
        self.errors: list[str] = []
        self.elements: list[tuple[str, dict[str, str | None], tuple[str, ...]]] = []
        self.text_by_id: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs), tuple(self.stack)))
        if tag not in VOID:
            self.stack.append(tag)
            self.ids.append(dict(attrs).get("id"))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs), tuple(self.stack)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'} at {self.getpos()}")
            return
        self.stack.pop()
        self.ids.pop()

    def handle_data(self, data: str) -> None:
        for element_id in filter(None, self.ids):
            self.text_by_id[element_id] = self.text_by_id.get(element_id, "") + data


def parse_html(page: str) -> StrictParser:
    parser = StrictParser()
    parser.feed(page)
    parser.close()
    assert parser.errors == []
    assert parser.stack == [], f"unclosed elements: {parser.stack}"
    return parser


# ------------------------------------------------------------------------------------------
# Headless Chromium
# ------------------------------------------------------------------------------------------


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("OPGOV_REQUIRE_CHROMIUM") == "1":
        pytest.fail("headless Chromium is required (OPGOV_REQUIRE_CHROMIUM=1) but not installed", pytrace=False)
    pytest.skip("chromium not installed (Debian: apt-get install chromium)")


class DevTools:
    """The Chrome DevTools Protocol over ``--remote-debugging-pipe``: Chromium reads fd 3 and
    writes fd 4, one JSON message per NUL-terminated chunk. Standard library only, no port."""

    def __init__(self, binary: str, profile: Path, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._next_id = 0
        self._buffer = b""
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # move the child's ends above 10 so that placing them on 3 and 4 cannot clobber each other
        child_r, child_w = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child_r, from_child_w))
        os.close(to_child_r)
        os.close(from_child_w)

        def place_pipe_ends() -> None:  # runs in the child between fork and exec
            os.dup2(child_r, 3)  # dup2's copies survive exec; every other descriptor of ours is
            os.dup2(child_w, 4)  # close-on-exec (PEP 446), so close_fds=False leaks nothing

        args = [
            binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--disable-default-apps", "--mute-audio",
            "--hide-scrollbars", f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank",
        ]
        self.proc = subprocess.Popen(args, preexec_fn=place_pipe_ends, close_fds=False,  # noqa: PLW1509
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(child_r)
        os.close(child_w)
        self._write, self._read = to_child_w, from_child_r

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:  # noqa: BLE001 - already gone is fine
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._write)
        os.close(self._read)

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._read], [], [], self.timeout)
            if not ready:
                raise TimeoutError("Chromium did not answer on the DevTools pipe")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise ConnectionError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._receive()
            self.events.append(event)
            if event.get("method") == method:
                return event


PAGE_CHECKS = """(() => {
  const box = el => {
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return {id: el.id, width: r.width, height: r.height, right: r.right,
            shown: s.display !== 'none' && s.visibility !== 'hidden' && Number(s.opacity) > 0};
  };
  const texts = [...document.querySelectorAll('svg.chart text')].map(t => t.getBoundingClientRect().height);
  return {
    charts: [...document.querySelectorAll('svg.chart')].map(box),
    tables: [...document.querySelectorAll('table')].filter(t => !t.closest('details')).map(box),
    frames: [...document.querySelectorAll('.table-wrap')].filter(t => !t.closest('details')).map(box),
    sections: [...document.querySelectorAll('main > section')].map(box),
    smallestChartText: Math.min(...texts),
    resources: performance.getEntriesByType('resource').map(e => e.name),
    pageWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
  };
})()"""

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_SIGNATURE)
    return struct.unpack(">II", data[16:24])


def load_in_chromium(binary: str, html_file: Path, workdir: Path, *, pdf: bool = False):
    """Open ``html_file`` in headless Chromium at a phone's and a desktop's width. Returns
    ``({"phone"|"desktop": (checks, png, requests, problems, exceptions)}, pdf bytes or None)``:
    PAGE_CHECKS' result, a full-page screenshot (also saved beside the page), every URL requested,
    console errors and warnings, and uncaught exceptions."""
    url = html_file.as_uri()
    browser = DevTools(binary, workdir / "profile")
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Network", "Log", "Runtime"):
            browser.send(f"{domain}.enable", session=session)
        results = {}
        for name, width, mobile in (("phone", 390, True), ("desktop", 1280, False)):
            browser.send("Emulation.setDeviceMetricsOverride",
                         {"width": width, "height": 844, "deviceScaleFactor": 1, "mobile": mobile}, session)
            browser.events.clear()
            browser.send("Page.navigate", {"url": url}, session)
            browser.wait_for("Page.loadEventFired")
            checks = browser.send("Runtime.evaluate", {"expression": PAGE_CHECKS, "returnByValue": True},
                                  session)["result"]["value"]
            size = browser.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
            shot = browser.send("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": size["height"], "scale": 1}}, session)
            png = base64.b64decode(shot["data"])
            (workdir / f"{html_file.stem}-{name}.png").write_bytes(png)
            requests = [e["params"]["request"]["url"] for e in browser.events
                        if e.get("method") == "Network.requestWillBeSent"]
            problems = [e["params"]["entry"] for e in browser.events
                        if e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] in {"error", "warning"}]
            exceptions = [e for e in browser.events if e.get("method") == "Runtime.exceptionThrown"]
            results[name] = (checks, png, requests, problems, exceptions)
        printed = None
        if pdf:
            printed = base64.b64decode(browser.send("Page.printToPDF", {"paperWidth": 8.27, "paperHeight": 11.69},
                                                    session)["data"])
    finally:
        browser.close()
    return results, printed
