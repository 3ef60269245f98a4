"""``/api/lessons`` and ``/api/drills``: the lesson path and the drills, without their answers."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from heartbeat_site.live.classroom import questions


def list_lessons(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"lessons": questions.lessons()})


def list_drills(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"drills": questions.drills()})
