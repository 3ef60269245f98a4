"""The myth-against-fact page's content (simulation/lessons/myths.yaml) in the page's language."""

from __future__ import annotations

from dataclasses import dataclass

from heartbeat_site.pages.cards import localized

# A scenario link plays its run fast enough that the moment to look at comes after about this
# many seconds of wall time (never slower than 1x, never faster than 20x).
SEE_IT_WALL_SECONDS = 40
MAX_SEE_IT_SPEED = 20


@dataclass(frozen=True)
class SeeItLink:
    """What the "See it" button starts and the line that says what it will show."""

    kind: str  # "lesson" or "scenario"
    name: str  # the lesson's or the scenario's name: the POST /api/runs body is {kind: name}
    title: str  # the lesson's or the scenario's title
    lesson_position: int | None = None
    step: str | None = None
    step_number: int | None = None  # 1-based
    step_count: int | None = None
    at: str | None = None  # scenario links: "415" (virtual seconds)
    speed: int | None = None  # scenario links: the run's speed


@dataclass(frozen=True)
class MythCard:
    id: str
    number: int
    claim: str  # the myth, or the question's usual answer
    fact: str  # the fact, or the corrected answer
    sources: tuple[str, ...]
    see: SeeItLink
    question: str = ""  # interview questions only

    @property
    def source_segments(self) -> list[list[str]]:
        """Each source path split at "/": the page may break a long path only there."""
        return [path.split("/") for path in self.sources]


def see_it_speed(at: float) -> int:
    return max(1, min(MAX_SEE_IT_SPEED, round(at / SEE_IT_WALL_SECONDS)))


def _see_it(see, language: str) -> SeeItLink:
    """The link to a myth's ``see`` (a ``simulation.lessons.myths.SeeIt`` that the book's check
    matched to a built-in lesson or scenario: a name that is not one raises LookupError)."""
    from simulation import get_builtin
    from simulation.lessons import get_lesson

    if see.kind == "lesson":
        lesson = get_lesson(see.lesson)
        if lesson is None:
            raise LookupError(f"no built-in lesson named {see.lesson!r}")
        return SeeItLink(kind="lesson", name=lesson.name, title=localized(lesson.title, language),
                         lesson_position=lesson.position, step=see.step, step_number=see.step_index + 1,
                         step_count=see.step_count)
    scenario = get_builtin(see.scenario)
    if scenario is None:
        raise LookupError(f"no built-in scenario named {see.scenario!r}")
    return SeeItLink(kind="scenario", name=scenario.name, title=localized(scenario.title, language),
                     at=f"{see.at:g}", speed=see_it_speed(see.at))


def myth_cards(language: str) -> tuple[list[MythCard], list[MythCard]]:
    """The myths, then the interview questions, as cards in `language`."""
    from simulation.lessons.myths import builtin_myths

    book = builtin_myths()
    myths = [MythCard(id=m.id, number=i, claim=localized(m.myth, language), fact=localized(m.fact, language),
                      sources=m.sources, see=_see_it(m.see, language))
             for i, m in enumerate(book.myths, 1)]
    questions = [MythCard(id=q.id, number=i, question=localized(q.question, language),
                          claim=localized(q.usual, language), fact=localized(q.answer, language),
                          sources=q.sources, see=_see_it(q.see, language))
                 for i, q in enumerate(book.questions, 1)]
    return myths, questions
