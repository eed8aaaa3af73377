#!/usr/bin/env python3
"""Checks that the deployment artifacts keep the operations routes (/healthz, /readyz, /status,
/status.html, /metrics) on their own listener (SECUREPUSH_OPS_HOST:SECUREPUSH_OPS_PORT), apart from the
public API port:

- deploy/kubernetes: the ConfigMap sets SECUREPUSH_OPS_PORT; each Deployment has a container port named
  `ops` with that number, every probe uses it and `prometheus.io/port` names it; the API's port `http`
  is SECUREPUSH_PORT; no Service targets `ops` (by name or number);
- deploy/compose.yaml: the api and dispatcher services set SECUREPUSH_OPS_PORT, and a published
  operations port is bound to 127.0.0.1;
- Dockerfile: the image sets SECUREPUSH_OPS_PORT, and its HEALTHCHECK probes it.

Usage: ops_listener.py --kubernetes DIR --compose FILE --dockerfile FILE. Exits non-zero with the reasons."""
import argparse
import glob
import os
import re
import sys

import yaml


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubernetes", required=True)
    parser.add_argument("--compose", required=True)
    parser.add_argument("--dockerfile", required=True)
    args = parser.parse_args()
    problems = []

    documents = [doc for path in sorted(glob.glob(os.path.join(args.kubernetes, "*.yaml")))
                 for doc in yaml.safe_load_all(open(path, encoding="utf-8")) if doc]
    settings = next((doc["data"] for doc in documents if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "securepush"), {})
    ops_port, api_port = str(settings.get("SECUREPUSH_OPS_PORT", "")), str(settings.get("SECUREPUSH_PORT", ""))
    if not ops_port.isdigit() or ops_port == api_port:
        problems.append(f"kubernetes: the ConfigMap's SECUREPUSH_OPS_PORT ({ops_port!r}) must be a port apart from SECUREPUSH_PORT ({api_port!r})")
    for doc in documents:
        name = f"kubernetes: {doc['kind']} {doc['metadata']['name']}"
        if doc["kind"] == "Deployment":
            template = doc["spec"]["template"]
            container = template["spec"]["containers"][0]
            ports = {port["name"]: str(port["containerPort"]) for port in container.get("ports", [])}
            if ports.get("ops") != ops_port:
                problems.append(f"{name}: its container port `ops` must be SECUREPUSH_OPS_PORT ({ops_port}), not {ports.get('ops')}")
            if "http" in ports and ports["http"] != api_port:
                problems.append(f"{name}: its container port `http` must be SECUREPUSH_PORT ({api_port})")
            for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
                port = container.get(probe, {}).get("httpGet", {}).get("port")
                if port not in ("ops", ops_port, int(ops_port or 0)):
                    problems.append(f"{name}: its {probe} must use the port `ops`, not {port!r}")
            scrape = (template["metadata"].get("annotations") or {}).get("prometheus.io/port")
            if scrape != ops_port:
                problems.append(f"{name}: prometheus.io/port must be the operations port {ops_port}, not {scrape!r}")
        if doc["kind"] == "Service":
            for port in doc["spec"].get("ports", []):
                if str(port.get("targetPort")) in ("ops", ops_port):
                    problems.append(f"{name}: targets the operations port ({port.get('targetPort')}): a Service exposes the API's port only")

    compose = yaml.safe_load(open(args.compose, encoding="utf-8"))
    for service in ("api", "dispatcher"):
        environment = compose["services"][service].get("environment") or {}
        port = str(environment.get("SECUREPUSH_OPS_PORT", ""))
        if not port.isdigit():
            problems.append(f"compose: the {service} service must set SECUREPUSH_OPS_PORT")
            continue
        for published in compose["services"][service].get("ports") or []:
            text = str(published if not isinstance(published, dict) else f"{published.get('host_ip', '')}:{published.get('published', '')}:{published.get('target')}")
            if text.rsplit(":", 1)[-1].split("/")[0] == port and not text.startswith("127.0.0.1:"):
                problems.append(f"compose: the {service} service publishes its operations port beyond 127.0.0.1 ({text})")

    dockerfile = open(args.dockerfile, encoding="utf-8").read()
    if not re.search(r"^\s*SECUREPUSH_OPS_PORT=\d+", dockerfile, re.M):
        problems.append("Dockerfile: the image must set SECUREPUSH_OPS_PORT")
    healthcheck = re.search(r"^HEALTHCHECK (?:.*\\\n)*.*", dockerfile, re.M)
    if not healthcheck or "SECUREPUSH_OPS_PORT" not in healthcheck.group(0):
        problems.append("Dockerfile: the HEALTHCHECK must probe SECUREPUSH_OPS_PORT's /healthz")

    for problem in problems:
        print(f"ops listener: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print("ops listener: the operations routes are on their own port in deploy/kubernetes, deploy/compose.yaml and the Dockerfile")


if __name__ == "__main__":
    main()
