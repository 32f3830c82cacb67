#!/usr/bin/python3
"""Elastic remote workers, file form (docs/remote-workers.md, "Elastic workers"): a real
`sloserve serve` with server.remote_workers_file and three `sloserve worker` processes on
127.0.0.1, driven by `sloserve loadgen` (open loop). The file starts with workers A and B;
during the run C is added and then A removed. Before: an empty file is not ready (400, "the remote worker set is empty"); with A and B
the third, free slot is no failure (ready without a note, nothing unreachable, one free
slot). Checks: every request sent gets exactly one
answer (the load generator's answers = its requests, no timeout or transport error, and
serve counted each request once: the sum of sloserve_requests_total = the requests); the
engine ended each query it admitted once; nothing failed (A was drained: the batches it
held finished, no result failed, no query was re-queued or dropped as executor_error);
C served once added; once serve says A's slot is free, A can be stopped and its slot
serves nothing more.
Usage: elastic_workers_test.py SLOSERVE_BINARY"""
import json, os, re, socket, subprocess, sys, tempfile, threading, time, urllib.error
import urllib.request

CONFIG = """suite: ramsis-image
task: image
hardware: n1-4cpu
slo_ms: 150
seed: 1
executor: {latency: sample}
policy: {name: fixed, dispatch: round_robin, batching: edf, selection: fixed,
         variant: shufflenet_v2_x0_5}
server: {input_shape: "-1,16"}
"""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Log:
    """A process's stderr, read on a thread; wait() for a line matching a pattern."""

    def __init__(self, proc):
        self.lines, self.cv = [], threading.Condition()
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc):
        for line in proc.stderr:
            with self.cv:
                self.lines.append(line)
                self.cv.notify_all()

    def wait(self, pattern, seconds=60):
        deadline = time.time() + seconds
        with self.cv:
            while True:
                for line in self.lines:
                    if re.search(pattern, line):
                        return line
                left = deadline - time.time()
                assert left > 0, "no line matching %r in:\n%s" % (pattern, "".join(self.lines))
                self.cv.wait(left)

    def text(self):
        with self.cv:
            return "".join(self.lines)


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metrics(port):
    return get(port, "/metrics")[1]


def value(text, name, labels=""):
    total = 0.0
    for m in re.finditer(r"^%s(\{[^}]*\})? (\S+)$" % re.escape(name), text, re.M):
        if labels in (m.group(1) or ""):
            total += float(m.group(2))
    return total


def served_by(text, worker):
    return value(text, "sloserve_request_duration_seconds_count", 'worker="%s"' % worker)


def write_set(path, addresses):
    with open(path + ".tmp", "w") as f:
        f.write("# the workers serve uses\n" + "\n".join(addresses) + "\n")
    os.rename(path + ".tmp", path)  # atomic: serve never reads half a file


