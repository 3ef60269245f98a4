"""The run driver in-process (a thread, real Redis and database): pacing, commands,
hand-over between drivers, fencing, idle stop. The Celery-wrapped version is in test_live_*."""

from __future__ import annotations

import json
import threading
import time

import pytest
import redis
from django.conf import settings
from django.test import Client

from heartbeat_site.live.delivery import publisher
from heartbeat_site.live.delivery.publisher import Publisher
from heartbeat_site.live.driving.driver import QUIET_CLOCK_SECONDS, RunDriver
from heartbeat_site.live.lookback.rebuilding import replay_until
from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run, RunStatus
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runs.tokens import hash_token
from heartbeat_site.live.runstore import (
    activity,
    command_inbox,
    event_log,
    naming,
    ownership,
    run_state,
    snapshot_and_frames,
)
from simulation import Simulation, load_scenario
from simulation.lessons import get_lesson

from .conftest import bearer, drive_in_thread, post_json, small_document
from .live import events_hash

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def run_factory(settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "LEASE_TTL": 1.0, "FRAME_INTERVAL": 0.05}
    created = []

    def make(speed: float = 100.0, duration: str = "3m", document: dict | str | None = None, **fields) -> Run:
        """A run of ``document`` (by default the three-node cluster for ``duration``)."""
        scenario = load_scenario(document if document is not None else {**small_document(), "duration": duration})
        run = Run.objects.create(
            scenario_name=scenario.name,
            document=scenario.document,
            seed=scenario.seed,
            version=str(scenario.version),
            node_count=scenario.node_count,
            duration=scenario.duration,
            speed=speed,
            control_token_hash=hash_token("t"),
            **fields,
        )
        activity.mark_active(run.id)
        created.append(run.id)
        return run

    yield make
    client = get_redis()
    for run_id in created:
        client.srem(activity.ACTIVE_RUNS, run_id)
        for key in client.keys(f"hb:run:{{{run_id}}}:*"):
            client.delete(key)




def logged_events(run_id: str) -> list[dict]:
    return event_log.events_after(run_id, 0, 10**6)


def reference(run: Run, commands: list[Command]) -> list[dict]:
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    for command in commands:
        sim.schedule_command(command.payload, command.at)
    return [e.to_dict() for e in sim.run_until(run.duration)]


def wait_for(predicate, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_run_to_the_end_publishes_every_event_once(run_factory):
    run = run_factory(speed=100, duration="2m")
    thread, _, outcome = drive_in_thread(run.id)
    thread.join(30)
    assert outcome == ["finished"]
    run.refresh_from_db()
    assert run.status == RunStatus.FINISHED and run.t_reached == pytest.approx(120)
    events = logged_events(run.id)
    assert events_hash(events) == events_hash(reference(run, []))
    assert run.last_seq == events[-1]["seq"]
    assert snapshot_and_frames.read_snapshot(run.id)["last_seq"] == run.last_seq
    assert run.id not in activity.active_runs()



def test_a_driver_held_up_past_its_lease_goes_on_when_nobody_took_the_run(run_factory, monkeypatch):
    """A process starved of CPU (a loaded machine) renews nothing for longer than the lease. When the
    watchdog has not given the run to another driver meanwhile, the driver carries on: no lost run,
    every event once."""
    monkeypatch.setattr(ownership.LeaseKeeper, "_run", lambda keeper: keeper._stop.wait())  # renews nothing
    run = run_factory(speed=20, duration="1m")
    thread, _, outcome = drive_in_thread(run.id)
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 10, what="t > 10")
    get_redis().delete(ownership.lease_key(run.id))  # lapsed while the driver was held up
    thread.join(30)
    assert outcome == ["finished"]
    assert events_hash(logged_events(run.id)) == events_hash(reference(run, []))

