"""The page's script and style files, compressed once for every visitor instead of once per visitor;
and the page itself compressed at all.

A first visit fetches ~6 MB of Gradio's JavaScript and CSS (4.6 MB of it Plotly). Gradio brotli-compresses
every response as it sends it, so each student opening the link cost the server ~110 ms of CPU for the
same bytes again: a third of what a page load costs, and for a lecture hall opening the link at once,
100 times over. `CompressedAssets` sits inside Gradio's compression (which passes an already-encoded
response through), asks Gradio for each file once, keeps the compressed bytes and serves them to every
later request that accepts brotli.

Only Gradio's own build files are kept (/assets/..., the names Gradio's build gives them carry a hash of
their content, so a name never changes meaning while the server runs); anything else, and any visitor
whose browser does not take brotli, goes to Gradio as before. Nothing here chooses a file: the path is
Gradio's to resolve, and only its answers with status 200 are kept.

The page (`/`, deep links included: their settings are in the query) is 424 KB of HTML with the whole
interface's configuration inside, and Gradio sends it uncompressed (its compression only looks at paths
that end in a file extension): 42 MB over a lecture hall's Wi-Fi for 100 students. It is compressed for
each request (31 KB, ~3 ms), never kept: it is Gradio's to build for each visitor.
"""
from __future__ import annotations

import asyncio

import brotli

PREFIX = "/assets/"
KEPT_TYPES = ("text/javascript", "application/javascript", "text/css")
QUALITY = 5  # once per file: a little smaller than Gradio's per-request quality 4, at about its cost
PAGE_QUALITY = 4  # per request, as Gradio compresses what it does compress
MAX_BYTES = 16_000_000  # all the build's files together, compressed, stay far below this


class CompressedAssets:
    """ASGI middleware: GET /assets/<file> with Accept-Encoding br, answered from compressed copies."""

    def __init__(self, app):
        self.app = app
        self._kept: dict[str, tuple[list, bytes]] = {}  # path -> (response headers, compressed body)
        self._locks: dict[str, asyncio.Lock] = {}
        self._bytes = 0

    async def __call__(self, scope, receive, send):
        if not self._accepts_brotli(scope):
            return await self.app(scope, receive, send)
        path = scope["path"]
        if path == "/":
            return await self._page(scope, receive, send)
        if not path.startswith(PREFIX):
            return await self.app(scope, receive, send)
        if path not in self._kept:
            async with self._locks.setdefault(path, asyncio.Lock()):  # a hall arriving at once: one compresses
                answer = None if path in self._kept else await self._fetch(scope, receive)
            self._locks.pop(path, None)  # a lock per path asked for, only while it is being fetched
            if answer is not None and path not in self._kept:
                start, body, compressed = answer
                if compressed is None or self._bytes + len(compressed[1]) > MAX_BYTES:
                    await send(start)  # not one to keep: Gradio's answer as it came (compressed outside, if at all)
                    await send({"type": "http.response.body", "body": body})
                    return
                self._kept[path] = compressed
                self._bytes += len(compressed[1])
        headers, body = self._kept[path]
        etag = dict(headers).get(b"etag")
        if etag is not None and _header(scope, b"if-none-match") == etag:
            await send({"type": "http.response.start", "status": 304, "headers": [(b"etag", etag)]})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    def _accepts_brotli(scope) -> bool:
        return scope["type"] == "http" and scope["method"] == "GET" and b"br" in _header(scope, b"accept-encoding")

    async def _ask(self, scope, receive) -> tuple[dict, bytes]:
        """Gradio's own answer to this request, uncompressed and whole: (its start message, its body)."""
        plain = dict(scope, headers=[(k, v) for k, v in scope["headers"]
                                     if k not in (b"accept-encoding", b"if-none-match", b"range")])
        start, chunks = {}, []

        async def collect(message):
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(plain, receive, collect)
        return start, b"".join(chunks)

    async def _fetch(self, scope, receive):
        """Gradio's answer for this file: (its start message, its body, and (headers, brotli body) to keep, or
        None when the answer is not one to keep)."""
        start, body = await self._ask(scope, receive)
        headers = _compressible(start, KEPT_TYPES)
        if headers is None:
            return start, body, None
        compressed = await asyncio.to_thread(brotli.compress, body, quality=QUALITY)  # the loop keeps serving
        kept = [(b"content-type", headers[b"content-type"]), (b"content-encoding", b"br"),
                (b"content-length", str(len(compressed)).encode()), (b"vary", b"Accept-Encoding")]
        if b"etag" in headers:
            kept.append((b"etag", headers[b"etag"]))
        return start, body, (kept, compressed)

    async def _page(self, scope, receive, send):
        start, body = await self._ask(scope, receive)
        if _compressible(start, ("text/html",)) is not None:
            body = brotli.compress(body, quality=PAGE_QUALITY)  # ~3 ms: less than a hop to a thread and back
            headers = [(k, v) for k, v in start["headers"] if k.lower() not in (b"content-length", b"vary")]
            start = dict(start, headers=headers + [(b"content-encoding", b"br"), (b"vary", b"Accept-Encoding"),
                                                   (b"content-length", str(len(body)).encode())])
        await send(start)
        await send({"type": "http.response.body", "body": body})


def _compressible(start: dict, types: tuple) -> dict | None:
    """The answer's headers (lower-case names) when it is a 200 of one of `types` not already encoded, else None."""
    headers = {k.lower(): v for k, v in start.get("headers", [])}
    kind = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip()
    if start.get("status") != 200 or kind not in types or b"content-encoding" in headers:
        return None
    return headers


def _header(scope, name: bytes) -> bytes:
    return next((value for key, value in scope["headers"] if key.lower() == name), b"")
