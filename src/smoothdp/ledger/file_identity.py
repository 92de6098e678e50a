"""Is the SQLite ledger this process writes to still the file its path names?

SQLite finds a database's write-ahead log and its shared-memory index by **name** (``FILE-wal``,
``FILE-shm``), and its writers exclude each other through locks in that index. Two names for one database
therefore fork it: each name gets its own log and its own locks, and two writers each spend the last ε.
Ways to get two names, and what the ledger does about each:

* a symbolic link (to the file or a folder above it): the ledger is opened through its real path
  (``os.path.realpath``), so every symbolic link leads to the same name;
* a hard link: refused (:func:`check_single_link`), when the ledger is opened and in every transaction;
* the file replaced (a copy renamed over it) or removed while a process holds it open: the process would
  go on writing to a file no one else opens. :func:`check_place` compares the inode the path names with
  the one opened, in every transaction and after every commit, and refuses;
* the ``-wal`` or ``-shm`` file removed or replaced while open: on Linux, :func:`check_place` also compares
  the files this process holds open under those names (``/proc/self/fd``) with what the names are now.

What stays outside (docs/ledger.md#threat-model): a second name that is not a link (a bind mount, a
network share mounted twice), and anyone who may write the folder restoring an old copy of the file (a
rollback that only an anchored chain head reveals).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from smoothdp.ledger.records import LedgerError

__all__ = ["FileIdentity", "check_place", "check_single_link", "identity_of"]

#: The suffixes of SQLite's files beside a database in WAL mode.
SIDE_FILES = ("-wal", "-shm")
#: Where Linux lists a process's open files.
PROC_FDS = "/proc/self/fd"


@dataclass(frozen=True)
class FileIdentity:
    """A file as the kernel knows it: device and inode numbers."""

    device: int
    inode: int

    @classmethod
    def of(cls, status: os.stat_result) -> FileIdentity:
        return cls(status.st_dev, status.st_ino)


def identity_of(real: str) -> tuple[FileIdentity, os.stat_result]:
    """The identity of the regular file at ``real`` (an error naming it otherwise)."""
    try:
        status = os.stat(real)
    except FileNotFoundError:
        raise LedgerError(f"the ledger file {real} was removed") from None
    except OSError as error:
        raise LedgerError(f"cannot reach the ledger file {real}: {error.strerror}") from None
    if not stat.S_ISREG(status.st_mode):
        raise LedgerError(f"{real} is not a regular file")
    return FileIdentity.of(status), status


def check_single_link(real: str, status: os.stat_result) -> None:
    """Refuse a ledger file with more than one name (hard link): each name would fork the ledger."""
    if status.st_nlink != 1:
        raise LedgerError(
            f"the ledger file {real} has {status.st_nlink} hard links: SQLite keeps a write-ahead log "
            "and locks "
            "per name, so each link would be a separate ledger. Remove the other names (find / -samefile "
            f"{real}) and use one path (symbolic links are fine)"
        )


def check_place(real: str, opened: FileIdentity) -> None:
    """The path still names the file opened, with one link, and (Linux) this process holds no removed or
    replaced copy of it or of its ``-wal``/``-shm`` files."""
    now, status = identity_of(real)
    if now != opened:
        raise LedgerError(
            f"the ledger file {real} was replaced or moved while open: this process holds another file than "
            "the path names; nothing recorded through it counts"
        )
    check_single_link(real, status)
    _check_open_copies(real)


def _check_open_copies(real: str) -> None:
    try:
        descriptors = os.listdir(PROC_FDS)
    except OSError:  # not Linux: the path checks above are what there is
        return
    names = {real, *(real + suffix for suffix in SIDE_FILES)}
    for fd in descriptors:
        link = f"{PROC_FDS}/{fd}"
        try:
            target = os.readlink(link)
        except OSError:  # closed meanwhile (the listing's own descriptor, or another thread's)
            continue
        name = target.removesuffix(" (deleted)")
        if name not in names:
            continue
        try:
            held = FileIdentity.of(os.stat(link))
        except OSError:  # closed meanwhile
            continue
        try:
            current: FileIdentity | None = FileIdentity.of(os.stat(name))
        except OSError:
            current = None
        if current != held:
            raise LedgerError(
                f"{name} was removed or replaced while this process held it open: its view of the ledger is "
                "forked from the file's; nothing recorded through it counts (open the ledger again)"
            )
