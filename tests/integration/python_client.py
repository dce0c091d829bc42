"""python_client.py: Debian's python3-kubernetes against bin/kubesim.

Starts $KUBESIM with --tls --token and --write-kubeconfig, loads the
written kubeconfig with kubernetes.config.load_kube_config (CA data and
token), then: lists namespaces; creates, reads, lists (label selector),
replaces and deletes a ConfigMap; creates our CRDs (deploy/crds) with
ApiextensionsV1Api and custom objects (deploy/samples) with
CustomObjectsApi; watches ConfigMaps with kubernetes.watch.Watch while
another one is created;
checks that a wrong token gets 401; stops kubesim with SIGTERM (exit 0).

Prints cmocka-style lines so tests/run-tests.sh counts the checks.  Run by
python_client.sh with Debian's /usr/bin/python3.
"""

import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

RESULTS = []


def report(name, passed, why=""):
    RESULTS.append((name, passed))
    if not passed:
        print("FAILED %s: %s" % (name, why), file=sys.stderr)


def finish():
    npass = sum(1 for _, p in RESULTS if p)
    print("[==========] Running %d test(s)." % len(RESULTS))
    for name, passed in RESULTS:
        print("[       OK ] %s" % name if passed else "[  FAILED  ] %s" % name)
    print("[==========] %d test(s) run." % len(RESULTS))
    print("[  PASSED  ] %d test(s)." % npass)
    if npass != len(RESULTS):
        print("[  FAILED  ] %d test(s)." % (len(RESULTS) - npass))
    sys.stdout.flush()
    return 0 if npass == len(RESULTS) else 1


def check(name, fn, *args):
    """Runs fn(*args); an exception (assert or API error) fails name."""
    try:
        out = fn(*args)
    except Exception:  # noqa: BLE001 - every failure is a test failure
        report(name, False, traceback.format_exc(limit=4))
        return None
    report(name, True)
    return out


try:
    import yaml
    from kubernetes import client, config, watch
    from kubernetes.client.rest import ApiException
except ImportError as e:
    report("import_kubernetes", False,
           "%s: python3-kubernetes is not installed; add it to DEB_PKGS "
           "and run `make deps` (apt-get install python3-kubernetes)" % e)
    sys.exit(finish())
report("import_kubernetes", True)

# Our own manifests (deploy/crds, deploy/samples) as input: the test runs
# from the repository root and needs nothing beside it.
DEPLOY = os.path.join(os.getcwd(), "deploy")
KUBESIM = os.environ.get("KUBESIM") or os.path.join(os.getcwd(), "bin",
                                                    "kubesim")
TOKEN = "py-token-%d" % os.getpid()
NS = "default"
GROUP, VERSION = "sympozium.ai", "v1alpha1"


