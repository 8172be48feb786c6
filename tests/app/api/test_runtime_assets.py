"""ui/runtime/assets.py: the page's script files compressed once and served to every visitor from that copy
(the running app's files: tests/app/server/test_app_server.py)."""
from __future__ import annotations

import asyncio

import brotli

from ui.runtime.assets import CompressedAssets


def asset_server(body: bytes, status: int = 200, kind: bytes = b"text/javascript"):
    """A stand-in for Gradio's file route: counts the requests that reach it."""
    calls = []

    async def serve(scope, receive, send):
        calls.append(dict(scope["headers"]))
        await asyncio.sleep(0.01)  # a file read: lets concurrent requests overlap
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", kind), (b"etag", b'"v1"')]})
        await send({"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True})
        await send({"type": "http.response.body", "body": body[len(body) // 2:]})
    return serve, calls


def get(app, path: str, encoding: bytes = b"br, gzip", etag: bytes | None = None):
    scope = {"type": "http", "method": "GET", "path": path, "headers": [(b"accept-encoding", encoding)]
             + ([(b"if-none-match", etag)] if etag else [])}
    sent = []

    async def receive():
        return {"type": "http.request", "body": b""}

    async def send(message):
        sent.append(message)
    return scope, receive, send, sent


def run(app, *requests):
    async def all_at_once():
        await asyncio.gather(*(app(scope, receive, send) for scope, receive, send, _ in requests))
    asyncio.run(all_at_once())
    return [(r[3][0]["status"], dict(r[3][0]["headers"]), b"".join(m.get("body", b"") for m in r[3][1:])) for r in requests]


def test_a_hall_arriving_at_once_asks_for_the_file_once_and_gets_the_same_bytes():
    body = b"console.log('attention');\n" * 4000
    inner, calls = asset_server(body)
    middleware = CompressedAssets(inner)
    answers = run(middleware, *(get(middleware, "/assets/index-abc.js") for _ in range(20)))
    assert len(calls) == 1 and b"accept-encoding" not in calls[0]  # asked once, for the plain file
    for status, headers, content in answers:
        assert status == 200 and headers[b"content-encoding"] == b"br" and brotli.decompress(content) == body
        assert int(headers[b"content-length"]) == len(content) < len(body) / 10
    (status, headers, content), = run(middleware, get(middleware, "/assets/index-abc.js", etag=b'"v1"'))
    assert status == 304 and content == b"" and len(calls) == 1


def test_what_is_not_kept_goes_to_the_app_as_before():
    body = b"x" * 5000
    for path, encoding, status, kind in (("/assets/a.js", b"gzip", 200, b"text/javascript"),  # no brotli
                                         ("/gradio_api/info", b"br", 200, b"text/javascript"),  # not a build file
                                         ("/assets/missing.js", b"br", 404, b"text/javascript"),  # Gradio's 404
                                         ("/assets/logo.png", b"br", 200, b"image/png")):  # not script or style
        inner, calls = asset_server(body, status, kind)
        middleware = CompressedAssets(inner)
        for _ in range(2):
            (got_status, headers, content), = run(middleware, get(middleware, path, encoding))
            assert got_status == status and content == body and b"content-encoding" not in headers, path
        assert len(calls) == 2 and path not in middleware._kept  # asked once a request, nothing kept
        assert not middleware._locks  # a visitor asking for many made-up files leaves nothing behind


def test_the_page_is_compressed_for_each_request_and_its_headers_kept():
    page = b"<!doctype html><script>window.gradio_config = {}</script>" + b"<div>attention</div>" * 5000
    calls = []

    async def serve(scope, receive, send):
        calls.append(scope["path"])
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(page)).encode()),
                                (b"set-cookie", b"session=1")]})
        await send({"type": "http.response.body", "body": page})
    middleware = CompressedAssets(serve)
    for _ in range(2):
        (status, headers, content), = run(middleware, get(middleware, "/"))
        assert status == 200 and headers[b"content-encoding"] == b"br" and brotli.decompress(content) == page
        assert int(headers[b"content-length"]) == len(content) < len(page) / 10 and headers[b"set-cookie"] == b"session=1"
    assert calls == ["/", "/"] and not middleware._kept  # built by Gradio for each visitor, never kept
    (status, headers, content), = run(middleware, get(middleware, "/", encoding=b"gzip"))
    assert content == page and b"content-encoding" not in headers  # a browser without brotli: as before
