#!/usr/bin/env python3
"""Checks, statically, that the deployment artifacts upgrade and boot the way docs/operations.md says
(issue 37): migrations run apart from the serving processes, serving processes wait for their database
instead of giving up, and the database's TLS files reach every process that connects.

- systemd (--systemd DIR: units and their drop-in folders UNIT.d/, laid out as in /etc/systemd/system;
  drop-ins are merged in file-name order, `KEY=` empties a list as systemd does):
  every serving unit (ExecStart runs `securepush serve`) has Restart=on-failure, StartLimitIntervalSec=0
  and a non-zero SECUREPUSH_STARTUP_WAIT; the migration unit (`securepush migrate`) has Restart=on-failure
  and StartLimitIntervalSec=0; no unit Requires=, BindsTo= or PartOf= securepush-migrate.service; every
  credential a unit names (%d/NAME in Environment= or ExecStart=) is loaded by its LoadCredential= lines
  once its drop-ins are merged (a name the command line reads only after `[ -e "%d/NAME" ]` may be absent).
- Kubernetes (--kubernetes DIR): exactly one Job runs plain `migrate` (args `migrate` without `--check`),
  and nothing else does; every Deployment whose container runs `serve` against the database that Job
  migrates (the same Secret key for DATABASE_URL) has an init container running `migrate --check` with
  the same image, the same DATABASE_URL and a non-zero SECUREPUSH_STARTUP_WAIT; every container with a
  DATABASE_URL mounts an optional database-TLS Secret at /etc/securepush/database-tls in a pod whose
  fsGroup can read it, and every container on the migrated database gets the ConfigMap's PGSSL* settings
  (envFrom, or optional references); the ConfigMap's PGSSL* paths, when set, are in that mount.
- Compose (--compose FILE, --compose-tls FILE): the API has 2 or more replicas and no host port, and it
  and the dispatchers start after `migrate` completed; the HAProxy service has a fixed address in the
  network's subnet, outside its ip_range, and that address is the API's SECUREPUSH_TRUSTED_PROXIES alone;
  the TLS override gives every service on the migrated database a DATABASE_URL and PGSSLROOTCERT,
  PGSSLCERT and PGSSLKEY naming /run/secrets files of secrets the service mounts and the file declares.

Usage: rollout_rules.py [--systemd DIR] [--kubernetes DIR] [--compose FILE [--compose-tls FILE]].
Exits non-zero with the reasons."""
import argparse
import glob
import ipaddress
import os
import re
import shlex
import sys

import yaml

TLS_MOUNT = "/etc/securepush/database-tls"
TLS_VARIABLES = ("PGSSLMODE", "PGSSLROOTCERT", "PGSSLCERT", "PGSSLKEY")
LISTS = {"LoadCredential", "Environment", "ExecStart", "Requires", "BindsTo", "PartOf", "Wants", "After"}


def parse_duration_nonzero(value):
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)?", str(value).strip().lower())
    return bool(match) and float(match.group(1)) > 0


def merged_unit(path):
    """The unit's settings after its drop-ins: {(section, key): [values]} (lists) or the last value."""
    files = [path] + sorted(glob.glob(os.path.join(os.path.dirname(path), os.path.basename(path) + ".d", "*.conf")),
                            key=os.path.basename)
    settings = {}
    for name in files:
        section = None
        text = open(name, encoding="utf-8").read().replace("\\\n", " ")
        for line in text.splitlines():
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            key, _, value = line.partition("=")
            key, value = key.strip(), value.strip()
            if key in LISTS:
                values = settings.setdefault((section, key), [])
                if value == "":
                    values.clear()
                else:
                    values.append(value)
            else:
                settings[(section, key)] = value
    return settings


def unit_environment(settings):
    environment = {}
    for value in settings.get(("Service", "Environment"), []):
        for word in shlex.split(value):
            key, _, setting = word.partition("=")
            environment[key] = setting
    return environment


