"""A resident fork server (`kt serve`): a process that has imported torch once and forks kt's workers for
every later kt process of the same Python and torch, so that a `kt tune` does not pay torch's import (1.4-2.1 s
on an H200 host, 4-5 s on a cold one) before its first candidate.

- identity.py: what a compatible server must share with its clients, and where their sockets live.
- keeper.py: the server's keeper, which starts Python's fork server, lends it, and ends it when idle.
- lease.py: a kt process's side: borrow the server for the process's lifetime, or go without.
- control.py: `kt serve`'s side: start a keeper, ask how it is, stop it.
- stock.py, spare.py, adoption.py: spare device workers and judges, readied between kt commands for the
  devices they used (the keeper's side, the spare's own process, a kt process taking one over).
"""
