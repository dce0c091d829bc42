#!/usr/bin/env python3
"""make-corpus.py: writes the bad-input corpus read by tests/unit/test_badinput.c.

    python3 tests/unit/data/badinput/make-corpus.py

Each case is a file <decoder>/<name>.<ext> holding one malformed input and a
sidecar <name>.expect of "key: value" lines ('#' lines are comments saying
what is wrong).  Keys:
    error:   the decoder's error message starts with this (ipc, watch,
             kubeconfig)
    events:  watch only: events delivered before the error
    http:    status only: "<code> <method>" of the answer the body came with
    rc:      status only: kapi_rc_name() of the result
    reason:  status only: the reason
    message: status only: the message starts with this
The files are committed; rerun this script after changing a case.
"""
import json
import os
import struct
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
MAGIC = 0x53594D50
T = dict(HELLO=1, READY=2, WORK=3, RESULT=4, VIEW_REQ=5, VIEW_REPLY=6,
         HEARTBEAT=7, QUIT=8, ERROR=9)


def frame(typ, body, magic=MAGIC, version=1, length=None, reqid=1):
    if isinstance(body, str):
        body = body.encode()
    if length is None:
        length = len(body)
    return struct.pack(">IHHII", magic, version, typ, reqid, length) + body


def js(o):
    return json.dumps(o, separators=(",", ":"))


RES = {"group": "", "version": "v1", "plural": "pods", "namespaced": True}
HELLO = {"controller": "agentrun", "pid": 1234, "proto": 1}
WORK = {"key": "ns1/a", "epoch": 3, "attempt": 0, "now": 1700000000000,
        "object": {"kind": "AgentRun"}, "children": [], "deadlineMs": 30000}
WRITE = {"op": "create", "resource": RES, "namespace": "ns1", "name": "p",
         "object": {"kind": "Pod"}}
RESULT = {"key": "ns1/a", "epoch": 3, "verdict": {"kind": "done"},
          "writes": [WRITE]}
VREQ = {"id": 7, "what": "get", "resource": RES, "namespace": "ns1",
        "name": "p"}
VREPLY = {"id": 7, "status": "ok", "object": {"kind": "Pod"}}
ZREQ = {"id": 8, "what": "zoneinfo", "name": "America/New_York"}
ZREPLY = {"id": 8, "status": "ok", "data": "VFppZjI="}


def with_(base, path, value):
    """A deep copy of base with path (a list of keys/indexes) set to value,
    or removed when value is DELETE."""
    o = json.loads(json.dumps(base))
    cur = o
    for k in path[:-1]:
        cur = cur[k]
    if value is DELETE:
        del cur[path[-1]]
    else:
        cur[path[-1]] = value
    return o


DELETE = object()


