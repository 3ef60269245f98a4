"""What runs in the Celery worker that drives a run (``tasks.drive_run``): the run driver and the comparison
driver, their clock (``pacing.py``) and speed governor, the intents lessons hand them, the epoch fencing their
database writes, checkpoints and the process that writes a large run's, and the watchdog that takes over runs
whose driver died (docs/architecture.md §9)."""
