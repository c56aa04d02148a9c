# The official Python client as a new user would use it, against the
# kubeconfig given in argv[1]: list, create, then watch.Watch().stream(...)
# (which sends watch=True) and resume from the last resourceVersion seen.
# Prints one JSON document with what it saw.
import json
import sys

from kubernetes import client, config, watch

config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
ns = sys.argv[2]
out = {}

listed = v1.list_namespaced_config_map(ns)
out["listed"] = sorted(i.metadata.name for i in listed.items)
rv = listed.metadata.resource_version

v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py1"), data={"a": "1"}))

seen = []
last = rv
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, ns, resource_version=rv, timeout_seconds=10):
    seen.append([ev["type"], ev["object"].metadata.name, ev["object"].data])
    last = ev["object"].metadata.resource_version
    if ev["object"].metadata.name == "py1":
        w.stop()
out["first"] = seen

v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py2")))
resumed = []
w = watch.Watch()
for ev in w.stream(v1.list_namespaced_config_map, ns, resource_version=last, timeout_seconds=10):
    resumed.append([ev["type"], ev["object"].metadata.name])
    if ev["object"].metadata.name == "py2":
        w.stop()
out["resumed"] = resumed
print(json.dumps(out))
