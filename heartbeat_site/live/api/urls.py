"""Routes under /api/ (a trailing slash is accepted too)."""

from django.urls import re_path

from heartbeat_site.live.api import (
    comparisons,
    control,
    events,
    exports,
    lessons,
    openapi,
    preview,
    qr,
    recipes,
    report,
    runs,
    scenarios,
    snapshots,
)
from heartbeat_site.live.api.dispatch import methods
from heartbeat_site.observe import api as observe
from heartbeat_site.observe import replays

RUN = r"(?P<run_id>[^/]{1,64})"
COMPARISON = r"(?P<comparison_id>[^/]{1,64})"

urlpatterns = [
    re_path(r"^openapi\.json$", methods(GET=openapi.openapi), name="api-openapi"),
    re_path(r"^scenarios/?$", methods(GET=scenarios.list_scenarios, POST=scenarios.save), name="api-scenarios"),
    re_path(r"^scenarios/validate/?$", methods(POST=scenarios.validate), name="api-scenario-validate"),
    re_path(r"^scenarios/preview/?$", methods(POST=preview.preview), name="api-scenario-preview"),
    re_path(r"^scenarios/schema\.json$", methods(GET=scenarios.schema), name="api-scenario-schema"),
    re_path(r"^scenarios/(?P<name>[^/]{1,100})/?$", methods(GET=scenarios.get_scenario), name="api-scenario"),
    re_path(r"^lessons/?$", methods(GET=lessons.list_lessons), name="api-lessons"),
    re_path(r"^drills/?$", methods(GET=lessons.list_drills), name="api-drills"),
    re_path(r"^runs/?$", methods(POST=runs.create), name="api-runs"),
    re_path(r"^observations/?$", methods(POST=observe.create), name="api-observations"),
    re_path(r"^audit-replays/?$", methods(POST=replays.create), name="api-audit-replays"),
    re_path(r"^comparisons/?$", methods(POST=comparisons.create), name="api-comparisons"),
    re_path(rf"^comparisons/{COMPARISON}/?$", methods(GET=comparisons.detail), name="api-comparison"),
    re_path(rf"^comparisons/{COMPARISON}/commands/?$", methods(POST=comparisons.post_command),
            name="api-comparison-commands"),
    re_path(rf"^comparisons/{COMPARISON}/qr\.svg$", methods(GET=comparisons.viewer_qr), name="api-comparison-qr"),
    re_path(rf"^runs/{RUN}/?$", methods(GET=runs.detail), name="api-run"),
    re_path(
        rf"^runs/{RUN}/commands/?$",
        methods(GET=control.list_commands, POST=control.post_command),
        name="api-run-commands",
    ),
    re_path(rf"^runs/{RUN}/events/?$", methods(GET=events.list_events), name="api-run-events"),
    re_path(rf"^runs/{RUN}/audit/?$", methods(GET=events.list_audit), name="api-run-audit"),
    re_path(rf"^runs/{RUN}/qr\.svg$", methods(GET=qr.viewer_qr), name="api-run-qr"),
    re_path(rf"^runs/{RUN}/recipe/?$", methods(POST=recipes.create), name="api-run-recipe"),
    re_path(rf"^comparisons/{COMPARISON}/recipe/?$", methods(POST=recipes.create_for_comparison),
            name="api-comparison-recipe"),
    re_path(rf"^runs/{RUN}/export/(?P<name>[^/]{{1,64}})$", methods(GET=exports.export), name="api-run-export"),
    re_path(rf"^runs/{RUN}/snapshot/?$", methods(GET=snapshots.snapshot), name="api-run-snapshot"),
    re_path(rf"^runs/{RUN}/report/?$", methods(GET=report.run_report), name="api-run-report"),
]