def check_systemd(folder, problems):
    units = sorted(glob.glob(os.path.join(folder, "*.service")))
    if not units:
        problems.append(f"systemd: no unit in {folder}")
    for path in units:
        unit = os.path.basename(path)
        settings = merged_unit(path)
        exec_start = " ".join(settings.get(("Service", "ExecStart"), []))
        serving = re.search(r"/securepush serve\b", exec_start) is not None
        migrating = re.search(r"/securepush migrate\b", exec_start) is not None
        if serving or migrating:
            what = "a serving unit" if serving else "the migration unit"
            if settings.get(("Service", "Restart")) != "on-failure":
                problems.append(f"systemd: {unit} is {what}: it needs Restart=on-failure, not {settings.get(('Service', 'Restart'))!r}")
            if settings.get(("Unit", "StartLimitIntervalSec")) != "0":
                problems.append(f"systemd: {unit} is {what}: it needs StartLimitIntervalSec=0 in [Unit] (restarted without a "
                                f"start limit), not {settings.get(('Unit', 'StartLimitIntervalSec'))!r}")
        if serving:
            wait = unit_environment(settings).get("SECUREPUSH_STARTUP_WAIT")
            if not wait or not parse_duration_nonzero(wait):
                problems.append(f"systemd: {unit} is a serving unit: it needs Environment=SECUREPUSH_STARTUP_WAIT (a duration "
                                f"above zero: it waits for its database instead of exiting), not {wait!r}")
        for key in ("Requires", "BindsTo", "PartOf"):
            for value in settings.get(("Unit", key), []):
                if "securepush-migrate.service" in value.split():
                    problems.append(f"systemd: {unit} has {key}=securepush-migrate.service: running the migration again would stop "
                                    f"or restart it (use Wants= and After=)")
        loaded = {value.split(":", 1)[0] for value in settings.get(("Service", "LoadCredential"), [])}
        used = set()
        for value in settings.get(("Service", "Environment"), []) + settings.get(("Service", "ExecStart"), []):
            used.update(re.findall(r"%d/([A-Za-z0-9_.@-]+)", value))
        guarded = set(re.findall(r'\[ -e "%d/([A-Za-z0-9_.@-]+)" \]', exec_start))
        for name in sorted(used - loaded - guarded):
            problems.append(f"systemd: {unit} (with its drop-ins) names the credential %d/{name} but loads no such credential "
                            f"(LoadCredential=): its process would not find the file")


def containers_of(spec):
    return [(c, False) for c in spec.get("containers", [])] + [(c, True) for c in spec.get("initContainers", [])]


def secret_ref(container, variable):
    for entry in container.get("env") or []:
        if entry.get("name") == variable:
            ref = (entry.get("valueFrom") or {}).get("secretKeyRef")
            return (ref["name"], ref["key"]) if ref else ("value", entry.get("value"))
    return None


def env_value(container, variable):
    for entry in container.get("env") or []:
        if entry.get("name") == variable:
            return entry.get("value")
    return None


def gets_from_configmap(container, configmap, variable):
    if any((source.get("configMapRef") or {}).get("name") == configmap for source in container.get("envFrom") or []):
        return True
    for entry in container.get("env") or []:
        ref = (entry.get("valueFrom") or {}).get("configMapKeyRef") or {}
        if entry.get("name") == variable and ref.get("name") == configmap and ref.get("key") == variable and ref.get("optional") is True:
            return True
    return False


