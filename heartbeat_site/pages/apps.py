from django.apps import AppConfig


class PagesConfig(AppConfig):
    name = "heartbeat_site.pages"
    label = "pages"
    verbose_name = "Heartbeat Classroom pages"
