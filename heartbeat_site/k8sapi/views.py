"""The per-run API's HTTP views: version, discovery, and one view for every resource path.

Resource paths are those of the real API server, under ``/k8s/runs/<id>``:
``/api/v1/<resource>[/<name>]``, ``/api/v1/namespaces/<ns>/<resource>[/<name>[/<subresource>]]``
and the same under ``/apis/<group>/<version>``. ``?watch=1`` turns a list into a watch.
"""

from __future__ import annotations

import gzip
import logging
from dataclasses import dataclass

import orjson
import redis
from asgiref.sync import sync_to_async
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_vary_headers
from django.views.decorators.csrf import csrf_exempt

from heartbeat_site.k8sapi import reads, resources, watch, writes
from heartbeat_site.k8sapi.cluster import API_THREADS, collector_paused, find_run, kept_objects, objects_of
from heartbeat_site.k8sapi.resources import Resource
from heartbeat_site.k8sapi.status import K8sError, method_not_allowed, status_response

log = logging.getLogger(__name__)

GIT_VERSIONS = {"1.27": "v1.27.16", "1.28": "v1.28.15", "1.29": "v1.29.14", "1.30": "v1.30.12",
                "1.31": "v1.31.8", "1.32": "v1.32.4", "1.33": "v1.33.0"}


def _answer(handler):
    """Errors as Status objects; Redis or the database away is a 503 Status (retry)."""

    @csrf_exempt  # writes need the control token (writes.py), never a cookie
    def view(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        try:
            return handler(request, *args, **kwargs)
        except K8sError as error:
            return status_response(error)
        except (redis.RedisError, OperationalError, InterfaceError) as exc:
            log.warning("%s %s: %s", request.method, request.path, exc)
            return status_response(K8sError(503, f"the run's store cannot be reached ({type(exc).__name__}); retry"))

    return view


@_answer
def version(request: HttpRequest, run_id: str) -> HttpResponse:
    run = find_run(run_id)
    minor = run.version.split(".")[1] if "." in run.version else ""
    return JsonResponse({"major": "1", "minor": minor, "gitVersion": GIT_VERSIONS.get(run.version, f"v{run.version}.0"),
                         "gitCommit": "", "gitTreeState": "clean", "buildDate": "", "goVersion": "",
                         "compiler": "gc", "platform": "linux/amd64"})


def _discovery(document: dict | None) -> HttpResponse:
    if document is None:
        raise K8sError(404, "the server could not find the requested resource")
    return JsonResponse(document)  # plain JSON: kubectl falls back from aggregated discovery


@_answer
def core_versions(request: HttpRequest, run_id: str) -> HttpResponse:
    find_run(run_id)
    return _discovery(resources.api_versions())


@_answer
def groups(request: HttpRequest, run_id: str) -> HttpResponse:
    find_run(run_id)
    return _discovery(resources.api_group_list())


@_answer
def group(request: HttpRequest, run_id: str, group: str) -> HttpResponse:
    find_run(run_id)
    return _discovery(resources.api_group(group))


@_answer
def group_version(request: HttpRequest, run_id: str, group: str = "", version: str = "v1") -> HttpResponse:
    find_run(run_id)
    return _discovery(resources.resource_list(group, version))


@dataclass
class Target:
    """What a resource path names."""

    resource: Resource
    namespace: str
    name: str
    subresource: str


def parse_path(group: str, version: str, rest: str) -> Target:
    parts = [p for p in rest.split("/") if p]
    namespace = ""
    if len(parts) >= 3 and parts[0] == "namespaces":
        namespace, parts = parts[1], parts[2:]
    if not parts or len(parts) > 3:
        raise K8sError(404, "the server could not find the requested resource")
    resource = resources.find(group, version, parts[0])
    if resource is None:
        raise K8sError(404, "the server could not find the requested resource")
    if namespace and not resource.namespaced:
        raise K8sError(404, "the server could not find the requested resource")
    name = parts[1] if len(parts) > 1 else ""
    return Target(resource, namespace, name, parts[2] if len(parts) > 2 else "")


@csrf_exempt
async def resource(request: HttpRequest, run_id: str, rest: str, group: str = "", version: str = "v1") -> HttpResponse:
    """Every verb on a resource path; a watch streams, the rest answer at once."""
    try:
        target = parse_path(group, version, rest)
        if request.method == "GET" and reads.is_true(request.GET.get("watch", "")):
            return await watch.stream(request, run_id, target.resource, target.namespace, target.name)
    except K8sError as error:
        return status_response(error)
    return await sync_to_async(_answer(_resource_sync), thread_sensitive=False, executor=API_THREADS)(
        request, run_id, target)


def _resource_sync(request: HttpRequest, run_id: str, target: Target) -> HttpResponse:
    run = find_run(run_id)
    if request.method != "GET":
        return writes.write(request, run, target.resource, target.namespace, target.name, target.subresource)
    if target.subresource:
        raise method_not_allowed(f"{target.resource.name}/{target.subresource}")
    selection = reads.Selection.of(request, target.resource, target.namespace)  # a bad selector: 400 before a load
    objs = kept_objects(run) if reads.is_continue(request) and not target.name else objects_of(run)
    if target.name:
        return _json(request, reads.get_body(request, objs, target.resource, target.namespace, target.name))
    # Under the objects' lock: the follower thread (cluster._follow) would otherwise apply the log
    # into a list of 50,000 pods as it is read, mixing states under one resourceVersion.
    with collector_paused(), objs.lock:
        body = reads.list_body(request, objs, selection)
    return _json(request, body)


# As the real API server compresses (``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/
# writers.go``): an answer over 128 KiB to a client that accepts gzip (kubectl does, unless
# ``--disable-compression``), at level 1, the fastest, which compresses JSON almost as well.
GZIP_THRESHOLD_BYTES = 128 * 1024
GZIP_LEVEL = 1


def _json(request: HttpRequest, body: dict) -> HttpResponse:
    """orjson: a list of 45,000 pods is ~100 MB of JSON, which the json module writes 5 times slower.
    gzip: a Table of 50,000 pods is 29 MB, 2.6 MB compressed, seconds less over a classroom's network."""
    data = orjson.dumps(body)
    if len(data) <= GZIP_THRESHOLD_BYTES or not _accepts_gzip(request):
        return HttpResponse(data, content_type="application/json")
    response = HttpResponse(gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0), content_type="application/json")
    response["Content-Encoding"] = "gzip"
    patch_vary_headers(response, ("Accept-Encoding",))
    return response


def _accepts_gzip(request: HttpRequest) -> bool:
    """Whether ``Accept-Encoding`` names gzip, and not with ``q=0`` (RFC 9110 §12.5.3)."""
    for coding in request.headers.get("Accept-Encoding", "").split(","):
        name, *params = coding.split(";")
        if name.strip().lower() != "gzip":
            continue
        for param in params:
            key, _, value = param.strip().partition("=")
            if key.lower() == "q":
                try:
                    return float(value) > 0
                except ValueError:
                    return False
        return True
    return False
