"""A live run's state in Redis, one module per thing kept, each naming its keys (``naming.py`` says how keys
are named and lists the modules). The database holds the truth about a run (``models.py``); Redis holds its
ownership lease and caches of what its driver published."""
