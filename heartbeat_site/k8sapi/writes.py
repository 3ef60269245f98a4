"""The writes a trainer types, mapped onto the run's commands (``heartbeat_site/live/runs/commands.py``):
persisted, dated by the driver and replayed like any other command.

- ``kubectl cordon``/``uncordon`` send a strategic merge patch of ``spec.unschedulable``
  (``k8s.io/kubectl/pkg/drain/cordon.go``): the ``cordon``/``uncordon`` commands.
- ``kubectl taint nodes N node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`` sends a
  strategic merge patch of the node's whole ``spec.taints`` (``k8s.io/kubectl/pkg/cmd/taint/taint.go``:
  a two-way merge patch of the node before and after; the list has no merge key in
  ``k8s.io/api/core/v1`` ``NodeSpec``, so it is replaced whole): the ``taint-out-of-service`` command;
  ``kubectl taint nodes N node.kubernetes.io/out-of-service-``: ``untaint-out-of-service``. The other
  taints are the controllers' own (node lifecycle, taint manager) and stay theirs.
- ``kubectl delete node``: ``delete-node``.
- ``kubectl delete pod P --grace-period=0 --force`` sends a DELETE whose ``DeleteOptions`` say
  ``gracePeriodSeconds: 0`` (``k8s.io/kubectl/pkg/cmd/delete/delete.go``): the ``force-delete-pod``
  command. The simulation has no graceful delete or eviction of a single pod.

A patch is applied to the node as the API server would (a JSON merge patch, a strategic merge patch
without directives, or a JSON patch), and what it changed decides the command; a change the
simulation has no command for is a 422 naming the field. Everything needs the control token.

kubectl sends ``--token`` only over TLS (client-go ``clientcmd/client_config.go`` reads credentials
only when the transport is TLS). Over plain HTTP the token goes in the server URL instead,
``http://control:<token>@host/k8s/runs/<id>``, which Go's HTTP client sends as Basic credentials.
"""

from __future__ import annotations

import base64
import copy
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from heartbeat_site.k8sapi import patches
from heartbeat_site.k8sapi.cluster import objects_of
from heartbeat_site.k8sapi.reads import one_object
from heartbeat_site.k8sapi.resources import Resource
from heartbeat_site.k8sapi.status import K8sError, forbidden, method_not_allowed
from heartbeat_site.live.service import ApiError, Run, bearer_token, commands, run_state, token_matches

VERBS = {"PATCH": "patch", "DELETE": "delete", "POST": "create", "PUT": "update"}
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"  # k8s.io/api/core/v1/well_known_taints.go TaintNodeOutOfService
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")  # k8s.io/api/core/v1 TaintEffect
FORCE_DELETE = "kubectl delete pod NAME --grace-period=0 --force"
ONLY_FORCE_DELETE = (f"the simulation deletes a single pod only by force ({FORCE_DELETE}, the force-delete-pod "
                     "command): pods otherwise leave a node through the taint eviction controller, Pod GC or a "
                     "deleted node (docs/kubectl.md)")
OUT_OF_SERVICE_VALUE = "nodeshutdown"  # the value the simulation's taint-out-of-service command gives it
OUT_OF_SERVICE_TAINT = f"kubectl taint nodes NODE {OUT_OF_SERVICE}={OUT_OF_SERVICE_VALUE}:NoExecute"
NODE_CHANGES = ("spec.unschedulable (kubectl cordon, kubectl uncordon) and spec.taints, adding or removing the "
                f"{OUT_OF_SERVICE} taint ({OUT_OF_SERVICE_TAINT}, or the key with '-' to remove it)")
