"""Errors as ``meta.k8s.io/v1`` Status objects, which kubectl prints as
``Error from server (NotFound): nodes "node-9" not found``
(``k8s.io/apimachinery/pkg/api/errors/errors.go`` builds the same shapes)."""

from __future__ import annotations

from django.http import JsonResponse

from heartbeat_site.k8sapi.resources import Resource

REASONS = {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed", 409: "Conflict",
           410: "Expired", 415: "UnsupportedMediaType", 422: "Invalid", 503: "ServiceUnavailable"}


class K8sError(Exception):
    """An error to answer with a Status object."""

    def __init__(self, code: int, message: str, *, reason: str = "", details: dict | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or REASONS.get(code, "InternalError")
        self.details = details


def status_body(code: int, message: str, reason: str, details: dict | None = None) -> dict:
    body: dict = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                  "reason": reason, "code": code}
    if details:
        body["details"] = details
    return body


def status_response(error: K8sError) -> JsonResponse:
    return JsonResponse(status_body(error.code, error.message, error.reason, error.details), status=error.code)


def _details(resource: Resource, name: str) -> dict:
    details = {"name": name, "kind": resource.name}
    if resource.group:
        details["group"] = resource.group
    return details


def not_found(resource: Resource, name: str) -> K8sError:
    return K8sError(404, f'{resource.group_resource} "{name}" not found', details=_details(resource, name))


def forbidden(resource: Resource, name: str, verb: str, namespace: str, why: str) -> K8sError:
    """Like the authorizer's message (``k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go``),
    followed by why."""
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    subject = f'{resource.group_resource} "{name}"' if name else resource.group_resource
    message = (f'{subject} is forbidden: User "system:anonymous" cannot {verb} resource "{resource.name}" '
               f'in API group "{resource.group}" {scope}: {why}')
    return K8sError(403, message, details=_details(resource, name))


def method_not_allowed(what: str) -> K8sError:
    return K8sError(405, f"the server does not allow this method on the requested resource: {what}")


def gone(message: str) -> K8sError:
    return K8sError(410, message)