def check_kubernetes(folder, problems):
    documents = [doc for path in sorted(glob.glob(os.path.join(folder, "*.yaml")))
                 for doc in yaml.safe_load_all(open(path, encoding="utf-8")) if doc]
    pods = [(doc, doc["spec"]["template"]) for doc in documents if doc["kind"] in ("Deployment", "Job", "StatefulSet", "DaemonSet")]
    migrators = []
    for doc, template in pods:
        for container, init in containers_of(template["spec"]):
            args = list(container.get("command") or [])[1:] + list(container.get("args") or [])
            if args[:1] == ["migrate"] and "--check" not in args:
                where = f"{doc['kind']} {doc['metadata']['name']} ({'init ' if init else ''}container {container['name']})"
                if doc["kind"] != "Job" or init:
                    problems.append(f"kubernetes: {where} runs plain `migrate`: only the migration Job may (a serving pod checks "
                                    f"with `migrate --check`)")
                migrators.append((doc, container))
    jobs = [(doc, container) for doc, container in migrators if doc["kind"] == "Job"]
    if len(jobs) != 1:
        problems.append(f"kubernetes: exactly one Job must run `migrate`, found {len(jobs)}")
        return
    job, job_container = jobs[0]
    database = secret_ref(job_container, "DATABASE_URL")
    configmap = next((doc for doc in documents if doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "securepush"), None)
    for variable in TLS_VARIABLES[1:]:
        value = ((configmap or {}).get("data") or {}).get(variable)
        if value is not None and not str(value).startswith(TLS_MOUNT + "/"):
            problems.append(f"kubernetes: the ConfigMap's {variable} ({value!r}) must name a file in {TLS_MOUNT}/ (the mounted Secret)")

    for doc, template in pods:
        spec = template["spec"]
        name = f"{doc['kind']} {doc['metadata']['name']}"
        volumes = {volume["name"]: volume for volume in spec.get("volumes") or []}
        containers = containers_of(spec)
        serving = [c for c, init in containers if not init and (list(c.get("args") or []))[:1] == ["serve"]]
        on_database = [c for c, _ in containers if secret_ref(c, "DATABASE_URL") == database]
        if doc["kind"] == "Deployment" and any(c in on_database for c in serving):
            checks = [c for c, init in containers if init and (list(c.get("args") or []))[:2] == ["migrate", "--check"]]
            if not checks:
                problems.append(f"kubernetes: {name} runs `serve` on the migrated database without an init container running "
                                f"`migrate --check`: its pods would start (or crash-loop) before the migration Job has run")
            for check in checks:
                for container in serving:
                    if check.get("image") != container.get("image"):
                        problems.append(f"kubernetes: {name}: the `migrate --check` init container's image ({check.get('image')}) must be "
                                        f"the container {container['name']}'s ({container.get('image')}): it checks that build's migrations")
                if secret_ref(check, "DATABASE_URL") != database:
                    problems.append(f"kubernetes: {name}: the `migrate --check` init container must read DATABASE_URL from {database}")
                wait = env_value(check, "SECUREPUSH_STARTUP_WAIT")
                if not wait or not parse_duration_nonzero(wait):
                    problems.append(f"kubernetes: {name}: the `migrate --check` init container needs SECUREPUSH_STARTUP_WAIT above "
                                    f"zero (it waits in Init instead of failing at once), not {wait!r}")
        for container, init in containers:
            if secret_ref(container, "DATABASE_URL") is None:
                continue
            where = f"{name} ({'init ' if init else ''}container {container['name']})"
            mount = next((m for m in container.get("volumeMounts") or [] if m.get("mountPath") == TLS_MOUNT), None)
            secret = (volumes.get(mount["name"], {}).get("secret") or {}) if mount else {}
            if not mount or not secret.get("secretName"):
                problems.append(f"kubernetes: {where} connects to a database but mounts no database-TLS Secret at {TLS_MOUNT}")
                continue
            if secret.get("optional") is not True:
                problems.append(f"kubernetes: {where}: the database-TLS Secret {secret['secretName']} must be optional: true")
            mode = secret.get("defaultMode", 0o644)
            security = spec.get("securityContext") or {}
            if not mode & 0o004 and security.get("fsGroup") is None:
                problems.append(f"kubernetes: {name}: the Secret {secret['secretName']} (mode {mode:04o}) is readable by group only, "
                                f"and the pod sets no fsGroup: user {security.get('runAsUser')} could not read it")
            if container in on_database:
                for variable in TLS_VARIABLES:
                    if not gets_from_configmap(container, "securepush", variable):
                        problems.append(f"kubernetes: {where} does not get the ConfigMap's {variable} (envFrom, or an optional "
                                        f"configMapKeyRef)")