class Starvation:
    """One driver's thread held between two slices (where a driver takes its commands), as a process starved of CPU
    or stopped with SIGSTOP is held, while its lease lapses; then woken up to what its inbox holds."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.thread: threading.Thread | None = None
        self.starving, self.starved, self.woken = threading.Event(), threading.Event(), threading.Event()
        self.inbox: list[str] = []
        real_wait_inbox = command_inbox.wait_inbox

        def wait_inbox(run_id: str, timeout: float) -> list[str]:
            if self.starving.is_set() and threading.current_thread() is self.thread:
                self.starved.set()
                self.woken.wait(30)
                return self.inbox
            return real_wait_inbox(run_id, timeout)

        monkeypatch.setattr(command_inbox, "wait_inbox", wait_inbox)
        monkeypatch.setattr(ownership.LeaseKeeper, "_run", lambda keeper: keeper._stop.wait())  # renews nothing

    def drive(self, run_id: str) -> list[str]:
        """The driver to starve, started; its outcome once it returns."""
        self.thread, _, outcome = drive_in_thread(run_id)
        return outcome

    def starve(self, run_id: str) -> float:
        """Hold the driver; its lease lapses (the watchdog may dispatch the run again). The published time then."""
        self.starving.set()
        assert self.starved.wait(10)
        get_redis().delete(ownership.lease_key(run_id))
        return float(run_state.read_state(run_id)["t"])

    def wake(self, inbox: tuple[str, ...] = ()) -> None:
        self.inbox.extend(inbox)
        self.woken.set()
        assert self.thread is not None
        self.thread.join(10)


def test_a_driver_starved_past_its_lease_claims_nothing_its_successor_does_not_show(run_factory, monkeypatch):
    """A worker starved of CPU (a loaded node, SIGSTOP) renews nothing: its lease lapses and the watchdog gives
    the run to another driver. A trainer's fault arrives; the starved driver wakes up with it in its inbox. It
    must not claim it: marked applied at a time the stream never reached, the fault would be in every replay
    and in no viewer's stream. It stops; the successor applies the fault, and the stream and a replay of the
    run's command log are the same events."""
    starvation = Starvation(monkeypatch)
    run = run_factory(speed=20, duration="2m")
    first_outcome = starvation.drive(run.id)
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 10, what="t > 10")
    starved_at = starvation.starve(run.id)
    successor, _, successor_outcome = drive_in_thread(run.id)
    wait_for(lambda: float(run_state.read_state(run.id)["t"]) > starved_at + 5, what="the successor driving")

    command = Command.objects.create(run=run, seq=1, kind=CommandKind.FAULT, action="stop-kubelet",
                                     payload={"action": "stop-kubelet", "node": "node-2"})
    starvation.wake(inbox=(str(command.pk),))
    command.refresh_from_db()
    assert (command.status, command.at) == (CommandStatus.PENDING, None)  # claimed nothing
    assert get_redis().llen(command_inbox.ack_key(run.id, command.seq)) == 0  # told the trainer nothing
    assert first_outcome == ["deposed"]

    command_inbox.notify_command(run.id, command.pk)  # the successor's inbox
    ack = command_inbox.wait_ack(run.id, command.seq, 5)
    successor.join(30)
    assert successor_outcome == ["finished"]
    command.refresh_from_db()
    assert ack["status"] == "applied" and command.at == ack["at"]
    events = logged_events(run.id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    faults = [e for e in events if e["type"] == "fault"]
    assert [(f["action"], f["t"]) for f in faults] == [("stop-kubelet", pytest.approx(command.at, abs=1e-6))]
    assert events_hash(events) == events_hash(reference(run, [command]))


def test_a_lesson_whose_first_question_comes_at_once_never_publishes_a_running_clock(run_factory, monkeypatch):
    """The walkthrough asks its first question at T+0, so the run stands paused from its first moment. A page that
    joins between the driver's first publish and the question gets that publish's clock: it must say paused, or
    the page's clock runs until the question's pause reaches it."""
    lesson = get_lesson("kubelet-crash-walkthrough")
    assert lesson is not None
    states: list[dict] = []
    real_publish = ownership.Lease.publish
    monkeypatch.setattr(ownership.Lease, "publish",
                        lambda lease, events, state, **kw: (states.append(dict(state)),
                                                             real_publish(lease, events, state, **kw))[1])
    run = run_factory(speed=1, document=lesson.scenario.document, lesson=lesson.name)
    thread, stop, _ = drive_in_thread(run.id)
    wait_for(lambda: run_state.read_state(run.id).get("paused") == "1", what="the question's pause")
    stop.set()
    thread.join(10)
    running = [state for state in states if state.get("status") == RunStatus.RUNNING]
    assert running and all(int(state["paused"]) == 1 for state in running), running


def test_a_starved_lessons_driver_does_not_start_again_a_step_its_successor_started(run_factory, monkeypatch):
    """A lesson's driver starved just before a step that breaks a node: its successor starts the step (the fault
    in the command log, the question asked, the run paused). When the starved driver wakes up, its own copy of
    the lesson reaches that step too; it must write nothing of it: a second fault in the command log would break
    the node twice in every replay, once in the stream."""
    lesson = get_lesson("half-heartbeats")  # its step "faults" at 1 m: fail-status-writes on node-3, a question
    assert lesson is not None
    starvation = Starvation(monkeypatch)
    run = run_factory(speed=20, document=lesson.scenario.document, lesson=lesson.name)
    first_outcome = starvation.drive(run.id)
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 20, what="t > 20")
    assert starvation.starve(run.id) < 50, "starved before the step"
    successor, stop_successor, successor_outcome = drive_in_thread(run.id)
    wait_for(lambda: run_state.read_state(run.id).get("paused") == "1", what="the successor at the step's question")

    starvation.wake()
    faults = Command.objects.filter(run=run, kind=CommandKind.FAULT)
    assert [(c.action, c.at) for c in faults] == [("fail-status-writes", 60.0)]
    run.refresh_from_db()
    assert (run.status, run.steps_started, run.paused) == (RunStatus.RUNNING, 2, True)
    assert first_outcome == ["deposed"]
    stop_successor.set()
    successor.join(10)
    assert successor_outcome == ["worker-stopping"]
    events = logged_events(run.id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    _, replayed = replay_until(run, float(run_state.read_state(run.id)["t"]))
    assert events_hash(events) == events_hash([e.to_dict() for e in replayed])


def test_command_gets_at_persisted_before_it_applies(run_factory):
    run = run_factory(speed=20, duration="3m")
    thread, stop, _ = drive_in_thread(run.id)
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 10, what="t > 10")
    command = Command.objects.create(
        run=run,
        seq=1,
        kind=CommandKind.FAULT,
        action="stop-kubelet",
        payload={"action": "stop-kubelet", "node": "node-2"},
    )
    command_inbox.notify_command(run.id, command.pk)
    ack = command_inbox.wait_ack(run.id, command.seq, 5)
    command.refresh_from_db()
    assert ack["status"] == "applied" and command.status == CommandStatus.APPLIED
    assert command.at == ack["at"] > 10
    wait_for(lambda: any(e["type"] == "fault" for e in logged_events(run.id)), what="the fault event")
    stop.set()
    thread.join(10)
    faults = [e for e in logged_events(run.id) if e["type"] == "fault"]
    assert [(f["action"], f["t"]) for f in faults] == [("stop-kubelet", pytest.approx(command.at, abs=1e-6))]


