"""How long each SQLite write transaction held the database's one write lock (a diagnostic, KT_PROFILE_DIR
only): from its first write statement's return (SQLite takes the lock there, after any busy wait) to its
commit's or rollback's return, stamped `hold FIRST_WRITE END STATEMENTS` in pipe-db-PID.log beside the
transactions' walls (owned_storages.again_when_locked). Every other process's writer waits that long, so a
hold longer than SQLite's own work (a fraction of a millisecond) is Python's work inside the transaction,
or its threads waiting for their process's GIL between statements."""

from __future__ import annotations

import sqlite3
import time

from kt_cli.stamps import log_timing

_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLAC")


class HoldStampedCursor(sqlite3.Cursor):
    def execute(self, sql, parameters=()):
        done = super().execute(sql, parameters)
        self.connection.wrote(sql)
        return done

    def executemany(self, sql, seq_of_parameters):
        done = super().executemany(sql, seq_of_parameters)
        self.connection.wrote(sql)
        return done


class HoldStampedConnection(sqlite3.Connection):
    """sqlite3.connect(..., factory=HoldStampedConnection): a connection that stamps its write lock's holds."""

    first_write: float | None = None
    statements = 0

    def cursor(self, factory=HoldStampedCursor):
        return super().cursor(factory)

    def wrote(self, sql: str) -> None:
        if sql.lstrip()[:6].upper() in _WRITES:
            self.statements += 1
            if self.first_write is None:
                self.first_write = time.time()

    def commit(self):
        try:
            return super().commit()
        finally:
            self._released()

    def rollback(self):
        try:
            return super().rollback()
        finally:
            self._released()

    def _released(self) -> None:
        if self.first_write is not None:
            log_timing("db", "hold", self.first_write, time.time(), float(self.statements))
        self.first_write, self.statements = None, 0
