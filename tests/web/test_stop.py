"""The trainer ends a run: ``{"action": "stop"}`` with the control token; the run is finished, "stopped by the
trainer", where its clock was, and every viewer is told."""

from __future__ import annotations

import pytest

from heartbeat_site.live.models import Command, CommandStatus, Run, RunStatus
from heartbeat_site.live.runstore import command_inbox

from .conftest import bearer, post_json, small_document
from .live import Viewer, ahttp, running_stack

STOPPED = "stopped by the trainer"


@pytest.mark.django_db
@pytest.mark.persistence
def test_stop_needs_the_control_token(api, new_run):
    _, run_id, _ = new_run()
    response = post_json(api, f"/api/runs/{run_id}/commands", {"action": "stop"})
    assert response.status_code == 401  # no token: authentication required (a wrong one is 403)
    assert not Command.objects.exists()


@pytest.mark.django_db
@pytest.mark.persistence
def test_stop_is_a_control_command_without_fields(api, new_run):
    _, run_id, token = new_run()
    refused = post_json(api, f"/api/runs/{run_id}/commands", {"action": "stop", "node": "node-2"}, **bearer(token))
    assert refused.status_code == 400 and refused.json()["error"] == "unknown-field"
    accepted = post_json(api, f"/api/runs/{run_id}/commands", {"action": "stop"}, **bearer(token))
    assert accepted.status_code == 202
    assert (accepted.json()["kind"], accepted.json()["action"]) == ("control", "stop")
    assert command_inbox.wait_inbox(run_id, 0.1)


@pytest.mark.live
@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_trainer_ends_a_live_run_and_viewers_see_it(django_db_setup, tmp_path):
    with running_stack(tmp_path, workers=("worker-stop",)) as stack:
        status, run = await ahttp("POST", f"{stack.base}/api/runs", {"document": small_document("stop-me"), "speed": 5})
        assert status == 201, run
        viewer = await Viewer.open(run["ws_url"], "viewer")
        await viewer.until(lambda event: event["t"] >= 20)
        status, ack = await ahttp("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "stop"},
                                  token=run["control_token"])
        assert status == 202 and ack["status"] == "applied", ack
        ended = await viewer.until_status(timeout=30)
        assert (ended["status"], ended["reason"]) == (RunStatus.FINISHED, STOPPED)
        assert ended["clock"]["paused"] is True
        assert ended["clock"]["t"] == pytest.approx(ack["at"], abs=0.5)
        assert ended["clock"]["t"] < 300  # before the scenario's 5 minutes: it ended because it was stopped
        # nothing of the run after the stop reached the viewer: its last event is at or before the stop
        assert viewer.events and viewer.events[-1]["t"] <= ack["at"] + 1e-6
        assert viewer.last_seq == ended["last_seq"]
        status, detail = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
        assert (detail["status"], detail["end_reason"]) == (RunStatus.FINISHED, STOPPED)
        status, refused = await ahttp("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "pause"},
                                      token=run["control_token"])
        assert (status, refused["error"]) == (409, "run-ended")
        # a viewer who opens the ended run is told it ended, and why
        late = await Viewer.open(run["ws_url"], "late viewer")
        assert (await late.until_status(timeout=30))["reason"] == STOPPED
        await viewer.close()
        await late.close()
    row = await Run.objects.aget(pk=run["id"])
    assert row.t_reached == pytest.approx(ack["at"], abs=0.5)
    assert await Command.objects.filter(run_id=run["id"], action="stop", status=CommandStatus.APPLIED).aexists()