def ipc_cases():
    ok = js(HELLO)
    c = []
    add = c.append
    add(("empty", b"", "no bytes at all", None))
    add(("truncated-header", frame(T["HELLO"], ok)[:10],
         "10 of the 16 header bytes", None))
    add(("truncated-body", frame(T["HELLO"], ok)[:30],
         "header announces more body than there is", None))
    add(("trailing-bytes", frame(T["HELLO"], ok) + b"xx",
         "two bytes after the body", None))
    add(("wrong-magic", frame(T["HELLO"], ok, magic=0x48545450),
         "magic \"HTTP\" instead of \"SYMP\"", None))
    add(("wrong-version", frame(T["HELLO"], ok, version=2),
         "protocol version 2", None))
    add(("version-zero", frame(T["HELLO"], ok, version=0),
         "protocol version 0", None))
    add(("type-zero", frame(0, ok), "message type 0", None))
    add(("type-unknown", frame(99, ok), "message type 99", None))
    add(("oversized-length", frame(T["HELLO"], ok, length=0xFFFFFFFF),
         "body length 4 GiB - 1, far beyond the bound", None))
    add(("length-over-max", frame(T["HELLO"], b"", length=(16 << 20) + 1),
         "body length just above IPC_MAX_LEN, no body", None))
    add(("body-empty", frame(T["QUIT"], b""), "zero-length body", None))
    add(("body-not-json", frame(T["HELLO"], "hello there"),
         "body is not JSON", None))
    add(("body-array", frame(T["QUIT"], "[]"), "body is an array", None))
    add(("body-string", frame(T["QUIT"], '"x"'), "body is a string", None))
    add(("body-two-values", frame(T["QUIT"], "{}{}"),
         "two JSON values in the body", None))
    add(("body-nul", frame(T["HELLO"], ok[:10] + "\0" + ok[10:]),
         "raw NUL byte inside the body", None))
    add(("body-invalid-utf8", frame(T["HELLO"],
                                    ok.replace("agentrun", "agent\xffrun")
                                    .encode("latin-1")),
         "invalid UTF-8 (0xff) in a string", None))
    add(("body-deep", frame(T["WORK"], js(with_(
        WORK, ["object"], json.loads("[" * 100 + "]" * 100)))),
        "object nested 100 deep (bound 64)", None))
    add(("huge-pid", frame(T["HELLO"], ok.replace("1234", "1" * 40)),
         "pid with 40 digits", None))
    add(("huge-float", frame(T["HEARTBEAT"], '{"seq":1e400}'),
         "seq 1e400", None))
    add(("key-nul-escape", frame(T["WORK"], js(with_(WORK, ["key"],
                                                      "ns1/a\u0000b"))),
         "work key with an escaped NUL", None))
    add(("key-too-long", frame(T["WORK"], js(with_(WORK, ["key"],
                                                    "k" * 513))),
         "work key of 513 bytes", None))
    add(("too-many-writes", frame(T["RESULT"], js(with_(
        RESULT, ["writes"], [WRITE] * 1001))), "1001 writes", None))
    wrong = [
        ("hello-controller-number", "HELLO", HELLO, ["controller"], 5),
        ("hello-pid-string", "HELLO", HELLO, ["pid"], "1234"),
        ("hello-pid-zero", "HELLO", HELLO, ["pid"], 0),
        ("hello-proto-2", "HELLO", HELLO, ["proto"], 2),
        ("hello-no-pid", "HELLO", HELLO, ["pid"], DELETE),
        ("ready-epoch-string", "READY", {"epoch": 1}, ["epoch"], "1"),
        ("ready-epoch-negative", "READY", {"epoch": 1}, ["epoch"], -1),
        ("work-key-number", "WORK", WORK, ["key"], 1),
        ("work-key-empty", "WORK", WORK, ["key"], ""),
        ("work-epoch-float", "WORK", WORK, ["epoch"], 1.5),
        ("work-attempt-object", "WORK", WORK, ["attempt"], {}),
        ("work-now-string", "WORK", WORK, ["now"], "now"),
        ("work-object-array", "WORK", WORK, ["object"], []),
        ("work-children-object", "WORK", WORK, ["children"], {}),
        ("work-children-number", "WORK", WORK, ["children"], [1]),
        ("work-deadline-bool", "WORK", WORK, ["deadlineMs"], True),
        ("work-no-key", "WORK", WORK, ["key"], DELETE),
        ("result-verdict-string", "RESULT", RESULT, ["verdict"], "done"),
        ("result-verdict-unknown", "RESULT", RESULT, ["verdict", "kind"],
         "maybe"),
        ("result-after-missing", "RESULT", RESULT, ["verdict"],
         {"kind": "requeue_after"}),
        ("result-after-string", "RESULT", RESULT, ["verdict"],
         {"kind": "requeue_after", "afterMs": "5"}),
        ("result-message-number", "RESULT", RESULT, ["verdict"],
         {"kind": "error", "message": 5}),
        ("result-writes-object", "RESULT", RESULT, ["writes"], {}),
        ("write-op-unknown", "RESULT", RESULT, ["writes", 0, "op"], "zap"),
        ("write-op-number", "RESULT", RESULT, ["writes", 0, "op"], 1),
        ("write-no-resource", "RESULT", RESULT, ["writes", 0, "resource"],
         DELETE),
        ("write-resource-array", "RESULT", RESULT,
         ["writes", 0, "resource"], []),
        ("write-version-empty", "RESULT", RESULT,
         ["writes", 0, "resource", "version"], ""),
        ("write-namespaced-string", "RESULT", RESULT,
         ["writes", 0, "resource", "namespaced"], "true"),
        ("write-name-number", "RESULT", RESULT, ["writes", 0, "name"], 7),
        ("write-object-string", "RESULT", RESULT, ["writes", 0, "object"],
         "{}"),
        ("write-patch-missing", "RESULT", RESULT, ["writes", 0],
         dict(WRITE, op="patch", patchType="merge")),
        ("write-patchtype-bad", "RESULT", RESULT, ["writes", 0],
         dict(WRITE, op="patch", patch={}, patchType="xml")),
        ("write-tolerate-string", "RESULT", RESULT,
         ["writes", 0, "tolerate"], "NotFound"),
        ("write-tolerate-unknown", "RESULT", RESULT,
         ["writes", 0, "tolerate"], ["Bogus"]),
        ("viewreq-id-string", "VIEW_REQ", VREQ, ["id"], "7"),
        ("viewreq-what-unknown", "VIEW_REQ", VREQ, ["what"], "watch"),
        ("viewreq-get-no-name", "VIEW_REQ", VREQ, ["name"], DELETE),
        ("viewreq-selector-number", "VIEW_REQ", VREQ, ["labelSelector"], 1),
        ("viewreq-taillines-negative", "VIEW_REQ",
         dict(VREQ, what="pod_log"), ["tailLines"], -5),
        ("viewreply-status-unknown", "VIEW_REPLY", VREPLY, ["status"], "meh"),
        ("viewreply-items-object", "VIEW_REPLY", VREPLY, ["items"], {}),
        ("viewreply-text-number", "VIEW_REPLY", VREPLY, ["text"], 3),
        ("viewreq-zoneinfo-no-name", "VIEW_REQ", ZREQ, ["name"], DELETE),
        ("viewreq-zoneinfo-name-empty", "VIEW_REQ", ZREQ, ["name"], ""),
        ("viewreq-zoneinfo-name-number", "VIEW_REQ", ZREQ, ["name"], 42),
        ("viewreq-zoneinfo-name-array", "VIEW_REQ", ZREQ, ["name"],
         ["America", "New_York"]),
        ("viewreq-zoneinfo-name-nul", "VIEW_REQ", ZREQ, ["name"],
         "UTC\u0000/../../etc/passwd"),
        ("viewreq-zoneinfo-name-long", "VIEW_REQ", ZREQ, ["name"],
         "Etc/" + "a" * 250),
        ("viewreply-data-number", "VIEW_REPLY", ZREPLY, ["data"], 7),
        ("viewreply-data-object", "VIEW_REPLY", ZREPLY, ["data"], {}),
        ("viewreply-data-unpadded", "VIEW_REPLY", ZREPLY, ["data"],
         "VFppZjI"),
        ("viewreply-data-bad-char", "VIEW_REPLY", ZREPLY, ["data"],
         "VFpp*jI="),
        ("viewreply-data-inner-pad", "VIEW_REPLY", ZREPLY, ["data"],
         "VF==ZjI="),
        ("viewreply-data-url-alphabet", "VIEW_REPLY", ZREPLY, ["data"],
         "VFp-_jI="),
        ("viewreply-data-whitespace", "VIEW_REPLY", ZREPLY, ["data"],
         "VFpp\nZjI="),
        ("viewreply-data-nul", "VIEW_REPLY", ZREPLY, ["data"],
         "VFppZjI=\u0000"),
        # 262146 bytes once decoded: over IPC_DATA_MAX (256 KiB)
        ("viewreply-data-oversized", "VIEW_REPLY", ZREPLY, ["data"],
         "A" * (4 * ((256 * 1024 + 2) // 3))),
        ("heartbeat-seq-string", "HEARTBEAT", {"seq": 1}, ["seq"], "1"),
        ("heartbeat-seq-negative", "HEARTBEAT", {"seq": 1}, ["seq"], -1),
        ("error-message-number", "ERROR", {"message": "x"}, ["message"], 1),
        ("error-no-message", "ERROR", {"message": "x"}, ["message"], DELETE),
    ]
    for name, typ, base, path, value in wrong:
        what = ("without " if value is DELETE else "with ") + \
            ".".join(str(p) for p in path) + \
            ("" if value is DELETE else " = " + js(value)[:40])
        add((name, frame(T[typ], js(with_(base, path, value))),
             typ + " " + what, None))
    return c


def watch_cases():
    ev = js({"type": "ADDED", "object": {"kind": "Pod", "metadata": {
        "name": "p", "resourceVersion": "5"}}}) + "\n"
    return [
        ("type-number", '{"type":1,"object":{}}\n', "type is a number", 0),
        ("type-unknown", '{"type":"RENAMED","object":{}}\n',
         "unknown event type", 0),
        ("object-array", ev + '{"type":"ADDED","object":[]}\n',
         "object is an array, after one good event", 1),
        ("object-null", '{"type":"DELETED","object":null}\n',
         "object is null", 0),
        ("event-array", "[1,2]\n", "event is an array", 0),
        ("event-number", "42\n", "event is a number", 0),
        ("garbage-between", ev + "xx" + ev, "garbage between events", 1),
        ("truncated", ev + ev[:30], "stream cut inside an event", 1),
        ("nul-byte", ev + '{"type":"ADDED",\0"object":{}}\n',
         "raw NUL byte inside an event", 1),
        ("invalid-utf8", '{"type":"ADDED","object":{"kind":"P\xffd"}}\n',
         "invalid UTF-8 in a string: ACCEPTED (json-c's UTF-8 check is "
         "not safe across feed() boundaries; API servers send valid "
         "UTF-8 only)", 1),
        ("deep", '{"type":"ADDED","object":{"a":' + "[" * 200 + "]" * 200 +
         "}}\n", "200 nested arrays (decoder bound 64): SKIPPED, not an error "
         "(the watch goes on after it)", 0),
        ("huge-number", '{"type":"ADDED","object":{"n":1e999}}\n',
         "number 1e999: ACCEPTED as a double (infinity), see docs-fuzz.md",
         1),
        ("huge-int", '{"type":"ADDED","object":{"n":' + "9" * 400 + "}}\n",
         "integer of 400 digits: ACCEPTED as a double, see docs-fuzz.md",
         1),
        ("oversized", '{"type":"ADDED","object":{"s":"' + "x" * 5000 +
         '"}}\n', "one event of 5 kB (the test's bound is 4096)", 0),
        ("bad-escape", '{"type":"ADDED","object":{"s":"\\q"}}\n',
         "invalid escape \\q", 0),
        ("lone-surrogate", '{"type":"ADDED","object":{"s":"\\ud800x"}}\n',
         "lone UTF-16 surrogate escape: ACCEPTED as U+FFFD, as Go's "
         "encoding/json does", 1),
    ]


def status_cases():
    st = {"kind": "Status", "apiVersion": "v1", "status": "Failure"}
    return [
        ("html-body", "500 GET", "<html><body>\n<h1>Bad gateway</h1>\n"
         "</body></html>", "HTML error page from a proxy"),
        ("empty-body", "503 GET", "", "no body"),
        ("not-status", "404 GET", js({"kind": "Pod"}),
         "JSON, but not a Status"),
        ("reason-number", "409 PUT", js(dict(st, reason=5, message="m")),
         "reason is a number"),
        ("reason-unknown", "422 POST", js(dict(st, reason="Weird",
                                                message="bad field")),
         "unknown reason"),
        ("message-object", "500 GET", js(dict(st, reason="InternalError",
                                               message={"a": 1})),
         "message is an object"),
        ("message-nul", "400 GET", js(dict(st, reason="BadRequest",
                                            message="before\u0000after")),
         "message with an escaped NUL"),
        ("message-control", "400 GET", js(dict(
            st, reason="BadRequest", message="line1\nline2\tx\x01")),
         "control characters in the message"),
        ("raw-nul", "502 GET", "bad\0gateway", "raw NUL in a text body"),
        ("retry-string", "429 GET", js(dict(
            st, reason="TooManyRequests", message="slow down",
            details={"retryAfterSeconds": "5"})),
         "retryAfterSeconds is a string"),
        ("retry-huge", "429 GET", js(dict(
            st, reason="TooManyRequests", message="slow down",
            details={"retryAfterSeconds": 10 ** 30})),
         "retryAfterSeconds beyond int64"),
        ("code-odd", "299 GET", "whatever", "a 2xx code is success"),
        ("code-unknown", "799 GET", "teapot", "a code outside 4xx/5xx"),
        ("deep", "500 GET", '{"kind":"Status","details":' + "[" * 300 +
         "]" * 300 + "}", "Status nested 300 deep"),
        ("truncated", "500 GET", js(dict(st, reason="InternalError",
                                          message="x"))[:-5],
         "Status JSON cut short"),
        ("long-text", "500 GET", "E" * 20000, "20 kB text body"),
    ]


def kubeconfig_cases():
    good = ("apiVersion: v1\nkind: Config\ncurrent-context: c\n"
            "clusters:\n- name: k\n  cluster:\n    server: https://a:6443\n"
            "users:\n- name: u\n  user:\n    token: t\n"
            "contexts:\n- name: c\n  context:\n    cluster: k\n"
            "    user: u\n")
    return [
        ("empty", "", "empty file"),
        ("not-yaml", "clusters: [\n", "YAML syntax error"),
        ("scalar", "just a string\n", "document is a scalar"),
        ("list", "- a\n- b\n", "document is a list"),
        ("clusters-map", good.replace("clusters:\n- name: k\n  cluster:",
                                      "clusters:\n  k:\n    cluster:"),
         "clusters is a mapping"),
        ("server-number", good.replace("https://a:6443", "6443"),
         "server is a number"),
        ("server-missing", good.replace("    server: https://a:6443\n",
                                        "    tls-server-name: a\n"),
         "cluster without server"),
        ("no-current-context", good.replace("current-context: c\n", ""),
         "no current-context"),
        ("unknown-context", good.replace("current-context: c",
                                         "current-context: zz"),
         "current-context names no context"),
        ("unknown-cluster", good.replace("    cluster: k", "    cluster: zz"),
         "context names an unknown cluster"),
        ("unknown-user", good.replace("    user: u\n", "    user: zz\n"),
         "context names an unknown user"),
        ("token-list", good.replace("token: t", "token: [t]"),
         "token is a list"),
        ("bad-base64", good.replace(
            "    server: https://a:6443\n",
            "    server: https://a:6443\n"
            "    certificate-authority-data: '!!notbase64!!'\n"),
         "certificate-authority-data is not base64"),
        ("insecure-string", good.replace(
            "    server: https://a:6443\n",
            "    server: https://a:6443\n"
            "    insecure-skip-tls-verify: maybe\n"),
         "insecure-skip-tls-verify is not a boolean"),
        ("deep", "a: " + "[" * 2000 + "]" * 2000 + "\n",
         "2000 nested flow sequences (bound 1000)"),
        ("huge-number", good.replace("server: https://a:6443",
                                     "server: 1" + "0" * 400),
         "server is a 401-digit number"),
        ("invalid-utf8", good.replace("token: t", "token: t\xff\xfe"),
         "invalid UTF-8"),
        ("nul-byte", good.replace("token: t", "token: t\0x"),
         "raw NUL byte"),
        ("alias-bomb", "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
            "%s: &%s [%s]\n" % (chr(98 + i), chr(98 + i),
                                ",".join(["*" + chr(97 + i)] * 10))
            for i in range(6)), "aliases expanding to 10^7 nodes"),
    ]


def write(dirname, name, ext, data, comment, expect):
    d = os.path.join(HERE, dirname)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("latin-1")
    with open(os.path.join(d, name + "." + ext), "wb") as f:
        f.write(data)
    with open(os.path.join(d, name + ".expect"), "w") as f:
        f.write("# " + comment + "\n")
        for k, v in expect:
            f.write("%s: %s\n" % (k, v))


def main():
    exp = {}
    path = os.path.join(HERE, "expected.json")
    if os.path.exists(path):
        with open(path) as f:
            exp = json.load(f)
    for d in ("ipc", "watch", "status", "kubeconfig"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
    for name, data, comment, _ in ipc_cases():
        e = exp.get("ipc/" + name, "?")
        write("ipc", name, "bin", data, comment, [("error", e)])
    for name, data, comment, events in watch_cases():
        e = exp.get("watch/" + name, "?")
        write("watch", name, "json", data, comment,
              [("events", events), ("error", e)])
    for name, http, body, comment in status_cases():
        e = exp.get("status/" + name, {})
        write("status", name, "body", body, comment,
              [("http", http), ("rc", e.get("rc", "?")),
               ("reason", e.get("reason", "?")),
               ("message", e.get("message", "?"))])
    for name, text, comment in kubeconfig_cases():
        e = exp.get("kubeconfig/" + name, "?")
        write("kubeconfig", name, "yaml", text, comment, [("error", e)])


if __name__ == "__main__":
    main()
