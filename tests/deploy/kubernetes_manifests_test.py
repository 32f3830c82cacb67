#!/usr/bin/python3
"""deploy/kubernetes/ against the real binary (no cluster runs here; docs/deploy.md).

Every manifest parses (python3-yaml) and has the fields its kind needs; the Deployment's
probes name ports the container declares and the ConfigMap's config listens on; the config
file the containers are given is where the ConfigMap is mounted; serve's
`remote_workers: dns:///NAME:PORT` names the workers' headless Service and its port, which
the StatefulSet's `--listen` uses. Then the config is extracted from the ConfigMap, a
`sloserve worker` started with the StatefulSet's arguments (on a free port) and `sloserve
serve` with the Deployment's arguments (the Service name replaced by `localhost`, ports by
free ones): the liveness and readiness paths answer 200, and /metrics counts the worker up.
Usage: kubernetes_manifests_test.py SLOSERVE_BINARY DEPLOY_DIR"""
import json, os, re, subprocess, sys, tempfile, time, urllib.request

import yaml

from local_http import free_port, get


def load(deploy_dir):
    docs = {}
    for name in sorted(os.listdir(deploy_dir)):
        if not name.endswith(".yaml"):
            continue
        with open(os.path.join(deploy_dir, name)) as f:
            for doc in yaml.safe_load_all(f):
                assert isinstance(doc, dict), "%s: a document that is not a mapping" % name
                for key in ("apiVersion", "kind", "metadata") if doc.get("kind") != "Kustomization" \
                        else ("apiVersion", "kind", "resources"):
                    assert key in doc, "%s: %s without %s" % (name, doc.get("kind"), key)
                docs[(doc["kind"], doc.get("metadata", {}).get("name", name))] = (name, doc)
    return docs


def container_port(container, port):
    """A probe's port (a name or a number) -> the container's port number."""
    for p in container.get("ports", []):
        if port in (p.get("name"), p["containerPort"]):
            return p["containerPort"]
    raise AssertionError("port %r is not one the container %s declares" % (port, container["name"]))


def wait_for(proc, text, seconds=120):
    deadline = time.time() + seconds
    lines = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        assert line, "exited before saying %r:\n%s" % (text, "".join(lines))
        lines.append(line)
        if text in line:
            return line
    raise AssertionError("did not say %r within %d s" % (text, seconds))


