"""What a run needs to be rebuilt exactly: its scenario document, seed and command log.

The simulation is deterministic (docs/architecture.md §2.1), so these rows plus the
virtual time reached are the whole truth about a run; Redis only holds caches of it
(event log, latest snapshot) and the ownership lease of the worker driving it.
"""

from __future__ import annotations

import secrets

from django.db import models

RUN_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # no 0/o/1/l: links get read aloud in class
RUN_ID_LENGTH = 12  # 60 bits: unguessable, still short enough for a chat message


def new_run_id() -> str:
    return "".join(secrets.choice(RUN_ID_ALPHABET) for _ in range(RUN_ID_LENGTH))


class Scenario(models.Model):
    """A scenario document: the built-ins (loaded by ``load_builtins``) and saved custom ones."""

    name = models.SlugField(max_length=100, unique=True)
    title = models.JSONField(default=dict)
    document = models.JSONField()
    summary = models.JSONField(default=dict, help_text="watch, node_count, duration, version, fault_actions")
    builtin = models.BooleanField(default=False)
    position = models.PositiveIntegerField(default=0, help_text="place in the built-in catalogue")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-builtin", "position", "name"]

    def __str__(self) -> str:
        return self.name


class SharedScenario(models.Model):
    """A saved scenario's exact document under an id derived from it (``saved_scenarios.content_id``): the link
    ``/s/<id>`` always opens this very document, whatever is saved later under the same name."""

    id = models.CharField(primary_key=True, max_length=16, editable=False)
    name = models.SlugField(max_length=100, help_text="the document's name when it was saved")
    document = models.JSONField(help_text="the normalised scenario document")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.id} ({self.name})"


class RunStatus(models.TextChoices):
    PENDING = "pending"  # created, no driver has picked it up yet
    RUNNING = "running"  # a driver owns it (paused or not: see Run.paused)
    FINISHED = "finished"  # virtual time reached the scenario's duration
    IDLE = "idle"  # stopped: nobody watched or commanded for HEARTBEAT_IDLE_SECONDS
    FAILED = "failed"  # the driver could not go on (see Run.end_reason)


ACTIVE_STATUSES = (RunStatus.PENDING, RunStatus.RUNNING)


class RunKind(models.TextChoices):
    """What a run's events come from (docs/observe.md): the simulation, a real cluster watched read-only, or a
    real cluster's audit log replayed. Only a simulation can be replayed from its scenario, seed and commands."""

    SIMULATION = "simulation"
    OBSERVATION = "observation"
    AUDIT_REPLAY = "audit-replay"


class Run(models.Model):
    id = models.CharField(primary_key=True, max_length=32, default=new_run_id, editable=False)
    kind = models.CharField(max_length=16, choices=RunKind.choices, default=RunKind.SIMULATION)
    scenario_name = models.CharField(max_length=100)
    document = models.JSONField(help_text="the exact normalised scenario document")
    seed = models.BigIntegerField()
    version = models.CharField(max_length=20)
    node_count = models.PositiveIntegerField(default=0)
    duration = models.FloatField(help_text="virtual seconds")
    speed = models.FloatField(default=1.0)
    paused = models.BooleanField(default=False)
    t_reached = models.FloatField(default=0.0, help_text="virtual seconds published so far")
    last_seq = models.BigIntegerField(default=0)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    end_reason = models.CharField(max_length=200, blank=True, default="")
    control_token_hash = models.CharField(max_length=64)
    client_key = models.CharField(max_length=64, blank=True, default="", help_text="who created it (per-client cap)")
    lesson = models.CharField(
        max_length=100, blank=True, default="", help_text="the lesson this run teaches (docs/lessons.md)"
    )
    drill = models.CharField(
        max_length=100, blank=True, default="", help_text="the drill this run poses (docs/lessons.md)"
    )
    comparison = models.ForeignKey(
        "Comparison", null=True, blank=True, on_delete=models.CASCADE, related_name="runs",
        help_text="the comparison this run is a side of: one driver drives both sides on one clock")
    side = models.CharField(max_length=1, blank=True, default="", help_text="a comparison's side: a or b")
    steps_started = models.PositiveIntegerField(default=0, help_text="lesson steps started so far")
    revealed = models.BooleanField(default=False, help_text="a drill's cause has been revealed")
    driver_epoch = models.PositiveBigIntegerField(
        default=0, help_text="bumped by each driver that takes the run: its writes name it (fencing.py)")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "client_key"])]

    def __str__(self) -> str:
        return f"{self.id} ({self.scenario_name}, {self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def simulated(self) -> bool:
        """Whether the run can be rebuilt by replaying its simulation (not a real cluster's events)."""
        return self.kind == RunKind.SIMULATION

    @property
    def title(self) -> dict:
        return self.document.get("title") or {"en": self.scenario_name}


