#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check Kubernetes YAML documents against the Kubernetes API schema, with no cluster.

usage: k8s-validate.py FILE|-      (exit 0: every document valid; 1: an error, each printed; 2: usage)

kubectl cannot do this here: its client-side validation (`--validate=strict`, also under
`--dry-run=client`) downloads the OpenAPI document from the API server, and with no server
every input fails the same way ("failed to download openapi"), a good one as a bad one.
The schema used instead is the Kubernetes 1.22 API as Debian ships it in python3-kubernetes:
one Python class per OpenAPI definition, generated from the Kubernetes OpenAPI spec, with the
JSON name and type of every field (`attribute_map`, `openapi_types`) and its required fields
(the constructor refuses a missing one).  Every object is walked against it, as the API
server's strict field validation does: an unknown field, a duplicate field, a wrong type or a
missing required field is an error.  On top, the apimachinery rules a schema does not hold
and that berth's documents depend on: object and namespace names, label and annotation keys
and values, resource quantities, the values of the enumerations used, CIDRs and ports.
"""
import ipaddress
import re
import sys

import yaml

try:
    import kubernetes.client as kc
    from kubernetes.client import models
except ImportError:
    print("Bail out! python3-kubernetes is not installed (apt-get install python3-kubernetes); "
          "run this with /usr/bin/python3", file=sys.stderr)
    sys.exit(2)

# The kinds this validator knows: (apiVersion, kind) -> model.
KINDS = {
    ("v1", "Pod"): models.V1Pod,
    ("v1", "ConfigMap"): models.V1ConfigMap,
    ("v1", "Secret"): models.V1Secret,
    ("v1", "PersistentVolumeClaim"): models.V1PersistentVolumeClaim,
    ("node.k8s.io/v1", "RuntimeClass"): models.V1RuntimeClass,
    ("networking.k8s.io/v1", "NetworkPolicy"): models.V1NetworkPolicy,
}

# Enumerations the API server checks (k8s.io/kubernetes/pkg/apis/*/validation), by field path
# suffix: only those berth writes.
ENUMS = {
    ("PodSpec", "restartPolicy"): {"Always", "OnFailure", "Never"},
    ("SeccompProfile", "type"): {"RuntimeDefault", "Localhost", "Unconfined"},
    ("NetworkPolicyPort", "protocol"): {"TCP", "UDP", "SCTP"},
    ("NetworkPolicySpec", "policyTypes"): {"Ingress", "Egress"},
    ("EmptyDirVolumeSource", "medium"): {"", "Memory", "HugePages"},
    ("Container", "imagePullPolicy"): {"Always", "IfNotPresent", "Never"},
}

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
QNAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$")
C_IDENT = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


class Strict(yaml.SafeLoader):
    """A YAML loader that refuses a key given twice in one mapping."""


def _mapping(loader, node, deep=False):
    seen = set()
    for k, _ in node.value:
        key = loader.construct_object(k, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, "duplicate field %r" % (key,), k.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


class Checker:
    def __init__(self):
        self.errors = []
        self.cfg = kc.Configuration()
        self.cfg.client_side_validation = True

    def err(self, path, msg):
        self.errors.append("%s: %s" % (path, msg))

    def value(self, v, t, path, owner=None, field=None):
        """Check @v against the python-client type string @t."""
        if v is None:
            return  # null is "not set" for the API server
        m = re.match(r"^list\[(.*)\]$", t)
        if m:
            if not isinstance(v, list):
                return self.err(path, "expected a list, got %s" % type(v).__name__)
            for i, x in enumerate(v):
                self.value(x, m.group(1), "%s[%d]" % (path, i), owner, field)
            return
        m = re.match(r"^dict\(str, (.*)\)$", t)
        if m:
            if not isinstance(v, dict):
                return self.err(path, "expected a mapping, got %s" % type(v).__name__)
            for k, x in v.items():
                if not isinstance(k, str):
                    self.err(path, "key %r is not a string" % (k,))
                self.value(x, m.group(1), "%s.%s" % (path, k), owner, field)
            return
        if t == "str":
            if not isinstance(v, str):
                return self.err(path, "expected a string, got %s %r" % (type(v).__name__, v))
            allowed = ENUMS.get((owner, field))
            if allowed is not None and v not in allowed:
                self.err(path, "unsupported value %r: expected one of %s" % (v, ", ".join(sorted(allowed))))
            return
        if t == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                self.err(path, "expected an integer, got %s %r" % (type(v).__name__, v))
            return
        if t == "bool":
            if not isinstance(v, bool):
                self.err(path, "expected a boolean, got %s %r" % (type(v).__name__, v))
            return
        if t == "float":
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                self.err(path, "expected a number, got %r" % (v,))
            return
        if t == "datetime" or t == "date":
            if not isinstance(v, str):
                self.err(path, "expected a timestamp string, got %r" % (v,))
            return
        if t == "object":
            return  # int-or-string, quantity, raw extension: checked by the rules below
        cls = getattr(models, t, None)
        if cls is None:
            return self.err(path, "schema type %s unknown to python3-kubernetes" % t)
        self.model(v, cls, path)

    def model(self, v, cls, path):
        if not isinstance(v, dict):
            return self.err(path, "expected an object (%s), got %s" % (cls.__name__, type(v).__name__))
        by_json = {j: a for a, j in cls.attribute_map.items()}
        owner = re.sub(r"^V\d+(alpha\d+|beta\d+)?", "", cls.__name__)
        kwargs = {}
        for k, x in v.items():
            if k not in by_json:
                self.err("%s.%s" % (path, k), "unknown field %r in %s" % (k, cls.__name__))
                continue
            attr = by_json[k]
            kwargs[attr] = x
            self.value(x, cls.openapi_types[attr], "%s.%s" % (path, k), owner, k)
        try:
            cls(local_vars_configuration=self.cfg, **kwargs)
        except ValueError as e:
            m = re.search(r"`(\w+)`, must not be `None`", str(e))
            name = cls.attribute_map.get(m.group(1), m.group(1)) if m else None
            self.err(path, "missing required field %r in %s" % (name, cls.__name__) if name else str(e))


def check_meta(c, doc, path, kind):
    meta = doc.get("metadata") or {}
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > 253 or not DNS1123_SUB.match(name):
        c.err(path + ".metadata.name", "%r is not a valid %s name (RFC 1123 subdomain)" % (name, kind))
    ns = meta.get("namespace")
    if ns is not None and (not isinstance(ns, str) or len(ns) > 63 or not DNS1123_LABEL.match(ns)):
        c.err(path + ".metadata.namespace", "%r is not a valid namespace (RFC 1123 label)" % (ns,))
    check_labels(c, meta.get("labels"), path + ".metadata.labels")
    check_annotations(c, meta.get("annotations"), path + ".metadata.annotations")


def check_key(c, k, path):
    prefix, _, name = k.rpartition("/")
    if "/" in prefix or (prefix and (len(prefix) > 253 or not DNS1123_SUB.match(prefix))):
        c.err(path, "key %r: the prefix must be a DNS subdomain" % k)
    if not name or len(name) > 63 or not QNAME.match(name):
        c.err(path, "key %r is not a qualified name" % k)


def check_labels(c, labels, path):
    if not isinstance(labels, dict):
        return
    for k, v in labels.items():
        check_key(c, str(k), "%s.%s" % (path, k))
        if not isinstance(v, str) or len(v) > 63 or not LABEL_VALUE.match(v):
            c.err("%s.%s" % (path, k), "label value %r is not valid (at most 63 of [A-Za-z0-9-_.])" % (v,))


def check_annotations(c, ann, path):
    if not isinstance(ann, dict):
        return
    total = 0
    for k, v in ann.items():
        check_key(c, str(k), "%s.%s" % (path, k))
        total += len(str(k)) + len(str(v))
    if total > 256 * 1024:
        c.err(path, "annotations are %d bytes, at most 262144" % total)


def walk(node, path=""):
    """Every (path, key, value) of a decoded document."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield path, k, v
            yield from walk(v, "%s.%s" % (path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, "%s[%d]" % (path, i))


def check_rules(c, doc, path):
    for p, k, v in walk(doc, path):
        where = "%s.%s" % (p, k)
        if k in ("limits", "requests") and isinstance(v, dict):
            for r, q in v.items():
                if not isinstance(q, (str, int)) or isinstance(q, bool) or not QUANTITY.match(str(q)):
                    c.err("%s.%s" % (where, r), "%r is not a quantity" % (q,))
        if k == "sizeLimit" and (not isinstance(v, str) or not QUANTITY.match(v)):
            c.err(where, "%r is not a quantity" % (v,))
        if k == "ipBlock" and isinstance(v, dict):
            try:
                net = ipaddress.ip_network(v.get("cidr"), strict=True)
            except (TypeError, ValueError):
                c.err(where + ".cidr", "%r is not a CIDR" % (v.get("cidr"),))
                continue
            for e in v.get("except") or []:
                try:
                    sub = ipaddress.ip_network(e, strict=True)
                    if sub.version != net.version or not sub.subnet_of(net) or sub == net:
                        c.err(where + ".except", "%s is not strictly inside %s" % (e, net))
                except (TypeError, ValueError):
                    c.err(where + ".except", "%r is not a CIDR" % (e,))
        if k == "port" and p.endswith("]") and isinstance(v, int) and not 1 <= v <= 65535:
            c.err(where, "port %d is outside 1-65535" % v)
        if k == "env" and isinstance(v, list):
            for i, e in enumerate(v):
                n = e.get("name") if isinstance(e, dict) else None
                if not isinstance(n, str) or not C_IDENT.match(n):
                    c.err("%s[%d].name" % (where, i), "%r is not a valid variable name" % (n,))
        if k == "containers" and isinstance(v, list):
            for i, ct in enumerate(v):
                n = ct.get("name") if isinstance(ct, dict) else None
                if not isinstance(n, str) or len(n) > 63 or not DNS1123_LABEL.match(n):
                    c.err("%s[%d].name" % (where, i), "%r is not a valid container name" % (n,))
                img = ct.get("image") if isinstance(ct, dict) else None
                if isinstance(img, str) and img != img.strip():
                    c.err("%s[%d].image" % (where, i), "leading or trailing space")


def main():
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    src = sys.stdin if sys.argv[1] == "-" else open(sys.argv[1], encoding="utf-8")
    try:
        docs = list(yaml.load_all(src, Loader=Strict))
    except yaml.YAMLError as e:
        print("not YAML: %s" % e)
        return 1
    c = Checker()
    n = 0
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        n += 1
        path = "doc%d" % (i + 1)
        if not isinstance(doc, dict):
            c.err(path, "not an object")
            continue
        key = (doc.get("apiVersion"), doc.get("kind"))
        cls = KINDS.get(key)
        if cls is None:
            c.err(path, "apiVersion %r kind %r: not a kind this validator knows (%s)" %
                  (key[0], key[1], ", ".join("%s %s" % k for k in KINDS)))
            continue
        before = len(c.errors)
        c.model(doc, cls, path)
        check_meta(c, doc, path, key[1])
        check_rules(c, doc, path)
        if len(c.errors) == before:
            print("valid: %s %s %s" % (key[0], key[1], (doc.get("metadata") or {}).get("name")))
    if n == 0:
        c.err("input", "no document")
    for e in c.errors:
        print("invalid: %s" % e)
    return 1 if c.errors else 0


if __name__ == "__main__":
    sys.exit(main())
