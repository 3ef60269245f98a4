from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('live', '0008_run_kind'),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='driver_epoch',
            field=models.PositiveBigIntegerField(default=0, help_text='bumped by each driver that takes the run: its writes name it (fencing.py)'),
        ),
    ]
