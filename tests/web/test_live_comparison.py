"""Comparisons on a real stack (Daphne, a Celery worker, Redis): two sides of one scenario on one clock, commanded
together, compared as they go, and taken over together when their worker dies."""

from __future__ import annotations

import asyncio

import pytest

from simulation import Simulation, load_scenario

from .conftest import small_document
from .live import Viewer, ahttp, events_hash, is_fault, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

LEASE_TTL = 1.5
VERSIONS = {"a": {"kubernetesVersion": "1.31"}, "b": {"kubernetesVersion": "1.33"}}


@pytest.fixture
def stack(django_db_setup, tmp_path):
    with running_stack(tmp_path, HEARTBEAT_LEASE_TTL=str(LEASE_TTL)) as live:
        yield live


async def start(stack, **extra) -> tuple[dict, list[Viewer]]:
    body = {"document": {**small_document(), "duration": "4m"}, **VERSIONS, "speed": 20, **extra}
    status, comparison = await ahttp("POST", f"{stack.base}/api/comparisons", body)
    assert status == 201, comparison
    viewers = [await Viewer.open(run["ws_url"], f"side {run['side']}") for run in comparison["runs"]]
    return comparison, viewers


async def command(stack, comparison: dict, body: dict) -> dict:
    status, answer = await ahttp("POST", f"{stack.base}/api/comparisons/{comparison['id']}/commands", body,
                                 token=comparison["control_token"])
    assert (status, answer["status"]) == (202, "applied"), answer
    return answer


async def paused_clocks(viewers: list[Viewer]) -> list[float]:
    clocks = []
    for viewer in viewers:
        message = await viewer.next_of_type_in(("clock",))
        while not message["clock"]["paused"]:
            message = await viewer.next_of_type_in(("clock",))
        clocks.append(message["clock"]["t"])
    return clocks


def undisturbed(run: dict, faults: list[dict]) -> list[dict]:
    sim = Simulation(load_scenario(run["document"]), seed=run["seed"])
    for fault in faults:
        sim.schedule_command(fault["command"], fault["at"])
    return [event.to_dict() for event in sim.run_until(run["duration"])]


async def test_both_sides_take_a_fault_at_one_instant_and_the_strip_shows_the_grace_periods(stack):
    await asyncio.to_thread(stack.start_worker, "worker")
    comparison, viewers = await start(stack)
    assert [run["side"] for run in comparison["runs"]] == ["a", "b"]
    assert comparison["runs"][0]["seed"] == comparison["runs"][1]["seed"]
    assert comparison["url"].endswith(f"/compare/{comparison['id']}/#control={comparison['control_token']}")
    assert "#control" not in comparison["viewer_url"]
    await viewers[0].until(lambda e: e["t"] > 30)

    answer = await command(stack, comparison, {"action": "stop-kubelet", "node": "node-2"})
    assert [side["at"] for side in answer["runs"]] == [answer["at"], answer["at"]]
    faults = [await viewer.until(is_fault("stop-kubelet", "node-2")) for viewer in viewers]
    assert faults[0]["t"] == faults[1]["t"] == answer["at"]

    def unknown_row(message: dict | None) -> dict | None:
        rows = (message or {}).get("rows", [])
        row = next((r for r in rows if r["label"] == "node-2 Ready=Unknown"), None)
        return row if row and row["a"] is not None and row["b"] is not None else None

    while unknown_row(viewers[0].comparison) is None:
        await viewers[0].next()
    row = unknown_row(viewers[0].comparison)
    assert row["differs"] and row["b"] - row["a"] == pytest.approx(10, abs=0.5)  # grace 40 s against 50 s
    # the message that brought B's time carried the rows that changed, not the whole strip again
    update = viewers[0].comparison_message
    assert "since" in update and 0 < len(update["rows"]) < len(viewers[0].comparison["rows"])

    # a pause stops both clocks at the same virtual time
    await command(stack, comparison, {"action": "pause"})
    first, second = await paused_clocks(viewers)
    assert first == second
    # a step takes both to just after the same node lifecycle controller pass, and stays paused there
    stepped = await command(stack, comparison, {"action": "step"})
    after = await paused_clocks(viewers)
    assert after[0] == after[1] > first
    assert [side["clock"]["t"] for side in stepped["runs"]] == after
    status, body = await ahttp("GET", f"{stack.base}/api/comparisons/{comparison['id']}")
    assert status == 200 and [run["clock"]["paused"] for run in body["runs"]] == [True, True]
    assert unknown_row(body["comparison"]) == row
    for viewer in viewers:
        await viewer.close()