def test_a_commands_answer_gives_the_virtual_time_its_viewers_see_the_fault_at(run_factory):
    """The trainer's 202 says when the command applied: the time of the fault in the run's stream, which the
    driver chose (the run is 10 s or more in when the request comes)."""
    run = run_factory(speed=20, duration="3m")
    thread, stop, _ = drive_in_thread(run.id)
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 10, what="t > 10")
    response = post_json(Client(enforce_csrf_checks=True), f"/api/runs/{run.id}/commands",
                         {"action": "stop-kubelet", "node": "node-2"}, **bearer("t"))
    assert response.status_code == 202, response.content
    answer = response.json()
    assert answer["status"] == "applied" and answer["at"] > 10
    wait_for(lambda: any(e["type"] == "fault" for e in logged_events(run.id)), what="the fault event")
    stop.set()
    thread.join(10)
    faults = [e for e in logged_events(run.id) if e["type"] == "fault"]
    assert [(f["action"], f["t"]) for f in faults] == [("stop-kubelet", pytest.approx(answer["at"], abs=1e-6))]


def test_a_fault_is_published_at_once_not_at_the_end_of_the_slice(run_factory, settings, monkeypatch):
    """A slice far longer than the test waits (big rooms have 0.25 s): the fault's frame comes within the wait, at
    the command's virtual time, which it could not if it waited for the slice's end."""
    run = run_factory(speed=20, duration="3m")
    settings.HEARTBEAT = {**settings.HEARTBEAT, "FRAME_INTERVAL": 120.0, "LEASE_TTL": 6.0}
    sent: list[dict] = []
    real_send = Publisher.send
    monkeypatch.setattr(Publisher, "send",
                        lambda publisher, message: (sent.append(message), real_send(publisher, message)))
    frames = lambda: [json.loads(m["text"]) for m in list(sent) if m["type"] == "run.frame"]  # noqa: E731
    thread, stop, _ = drive_in_thread(run.id)
    wait_for(lambda: run_state.read_state(run.id).get("status") == RunStatus.RUNNING, what="the driver")
    command = Command.objects.create(
        run=run,
        seq=1,
        kind=CommandKind.FAULT,
        action="stop-kubelet",
        payload={"action": "stop-kubelet", "node": "node-2"},
    )
    command_inbox.notify_command(run.id, command.pk)
    ack = command_inbox.wait_ack(run.id, command.seq, 5)
    assert ack["status"] == "applied"
    wait_for(lambda: any(e["type"] == "fault" for f in frames() for e in f["events"]), timeout=60,
             what="the fault's frame (the slice ends 120 s after it began)")
    stop.set()
    thread.join(10)
    carrying = [f for f in frames() if any(e["type"] == "fault" for e in f["events"])]
    assert len(carrying) == 1
    (fault,) = [e for e in carrying[0]["events"] if e["type"] == "fault"]
    assert fault["t"] == pytest.approx(ack["at"], abs=1e-6)


