#!/usr/bin/python3
"""A real Prometheus scrapes a real `sloserve serve`, and the Grafana dashboard's queries
run against it (issue 36; docs/metrics.md "Prometheus").

`promtool check metrics` accepts a scrape; Debian's `prometheus` (scripts/setup) is started
with a scrape config naming serve; after load from `sloserve loadgen` the target is up, and
every query of docs/grafana/sloserve.json (its variables $instance, $model and
$__rate_interval filled in as Grafana would) is accepted by Prometheus' query API, the
panels that plot requests return series, and the SLO attainment it computes is a ratio in
[0, 1].
Usage: prometheus_scrape_test.py SLOSERVE_BINARY DASHBOARD_JSON"""
import json, os, shutil, subprocess, sys, tempfile, time, urllib.parse

from local_http import free_port, get


def wait_until(what, check, seconds=120):
    deadline = time.time() + seconds
    while time.time() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.5)
    raise AssertionError("timed out waiting for " + what)


def dashboard_queries(path):
    def panels(ps):
        for p in ps:
            yield p
            yield from panels(p.get("panels", []))

    with open(path) as f:
        dashboard = json.load(f)
    for panel in panels(dashboard["panels"]):
        for target in panel.get("targets", []):
            if target.get("expr"):
                yield panel.get("title", "?"), target["expr"]


def grafana_expr(expr):
    """The variables as Grafana substitutes them with "All" selected."""
    return (expr.replace("$__rate_interval", "1m").replace("$instance", ".*")
            .replace("$model", ".*"))


def main():
    sloserve, dashboard = sys.argv[1], sys.argv[2]
    prometheus = shutil.which("prometheus")
    promtool = shutil.which("promtool")
    assert prometheus and promtool, "Debian's prometheus package is not installed (scripts/setup)"
    work = tempfile.mkdtemp(prefix="sloserve-prometheus-")
    procs = []
    try:
        port, prom_port = free_port(), free_port()
        serve = subprocess.Popen([sloserve, "serve", "--port", str(port)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=dict(os.environ, SLOSERVE_CACHE_DIR=work))
        procs.append(serve)
        base = "http://127.0.0.1:%d" % port
        wait_until("serve to listen", lambda: get(base + "/v2/health/live")[0] == 200)

        # The text format as Prometheus' own checker reads it.
        status, scrape = get(base + "/metrics")
        assert status == 200, status
        check = subprocess.run([promtool, "check", "metrics"], input=scrape, text=True,
                               capture_output=True)
        assert check.returncode == 0, "promtool check metrics:\n" + check.stdout + check.stderr

        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                    "scrape_configs:\n"
                    "  - job_name: sloserve\n"
                    "    static_configs: [{targets: ['127.0.0.1:%d']}]\n" % port)
        prom = subprocess.Popen(
            [prometheus, "--config.file=" + os.path.join(work, "prometheus.yml"),
             "--storage.tsdb.path=" + os.path.join(work, "data"),
             "--web.listen-address=127.0.0.1:%d" % prom_port],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "prometheus.log"), "w"))
        procs.append(prom)
        api = "http://127.0.0.1:%d/api/v1/" % prom_port

        def query(expr):
            status, body = get(api + "query?" + urllib.parse.urlencode({"query": expr}))
            answer = json.loads(body) if body.startswith("{") else {"status": body}
            assert status == 200 and answer["status"] == "success", \
                "Prometheus refused %r: %s %s" % (expr, status, body[:300])
            return answer["data"]["result"]

        wait_until("Prometheus to scrape serve", lambda: get(api + "query?query=up")[0] == 200 and
                   any(r["value"][1] == "1" for r in query('up{job="sloserve"}')))

        load = subprocess.run([sloserve, "loadgen", "--port", str(port), "--qps", "50",
                               "--duration", "6", "--json"], capture_output=True, text=True,
                              timeout=300)
        assert load.returncode == 0, load.stderr[-2000:]
        answered = json.loads(load.stdout)
        # Two more scrapes after the load, so rate() over 1m has the load in it.
        time.sleep(3)

        wait_until("the requests to reach Prometheus", lambda: query(
            'sum(sloserve_requests_total{job="sloserve"})'))
        total = float(query('sum(sloserve_requests_total{job="sloserve"})')[0]["value"][1])
        assert total >= 1, total
        empty = []
        for title, expr in dashboard_queries(dashboard):
            result = query(grafana_expr(expr))  # accepted, or the assertion names it
            if not result:
                empty.append(title)
        # Panels of request series have data after the load (the worker and queue gauges
        # may be 0 but are series; only a rate of cold starts may be absent).
        for title in ("SLO attainment (met / answered)", "Variant mix (req/s answered, by variant)",
                      "Request latency p50 / p99 (histogram_quantile)",
                      "Accuracy of answered requests (0-1)"):
            assert title not in empty, "dashboard panel %r has no data: %s" % (title, empty)
        attainment = [float(r["value"][1]) for r in query(grafana_expr(next(
            e for t, e in dashboard_queries(dashboard) if t.startswith("SLO attainment, last"))))]
        assert attainment and all(0 <= a <= 1 for a in attainment), attainment
        print("prometheus_scrape_test: %d requests scraped (loadgen sent %s); %d dashboard "
              "queries accepted; attainment %s" % (total, answered.get("sent", "?"),
                                                    len(list(dashboard_queries(dashboard))),
                                                    attainment))
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
