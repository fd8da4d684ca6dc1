"""Checks exec JSONL streams with the official OpenAI Python SDK.

Usage: python sdk_check.py DIR

For every DIR/*.jsonl:
  - every line whose type the SDK models validates against that model (pydantic
    `model_validate` of the `ResponseStreamEvent` member for its `type`); types the SDK does not
    model are counted, not failed (consumers ignore unknown types);
  - a stream that ends with `response.completed` is served over HTTP on 127.0.0.1 and read with
    the SDK's own stream helper, `client.responses.stream()`, which must accept it and give a
    final response; when DIR/NAME.expect.json exists, the final response's messages and function
    calls must equal it.

One relaxation, by design (docs/exec.md): `response.failed` carries the failure's real code in
`response.error.code` (`invalid_api_key`, `cancelled`, ...), which the SDK types as a closed
enumeration. Such lines are counted as `open_codes`; every other member must validate.

Prints a JSON report on stdout.
"""

import json
import os
import sys
import threading
import typing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pydantic
from openai.types.responses import ResponseStreamEvent


def models():
    union = typing.get_args(ResponseStreamEvent)[0]
    table = {}
    for cls in typing.get_args(union):
        event_type = typing.get_args(cls.model_fields["type"].annotation)[0]
        table[event_type] = cls
    return table


MODELS = models()


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        path = self.headers["x-stream"]
        with open(path, encoding="utf-8") as f:
            lines = [line for line in f.read().split("\n") if line]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for line in lines:
            event_type = json.loads(line)["type"]
            self.wfile.write(f"event: {event_type}\ndata: {line}\n\n".encode("utf-8"))
        self.wfile.flush()

    def log_message(self, *args):
        pass


def main():
    directory = sys.argv[1]
    report = {
        "sdk": openai.__version__,
        "files": 0,
        "lines": 0,
        "validated": 0,
        "unknown_types": {},
        "open_codes": 0,
        "streamed": 0,
        "compared": 0,
        "failures": [],
    }
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
        api_key="sk-check",
        max_retries=0,
    )
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".jsonl"):
            continue
        path = os.path.join(directory, name)
        report["files"] += 1
        with open(path, encoding="utf-8") as f:
            lines = [line for line in f.read().split("\n") if line]
        last = None
        for number, line in enumerate(lines, 1):
            report["lines"] += 1
            event = json.loads(line)
            last = event.get("type")
            cls = MODELS.get(last)
            if cls is None:
                report["unknown_types"][last] = report["unknown_types"].get(last, 0) + 1
                continue
            try:
                cls.model_validate(event)
                report["validated"] += 1
            except pydantic.ValidationError as e:
                errors = [
                    err
                    for err in e.errors()
                    if not (
                        last == "response.failed"
                        and tuple(err["loc"][:3]) == ("response", "error", "code")
                        and err["type"] == "literal_error"
                    )
                ]
                if errors:
                    report["failures"].append(
                        {
                            "file": name,
                            "line": number,
                            "type": last,
                            "errors": [
                                {"loc": list(map(str, err["loc"])), "msg": err["msg"]}
                                for err in errors[:5]
                            ],
                        }
                    )
                else:
                    report["open_codes"] += 1
                    report["validated"] += 1
        if last != "response.completed":
            continue
        try:
            with client.responses.stream(
                model="m", input="hi", extra_headers={"x-stream": os.path.abspath(path)}
            ) as stream:
                for _ in stream:
                    pass
                final = stream.get_final_response()
            report["streamed"] += 1
        except Exception as e:  # noqa: BLE001 - any failure of the helper is a finding
            report["failures"].append(
                {"file": name, "stream_helper": f"{type(e).__name__}: {e}"}
            )
            continue
        expect_path = path[: -len(".jsonl")] + ".expect.json"
        if os.path.exists(expect_path):
            with open(expect_path, encoding="utf-8") as f:
                expected = json.load(f)
            messages = [
                "".join(c.text for c in item.content if c.type == "output_text")
                for item in final.output
                if item.type == "message"
            ]
            calls = [
                [item.call_id, item.name, item.arguments]
                for item in final.output
                if item.type == "function_call"
            ]
            got = {"messages": messages, "calls": calls}
            if got != expected:
                report["failures"].append(
                    {"file": name, "final_response": got, "expected": expected}
                )
            report["compared"] += 1
    server.shutdown()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
