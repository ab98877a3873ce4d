"""The command layer: one typed, validated dataclass per job on a table, and one registry of them.

The CLI parser (:mod:`table_engine.ops.argv`), the Spark application, the provider's job spec and operators and
``docs/commands.md`` (``python -m table_engine.ops --markdown``) are derived from the registry; each command runs
against the engine through one function of :mod:`table_engine.ops.run` (Spark jobs: :mod:`table_engine.spark.jobs.run`).
A command travels between processes as one JSON object (:meth:`Command.to_json`, :func:`from_json`).

What each command does is its one :class:`~table_engine.ops.base.CommandEntry` (:func:`~table_engine.ops.base.entry`):
its local runner (:mod:`table_engine.ops.run`), and for a Spark job its Spark runner
(:mod:`table_engine.spark.jobs.run`), its input-size rule for small jobs on the driver and, where a small job runs
there other than as the CLI runs it, its driver runner (:mod:`table_engine.spark.jobs.driver_jobs`), each registered
with :func:`~table_engine.ops.base.registers` by the module that holds it and imported when first asked for. Every
job prints one result line, :class:`~table_engine.ops.result.JobResult`.

Adding a command: a dataclass in :mod:`table_engine.ops.commands` (the row-level ones: :mod:`.change_commands`; those
on a table as a whole: :mod:`.table_commands`),
its local runner in :mod:`table_engine.ops.run` (:mod:`.run_changes`)
(a Spark job: its Spark runner and input-size rule too), and an operator subclass in
``provider/paimon_provider/operators`` whose ``build_command`` builds the dataclass.

Importing this package loads no pyarrow and no engine module (the provider's DAG files import it).
"""

from table_engine.ops import change_commands, commands, table_commands
from table_engine.ops.base import KINDS, REGISTRY, ArgSpec, Command, arg, command, command_class, from_json
from table_engine.ops.change_commands import *  # noqa: F403  (the row-level commands: their module's __all__)
from table_engine.ops.commands import *  # noqa: F403  (the command classes: commands.__all__ is their one list)
from table_engine.ops.table_commands import *  # noqa: F403  (alter, clone, migrate: their module's __all__)

__all__ = ["ArgSpec", "Command", "KINDS", "REGISTRY", "arg", "command", "command_class", "from_json"]
__all__ += commands.__all__ + table_commands.__all__ + change_commands.__all__