READ_POLL_SECONDS = 0.05  # how often a write looks whether the API's reads show it yet (``_until_read``)
PATCH_TYPES = {  # the API server's patch content types (k8s.io/apimachinery/pkg/types/patch.go)
    "application/json-patch+json": "json",
    "application/merge-patch+json": "merge",
    "application/strategic-merge-patch+json": "strategic",
}


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
    if resource.name == "pods" and name and not subresource and request.method == "DELETE":
        return _delete_pod(request, run, resource, namespace or "default", name)
    if resource.name == "pods":
        raise method_not_allowed(ONLY_FORCE_DELETE)
    raise method_not_allowed(f"{request.method} {resource.group_resource}: only cordon, uncordon and the "
                             "out-of-service taint on a node, deleting a node and force-deleting a pod are supported "
                             "(docs/kubectl.md)")


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


# -- nodes: cordon, uncordon, the out-of-service taint ---------------------------------------------

def _patch_node(request: HttpRequest, run: Run, resource: Resource, name: str) -> HttpResponse:
    kind = PATCH_TYPES.get((request.content_type or "").lower())
    if kind is None:
        raise K8sError(415, f"the body of the request was in an unknown format - accepted media types include: "
                       f"{', '.join(PATCH_TYPES)}")
    try:
        patch = json.loads(request.body or b"{}")
    except ValueError:
        raise K8sError(400, "the patch is not valid JSON") from None
    node = one_object(objects_of(run), resource, "", name)
    try:
        patched = (patches.json_patch(node, patch) if kind == "json"
                   else patches.merge_patch(node, patch, kind == "strategic"))
    except patches.PatchError as error:
        raise _invalid(name, error.field, error.message) from None
    changed = patches.changed_fields(node, patched)
    if not changed:
        return JsonResponse(node)  # nothing to do, as a real server answers a patch that changes nothing
    if changed == ["spec.unschedulable"]:
        unschedulable = bool((patched.get("spec") or {}).get("unschedulable"))
        _submit(run, {"action": "cordon" if unschedulable else "uncordon", "node": name})
        _until_read(run, resource, "", name,
                    lambda now: bool(((now or {}).get("spec") or {}).get("unschedulable")) == unschedulable)
        return JsonResponse(patched)
    if changed == ["spec.taints"]:
        _submit(run, _taint_command(name, node, patched))
        wanted = _taint_keys(patched)
        _until_read(run, resource, "", name, lambda now: OUT_OF_SERVICE not in (_taint_keys(now) ^ wanted))
        return JsonResponse(patched)
    raise _invalid(name, ", ".join(changed), f"the simulation can change only {NODE_CHANGES}", "FieldValueForbidden")


def _invalid(name: str, field: str, message: str, cause: str = "FieldValueInvalid") -> K8sError:
    """422 Invalid as the API server words it (``errors.NewInvalid``), with the cause kubectl prints:
    ``The Node "node-2" is invalid: <field>: <message>``."""
    return K8sError(422, f'Node "{name}" is invalid: {field}: {message}', reason="Invalid",
                    details={"name": name, "kind": "Node", "causes": [{"type": cause, "message": message,
                                                                       "field": field}]})


