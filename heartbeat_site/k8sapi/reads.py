"""Get and list: the objects of one resource, selected and paged as the API server does it."""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import uuid
from dataclasses import dataclass

from django.http import HttpRequest

from heartbeat_site.k8sapi import selectors, tables
from heartbeat_site.k8sapi.cluster import Listing, RunObjects, key_after
from heartbeat_site.k8sapi.resources import Resource
from heartbeat_site.k8sapi.status import K8sError, not_found

MAX_LIMIT = 10_000
TRUE = ("1", "t", "T", "true", "True", "TRUE")  # Go's strconv.ParseBool: the Python client sends watch=True


def is_true(text: str) -> bool:
    """A boolean query parameter (``watch``, ``allowWatchBookmarks``) as the API server reads it."""
    return text in TRUE


def wants_table(request: HttpRequest) -> bool:
    """kubectl's printers ask for ``application/json;as=Table;v=v1;g=meta.k8s.io`` first."""
    return "as=Table" in request.headers.get("Accept", "")


def namespace_object(name: str, objs: RunObjects) -> dict:
    created = objs.zero.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{objs.run_id}/{name}")),
                     "resourceVersion": "1", "creationTimestamp": created,
                     "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def all_objects(objs: RunObjects, resource: Resource, namespace: str) -> list[dict]:
    """The resource's objects as stored (in ``namespace`` when given), in the API server's order (by key)."""
    if resource.name == "namespaces":
        return [namespace_object(name, objs) for name in objs.namespaces()]
    store = objs.objects[resource.store]
    found = (store.get(key) for key in objs.sorted_keys(resource.store) if not namespace or key[0] == namespace)
    return [obj for obj in found if obj is not None]  # None: deleted by a refresh in another thread meanwhile


def one_object(objs: RunObjects, resource: Resource, namespace: str, name: str) -> dict:
    """The object as stored (``served`` gives it in the resource's shape)."""
    if resource.name == "namespaces":
        if name in objs.namespaces():
            return namespace_object(name, objs)
        raise not_found(resource, name)
    found = objs.objects[resource.store].get((namespace if resource.namespaced else "", name))
    if found is None:
        raise not_found(resource, name)
    return found


def served(resource: Resource, obj: dict) -> dict:
    """A stored object as ``resource`` serves it (an events.k8s.io Event from a core one)."""
    return resource.serve(obj) if resource.serve is not None else obj


@dataclass
class Selection:
    """What a list or watch request selects: a namespace, field and label selectors."""

    resource: Resource
    namespace: str
    fields: selectors.Predicate | None = None
    labels: selectors.Predicate | None = None

    @classmethod
    def of(cls, request: HttpRequest, resource: Resource, namespace: str) -> Selection:
        fields = request.GET.get("fieldSelector", "")
        labels = request.GET.get("labelSelector", "")
        return cls(resource, namespace,
                   selectors.field_selector(fields, resource.name) if fields else None,
                   selectors.label_selector(labels) if labels else None)

    def matches(self, obj: dict) -> bool:
        if self.namespace and ((obj.get("metadata") or {}).get("namespace") or "") != self.namespace:
            return False
        if self.fields is not None and not self.fields(obj):
            return False
        return self.labels is None or self.labels(obj)


