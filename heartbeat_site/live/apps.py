from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "heartbeat_site.live"
    label = "live"
    verbose_name = "Live runs"
    default_auto_field = "django.db.models.BigAutoField"