def _taint_command(name: str, node: dict, patched: dict) -> dict:
    """The command of a change of ``spec.taints``: adding the out-of-service taint as the simulation's
    ``taint-out-of-service`` adds it, or removing it (``untaint-out-of-service``); nothing else. Taints are
    told apart by key and effect, as ``kubectl taint`` and the API's validation do."""
    taints = (patched.get("spec") or {}).get("taints") or []
    if not isinstance(taints, list):
        raise _invalid(name, "spec.taints", "must be a list of taints", "FieldValueTypeInvalid")
    for index, taint in enumerate(taints):
        if not isinstance(taint, dict) or not isinstance(taint.get("key"), str) or not taint["key"]:
            raise _invalid(name, f"spec.taints[{index}].key", "Required value", "FieldValueRequired")
        if taint.get("effect") not in TAINT_EFFECTS:
            raise _invalid(name, f"spec.taints[{index}].effect", f"Unsupported value: {taint.get('effect')!r}: "
                           f"supported values: {', '.join(TAINT_EFFECTS)}", "FieldValueNotSupported")
    before = {(t.get("key"), t.get("effect")): t for t in (node.get("spec") or {}).get("taints") or ()}
    after = {(t["key"], t["effect"]): t for t in taints}
    added = [t for key, t in after.items() if key not in before]
    removed = [t for key, t in before.items() if key not in after]
    kept_changed = [t for key, t in after.items() if key in before and t.get("value") != before[key].get("value")]
    if len(added) == 1 and not removed and not kept_changed and added[0]["key"] == OUT_OF_SERVICE:
        taint = added[0]
        if (taint.get("value") or "", taint["effect"]) == (OUT_OF_SERVICE_VALUE, "NoExecute"):
            return {"action": "taint-out-of-service", "node": name}
        what = (f"the simulation's out-of-service taint is {OUT_OF_SERVICE}={OUT_OF_SERVICE_VALUE}:NoExecute, "
                f"not {OUT_OF_SERVICE}{'=' + taint['value'] if taint.get('value') else ''}:{taint['effect']}")
        raise _invalid(name, "spec.taints", f"{what} ({OUT_OF_SERVICE_TAINT.replace('NODE', name)})",
                       "FieldValueNotSupported")
    if len(removed) == 1 and not added and not kept_changed and removed[0].get("key") == OUT_OF_SERVICE:
        return {"action": "untaint-out-of-service", "node": name}
    if removed:
        what = f"the {', '.join(sorted({t['key'] for t in removed}))} taint is the controllers' to remove"
    elif kept_changed:
        what = f"the {', '.join(sorted({t['key'] for t in kept_changed}))} taint cannot be changed"
    else:
        what = f"the {', '.join(sorted({t['key'] for t in added}))} taint cannot be added"
    raise _invalid(name, "spec.taints", f"{what}; only adding or removing the {OUT_OF_SERVICE} taint is "
                   f"supported ({OUT_OF_SERVICE_TAINT.replace('NODE', name)})", "FieldValueForbidden")


def _delete_node(run: Run, resource: Resource, name: str) -> HttpResponse:
    node = one_object(objects_of(run), resource, "", name)
    _submit(run, {"action": "delete-node", "node": name})
    _until_read(run, resource, "", name, lambda now: now is None)
    return JsonResponse({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                         "details": {"name": name, "kind": "nodes", "uid": node["metadata"].get("uid", "")}})


# -- pods: force delete -----------------------------------------------------------------------------

def _delete_pod(request: HttpRequest, run: Run, resource: Resource, namespace: str, name: str) -> HttpResponse:
    """``kubectl delete pod P --grace-period=0 --force``: the ``force-delete-pod`` command. The answer is the pod
    as deleted (the pod registry returns the deleted object: ``pkg/registry/core/pod/storage/storage.go``
    ``ReturnDeletedObject``), whose uid ``kubectl delete`` then waits to see gone."""
    options = _delete_options(request)
    grace = options.get("gracePeriodSeconds")
    if grace is None and request.GET.get("gracePeriodSeconds", "") != "":
        grace = _whole(request.GET["gracePeriodSeconds"], "gracePeriodSeconds")
    pod = one_object(objects_of(run), resource, namespace, name)
    uid = ((options.get("preconditions") or {}).get("uid"))
    if uid and uid != pod["metadata"].get("uid"):
        raise K8sError(409, f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                       f"{pod['metadata'].get('uid', '')}", reason="Conflict",
                       details={"name": name, "kind": "pods"})
    if grace != 0:
        said = "no gracePeriodSeconds" if grace is None else f"gracePeriodSeconds {grace}"
        if grace == 1:  # k8s.io/kubectl/pkg/cmd/delete/delete.go: --grace-period=0 without --force becomes 1
            said += ", what kubectl sends for --grace-period=0 without --force"
        raise method_not_allowed(f"a graceful delete of pods/{name} ({said}): {ONLY_FORCE_DELETE}")
    deleted = copy.deepcopy(pod)
    if not (options.get("dryRun") or request.GET.getlist("dryRun")):
        at = _submit(run, {"action": "force-delete-pod", "pod": name})  # the simulation's pods are all in default
        deleted["metadata"].setdefault("deletionTimestamp", at)
        uid = pod["metadata"].get("uid")
        _until_read(run, resource, namespace, name, lambda now: now is None or now["metadata"].get("uid") != uid)
    deleted["metadata"]["deletionGracePeriodSeconds"] = 0
    return JsonResponse(deleted)


