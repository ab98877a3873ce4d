"""Consumer files: ``<table>/consumer/consumer-<id>``, Paimon's ``Consumer`` JSON ``{"nextSnapshot" : N}``.

Consumers (:mod:`table_engine.store.changes.consumers`) record a reader's progress; expiry never removes snapshot
ids ``>= nextSnapshot``. The committers use the same files (so that every expiry honouring consumers, Paimon
Java's included, honours them too) under reserved ids (:mod:`table_engine.store.pins`):

* ``__commit-pin-<uuid>``: a commit attempt's hold on the snapshot it builds on;
* ``__commit-expire-<uuid>``: an expiry run in progress (``nextSnapshot`` = Long.MAX: it holds nothing back);
* ``__commit-fence``: a rollback or fast-forward rewriting the table's history.

Files with a reserved id are not consumers: the consumer API leaves them out, and they stop counting once older
than :data:`COMMIT_PIN_LIFETIME_MS` (by the file's modification time).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["COMMIT_PIN_LIFETIME_MS", "COMMIT_PIN_PREFIX", "CONSUMER_PREFIX", "EXPIRY_MARKER_PREFIX", "HISTORY_FENCE_ID",
           "NO_SNAPSHOT_HELD", "Consumer", "consumer_dir", "consumer_path", "is_reserved"]

CONSUMER_PREFIX = "consumer-"
COMMIT_PIN_PREFIX = "__commit-pin-"
"""Consumer ids of commit pins."""
EXPIRY_MARKER_PREFIX = "__commit-expire-"
"""Consumer ids of expiry runs in progress."""
NO_SNAPSHOT_HELD = 2**63 - 1
"""``nextSnapshot`` of an expiry marker: Long.MAX, so that no expiry (ours or Paimon Java's) keeps anything for it."""
HISTORY_FENCE_ID = "__commit-fence"
"""The consumer id of the history fence."""
RESERVED_PREFIX = "__commit-"
"""Every reserved consumer id starts with this."""
COMMIT_PIN_LIFETIME_MS = 10 * 60 * 1000
"""A pin or fence older than this no longer counts and is deleted; a committer never publishes on a pin older than
half of it."""


@dataclass(frozen=True)
class Consumer:
    """A ``consumer/consumer-<id>`` file: the next snapshot the consumer reads."""

    consumer_id: str
    next_snapshot: int
    modified_millis: int = 0

    def to_json(self) -> str:
        return f'{{\n  "nextSnapshot" : {self.next_snapshot}\n}}'


def consumer_dir(table_path: str) -> str:
    """``<table>/consumer``."""
    return f"{table_path.rstrip('/')}/consumer"


def consumer_path(table_path: str, consumer_id: str) -> str:
    """``<table>/consumer/consumer-<id>``."""
    return f"{consumer_dir(table_path)}/{CONSUMER_PREFIX}{consumer_id}"


def is_reserved(consumer_id: str) -> bool:
    """Whether ``consumer_id`` names a commit pin or the history fence, not a consumer."""
    return consumer_id.startswith(RESERVED_PREFIX)
