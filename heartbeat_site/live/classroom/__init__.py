"""Lessons and drills in live runs (docs/lessons.md). ``teaching.py`` runs in the run's driver (the Celery
worker): a lesson's steps and a drill's diagnosis. ``questions.py`` and ``report.py`` run in the web process
(and ``questions.py`` in the driver too, for what viewers may be told): questions, answers, tallies, reveals and
the trainer's report."""