def check_compose(path, tls_path, problems):
    compose = yaml.safe_load(open(path, encoding="utf-8"))
    services = compose["services"]
    api = services["api"]
    if api.get("ports"):
        problems.append(f"compose: the api service publishes host ports ({api['ports']}): its replicas would clash; the proxy publishes them")
    replicas = (api.get("deploy") or {}).get("replicas", 1)
    if not isinstance(replicas, int) or replicas < 2:
        problems.append(f"compose: the api service needs deploy.replicas of 2 or more, not {replicas!r}")
    for name in ("api", "dispatcher"):
        condition = ((services[name].get("depends_on") or {}).get("migrate") or {}).get("condition")
        if condition != "service_completed_successfully":
            problems.append(f"compose: {name} must depend on migrate with condition service_completed_successfully, not {condition!r}")
    proxies = [name for name, service in services.items() if str(service.get("image", "")).startswith("haproxy:")]
    if len(proxies) != 1:
        problems.append(f"compose: one HAProxy service must front the API replicas, found {proxies}")
    else:
        proxy = services[proxies[0]]
        networks = proxy.get("networks") or {}
        address = ((networks.get("default") or {}) if isinstance(networks, dict) else {}).get("ipv4_address")
        pools = (((compose.get("networks") or {}).get("default") or {}).get("ipam") or {}).get("config") or []
        if not address:
            problems.append(f"compose: the proxy {proxies[0]} needs a fixed ipv4_address on the default network")
        elif not any(ipaddress.ip_address(address) in ipaddress.ip_network(pool["subnet"])
                     and not ("ip_range" in pool and ipaddress.ip_address(address) in ipaddress.ip_network(pool["ip_range"]))
                     for pool in pools if "subnet" in pool):
            problems.append(f"compose: the proxy's address {address} must be in the default network's subnet and outside its "
                            f"ip_range (where Docker gives other containers addresses)")
        trusted = str((api.get("environment") or {}).get("SECUREPUSH_TRUSTED_PROXIES", ""))
        if address and trusted not in (address, f"{address}/32"):
            problems.append(f"compose: the api service must trust the proxy's address alone (SECUREPUSH_TRUSTED_PROXIES: {address}), "
                            f"not {trusted!r}")
    if tls_path is None:
        return
    override = yaml.safe_load(open(tls_path, encoding="utf-8"))
    database = (services["migrate"].get("environment") or {}).get("DATABASE_URL")
    declared = override.get("secrets") or {}
    for name, service in services.items():
        if (service.get("environment") or {}).get("DATABASE_URL") != database:
            continue
        layer = (override.get("services") or {}).get(name) or {}
        environment = layer.get("environment") or {}
        mounted = {entry if isinstance(entry, str) else entry.get("source") for entry in layer.get("secrets") or []}
        if not environment.get("DATABASE_URL"):
            problems.append(f"compose: {os.path.basename(tls_path)} must set {name}'s DATABASE_URL (the database with TLS)")
        for variable in TLS_VARIABLES[1:]:
            value = str(environment.get(variable, ""))
            secret = value[len("/run/secrets/"):] if value.startswith("/run/secrets/") else None
            if secret is None or secret not in mounted or "file" not in (declared.get(secret) or {}):
                problems.append(f"compose: {os.path.basename(tls_path)} must give {name} {variable} as /run/secrets/NAME of a "
                                f"file secret it mounts, not {value!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--systemd")
    parser.add_argument("--kubernetes")
    parser.add_argument("--compose")
    parser.add_argument("--compose-tls")
    args = parser.parse_args()
    problems = []
    if args.systemd:
        check_systemd(args.systemd, problems)
    if args.kubernetes:
        check_kubernetes(args.kubernetes, problems)
    if args.compose:
        check_compose(args.compose, args.compose_tls, problems)
    for problem in problems:
        print(f"rollout rules: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    checked = [what for what, given in (("systemd", args.systemd), ("kubernetes", args.kubernetes), ("compose", args.compose)) if given]
    print(f"rollout rules: {', '.join(checked)}: migrations apart from serving, serving processes that wait for their "
          f"database, the database's TLS files wired in")


if __name__ == "__main__":
    main()
