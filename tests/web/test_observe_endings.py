"""How an observation ends when nobody ends it (docs/observe.md): after the idle time with nobody watching, and
when its worker is stopped as a service manager stops one (SIGTERM, Celery's warm shutdown). Either way its
viewers are told why, its row says so, and the watches on the cluster are closed. A stack of its own, whose idle
time is 5 s."""

from __future__ import annotations

import pytest

from heartbeat_site.observe.driver import CREDENTIALS_GONE

from .conftest import small_document
from .kubectl import new_run
from .live import Viewer, ahttp, running_stack
from .test_observe_live import is_inferred_lease_renewal, open_watches, until_true

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

IDLE_SECONDS = 5


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live"), workers=("w1",), HEARTBEAT_OBSERVE="1",
                       HEARTBEAT_OBSERVE_HOSTS="127.0.0.1", HEARTBEAT_IDLE_SECONDS=str(IDLE_SECONDS)) as live:
        yield live


async def observed(stack, token: str) -> tuple[dict, dict, Viewer, Viewer]:
    """A stand-in cluster (a simulated run's own API, kept going by a viewer) and its observation, watched until
    the observation has seen a Lease renewal."""
    stand_in = await new_run(stack.base, {**small_document(), "duration": "15m"}, speed=5)
    run_viewer = await Viewer.open(stand_in["ws_url"], "stand-in")
    status, observation = await ahttp("POST", f"{stack.base}/api/observations",
                                      {"server": f"{stack.base}/k8s/runs/{stand_in['id']}", "token": token})
    assert status == 201, observation
    viewer = await Viewer.open(observation["ws_url"], "observer")
    await viewer.until(is_inferred_lease_renewal("node-2"))
    await until_true(lambda: open_watches(stand_in["id"]) == 5, 30, "the five resources watched")
    return stand_in, observation, run_viewer, viewer


async def test_an_observation_nobody_watches_ends_idle_and_closes_its_watches(stack):
    stand_in, observation, run_viewer, viewer = await observed(stack, "t-idle")
    await viewer.close()  # nobody watches it now

    async def ended() -> dict:
        return (await ahttp("GET", f"{stack.base}/api/runs/{observation['id']}"))[1]

    await until_true(lambda: open_watches(stand_in["id"]) == 0, 6 * IDLE_SECONDS, "its watches closed")
    body = await ended()
    assert (body["status"], body["end_reason"]) == ("idle", f"nobody watched for {IDLE_SECONDS} s")
    late = await Viewer.open(observation["ws_url"], "late")  # a page opened afterwards is told it ended
    assert (await late.until_status())["status"] == "idle"
    await late.close()
    await run_viewer.close()


async def test_an_observation_whose_worker_is_stopped_ends_saying_its_credentials_went_with_it(stack):
    """Run last in this module: it stops the stack's worker."""
    stand_in, observation, run_viewer, viewer = await observed(stack, "t-stop")
    assert stack.terminate_worker("w1") == 0  # a warm shutdown waits for its tasks: the observation ends first
    ended = await viewer.until_status(timeout=30)
    assert (ended["status"], ended["reason"]) == ("failed", CREDENTIALS_GONE)
    status, body = await ahttp("GET", f"{stack.base}/api/runs/{observation['id']}")
    assert (body["status"], body["end_reason"]) == ("failed", CREDENTIALS_GONE[:200])
    # a stopped worker leaves no watch on the cluster (the stand-in ends one at its next write: a bookmark in 10 s)
    await until_true(lambda: open_watches(stand_in["id"]) == 0, 15, "its watches closed")
    await viewer.close()
    await run_viewer.close()