async def test_a_sides_own_control_link_commands_both(stack):
    await asyncio.to_thread(stack.start_worker, "worker")
    comparison, viewers = await start(stack)
    run_b = comparison["runs"][1]
    status, answer = await ahttp("POST", f"{stack.base}/api/runs/{run_b['id']}/commands",
                                 {"action": "stop-kubelet", "node": "node-3"}, token=comparison["control_token"])
    assert (status, answer["status"]) == (202, "applied"), answer
    faults = [await viewer.until(is_fault("stop-kubelet", "node-3")) for viewer in viewers]
    assert faults[0]["t"] == faults[1]["t"]
    for viewer in viewers:
        await viewer.close()


async def test_a_killed_worker_hands_both_sides_over_and_they_stay_in_step(stack):
    await asyncio.to_thread(stack.start_worker, "doomed")
    comparison, viewers = await start(stack)
    await viewers[0].until(lambda e: e["t"] > 20)
    await command(stack, comparison, {"action": "stop-kubelet", "node": "node-2"})
    await asyncio.to_thread(stack.start_worker, "heir")
    marks = [viewer.last_seq for viewer in viewers]
    await asyncio.to_thread(stack.kill_worker, "doomed")
    for viewer, mark in zip(viewers, marks, strict=True):
        await viewer.until_seq(mark + 1, timeout=4 * LEASE_TTL + 10)

    await command(stack, comparison, {"action": "start-kubelet", "node": "node-2"})
    await command(stack, comparison, {"action": "pause"})
    first, second = await paused_clocks(viewers)
    assert first == second  # still one clock after the takeover
    await command(stack, comparison, {"action": "speed", "value": 100})
    await command(stack, comparison, {"action": "resume"})
    for viewer in viewers:
        assert (await viewer.until_status(timeout=60))["status"] == "finished"

    for viewer, run in zip(viewers, comparison["runs"], strict=True):
        status, listed = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}/commands")
        faults = [c for c in listed["commands"] if c["kind"] == "fault"]
        assert [c["action"] for c in faults] == ["stop-kubelet", "start-kubelet"]
        reference = await asyncio.to_thread(undisturbed, run, faults)
        assert [e["seq"] for e in viewer.events] == list(range(1, len(viewer.events) + 1))
        assert events_hash(viewer.events) == events_hash(reference)
        await viewer.close()


async def test_bad_input_is_refused_naming_the_field(stack):
    url = f"{stack.base}/api/comparisons"
    status, body = await ahttp("POST", url, {"scenario": "kubelet-crash",
                                             "a": {"controllerManager.nodeMonitorGracePeriod": "0s"},
                                             "b": {"workloads.nope.tolerationSeconds": 30}})
    assert (status, body["error"]) == (400, "invalid-overrides")
    assert [e["field"] for e in body["errors"]] == ["a.controllerManager.nodeMonitorGracePeriod",
                                                     "b.workloads.nope.tolerationSeconds"]
    status, body = await ahttp("POST", url, {"scenario": "kubelet-crash", "a": "1.31"})
    assert (status, body["error"]) == (400, "wrong-type") and body["message"].startswith("a:")
    status, body = await ahttp("POST", url, {"scenario": "no-such-scenario"})
    assert (status, body["error"]) == (404, "unknown-scenario")
    status, body = await ahttp("POST", url, {"scenario": "kubelet-crash", "document": small_document()})
    assert (status, body["error"]) == (400, "scenario-or-document")
    status, created = await ahttp("POST", url, {"scenario": "kubelet-crash", "paused": True})
    assert status == 201
    status, body = await ahttp("POST", f"{url}/{created['id']}/commands", {"action": "pause"}, token="wrong")
    assert (status, body["error"]) == (403, "wrong-control-token")
    status, body = await ahttp("POST", f"{url}/{created['id']}/commands", {"action": "stop-kubelet", "node": "node-9"},
                               token=created["control_token"])
    assert (status, body["error"]) == (400, "invalid-command") and "node-9" in body["message"]
