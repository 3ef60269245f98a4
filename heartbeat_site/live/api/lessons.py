"""``/api/lessons`` and ``/api/drills``: the lesson path and the drills, without their answers."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from heartbeat_site.live import classroom


def list_lessons(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"lessons": classroom.lessons()})


def list_drills(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"drills": classroom.drills()})