def list_body(request: HttpRequest, objs: RunObjects, selection: Selection) -> dict:
    """A ``<Kind>List`` or a ``Table``, one page of ``limit`` items after ``continue``.

    Pages are cheap on a large run (kubectl reads 45,000 pods in pages of 500): the keys are sorted
    once (``RunObjects.sorted_keys``), a page starts by bisecting them and its scan stops once the
    page is full. A paged list is read at the resourceVersion of its first page, whose objects the
    process keeps for the continue pages (``cluster.Listing``), as the real server reads them from
    etcd at that revision. As on the real server, ``remainingItemCount`` is given only without
    selectors.

    A Table is answered whole, whatever its ``limit``, as ListOptions allows a server to ("Servers
    may choose not to support the limit argument and will return all of the available results",
    ``k8s.io/apimachinery/pkg/apis/meta/v1/types.go``): kubectl's client sends at most 5 requests a
    second after a burst of 10 (client-go ``rest.DefaultQPS``), so 100 pages of 500 pods would take
    18 s whatever the server, while one Table of 50,000 pods is 30 MB, and a repeated one reprints only the
    objects changed since the last (``tables.RowCache``)."""
    resource = selection.resource
    limit = _limit(request.GET.get("limit", ""))
    if wants_table(request):
        limit = 0
    token = _continue_key(request.GET.get("continue", ""))
    if token is not None:
        rv, after = token
        listing = objs.listing_at(resource.store or resource.name, rv)
        start = key_after(listing.keys, (after[0], after[1]))
    else:
        listing = _first_listing(objs, resource, limit)
        start = 0
    keys, store = listing.keys, listing.store
    meta: dict = {"resourceVersion": str(listing.rv)}
    if selection.namespace:
        start = max(start, bisect.bisect_left(keys, (selection.namespace, "")))
    items: list[dict] = []
    index = start
    while index < len(keys) and (not limit or len(items) < limit):
        key = keys[index]
        index += 1
        if selection.namespace and key[0] != selection.namespace:
            break
        obj = store.get(key)
        if obj is not None and selection.matches(obj):
            items.append(obj)
    if limit and len(items) == limit and _more(keys, store, index, selection):
        meta["continue"] = _continue_token(listing.rv, _sort_key(items[-1]))
        if selection.fields is None and selection.labels is None:
            end = bisect.bisect_left(keys, (selection.namespace + "\0", "")) if selection.namespace else len(keys)
            meta["remainingItemCount"] = end - index
    if wants_table(request):
        printing = _row_objects(request, resource)
        cache = None
        # Rows are kept for objects kept from one request to the next (not namespaces: made per list), and not
        # with whole objects (``kubectl get --sort-by``, rare): 50,000 pods' would be 90 MB of JSON to keep.
        if resource.store and printing["include"] != "Object":
            cache = objs.row_cache(resource.store, resource.group, resource.name, printing["include"])
        return tables.table(resource.name, items, listing.now, meta, **printing, cache=cache)
    return {"kind": f"{resource.kind}List", "apiVersion": resource.api_version, "metadata": meta,
            "items": [served(resource, obj) for obj in items]}


def _first_listing(objs: RunObjects, resource: Resource, limit: int) -> Listing:
    """The objects a list's first page reads: kept for its continue pages when it may have some."""
    if resource.name == "namespaces":
        names = objs.namespaces()
        listing = Listing(objs.rv, objs.now, [("", name) for name in names],
                          {("", name): namespace_object(name, objs) for name in names})
        return objs.keep(resource.name, listing) if limit and len(names) > limit else listing
    if limit and len(objs.objects[resource.store]) > limit:
        return objs.keep_listing(resource.store)
    return objs.live_listing(resource.store)


def _more(keys: list[tuple[str, str]], store: dict, index: int, selection: Selection) -> bool:
    """Whether an object after ``index`` is selected (the next page would not be empty)."""
    for key in keys[index:]:
        if selection.namespace and key[0] != selection.namespace:
            return False
        obj = store.get(key)
        if obj is not None and selection.matches(obj):
            return True
    return False


def get_body(request: HttpRequest, objs: RunObjects, resource: Resource, namespace: str, name: str) -> dict:
    obj = one_object(objs, resource, namespace, name)
    if wants_table(request):
        return tables.table(resource.name, [obj], objs.now, {"resourceVersion": str(objs.rv)},
                            **_row_objects(request, resource))
    return served(resource, obj)


def _row_objects(request: HttpRequest, resource: Resource) -> dict:
    """What a Table's rows carry of their objects (``includeObject``; a bad one is a 400 naming the choices)."""
    include = request.GET.get("includeObject", "") or "Metadata"
    if include not in tables.INCLUDE_OBJECT:
        raise K8sError(400, f"includeObject: must be one of {', '.join(tables.INCLUDE_OBJECT)}, not {include!r}")
    return {"include": include, "serve": resource.serve}


def _sort_key(obj: dict) -> list[str]:
    meta = obj.get("metadata") or {}
    return [meta.get("namespace") or "", meta.get("name") or ""]


def _limit(text: str) -> int:
    if not text:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise K8sError(400, f"limit: not a whole number: {text!r}") from None
    return max(0, min(value, MAX_LIMIT))


def _continue_token(rv: int, key: list[str]) -> str:
    """The resourceVersion of the list's first page and the key of the last item sent, as the real
    server's token holds them (``k8s.io/apiserver/pkg/storage/continue.go``)."""
    return base64.urlsafe_b64encode(json.dumps({"rv": rv, "after": key}).encode()).decode()


def is_continue(request: HttpRequest) -> bool:
    """A continue page: read at its first page's resourceVersion, not brought up to date first."""
    return bool(request.GET.get("continue", ""))


def _continue_key(token: str) -> tuple[int, list[str]] | None:
    if not token:
        return None
    try:
        decoded = json.loads(base64.urlsafe_b64decode(token.encode()))
        rv, after = decoded["rv"], decoded["after"]
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise K8sError(400, "continue key is not valid") from None
    if not (isinstance(rv, int) and isinstance(after, list) and len(after) == 2
            and all(isinstance(part, str) for part in after)):
        raise K8sError(400, "continue key is not valid")
    return rv, after
