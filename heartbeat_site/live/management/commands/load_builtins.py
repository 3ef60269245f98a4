"""``manage.py load_builtins``: store the simulation's built-in scenarios in the database."""

from django.core.management.base import BaseCommand

from heartbeat_site.live.runs.saved_scenarios import load_builtins


class Command(BaseCommand):
    help = "Insert or refresh the built-in scenarios from simulation.builtin_scenarios()."

    def handle(self, *args, **options) -> None:
        names = load_builtins()
        self.stdout.write(f"loaded {len(names)} built-in scenarios: {', '.join(names)}")
