#!/usr/bin/env python3
"""Checks that the deployment artifacts keep the operations routes (/healthz, /readyz, /status,
/status.html, /metrics) on their own listener (SECUREPUSH_OPS_HOST:SECUREPUSH_OPS_PORT), apart from the
public API port:

- deploy/kubernetes: the ConfigMap sets SECUREPUSH_OPS_PORT; each Deployment has a container port named
  `ops` with that number, every probe uses it and `prometheus.io/port` names it; the API's port `http`
  is SECUREPUSH_PORT; no Service targets `ops` (by name or number);
- deploy/compose.yaml: the api and dispatcher services set SECUREPUSH_OPS_PORT, and a published
  operations port is bound to 127.0.0.1; an HAProxy service in front of them (its configuration file read
  from the volume mounted at /usr/local/etc/haproxy/haproxy.cfg) keeps the operations port apart: no
  frontend reaches both a service's public port and its operations port, a frontend that reaches an
  operations port is published on 127.0.0.1 only, and every health check of a backend on the public port
  probes the operations port;
- Dockerfile: the image sets SECUREPUSH_OPS_PORT, and its HEALTHCHECK probes it.

Usage: ops_listener.py --kubernetes DIR --compose FILE --dockerfile FILE. Exits non-zero with the reasons."""
import argparse
import glob
import os
import re
import sys

import yaml


def published(entry):
    """(host address, target port) of a Compose `ports` entry."""
    if isinstance(entry, dict):
        return str(entry.get("host_ip", "")), str(entry.get("target"))
    parts = str(entry).split("/")[0].split(":")
    return (parts[0] if len(parts) == 3 else ""), parts[-1]


def parse_haproxy(path):
    """{section name: {"kind", "binds", "backends", "servers": [(host, port, check port or None)]}} of a
    frontend/backend/listen configuration (enough of HAProxy's syntax for the files in deploy/)."""
    sections, current, default_server = {}, None, {}
    for raw in open(path, encoding="utf-8"):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        words = line.split()
        if not raw[0].isspace():
            current = None
            if words[0] in ("frontend", "backend", "listen") and len(words) > 1:
                current = sections.setdefault(words[1], {"kind": words[0], "binds": [], "backends": [], "servers": []})
                if words[0] in ("backend", "listen"):
                    current["backends"].append(words[1])
                default_server = {}
            continue
        if current is None:
            continue
        if words[0] == "bind":
            current["binds"].append(words[1].rsplit(":", 1)[-1])
        elif words[0] in ("default_backend", "use_backend"):
            current["backends"].append(words[1])
        elif words[0] == "default-server":
            default_server = {"check": "check" in words, "port": words[words.index("port") + 1] if "port" in words else None}
        elif words[0] in ("server", "server-template"):
            address = words[3] if words[0] == "server-template" else words[2]
            host, _, port = address.rpartition(":")
            check = "check" in words or default_server.get("check", False)
            check_port = words[words.index("port") + 1] if "port" in words else default_server.get("port")
            current["servers"].append((host, port, (check_port or port) if check else None))
    return sections


def check_proxies(compose, folder, problems):
    services = compose["services"]
    ports = {}
    for name in ("api", "dispatcher"):
        environment = services[name].get("environment") or {}
        ports[name] = (str(environment.get("SECUREPUSH_PORT", "")), str(environment.get("SECUREPUSH_OPS_PORT", "")))
    for name, service in services.items():
        if not str(service.get("image", "")).startswith("haproxy:"):
            continue
        config = None
        for volume in service.get("volumes") or []:
            source, _, rest = str(volume).partition(":")
            if rest.split(":")[0] == "/usr/local/etc/haproxy/haproxy.cfg":
                config = os.path.join(folder, source)
        if config is None or not os.path.isfile(config):
            problems.append(f"compose: the {name} service (HAProxy) mounts no configuration file at /usr/local/etc/haproxy/haproxy.cfg")
            continue
        sections = parse_haproxy(config)
        for frontend, section in sections.items():
            if section["kind"] == "backend":
                continue
            public, operations = False, False
            for backend in section["backends"]:
                for host, port, check_port in sections.get(backend, {}).get("servers", []):
                    api_port, ops_port = ports.get(host, ("", ""))
                    public |= port == api_port
                    operations |= port == ops_port
                    if port == api_port and check_port is not None and check_port != ops_port:
                        problems.append(f"compose: {config}: backend {backend} checks {host} on port {check_port}, not on its "
                                        f"operations port {ops_port} (/readyz is served there only)")
            if public and operations:
                problems.append(f"compose: {config}: frontend {frontend} reaches both the public port and the operations port")
            if operations:
                for entry in service.get("ports") or []:
                    address, target = published(entry)
                    if target in section["binds"] and address != "127.0.0.1":
                        problems.append(f"compose: the {name} service publishes frontend {frontend} (the operations routes, port "
                                        f"{target}) beyond 127.0.0.1 ({entry})")


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
    check_proxies(compose, os.path.dirname(os.path.abspath(args.compose)), problems)

    dockerfile = open(args.dockerfile, encoding="utf-8").read()
    if not re.search(r"^\s*SECUREPUSH_OPS_PORT=\d+", dockerfile, re.M):
        problems.append("Dockerfile: the image must set SECUREPUSH_OPS_PORT")
    healthcheck = re.search(r"^HEALTHCHECK (?:.*\\\n)*.*", dockerfile, re.M)
    if not healthcheck or "SECUREPUSH_OPS_PORT" not in healthcheck.group(0):
        problems.append("Dockerfile: the HEALTHCHECK must probe SECUREPUSH_OPS_PORT's /healthz")

    for problem in dict.fromkeys(problems):
        print(f"ops listener: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    print("ops listener: the operations routes are on their own port in deploy/kubernetes, deploy/compose.yaml (and its proxy) and the Dockerfile")


if __name__ == "__main__":
    main()
