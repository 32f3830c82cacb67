"""Starts `sloserve serve` on an ephemeral port and waits until it is ready; shared by
the experiments in this folder."""
import http.client
import re
import subprocess
import sys
import threading
import time


def start_serve(sloserve, sets):
    """Returns (process, port) once /v2/health/ready answers 200 (or after 60 s)."""
    cmd = [sloserve, "serve", "--port", "0"]
    for kv in sets:
        cmd += ["--set", kv]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = None
    for line in proc.stderr:
        m = re.search(r"127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    if port is None:
        sys.exit("serve did not report its port")
    # Keep draining stderr so serve never blocks on a full pipe.
    threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
    for _ in range(600):
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/v2/health/ready")
            if c.getresponse().status == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)
    return proc, port
