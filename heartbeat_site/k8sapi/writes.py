"""The writes a trainer types, mapped onto the run's commands (``heartbeat_site/live/commands.py``):
persisted, dated by the driver and replayed like any other command.

``kubectl cordon``/``uncordon`` send a strategic merge patch of ``spec.unschedulable``
(``k8s.io/kubectl/pkg/drain/cordon.go``): the ``cordon``/``uncordon`` faults. ``kubectl delete
node``: ``delete-node``. Everything needs the control token (``kubectl --token``); nothing
else can be changed, and the simulation has no command that deletes or evicts a single pod.

kubectl sends ``--token`` only over TLS (client-go ``clientcmd/client_config.go`` reads credentials
only when the transport is TLS). Over plain HTTP the token goes in the server URL instead,
``http://control:<token>@host/k8s/runs/<id>``, which Go's HTTP client sends as Basic credentials.
"""

from __future__ import annotations

import base64
import copy
import json

from django.http import HttpRequest, HttpResponse, JsonResponse

from heartbeat_site.k8sapi.cluster import objects_of
from heartbeat_site.k8sapi.reads import one_object
from heartbeat_site.k8sapi.resources import Resource
from heartbeat_site.k8sapi.status import K8sError, forbidden, method_not_allowed
from heartbeat_site.live import commands
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Run
from heartbeat_site.live.tokens import bearer_token, token_matches

VERBS = {"PATCH": "patch", "DELETE": "delete", "POST": "create", "PUT": "update"}
NO_POD_COMMANDS = ("the simulation has no command to delete or evict a single pod; pods leave a node through "
                   "the taint eviction controller or a deleted node (docs/kubectl.md)")


def write(request: HttpRequest, run: Run, resource: Resource, namespace: str, name: str,
          subresource: str) -> HttpResponse:
    verb = VERBS.get(request.method or "", (request.method or "").lower())
    if subresource == "eviction":
        verb = "create"
    token = control_token(request.headers.get("Authorization"))
    if token is None or not token_matches(token, run.control_token_hash):
        why = ("this run's API is read-only without its control token (docs/kubectl.md)" if token is None
               else "the token is not this run's control token")
        target = f"{resource.name}/{subresource}" if subresource else resource.name
        raise forbidden(resource, name, verb if not subresource else f"{verb} {target}", namespace, why)
    if resource.name == "nodes" and name and not subresource:
        if request.method == "PATCH":
            return _patch_node(request, run, resource, name)
        if request.method == "DELETE":
            return _delete_node(run, resource, name)
    if resource.name == "pods":
        raise method_not_allowed(NO_POD_COMMANDS)
    raise method_not_allowed(f"{request.method} {resource.group_resource}: only cordon, uncordon (a patch of a "
                             "node's spec.unschedulable) and deleting a node are supported")


def control_token(authorization: str | None) -> str | None:
    """The token of ``Bearer <token>``, or the password of ``Basic <user:token>``."""
    token = bearer_token(authorization)
    if token is not None or not authorization:
        return token
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        _user, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
    except (ValueError, UnicodeDecodeError):
        return None
    return password or None


def _patch_node(request: HttpRequest, run: Run, resource: Resource, name: str) -> HttpResponse:
    try:
        patch = json.loads(request.body or b"{}")
    except ValueError:
        raise K8sError(400, "the patch is not valid JSON") from None
    node = one_object(objects_of(run), resource, "", name)
    if not isinstance(patch, dict) or set(patch) != {"spec"} or not isinstance(patch["spec"], dict) \
            or set(patch["spec"]) != {"unschedulable"}:
        raise K8sError(422, f'nodes "{name}" is invalid: only spec.unschedulable can be patched (kubectl cordon, '
                       "kubectl uncordon)", reason="Invalid")
    unschedulable = bool(patch["spec"]["unschedulable"])
    _submit(run, {"action": "cordon" if unschedulable else "uncordon", "node": name})
    patched = copy.deepcopy(node)
    if unschedulable:
        patched.setdefault("spec", {})["unschedulable"] = True
    else:
        patched.setdefault("spec", {}).pop("unschedulable", None)
    return JsonResponse(patched)


def _delete_node(run: Run, resource: Resource, name: str) -> HttpResponse:
    node = one_object(objects_of(run), resource, "", name)
    _submit(run, {"action": "delete-node", "node": name})
    return JsonResponse({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                         "details": {"name": name, "kind": "nodes", "uid": node["metadata"].get("uid", "")}})


def _submit(run: Run, body: dict) -> None:
    """Hand the command to the driver like ``POST /api/runs/<id>/commands``, waiting for its ack."""
    try:
        command, ack = commands.submit(run, body)
    except ApiError as error:
        raise K8sError(error.status, error.message) from None
    if ack is not None and ack.get("status") == "rejected":
        raise K8sError(422, f"the simulation refused the command: {ack.get('error')}", reason="Invalid")