class RecordedLog(models.Model):
    """An audit log's replay kept past Redis's retention (docs/observe.md, "Audit-log replays"): its event log and
    the snapshot before its first event, compressed. A simulated run is rebuilt from its scenario, seed and commands;
    a replayed audit log has only what was uploaded, so its events are kept here and published again when Redis has
    forgotten them."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, primary_key=True, related_name="recorded_log")
    events = models.BinaryField(help_text="zlib of the log's events, one JSON text a line, in seq order")
    snapshot = models.BinaryField(help_text="zlib of the stored snapshot text the page starts from")


class Comparison(models.Model):
    """One scenario run twice with one seed, each side with its own settings (docs/architecture.md §6.9): two Runs
    (``runs``, sides a and b) driven on one clock, commanded together with one control token."""

    id = models.CharField(primary_key=True, max_length=32, default=new_run_id, editable=False)
    scenario_name = models.CharField(max_length=100)
    document = models.JSONField(help_text="the scenario document both sides start from, before their overrides")
    overrides = models.JSONField(default=dict, help_text='{"a": {setting: value}, "b": {...}}')
    control_token_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.id} ({self.scenario_name})"

    def sides(self) -> list[Run]:
        """Run a, then run b."""
        return sorted(self.runs.all(), key=lambda run: run.side)


class CommandKind(models.TextChoices):
    FAULT = "fault"  # goes into the simulation: replayed on takeover
    CONTROL = "control"  # pause / resume / speed / step: pacing only, never replayed


class CommandStatus(models.TextChoices):
    PENDING = "pending"  # persisted, waiting for the driver to give it a virtual time
    APPLIED = "applied"  # `at` persisted, then handed to the simulation / clock
    REJECTED = "rejected"  # the driver refused it (see `error`)


class Command(models.Model):
    """One command of a run, in order (``seq``); ``at`` is written before it is applied."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="commands")
    seq = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=CommandKind.choices)
    action = models.CharField(max_length=40)
    payload = models.JSONField(help_text="the normalised command as validated")
    at = models.FloatField(null=True, blank=True, help_text="virtual time at which it applies")
    status = models.CharField(max_length=16, choices=CommandStatus.choices, default=CommandStatus.PENDING)
    error = models.CharField(max_length=500, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="command_seq_unique_per_run")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.action} @ {self.at}"


class QuestionStatus(models.TextChoices):
    OPEN = "open"  # asked: viewers answer, the run is paused
    REVEALED = "revealed"  # the trainer revealed the answer: no more answers


class Question(models.Model):
    """A question of a lesson asked in a run (or a drill's diagnosis), and when it was revealed."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="questions")
    qid = models.SlugField(max_length=100, help_text="the question's id in the lesson (a drill's: 'diagnosis')")
    step = models.PositiveIntegerField(default=0, help_text="index of the step that asked it")
    asked_at = models.FloatField(help_text="virtual time it was asked")
    asked_seq = models.BigIntegerField(default=0, help_text="events after this seq settle it")
    revealed_at = models.FloatField(null=True, blank=True, help_text="virtual time of the reveal")
    status = models.CharField(max_length=16, choices=QuestionStatus.choices, default=QuestionStatus.OPEN)
    happened = models.JSONField(
        null=True, blank=True,
        help_text="an order question: each item's first event, {item id: {seq, t} | null}, from the reveal on")

    class Meta:
        ordering = ["run", "id"]
        constraints = [models.UniqueConstraint(fields=["run", "qid"], name="question_once_per_run")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.qid} ({self.status})"


class Answer(models.Model):
    """One viewer's answer to one question: changeable until the reveal."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    viewer = models.CharField(max_length=64, help_text="the random id the viewer's browser keeps")
    nickname = models.CharField(max_length=40, blank=True, default="")
    choice = models.CharField(max_length=100, blank=True, default="")
    node = models.CharField(max_length=100, blank=True, default="", help_text="a drill diagnosis: the node")
    value = models.FloatField(null=True, blank=True)
    order = models.JSONField(null=True, blank=True, help_text="an order question: every item id, first to last")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["question", "viewer"], name="one_answer_per_viewer")]


class Recipe(models.Model):
    """A session to play again (``/r/<id>``): a scenario document, a seed and the trainer's fault commands with the
    virtual time each applied at (a comparison's: both sides' settings too, its commands applied to both). The id
    is derived from these (``recipes.recipe_id``), so a link never changes meaning; a run started from it schedules
    the commands at their times and replays the session event for event."""

    id = models.CharField(primary_key=True, max_length=16, editable=False)
    document = models.JSONField(help_text="the normalised scenario document")
    seed = models.BigIntegerField()
    commands = models.JSONField(default=list, help_text='[{"at": seconds, "command": {...}}] in order')
    overrides = models.JSONField(null=True, blank=True, default=None,
                                 help_text='a comparison\'s: each side\'s settings, {"a": {...}, "b": {...}}; '
                                           "null for a run")
    source_run = models.CharField(max_length=32, blank=True, default="", help_text="the run it was taken from")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.id} ({self.document.get('name')}, {len(self.commands)} commands)"