def main():
    binary, deploy_dir = sys.argv[1], sys.argv[2]
    docs = load(deploy_dir)
    kustomization = docs[("Kustomization", "kustomization.yaml")][1]
    for resource in kustomization["resources"]:
        assert os.path.exists(os.path.join(deploy_dir, resource)), resource
    _, config_map = docs[("ConfigMap", "sloserve-config")]
    _, deployment = docs[("Deployment", "sloserve")]
    _, service = docs[("Service", "sloserve")]
    _, workers = docs[("StatefulSet", "sloserve-worker")]
    _, worker_service = docs[("Service", "sloserve-worker")]
    assert ("PodDisruptionBudget", "sloserve") in docs
    assert ("ServingRuntime", "sloserve") in docs

    # The config the ConfigMap holds, where the containers read it.
    (config_key, config_text), = config_map["data"].items()
    config = yaml.safe_load(config_text)
    server = config["server"]

    def config_path(pod_spec, args):
        mounts = {m["name"]: m["mountPath"] for m in pod_spec["containers"][0]["volumeMounts"]}
        volume = next(v for v in pod_spec["volumes"]
                      if v.get("configMap", {}).get("name") == config_map["metadata"]["name"])
        path = os.path.join(mounts[volume["name"]], config_key)
        assert path in args, "the container is not given %s: %s" % (path, args)
        return path

    serve_pod = deployment["spec"]["template"]["spec"]
    serve_container = serve_pod["containers"][0]
    serve_args = serve_container["args"]
    assert serve_args[0] == "serve"
    config_path(serve_pod, serve_args)
    # Labels: each Service and PDB selects its pods.
    for selector, labels in (
            (service["spec"]["selector"], deployment["spec"]["template"]["metadata"]["labels"]),
            (deployment["spec"]["selector"]["matchLabels"],
             deployment["spec"]["template"]["metadata"]["labels"]),
            (worker_service["spec"]["selector"], workers["spec"]["template"]["metadata"]["labels"]),
            (workers["spec"]["selector"]["matchLabels"],
             workers["spec"]["template"]["metadata"]["labels"])):
        assert selector.items() <= labels.items(), (selector, labels)
    for pdb in ("sloserve", "sloserve-worker"):
        selector = docs[("PodDisruptionBudget", pdb)][1]["spec"]["selector"]["matchLabels"]
        target = deployment if pdb == "sloserve" else workers
        assert selector.items() <= target["spec"]["template"]["metadata"]["labels"].items()
    # Probes: the v2 health paths, on the port the config listens on.
    probes = {}
    for kind in ("livenessProbe", "readinessProbe"):
        probe = serve_container[kind]["httpGet"]
        assert container_port(serve_container, probe["port"]) == server["port"], kind
        probes[kind] = probe["path"]
    assert probes == {"livenessProbe": "/v2/health/live", "readinessProbe": "/v2/health/ready"}, probes
    assert container_port(serve_container, "grpc") == server["grpc_port"]
    assert server["host"] == "0.0.0.0", "serve must listen beyond the pod's loopback"
    for p in service["spec"]["ports"]:
        container_port(serve_container, p["targetPort"])
    # The workers: the DNS form names the headless Service and its port.
    m = re.fullmatch(r"dns:///([a-z0-9-]+):(\d+)", server["remote_workers"])
    assert m, server["remote_workers"]
    assert worker_service["spec"]["clusterIP"] == "None", "the workers' Service must be headless"
    assert m.group(1) == worker_service["metadata"]["name"] == workers["spec"]["serviceName"]
    worker_pod = workers["spec"]["template"]["spec"]
    worker_container = worker_pod["containers"][0]
    worker_args = worker_container["args"]
    assert worker_args[0] == "worker"
    config_path(worker_pod, worker_args)
    listen = worker_args[worker_args.index("--listen") + 1]
    assert listen == "0.0.0.0:" + m.group(2), listen
    (svc_port,) = worker_service["spec"]["ports"]
    assert svc_port["port"] == int(m.group(2))
    assert container_port(worker_container, svc_port["targetPort"]) == int(m.group(2))
    for kind in ("livenessProbe", "readinessProbe"):
        assert container_port(worker_container, worker_container[kind]["tcpSocket"]["port"]) == \
            int(m.group(2))

    # Run them: the config as the ConfigMap holds it, the arguments as the manifests give.
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, config_key)
        with open(path, "w") as f:
            f.write(config_text)
        env = dict(os.environ, SLOSERVE_CACHE_DIR=os.path.join(tmp, "cache"))
        procs = []
        try:
            wport = free_port()
            args = [a if a != listen else "127.0.0.1:%d" % wport for a in worker_args]
            args[args.index(config_path(worker_pod, worker_args))] = path
            worker = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True, env=env)
            procs.append(worker)
            wait_for(worker, "listening on grpc://")
            http, grpc = free_port(), free_port()
            args = list(serve_args)
            args[args.index(config_path(serve_pod, serve_args))] = path
            args += ["--set", "server.host=127.0.0.1", "--port", str(http), "--grpc-port", str(grpc),
                     "--set", "server.remote_workers=dns:///localhost:%d" % wport,
                     "--set", "server.remote_health_interval_ms=100"]
            serve = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, env=env)
            procs.append(serve)
            wait_for(serve, "listening on http://")
            base = "http://127.0.0.1:%d" % http
            status, body = get(base + probes["livenessProbe"])
            assert status == 200, (status, body)
            # The worker found by the DNS name joins (checked, loaded): one slot up, the
            # others free (counted down: docs/remote-workers.md, "Elastic workers").
            deadline = time.time() + 60
            while True:
                status, metrics = get(base + "/metrics")
                up = re.findall(r'^sloserve_worker_up\{[^}]*\} 1$', metrics, re.M)
                if len(up) == 1 or time.time() > deadline:
                    break
                time.sleep(0.2)
            assert len(up) == 1, [l for l in metrics.splitlines() if "worker_up" in l]
            status, body = get(base + probes["readinessProbe"])
            assert status == 200 and json.loads(body)["ready"], (status, body)
            assert "remote workers down" not in body, body  # free slots are not failures
            body = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 16],
                                           "data": [0.0] * 16}]}).encode()
            req = urllib.request.Request(base + "/v2/models/%s/infer" % config["task"], data=body,
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                assert r.status == 200 and json.loads(r.read())["outputs"], r.status
            # The KServe ServingRuntime's arguments (its model directory's config, its
            # ports replaced by free ones) start serve on HTTP and gRPC, live.
            runtime = docs[("ServingRuntime", "sloserve")][1]["spec"]["containers"][0]
            declared = [p["containerPort"] for p in runtime["ports"]]
            http = free_port()
            args = [{"/mnt/models/serve.yaml": path, str(declared[0]): str(http),
                     "8081": str(free_port()), "server.host=0.0.0.0": "server.host=127.0.0.1"}
                    .get(a, a) for a in runtime["args"]]
            assert args[0] == "serve" and str(http) in args, args
            kserve = subprocess.Popen([binary] + args, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE, text=True, env=env)
            procs.append(kserve)
            wait_for(kserve, "listening on grpc://")
            status, body = get("http://127.0.0.1:%d/v2/health/live" % http)
            assert status == 200, (status, body)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=60)
    print("deploy/kubernetes: every manifest parses; probes, ports, config path and the "
          "workers' Service match what serve and worker use")


if __name__ == "__main__":
    main()