def test_rejected_command_is_marked_and_not_replayed(run_factory):
    run = run_factory(speed=10)
    thread, stop, _ = drive_in_thread(run.id)
    command = Command.objects.create(
        run=run,
        seq=1,
        kind=CommandKind.FAULT,
        action="stop-kubelet",
        payload={"action": "stop-kubelet", "node": "node-77"},
    )
    command_inbox.notify_command(run.id, command.pk)
    ack = command_inbox.wait_ack(run.id, command.seq, 5)
    stop.set()
    thread.join(10)
    command.refresh_from_db()
    assert ack["status"] == "rejected" and "node-77" in ack["error"]
    assert command.status == CommandStatus.REJECTED


def test_second_driver_continues_exactly_where_the_first_stopped(run_factory):
    run = run_factory(speed=50, duration="3m")
    first, stop_first, outcome_first = drive_in_thread(run.id)
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 30, what="t > 30")
    command = Command.objects.create(
        run=run,
        seq=1,
        kind=CommandKind.FAULT,
        action="stop-kubelet",
        payload={"action": "stop-kubelet", "node": "node-1"},
    )
    command_inbox.notify_command(run.id, command.pk)
    assert command_inbox.wait_ack(run.id, command.seq, 5)["status"] == "applied"
    stop_first.set()
    first.join(10)
    assert outcome_first == ["worker-stopping"]
    assert ownership.lease_holder(run.id) is None

    second, _, outcome_second = drive_in_thread(run.id)
    second.join(30)
    assert outcome_second == ["finished"]
    command.refresh_from_db()
    events = logged_events(run.id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events_hash(events) == events_hash(reference(run, [command]))


def test_a_driver_that_lost_its_lease_stops_publishing(run_factory):
    run = run_factory(speed=5, duration="30m")
    thread, _, outcome = drive_in_thread(run.id)
    wait_for(lambda: ownership.lease_holder(run.id) is not None, what="lease")
    get_redis().set(ownership.lease_key(run.id), "usurper", px=10_000)
    thread.join(10)
    assert outcome == ["lease-lost"]
    assert ownership.lease_holder(run.id) == "usurper"


def test_only_one_driver_owns_a_run(run_factory):
    run = run_factory(speed=1, duration="30m")
    thread, stop, _ = drive_in_thread(run.id)
    wait_for(lambda: ownership.lease_holder(run.id) is not None, what="lease")
    assert RunDriver(run.id).drive() == "owned-elsewhere"
    stop.set()
    thread.join(10)


def test_idle_run_stops(run_factory, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "IDLE_SECONDS": 1.0}
    run = run_factory(speed=1, duration="30m")
    thread, _, outcome = drive_in_thread(run.id)
    thread.join(15)
    assert outcome == ["idle"]
    run.refresh_from_db()
    assert run.status == RunStatus.IDLE and "nobody watched" in run.end_reason


def test_ended_run_is_not_driven_again(run_factory):
    run = run_factory(status=RunStatus.FINISHED)
    assert RunDriver(run.id).drive() == "ended"
    assert run.id not in activity.active_runs()


def test_a_run_redis_remembers_but_the_database_lacks_is_dropped_quietly(run_factory):
    activity.mark_active("gone-run-1")
    assert RunDriver("gone-run-1").drive() == "unknown-run"
    assert "gone-run-1" not in activity.active_runs()


def test_events_api_regenerates_what_redis_forgot(run_factory):
    from django.test import Client

    run = run_factory(speed=100, duration="1m")
    thread, _, _ = drive_in_thread(run.id)
    thread.join(30)
    published = logged_events(run.id)
    api = Client()
    from_log = api.get(f"/api/runs/{run.id}/events?after=10&limit=20").json()
    get_redis().delete(event_log.log_key(run.id), run_state.state_key(run.id))
    replayed = api.get(f"/api/runs/{run.id}/events?after=10&limit=20").json()
    assert [e["seq"] for e in replayed["events"]] == list(range(11, 31))
    assert events_hash(replayed["events"]) == events_hash(from_log["events"]) == events_hash(published[10:30])
    assert replayed["last_seq"] == from_log["last_seq"] == published[-1]["seq"]


def test_events_api_filters_by_type_for_a_late_joiners_timeline(run_factory):
    from django.test import Client

    run = run_factory(speed=100, duration="1m")
    thread, _, _ = drive_in_thread(run.id)
    thread.join(30)
    published = logged_events(run.id)
    page = Client().get(f"/api/runs/{run.id}/events?after=0&limit=5000&types=transition,fault").json()
    assert page["events"] == [e for e in published if e["type"] in ("transition", "fault")]
    assert page["next_after"] == published[-1]["seq"] and not page["has_more"]


class FeedListener:
    """What the driver sends the run's viewers (the messages every ASGI process's feed gets), read by a thread of
    its own that blocks on the subscription: a read with a short timeout could stop inside a large frame that a
    loaded machine delivers in pieces, and fail on it."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        # the bytes as fanout.py gets them
        self.client = redis.Redis.from_url(settings.REDIS_URL)
        self.pubsub = self.client.pubsub()
        self.pubsub.subscribe(naming.feed_channel(run_id))
        self.pubsub.get_message(timeout=5)  # the subscription's confirmation: subscribed before the driver starts
        self.messages: list[dict] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        try:
            for received in self.pubsub.listen():
                if received["type"] == "message":
                    self.messages.append(publisher.decode(received["data"]))
        except (redis.RedisError, ValueError, AttributeError):
            pass  # closed

    def texts(self, kind: str) -> list[dict]:
        """The JSON messages of feed type ``kind`` received so far."""
        return [json.loads(m["text"]) for m in list(self.messages) if m["type"] == kind]

    def wait(self, kind: str, predicate, what: str, timeout: float = 20.0) -> dict:
        wait_for(lambda: any(predicate(m) for m in self.texts(kind)), timeout, what)
        return next(m for m in self.texts(kind) if predicate(m))

    def close(self) -> None:
        self.pubsub.close()
        self.client.close()


def drive_until_it_ends(run: Run, outcome: str, timeout: float = 30.0) -> FeedListener:
    """Drive ``run`` in a thread until its driver returns ``outcome``; what its viewers were sent."""
    listener = FeedListener(run.id)
    thread, _, outcomes = drive_in_thread(run.id)
    thread.join(timeout)
    assert outcomes == [outcome]
    return listener


def test_viewers_get_a_clock_message_on_pause_and_each_quiet_second(run_factory):
    """The pause's clock message names the last event before the pause: nothing is published after it. At
    100x the simulation always has events between its last slice and the command (it catches up first)."""
    run = run_factory(speed=100, duration="30m")
    listener = FeedListener(run.id)
    thread, stop, _ = drive_in_thread(run.id)
    try:
        listener.wait("run.frame", lambda m: m["clock"]["t"] > 5, "frames")
        command = Command.objects.create(
            run=run, seq=1, kind=CommandKind.CONTROL, action="pause", payload={"action": "pause"}
        )
        command_inbox.notify_command(run.id, command.pk)
        assert command_inbox.wait_ack(run.id, command.seq, 5)["status"] == "applied"
        paused = listener.wait("run.clock", lambda m: m["clock"]["paused"], "the pause's clock message")
        frames_then = len(listener.texts("run.frame"))
        # paused, nothing happens: still a clock message each quiet second (not more often), at the same
        # virtual time. Counted, not timed: on a busy machine a quiet second's clock may come late.
        def since_pause() -> list[dict]:
            received = listener.texts("run.clock")  # in the order sent: a clock of the same millisecond may precede
            return received[received.index(paused):]

        wait_for(lambda: len(since_pause()) >= 3, 30, "two quiet seconds' clocks after the pause")
        clocks = since_pause()
        assert {m["clock"]["t"] for m in clocks} == {paused["clock"]["t"]}
        assert all(m["clock"]["paused"] and m["last_seq"] == paused["last_seq"] for m in clocks)
        gaps = [later["sent_at"] - earlier["sent_at"] for earlier, later in zip(clocks, clocks[1:], strict=False)]
        assert min(gaps) >= 1000 * QUIET_CLOCK_SECONDS - 50, f"clocks of a quiet run {gaps} ms apart"
        assert len(listener.texts("run.frame")) == frames_then
    finally:
        stop.set()
        thread.join(10)
        listener.close()


def test_viewers_are_told_when_a_run_ends_idle(run_factory, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "IDLE_SECONDS": 1.0}
    listener = drive_until_it_ends(run_factory(speed=1, duration="30m"), "idle")
    [status] = listener.texts("run.status")
    assert status["status"] == "idle" and "nobody watched" in status["reason"]
    assert status["last_seq"] == int(run_state.read_state(listener.run_id)["last_seq"]) > 0
    listener.close()


def test_the_driver_summarises_a_flood_and_counts_what_it_left_out(run_factory, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "FRAME_MAX_EVENTS": 5}
    run = run_factory(speed=100, duration="1m")
    listener = drive_until_it_ends(run, "finished")
    frames = listener.texts("run.frame")
    summarised = [f for f in frames if f.get("summarised")]
    assert summarised, "no frame was summarised"
    for frame in summarised:
        first, last = frame["seq"]
        assert len(frame["events"]) + sum(frame["omitted"].values()) == last - first + 1
        assert not any(e["type"] in ("write", "read", "watch") for e in frame["events"])
    # the log still has every event: the summary left them out of the frame only
    assert [e["seq"] for e in logged_events(run.id)] == list(range(1, frames[-1]["seq"][1] + 1))
    listener.close()


def page_through(api, run_id: str, query: str) -> list[dict]:
    """Every event ``GET /api/runs/<id>/events?<query>`` pages out, following ``next_after``."""
    after, paged = 0, []
    while True:
        page = api.get(f"/api/runs/{run_id}/events?after={after}&{query}").json()
        paged += page["events"]
        if not page["has_more"]:
            return paged
        after = page["next_after"]


def test_paging_through_what_redis_forgot_goes_on_from_page_to_page(run_factory, replays_here):
    """A client paging through a run's older events (beyond the bounded log) gets exactly the logged
    events, page after page, and again from an earlier seq. (That the server replays the run once for all the
    pages, not once per page, is a cost: the pages are the same either way.)"""
    from django.test import Client

    run = run_factory(speed=100, duration="1m")
    thread, _, _ = drive_in_thread(run.id)
    thread.join(30)
    published = logged_events(run.id)
    get_redis().delete(event_log.log_key(run.id))
    api = Client()
    paged = page_through(api, run.id, "limit=20")
    assert len(paged) == len(published) > 100  # several pages
    assert events_hash(paged) == events_hash(published)
    again = api.get(f"/api/runs/{run.id}/events?after=10&limit=5").json()  # going back
    assert again["events"] == published[10:15]


@pytest.mark.parametrize("forgotten", [False, True], ids=["from the log", "replayed"])
def test_filtered_pages_fill_up_to_the_limit_with_matching_events(run_factory, forgotten):
    """``types`` and ``detail=nodes`` apply before the limit, on logged and on replayed events alike:
    a large run's late joiner reads its timeline's node transitions without the pods' thousands."""
    from django.test import Client

    from heartbeat_site.live.delivery import detail

    run = run_factory(speed=100, duration="1m")
    thread, _, _ = drive_in_thread(run.id)
    thread.join(30)
    published = logged_events(run.id)
    if forgotten:
        get_redis().delete(event_log.log_key(run.id))
    wanted = [e for e in published if e["type"] == "transition" and e["kind"] not in detail.POD_TRANSITIONS]
    pod_transitions = [e for e in published if e["type"] == "transition" and e["kind"] in detail.POD_TRANSITIONS]
    assert len(wanted) > 4 and pod_transitions
    api = Client()
    first = api.get(f"/api/runs/{run.id}/events?after=0&limit=3&types=transition&detail=nodes").json()
    assert first["events"] == wanted[:3]
    assert first["next_after"] == wanted[2]["seq"] and first["has_more"]
    rest = api.get(f"/api/runs/{run.id}/events?after={first['next_after']}&limit=5000&types=transition&detail=nodes")
    assert rest.json()["events"] == wanted[3:]
    audit = api.get(f"/api/runs/{run.id}/audit?after=0&limit=4").json()
    writes = [e for e in published if e["type"] == "write"]
    assert [r["seq"] for r in audit["records"]] == [e["seq"] for e in writes[:4]]
    assert audit["next_after"] == writes[3]["seq"]


def test_an_unknown_detail_level_is_a_400_naming_it(run_factory):
    from django.test import Client

    run = run_factory(speed=100, duration="1m")
    response = Client().get(f"/api/runs/{run.id}/events?detail=pods")
    assert response.status_code == 400 and "?detail=" in response.json()["message"]


def test_a_drills_replayed_pages_are_filtered_as_its_viewers_saw_the_events(run_factory):
    """Before a drill's reveal the replayed pages show its events as viewers got them (the cause as
    `hidden` placeholders), and a type filter applies to what is shown: no fault event slips through."""
    from django.test import Client

    from heartbeat_site.live.classroom import questions

    run = run_factory(speed=100, duration="1m")
    fault = {"at": "10s", "action": "stop-kubelet", "node": "node-2"}  # the drill's cause
    Run.objects.filter(pk=run.id).update(document={**run.document, "faults": [fault]})
    thread, _, _ = drive_in_thread(run.id)
    thread.join(30)
    published = logged_events(run.id)
    Run.objects.filter(pk=run.id).update(drill="silent-node", revealed=False)
    get_redis().delete(event_log.log_key(run.id))
    shown = [questions.viewer_event(e) for e in published]
    wanted = [e for e in shown if e["type"] in ("transition", "hidden")]
    assert len(wanted) > 6 and any(e["type"] == "hidden" for e in wanted)
    assert page_through(Client(), run.id, "limit=5&types=transition,hidden") == wanted


def test_a_simulation_error_fails_the_run_and_tells_its_viewers(run_factory, monkeypatch):
    """Only an error of the simulation itself marks a run ``failed``: the row says so with the error, the run is
    no longer active, and its viewers get a ``status`` message saying ``failed`` and why."""
    from django.test import Client

    sent: list[dict] = []
    real_send = Publisher.send
    monkeypatch.setattr(Publisher, "send",
                        lambda publisher, message: (sent.append(message), real_send(publisher, message)))
    real_run_until = Simulation.run_until

    def run_until(sim, t):
        if sim.now > 20:
            raise ZeroDivisionError("a bug in the simulation")
        return real_run_until(sim, t)

    monkeypatch.setattr(Simulation, "run_until", run_until)
    run = run_factory(speed=20, duration="3m")
    thread, _, outcome = drive_in_thread(run.id)
    thread.join(30)
    assert outcome == ["failed"]
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "a bug in the simulation" in run.end_reason and run.ended_at
    assert run.id not in activity.active_runs()
    statuses = [json.loads(m["text"]) for m in sent if m["type"] == "run.status"]
    assert [(s["status"], "a bug in the simulation" in s["reason"]) for s in statuses] == [(RunStatus.FAILED, True)]
    body = Client().get(f"/api/runs/{run.id}").json()
    assert body["status"] == "failed" and "a bug in the simulation" in body["end_reason"]


def test_an_ended_runs_log_and_snapshot_leave_redis_after_the_retention_and_are_replayed(run_factory, settings,
                                                                                          replays_here):
    """HEARTBEAT_RETENTION_SECONDS: a running run's log and snapshot stay; an ended run's go that long after its
    end, and its events and snapshot are then replayed, the same as they were."""
    from django.test import Client

    settings.HEARTBEAT = {**settings.HEARTBEAT, "RETENTION_SECONDS": 3}
    run = run_factory(speed=20, duration="1m")
    thread, _, outcome = drive_in_thread(run.id)
    keys = [event_log.log_key(run.id), snapshot_and_frames.snapshot_key(run.id), run_state.state_key(run.id)]
    wait_for(lambda: all(get_redis().exists(key) for key in keys), what="the run's log, snapshot and state")
    assert [get_redis().ttl(key) for key in keys] == [-1, -1, -1]  # running: kept
    thread.join(30)
    assert outcome == ["finished"]
    published = logged_events(run.id)
    api = Client()
    snapshot = api.get(f"/api/runs/{run.id}/snapshot").json()
    assert all(0 < get_redis().ttl(key) <= 3 for key in keys)
    wait_for(lambda: not any(get_redis().exists(key) for key in keys), timeout=10, what="the retention's end")
    assert len(published) > 100 and page_through(api, run.id, "limit=500") == published
    assert api.get(f"/api/runs/{run.id}/snapshot").json() == snapshot