class Kubesim:
    """bin/kubesim as a child process; the URL from its first line."""

    def __init__(self, tmp, *args):
        self.kubeconfig = os.path.join(tmp, "kc.yaml")
        self.err = open(os.path.join(tmp, "kubesim.err"), "w")
        self.proc = subprocess.Popen(
            [KUBESIM, "--listen", "127.0.0.1:0", "--write-kubeconfig",
             self.kubeconfig] + list(args),
            stdout=subprocess.PIPE, stderr=self.err, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 5)
        line = self.proc.stdout.readline() if ready else ""
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError("kubesim did not start: %r" % line)
        self.url = line.split()[2]

    def stop(self):
        """SIGTERM; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.err.close()
        return rc


def load_yaml(rel):
    with open(os.path.join(DEPLOY, rel)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def list_namespaces(core):
    names = [n.metadata.name for n in core.list_namespace().items]
    assert "default" in names, names
    assert "kube-system" in names, names


def cm_body(name, labels=None, data=None):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
        data=data or {"k": "v"})


def configmap_create(core):
    out = core.create_namespaced_config_map(
        NS, cm_body("py-cm", {"app": "py"}, {"k": "v"}))
    assert out.metadata.name == "py-cm"
    assert out.metadata.uid and out.metadata.resource_version
    core.create_namespaced_config_map(NS, cm_body("py-other", {"app": "x"}))


def configmap_read(core):
    cm = core.read_namespaced_config_map("py-cm", NS)
    assert cm.data == {"k": "v"}, cm.data
    assert cm.metadata.labels == {"app": "py"}, cm.metadata.labels


def configmap_list(core):
    items = core.list_namespaced_config_map(NS, label_selector="app=py").items
    assert [c.metadata.name for c in items] == ["py-cm"], items
    allcm = core.list_config_map_for_all_namespaces().items
    names = {c.metadata.name for c in allcm}
    assert {"py-cm", "py-other"} <= names, names


def configmap_replace_conflict(core):
    cm = core.read_namespaced_config_map("py-cm", NS)
    stale = cm.metadata.resource_version
    cm.data = {"k": "v2"}
    out = core.replace_namespaced_config_map("py-cm", NS, cm)
    assert out.data == {"k": "v2"}
    cm.metadata.resource_version = stale
    try:
        core.replace_namespaced_config_map("py-cm", NS, cm)
    except ApiException as e:
        assert e.status == 409, e
        return
    raise AssertionError("stale replace succeeded")


def configmap_delete(core):
    st = core.delete_namespaced_config_map("py-cm", NS)
    assert st is not None
    try:
        core.read_namespaced_config_map("py-cm", NS)
    except ApiException as e:
        assert e.status == 404, e
        return
    raise AssertionError("deleted ConfigMap still readable")


def crd_create(ext):
    for f in sorted(os.listdir(os.path.join(DEPLOY, "crds"))):
        for doc in load_yaml(os.path.join("crds", f)):
            if doc.get("kind") != "CustomResourceDefinition":
                continue
            out = ext.create_custom_resource_definition(doc)
            assert out.metadata.name == doc["metadata"]["name"]
    deadline = time.monotonic() + 10
    while True:
        crd = ext.read_custom_resource_definition("skillpacks.sympozium.ai")
        conds = {c.type: c.status for c in (crd.status.conditions or [])}
        if conds.get("Established") == "True":
            return
        assert time.monotonic() < deadline, conds
        time.sleep(0.05)


def custom_objects(co):
    body = load_yaml(os.path.join("samples", "skillpack.yaml"))[0]
    name = body["metadata"]["name"]
    out = co.create_namespaced_custom_object(GROUP, VERSION, NS,
                                             "skillpacks", body)
    assert out["metadata"]["name"] == name and out["kind"] == "SkillPack"
    got = co.get_namespaced_custom_object(GROUP, VERSION, NS, "skillpacks",
                                          name)
    assert got["metadata"]["uid"] == out["metadata"]["uid"]
    lst = co.list_namespaced_custom_object(GROUP, VERSION, NS, "skillpacks")
    assert [i["metadata"]["name"] for i in lst["items"]] == [name], lst
    pat = co.patch_namespaced_custom_object(
        GROUP, VERSION, NS, "skillpacks", name,
        {"metadata": {"labels": {"py": "yes"}}})
    assert pat["metadata"]["labels"]["py"] == "yes", pat["metadata"]
    st = co.patch_namespaced_custom_object_status(
        GROUP, VERSION, NS, "skillpacks", name, {"status": {"phase": "Ok"}})
    assert st["status"]["phase"] == "Ok", st.get("status")
    co.delete_namespaced_custom_object(GROUP, VERSION, NS, "skillpacks",
                                       name)
    lst = co.list_namespaced_custom_object(GROUP, VERSION, NS, "skillpacks")
    assert lst["items"] == [], lst


def custom_object_invalid(co):
    body = load_yaml(os.path.join("samples", "skillpack.yaml"))[0]
    body["metadata"]["name"] = "bad"
    body["spec"]["skills"] = "not-a-list"
    try:
        co.create_namespaced_custom_object(GROUP, VERSION, NS, "skillpacks",
                                           body)
    except ApiException as e:
        assert e.status == 422, e
        return
    raise AssertionError("invalid custom object accepted")


def watch_added(core):
    """Watch.stream over ConfigMaps in a fresh namespace while a thread
    creates one: the ADDED event for it must arrive."""
    ns = "py-watch"
    core.create_namespace(client.V1Namespace(
        metadata=client.V1ObjectMeta(name=ns)))

    def create():
        time.sleep(0.3)
        core.create_namespaced_config_map(ns, cm_body("watched"))

    t = threading.Thread(target=create)
    t.start()
    w = watch.Watch()
    seen = []
    try:
        for ev in w.stream(core.list_namespaced_config_map, ns,
                           timeout_seconds=5):
            seen.append((ev["type"], ev["object"].metadata.name))
            if seen[-1] == ("ADDED", "watched"):
                w.stop()
    finally:
        t.join()
    assert ("ADDED", "watched") in seen, seen


def wrong_token(url, ca_file):
    cfg = client.Configuration()
    cfg.host = url
    cfg.ssl_ca_cert = ca_file
    cfg.api_key = {"authorization": "Bearer wrong"}
    api = client.CoreV1Api(client.ApiClient(cfg))
    try:
        api.list_namespace()
    except ApiException as e:
        assert e.status == 401, e
        return
    raise AssertionError("wrong token accepted")


def run(tmp):
    ks = check("kubesim_tls_start", Kubesim, tmp, "--tls", "--token", TOKEN)
    if ks is None:
        return
    try:
        report("kubesim_url_https", ks.url.startswith("https://"), ks.url)
        check("load_kube_config", config.load_kube_config, ks.kubeconfig)
        cfg = client.Configuration.get_default_copy()
        core = client.CoreV1Api()
        check("list_namespaces", list_namespaces, core)
        check("configmap_create", configmap_create, core)
        check("configmap_read", configmap_read, core)
        check("configmap_list_selector", configmap_list, core)
        check("configmap_replace_conflict", configmap_replace_conflict, core)
        check("configmap_delete", configmap_delete, core)
        check("crd_create_established", crd_create,
              client.ApiextensionsV1Api())
        check("custom_objects", custom_objects, client.CustomObjectsApi())
        check("custom_object_invalid_422", custom_object_invalid,
              client.CustomObjectsApi())
        check("watch_configmap_added", watch_added, core)
        check("wrong_token_401", wrong_token, ks.url, cfg.ssl_ca_cert)
    finally:
        rc = ks.stop()
        report("kubesim_sigterm_exit0", rc == 0, "exit status %s" % rc)


def main():
    if not os.path.isdir(os.path.join(DEPLOY, "crds")):
        report("deploy_tree", False, "no %s/crds (run from the repository "
               "root)" % DEPLOY)
        return finish()
    with tempfile.TemporaryDirectory(prefix="pyclient.") as tmp:
        run(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
