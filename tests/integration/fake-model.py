#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A scripted model for the real-agent tests, on 127.0.0.1 only, speaking
# OpenAI's chat completions (omp, pi) and Anthropic's messages API (Claude
# Code, /v1/messages): the first turn calls the agent's shell tool with
# COMMAND, every later turn (the tool's result is in the conversation)
# ends with a text; a request without tools (Claude Code's side requests:
# titles, quota) gets a text.  Streams SSE when asked.  Prints the port it
# listens on, then logs each request's tools and roles to LOG.
#
#   fake-model.py COMMAND LOG
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMAND, LOG = sys.argv[1], sys.argv[2]


def shell_tool(tools):
    """The tool that runs a command, and the name of its command argument."""
    best = None
    for t in tools or []:
        f = t.get("function", t)
        name = f.get("name", "")
        props = (f.get("parameters") or f.get("input_schema") or {}).get("properties") or {}
        arg = next((p for p in ("command", "cmd", "script") if p in props), None)
        if arg and (best is None or name.lower() in ("bash", "shell", "exec")):
            best = (name, arg)
    return best or ("bash", "command")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self.reply(200, json.dumps({"object": "list", "data": [{"id": "fake-model", "object": "model"}]}))
        else:
            self.reply(404, "{}")

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.path.split("?")[0].endswith("/messages/count_tokens"):
            self.reply(200, json.dumps({"input_tokens": 10}))
            return
        if self.path.split("?")[0].endswith("/messages"):
            self.anthropic(req)
            return
        msgs = req.get("messages", [])
        done = any(m.get("role") == "tool" for m in msgs)
        name, arg = shell_tool(req.get("tools"))
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "roles": [m.get("role") for m in msgs],
                                "tools": [(t.get("function") or t).get("name") for t in req.get("tools") or []],
                                "chosen": [name, arg], "done": done}) + "\n")
        if done:
            delta = {"role": "assistant", "content": "Done: the file is written."}
            finish = "stop"
        else:
            call = {"index": 0, "id": "call_1", "type": "function",
                    "function": {"name": name, "arguments": json.dumps({arg: COMMAND})}}
            delta = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish = "tool_calls"
        base = {"id": "chatcmpl-1", "created": 0, "model": req.get("model", "fake-model")}
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        if not req.get("stream"):
            msg = dict(delta)
            self.reply(200, json.dumps(dict(base, object="chat.completion", usage=usage, choices=[
                {"index": 0, "message": msg, "finish_reason": finish}])))
            return
        chunks = [dict(base, object="chat.completion.chunk", choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
                  dict(base, object="chat.completion.chunk", choices=[{"index": 0, "delta": {}, "finish_reason": finish}]),
                  dict(base, object="chat.completion.chunk", choices=[], usage=usage)]
        body = "".join("data: %s\n\n" % json.dumps(c) for c in chunks) + "data: [DONE]\n\n"
        self.reply(200, body, "text/event-stream")


    def anthropic(self, req):
        msgs = req.get("messages", [])
        done = any(isinstance(m.get("content"), list) and
                   any(b.get("type") == "tool_result" for b in m["content"] if isinstance(b, dict)) for m in msgs)
        tools = req.get("tools") or []
        name, arg = shell_tool(tools)
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "roles": [m.get("role") for m in msgs],
                                "tools": [t.get("name") for t in tools], "chosen": [name, arg],
                                "done": done}) + "\n")
        if done or not tools:
            block, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": "Done: the file is written."}, "end_turn"
            content = [{"type": "text", "text": delta["text"]}]
        else:
            args = json.dumps({arg: COMMAND})
            block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
            delta, stop = {"type": "input_json_delta", "partial_json": args}, "tool_use"
            content = [dict(block, input={arg: COMMAND})]
        usage = {"input_tokens": 10, "output_tokens": 10}
        msg = {"id": "msg_1", "type": "message", "role": "assistant", "model": req.get("model", "fake-model"),
               "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not req.get("stream"):
            self.reply(200, json.dumps(msg))
            return
        events = [("message_start", {"type": "message_start", "message": dict(msg, content=[], stop_reason=None)}),
                  ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                  ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
                  ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                  ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 10}}),
                  ("message_stop", {"type": "message_stop"})]
        body = "".join("event: %s\ndata: %s\n\n" % (e, json.dumps(d)) for e, d in events)
        self.reply(200, body, "text/event-stream")


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
