import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("live", "0009_run_driver_epoch"),
    ]

    operations = [
        migrations.CreateModel(
            name="RecordedLog",
            fields=[
                ("run", models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True,
                                             related_name="recorded_log", serialize=False, to="live.run")),
                ("events", models.BinaryField(
                    help_text="zlib of the log's events, one JSON text a line, in seq order")),
                ("snapshot", models.BinaryField(help_text="zlib of the stored snapshot text the page starts from")),
            ],
        ),
    ]
