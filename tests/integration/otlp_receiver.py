#!/usr/bin/python3
"""otlp_receiver.py: a bare OTLP/gRPC collector for tests/integration/test_otel.

Listens on 127.0.0.1 (an ephemeral port, written to PORTFILE once
listening), speaks HTTP/2 without TLS (prior knowledge) with Debian's
python3-h2, and stores each request's gRPC message, unframed, in
OUTDIR/<n>-<metrics|traces|logs>.pb, then answers as a collector does:
200, content-type application/grpc, an empty Export response, trailers
grpc-status 0.  With --unavailable N the first N requests are answered
grpc-status 14 (UNAVAILABLE) instead and stored as <n>-refused-<signal>.pb.
With --require-header KEY=VALUE a request without that header (gRPC
metadata) is stored as <n>-badframe.pb and answered grpc-status 12.
It exits after --seconds (default 120), so a test that dies never leaves
it behind.
"""
import argparse
import os
import socket
import sys
import threading
import time

import h2.config
import h2.connection
import h2.events

SIGNALS = {
    "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export": "metrics",
    "/opentelemetry.proto.collector.trace.v1.TraceService/Export": "traces",
    "/opentelemetry.proto.collector.logs.v1.LogsService/Export": "logs",
}

lock = threading.Lock()
state = {"n": 0, "unavailable": 0, "require": None}


def store(outdir, path, body, headers):
    signal = SIGNALS.get(path, "unknown")
    with lock:
        state["n"] += 1
        n = state["n"]
        refuse = state["unavailable"] > 0
        if refuse:
            state["unavailable"] -= 1
    req = state["require"]
    ok = (len(body) >= 5 and body[0] == 0
          and (req is None or headers.get(req[0]) == req[1])
          and int.from_bytes(body[1:5], "big") == len(body) - 5
          and headers.get("content-type") == "application/grpc"
          and headers.get("te") == "trailers")
    name = "%04d-%s%s.pb" % (n, "refused-" if refuse else "",
                             signal if ok else "badframe")
    tmp = os.path.join(outdir, "." + name)
    with open(tmp, "wb") as f:
        f.write(body[5:] if ok else body)
    os.rename(tmp, os.path.join(outdir, name))
    return 14 if refuse else (0 if ok and signal != "unknown" else 12)


def serve(sock, outdir):
    try:
        serve_conn(sock, outdir)
    except Exception as e:  # a broken client: its connection only
        print("otlp_receiver: %r" % (e,), file=sys.stderr)
        sock.close()


def serve_conn(sock, outdir):
    conn = h2.connection.H2Connection(
        config=h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    streams = {}
    while True:
        data = sock.recv(65536)
        if not data:
            break
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                hdr = {k.decode() if isinstance(k, bytes) else k:
                       v.decode() if isinstance(v, bytes) else v
                       for k, v in ev.headers}
                streams[ev.stream_id] = [hdr, bytearray()]
            elif isinstance(ev, h2.events.DataReceived):
                streams[ev.stream_id][1] += ev.data
                conn.acknowledge_received_data(
                    ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                hdr, body = streams.pop(ev.stream_id)
                code = store(outdir, hdr.get(":path", ""), bytes(body), hdr)
                conn.send_headers(ev.stream_id, [
                    (":status", "200"),
                    ("content-type", "application/grpc")])
                if code == 0:
                    conn.send_data(ev.stream_id, b"\0\0\0\0\0")
                trailers = [("grpc-status", str(code))]
                if code != 0:
                    trailers.append(("grpc-message", "refused by test"))
                conn.send_headers(ev.stream_id, trailers, end_stream=True)
        sock.sendall(conn.data_to_send())
    sock.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("portfile")
    ap.add_argument("outdir")
    ap.add_argument("--unavailable", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--require-header", default=None)
    a = ap.parse_args()
    state["unavailable"] = a.unavailable
    if a.require_header:
        state["require"] = a.require_header.split("=", 1)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.5)
    tmp = a.portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(tmp, a.portfile)
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        try:
            s, _ = srv.accept()
        except socket.timeout:
            continue
        s.settimeout(None)
        threading.Thread(target=serve, args=(s, a.outdir), daemon=True).start()


if __name__ == "__main__":
    main()
