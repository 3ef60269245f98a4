"""Routes of the per-run Kubernetes API, under ``/k8s/runs/<id>/``, and of its kubeconfig,
``/api/runs/<id>/kubeconfig`` (included by heartbeat_site/urls.py)."""

from django.urls import re_path

from heartbeat_site.k8sapi import kubeconfig, views

RUN = r"^k8s/runs/(?P<run_id>[^/]{1,64})"
GROUP = r"(?P<group>[a-z0-9][a-z0-9.-]*)"  # "apps", "coordination.k8s.io"...
VERSION = r"(?P<version>v[0-9a-z]+)"

urlpatterns = [
    re_path(r"^api/runs/(?P<run_id>[^/]{1,64})/kubeconfig/?$", kubeconfig.kubeconfig, name="api-run-kubeconfig"),
    re_path(rf"{RUN}/version/?$", views.version),
    re_path(rf"{RUN}/api/?$", views.core_versions),
    re_path(rf"{RUN}/api/v1/?$", views.group_version),
    re_path(rf"{RUN}/api/v1/(?P<rest>.+?)/?$", views.resource),
    re_path(rf"{RUN}/apis/?$", views.groups),
    re_path(rf"{RUN}/apis/{GROUP}/?$", views.group),
    re_path(rf"{RUN}/apis/{GROUP}/{VERSION}/?$", views.group_version),
    re_path(rf"{RUN}/apis/{GROUP}/{VERSION}/(?P<rest>.+?)/?$", views.resource),
]
