#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A scripted OpenAI-compatible model for the real-agent tests, on
# 127.0.0.1 only: the first turn calls the agent's shell tool with COMMAND,
# every later turn (the tool's result is in the conversation) ends with a
# text.  Streams SSE when asked.  Prints the port it listens on, then logs
# each request's tools and roles to LOG.
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
        props = (f.get("parameters") or {}).get("properties") or {}
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


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
