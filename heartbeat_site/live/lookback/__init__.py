"""Looking back at a run, in the web process: its state at any virtual time (``seek.py``), rebuilt from its
document, seed and commands (``rebuilding.py``) or from its nearest checkpoint (``from_checkpoints.py``), in a
process of its own (``replay_process.py``), and what it can be taken away as (``exports.py``). The driver uses
``rebuilding.py`` too, to take a run over."""
