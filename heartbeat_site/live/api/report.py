"""``GET /api/runs/<id>/report``: a lesson's or drill's questions and the class's answers, for its trainer only."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

from heartbeat_site.live.api.control import presented_token, require_control_token
from heartbeat_site.live.api.runs import get_simulated_run
from heartbeat_site.live.classroom import report
from heartbeat_site.live.errors import ApiError

FORMATS = ("json", "csv")


def run_report(request: HttpRequest, run_id: str) -> HttpResponse:
    token = presented_token(request)
    run = get_simulated_run(run_id, "a lesson report")
    require_control_token(token, run)  # nicknames and answers: the trainer's, never a viewer's
    if not (run.lesson or run.drill):
        raise ApiError(404, "no-lesson", f"run {run.id} is not a lesson or a drill: it asked no questions to report")
    wanted = request.GET.get("format") or "json"
    if wanted not in FORMATS:
        raise ApiError(400, "bad-query", f"?format= must be json or csv; got {wanted!r}")
    body = report.build(run)
    if wanted == "json":
        return JsonResponse(body, json_dumps_params={"ensure_ascii": False})
    response = HttpResponse(report.csv_text(body), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.id}-report.csv"'
    return response
