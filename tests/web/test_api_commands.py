"""Commands: the control token decides; each command is persisted in order before it applies."""

import pytest

from heartbeat_site.live.models import Command, CommandStatus, Run, RunStatus
from heartbeat_site.live.runstore import command_inbox

from .conftest import bearer, post_json

pytestmark = [pytest.mark.django_db, pytest.mark.persistence]


@pytest.mark.parametrize("header", [None, "Basic abc", "Bearer", "token"])
def test_viewer_without_token_gets_401_saying_how_to_send_it(api, new_run, header):
    _, run_id, _ = new_run()
    sent = {} if header is None else {"HTTP_AUTHORIZATION": header}
    response = post_json(api, f"/api/runs/{run_id}/commands", {"action": "stop-kubelet", "node": "node-2"}, **sent)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"] == "control-token-required"
    assert "Authorization: Bearer <control token>" in response.json()["message"]
    assert not Command.objects.exists()


def test_no_token_is_401_before_the_run_is_looked_up(api):
    assert post_json(api, "/api/runs/nope/commands", {"action": "pause"}).status_code == 401


def test_wrong_token_gets_403(api, new_run):
    _, run_id, _ = new_run()
    response = post_json(api, f"/api/runs/{run_id}/commands", {"action": "pause"}, HTTP_AUTHORIZATION="Bearer wrong")
    assert response.status_code == 403
    assert response.json()["error"] == "wrong-control-token"
    assert not Command.objects.exists()


def test_another_runs_token_gets_403(api, new_run):
    _, run_a, _ = new_run()
    _, _, token_b = new_run()
    response = post_json(api, f"/api/runs/{run_a}/commands", {"action": "pause"}, **bearer(token_b))
    assert response.status_code == 403


def test_command_is_persisted_in_order_and_pending_without_driver(api, new_run):
    _, run_id, token = new_run()
    first = post_json(
        api, f"/api/runs/{run_id}/commands", {"action": "stop-kubelet", "node": "node-2"}, **bearer(token)
    )
    second = post_json(api, f"/api/runs/{run_id}/commands", {"action": "speed", "value": 20}, **bearer(token))
    assert first.status_code == second.status_code == 202
    assert (first.json()["seq"], second.json()["seq"]) == (1, 2)
    assert first.json()["status"] == "pending" and first.json()["at"] is None
    rows = list(Command.objects.filter(run_id=run_id).order_by("seq"))
    assert [(c.seq, c.kind, c.action, c.status) for c in rows] == [
        (1, "fault", "stop-kubelet", CommandStatus.PENDING),
        (2, "control", "speed", CommandStatus.PENDING),
    ]
    assert rows[1].payload == {"action": "speed", "value": 20.0}
    assert command_inbox.wait_inbox(run_id, 0.1) == [str(rows[0].pk), str(rows[1].pk)]
    listed = api.get(f"/api/runs/{run_id}/commands").json()["commands"]
    assert [c["seq"] for c in listed] == [1, 2]


def test_commands_on_ended_run_are_409(api, new_run):
    _, run_id, token = new_run()
    Run.objects.filter(pk=run_id).update(status=RunStatus.FINISHED, end_reason="the scenario's duration was reached")
    response = post_json(api, f"/api/runs/{run_id}/commands", {"action": "pause"}, **bearer(token))
    assert response.status_code == 409
    assert "has ended" in response.json()["message"]
