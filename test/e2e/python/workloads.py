# The official Python client's everyday workload calls against the kubeconfig
# in argv[1], namespace argv[2]: create_from_yaml on a multi-document file and
# on a kind: List, typed reads, a scale patch, the raw bytes of a Service, and
# the conflict a second create_from_yaml raises (the client's error string is
# the server's body, so it is compared byte for byte by the caller).
# Prints one JSON document with what it saw.
import json
import os
import sys

from kubernetes import client, config, utils

config.load_kube_config(config_file=sys.argv[1])
ns = sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
api = client.ApiClient()
apps = client.AppsV1Api(api)
core = client.CoreV1Api(api)
out = {}

utils.create_from_yaml(api, os.path.join(here, "app.yaml"), namespace=ns)
dep = apps.read_namespaced_deployment("web", ns)
c = dep.spec.template.spec.containers[0]
out["deployment"] = {
    "replicas": dep.spec.replicas,
    "image": c.image,
    "port": c.ports[0].container_port,
    "strategy": dep.spec.strategy.type,
    "revisionHistoryLimit": dep.spec.revision_history_limit,
    "imagePullPolicy": c.image_pull_policy,
    "generation": dep.metadata.generation,
}
rc = core.read_namespaced_replication_controller("legacy", ns)
out["rc"] = {"replicas": rc.spec.replicas, "imagePullPolicy": rc.spec.template.spec.containers[0].image_pull_policy}

raw = core.read_namespaced_service("web", ns, _preload_content=False)
out["serviceStatus"] = json.loads(raw.data)["status"]
out["serviceEndsWithNewline"] = raw.data.endswith(b"\n")

utils.create_from_yaml(api, os.path.join(here, "list.yaml"), namespace=ns)
listed = apps.read_namespaced_deployment("listed", ns)
out["listed"] = {"replicas": listed.spec.replicas, "service": core.read_namespaced_service("listed", ns).spec.ports[0].port}

scale = apps.patch_namespaced_deployment_scale("web", ns, {"spec": {"replicas": 5}})
out["scaled"] = [scale.spec.replicas, apps.read_namespaced_deployment("web", ns).spec.replicas]

try:
    utils.create_from_yaml(api, os.path.join(here, "app.yaml"), namespace=ns)
    out["conflict"] = None
except utils.FailToCreateError as e:
    out["conflict"] = str(e)

apps.delete_namespaced_deployment("web", ns, body={})
out["afterDelete"] = sorted(d.metadata.name for d in apps.list_namespaced_deployment(ns).items)
print(json.dumps(out))
