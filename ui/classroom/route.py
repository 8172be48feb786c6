"""The followers' plain routes beside Gradio's (no queue, no session, no component walk):

- the long poll: a phone asks `GET /class/wait?code=CODE&since=VERSION` and the answer comes when the lecturer's
  next move does (or after WAIT_S seconds, unchanged), so 300 phones wait on 300 idle futures and are answered with
  one shared reply per move;
- the step as the page first shows it, `GET /class/step?code=CODE` (Classes.page_step, one reply per move for every
  follower): the page's script shows the step's text and its question's answers from it at once, before the page's
  own Gradio round trip (ui/classroom/script.py), which 300 pages cannot all make within seconds;
- a tap on one of those answers, `POST /class/answer` with {"code", "pass", "answer"} (the page's signed pass):
  {"accepted", "answered", "pass"}, as the page's own answer event, without Gradio's request.

    app.launch(app_kwargs={"routes": follow_routes(classes)})   # app.launch_options(demo) does this
"""
from __future__ import annotations

import json

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from classroom.once import Once
from classroom.store import ClassError
from ui.classroom.service import Classes

WAIT_S = 20.0  # under the 30-60 s after which proxies and phones drop an idle request
WAIT_PATH = "/class/wait"
STEP_PATH = "/class/step"
ANSWER_PATH = "/class/answer"
MAX_BODY = 4096  # an answer's JSON: a code, a pass (under 200 characters), one of the choices
NO_STORE = {"Cache-Control": "no-store"}


def follow_routes(classes: Classes) -> list[Route]:
    """The route a following page (and bench/classroom.py) waits on. Its answer is /class_follow's, with the
    class's "version" to wait past next; a class that does not exist or has closed: 404 and {"error": why}."""
    replies = Once(max_bytes=8 << 20)  # (code, version) -> the reply: computed by the first waiter woken

    async def wait(request: Request) -> JSONResponse:
        code = str(request.query_params.get("code", ""))[:20].strip().upper()
        try:
            since = int(request.query_params.get("since", "-1"))
        except ValueError:
            since = -1
        try:
            if classes.board.version(code) is None:
                classes.state(code)  # unknown to this process yet (a restart): read from the store, or refused
            version = await classes.board.wait(code, since, WAIT_S)
            if version < 0:
                raise ClassError(f"The class {code} has closed.")
            reply = replies.get((code, version), lambda: {**classes.follow(code), "version": version})
        except ClassError as e:
            return JSONResponse({"error": str(e)}, status_code=404, headers=NO_STORE)
        return JSONResponse(reply, headers=NO_STORE)

    async def step(request: Request) -> JSONResponse:
        code = str(request.query_params.get("code", ""))[:20].strip().upper()
        try:
            version = classes.board.version(code)
            if version is None:
                version = classes.state(code).version  # a restart: read from the store, or refused
            reply = replies.get((code, "step", version), lambda: classes.page_step(code))
        except ClassError as e:
            return JSONResponse({"error": str(e)}, status_code=404, headers=NO_STORE)
        return JSONResponse(reply, headers=NO_STORE)

    async def answer(request: Request) -> JSONResponse:
        body = await request.body()
        try:
            sent = json.loads(body) if len(body) <= MAX_BODY else None
        except ValueError:
            sent = None
        if not isinstance(sent, dict):
            return JSONResponse({"error": 'Send {"code", "pass", "answer"} as JSON.'}, status_code=400,
                                headers=NO_STORE)
        try:
            reply = classes.page_answer(str(sent.get("code", ""))[:20].strip().upper(), sent.get("pass"),
                                        sent.get("answer"))
        except ClassError as e:
            return JSONResponse({"error": str(e)}, status_code=400, headers=NO_STORE)
        return JSONResponse(reply, headers=NO_STORE)

    return [Route(WAIT_PATH, wait, methods=["GET"]), Route(STEP_PATH, step, methods=["GET"]),
            Route(ANSWER_PATH, answer, methods=["POST"])]
