"""Table lifecycle: snapshot/partition expiry, tags, rollback, orphan files, file indexes rebuilt, maintenance."""