def refused(binary, config, sets, message):
    """serve with these --set refuses to start, saying `message`."""
    args = [binary, "serve", config, "--port", "0", "--duration", "5"]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=60)
    assert r.returncode != 0 and message in r.stderr, (sets, r.returncode, r.stderr)


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "serve.yaml")
        with open(config, "w") as f:
            f.write(CONFIG)
        # Mistakes refused at start, each saying what is wrong.
        bad_file = os.path.join(tmp, "bad.txt")
        with open(bad_file, "w") as f:
            f.write("127.0.0.1:9001\n127.0.0.1\n")
        refused(binary, config, ["server.remote_workers_file=" + bad_file],
                bad_file + ": line 2: address '127.0.0.1'")
        refused(binary, config, ["server.remote_workers_file=" + tmp + "/none.txt"],
                "cannot open the workers file")
        refused(binary, config, ["server.remote_workers=dns:///worker"],
                "the DNS form is dns:///NAME:PORT")
        refused(binary, config, ["server.remote_workers=127.0.0.1:9001",
                                 "server.remote_workers_file=" + bad_file], "one way")
        refused(binary, config, ["server.remote_workers=dns:///localhost:9001",
                                 "server.remote_worker_slots=2000"], "must be in [1, 1024]")
        procs = []
        try:
            addr = {}
            workers = {}
            for name in "ABC":
                addr[name] = "127.0.0.1:%d" % free_port()
                workers[name] = subprocess.Popen(
                    [binary, "worker", config, "--listen", addr[name]],
                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                procs.append(workers[name])
            logs = {name: Log(p) for name, p in workers.items()}
            for name in "ABC":
                logs[name].wait("listening on grpc://")
            workers_file = os.path.join(tmp, "workers.txt")
            write_set(workers_file, [])  # empty at start: not ready

            port = free_port()
            serve = subprocess.Popen(
                [binary, "serve", config, "--port", str(port),
                 "--set", "server.remote_workers_file=" + workers_file,
                 "--set", "server.remote_worker_slots=3",
                 "--set", "server.remote_health_interval_ms=100"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            procs.append(serve)
            log = Log(serve)
            log.wait("sloserve: ready")  # started (the policies initialised), no worker yet
            status, body = get(port, "/v2/health/ready")
            assert status == 400 and "the remote worker set is empty (3 free slots)" in body, body
            write_set(workers_file, [addr["A"], addr["B"]])
            log.wait(r"\(%s\) is healthy again: rejoins" % re.escape(addr["A"]))
            log.wait(r"\(%s\) is healthy again: rejoins" % re.escape(addr["B"]))
            # The free slot is no failure: plain ready, nothing unreachable.
            status, body = get(port, "/v2/health/ready")
            assert status == 200 and "degraded" not in body, body
            m = metrics(port)
            assert value(m, "sloserve_worker_slots_free") == 1, m
            assert value(m, "sloserve_workers_unreachable") == 0, m

            loadgen = subprocess.Popen(
                [binary, "loadgen", "--port", str(port), "--qps", "40", "--duration", "12",
                 "--timeout", "60", "--json"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            procs.append(loadgen)
            time.sleep(3)
            write_set(workers_file, [addr["A"], addr["B"], addr["C"]])  # C added, loaded
            slot_c = log.wait(r"remote worker (w\d) \(%s\) is healthy again: rejoins"
                              % re.escape(addr["C"]))
            slot_c = re.search(r"(w\d) \(", slot_c).group(1)
            time.sleep(3)
            write_set(workers_file, [addr["B"], addr["C"]])  # A removed while loaded
            slot_a = log.wait(r"remote worker (w\d) \(%s\) drained: its slot is free"
                              % re.escape(addr["A"]))
            slot_a = re.search(r"(w\d) \(", slot_a).group(1)
            m = metrics(port)
            served_a = served_by(m, slot_a)
            assert value(m, "sloserve_worker_slots_free") == 1, m
            # Drained: stopping A now fails nothing (serve sends it nothing more).
            workers["A"].terminate()
            workers["A"].wait(timeout=30)
            assert workers["A"].returncode == 0, logs["A"].text()

            out, err = loadgen.communicate(timeout=120)
            assert loadgen.returncode == 0, err
            report = json.loads(out)
            m = metrics(port)
            sent = report["sent"]
            assert sent > 300, report
            # Exactly one answer per request, none lost.
            assert report["timeouts"] == 0 and report["transport_errors"] == 0, report
            assert report["ok"] + report["http_errors"] == sent, report
            # Overload answers (429 shed, 504 late) are allowed; a failure is not.
            assert set(report["errors_by_status"]) <= {"429", "504"}, report["errors_by_status"]
            assert value(m, "sloserve_requests_total") == sent, m
            arrived = value(m, "sloserve_queries_arrived_total")
            assert arrived == value(m, "sloserve_queries_finished_total"), m
            assert value(m, "sloserve_failed_results_total") == 0, log.text()
            assert value(m, "sloserve_requeued_queries_total") == 0, log.text()
            assert value(m, "sloserve_requests_total", 'reason="executor_error"') == 0
            # Each worker served while it was in the set, A's slot nothing after it was freed.
            assert served_by(m, slot_c) > 0, m
            assert value(m, "sloserve_workers_unreachable") == 0, m
            assert served_a > 0, m
            assert served_by(m, slot_a) == served_a, (slot_a, served_a, m)
            assert "left the worker set" in log.text()
            print("elastic workers: %d requests, %d served (A %d, C %d), each answered once"
                  % (sent, report["ok"], served_a, served_by(m, slot_c)))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.terminate()
            for p in procs:
                p.wait(timeout=60)


if __name__ == "__main__":
    main()