def _delete_options(request: HttpRequest) -> dict:
    """The body of a DELETE (``meta/v1`` DeleteOptions), or a 400 naming what is wrong with it."""
    if not request.body:
        return {}
    try:
        options = json.loads(request.body)
    except ValueError:
        raise K8sError(400, "the body of a delete must be DeleteOptions in JSON") from None
    if not isinstance(options, dict):
        raise K8sError(400, "the body of a delete must be DeleteOptions, a JSON object")
    grace = options.get("gracePeriodSeconds")
    if grace is not None and (isinstance(grace, bool) or not isinstance(grace, int)):
        raise K8sError(400, f"gracePeriodSeconds: must be a whole number of seconds, not {grace!r}")
    if grace is not None and grace < 0:
        raise K8sError(422, f"gracePeriodSeconds: Invalid value: {grace}: must be >= 0", reason="Invalid")
    if not isinstance(options.get("preconditions") or {}, dict):
        raise K8sError(400, "preconditions: must be an object with uid and/or resourceVersion")
    return options


def _whole(text: str, field: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise K8sError(400, f"{field}: must be a whole number of seconds, not {text!r}") from None
    if value < 0:
        raise K8sError(422, f"{field}: Invalid value: {value}: must be >= 0", reason="Invalid")
    return value


def _submit(run: Run, body: dict) -> str:
    """Hand the command to the driver like ``POST /api/runs/<id>/commands``, waiting for its ack; the virtual time
    it applied at, as an RFC 3339 timestamp ("" when the ack did not come in time)."""
    try:
        command, ack = commands.submit(run, body)
    except ApiError as error:
        raise K8sError(error.status, error.message) from None
    if ack is not None and ack.get("status") == "rejected":
        raise K8sError(422, f"the simulation refused the command: {ack.get('error')}", reason="Invalid")
    at = (ack or {}).get("at")
    return _timestamp(run, float(at)) if at is not None else ""


def _until_read(run: Run, resource: Resource, namespace: str, name: str,
                done: Callable[[dict | None], bool]) -> None:
    """Answer a write only once this API's reads show it, as the API server does (it answers after etcd
    stored the change). The driver acks a command when it applied it, but the writes it causes reach the
    event log the API reads with the next slice; without this wait ``kubectl delete pod --force`` can read
    the deleted pod's uid again, list after the StatefulSet controller made its namesake, and then watch
    for a deletion that the list already passed (``k8s.io/kubectl/pkg/cmd/wait/delete.go`` ``IsDeleted``).
    Waits at most the command's ack time; a write that did not show by then is answered anyway."""
    deadline = time.monotonic() + settings.HEARTBEAT["COMMAND_ACK_SECONDS"]
    while True:
        objs = objects_of(run)
        with objs.lock:
            found = objs.objects[resource.store].get((namespace, name))
        if done(found) or time.monotonic() >= deadline:
            return
        if run_state.read_state(run.id).get("paused") == "1":
            return  # a paused run simulates nothing at its paused instant: the write shows once it resumes
        time.sleep(READ_POLL_SECONDS)


def _taint_keys(node: dict | None) -> set[str]:
    return {t.get("key") for t in ((node or {}).get("spec") or {}).get("taints") or ()}


def _timestamp(run: Run, t: float) -> str:
    start = datetime.fromisoformat(run.document["startTime"].replace("Z", "+00:00")).astimezone(UTC)
    return (start + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%SZ")
