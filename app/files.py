"""
Reading and writing the files a user names, without ever blocking the GUI thread.

A path typed into a file dialog can name something that is not a file: a FIFO (opening it
waits for a writer), a device, or a "file" of the kernel's pseudo file systems (/proc/kmsg is
a regular, empty-looking file whose read() waits for the next kernel message — forever, for
root). So before a read or a write the path is checked with stat() alone, which never waits:
it must be a regular file (or, for writing, not exist yet) on an ordinary file system. The
read itself opens with O_NONBLOCK as a second guard.

Every refusal raises `UnsafeFile` (a ValueError) with one sentence for the user.

Qt's own file dialog is the other way in: its model names each file's type with
QMimeDatabase, which reads the first bytes of a file whose name says nothing — /proc/kmsg,
on the GUI thread, as soon as the dialog lists /proc. `guard_file_dialogs(app)` gives every
file dialog an icon provider that names types from the file name alone.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile

from PySide6.QtCore import QCoreApplication, QFileInfo, QMimeDatabase
from PySide6.QtGui import QAbstractFileIconProvider
from PySide6.QtWidgets import QFileDialog, QFileIconProvider

# file systems whose files are the kernel's interfaces, not documents (Linux mount types)
PSEUDO_FS = {"proc", "sysfs", "devtmpfs", "devpts", "debugfs", "tracefs", "securityfs", "cgroup", "cgroup2",
             "pstore", "bpf", "configfs", "fusectl", "mqueue", "hugetlbfs", "efivarfs", "binfmt_misc",
             "autofs", "rpc_pipefs", "nsfs"}


class UnsafeFile(ValueError):
    """A path that is not an ordinary file; str(e) is one sentence for the user."""


def _tr(text: str) -> str:
    return QCoreApplication.translate("Files", text)


def _pseudo_mounts() -> list[str]:
    """Mount points of pseudo file systems, longest first (Linux; empty elsewhere)."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:  # never blocks
            rows = [line.split() for line in f]
    except OSError:
        return []
    points = [r[1].replace("\\040", " ") for r in rows if len(r) > 2 and r[2] in PSEUDO_FS]
    return sorted(points, key=len, reverse=True)


def _on_pseudo_fs(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real == m or real.startswith(m.rstrip("/") + "/") for m in _pseudo_mounts())


def check_readable(path: str):
    """Raise UnsafeFile unless `path` is a regular file on an ordinary file system."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except OSError as e:
        raise UnsafeFile(_tr("Cannot read %1: %2.").replace("%1", name).replace("%2", e.strerror or str(e))) from None
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(_tr("%1 is not a regular file (a folder, device or pipe): choose a file.").replace("%1", name))
    if _on_pseudo_fs(name):
        raise UnsafeFile(_tr("%1 belongs to the system (/proc, /sys, /dev), not a file to open.").replace("%1", name))


def check_writable_target(path: str):
    """Raise UnsafeFile if writing `path` would write into a device, pipe or the kernel's files."""
    name = os.fspath(path)
    try:
        st = os.stat(name)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UnsafeFile(_tr("Cannot write %1: %2.").replace("%1", name).replace("%2", e.strerror or str(e))) from None
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        raise UnsafeFile(_tr("%1 is not a regular file (a device or pipe): choose another name.").replace("%1", name))
    if _on_pseudo_fs(os.path.dirname(os.path.abspath(name)) or "/"):
        raise UnsafeFile(_tr("%1 is in a system folder (/proc, /sys, /dev): choose another folder.")
                         .replace("%1", name))


def read_bytes(path: str, limit: int) -> bytes:
    """At most limit + 1 bytes of a checked regular file, read without ever waiting."""
    check_readable(path)
    try:
        fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise UnsafeFile(_tr("Cannot read %1: %2.").replace("%1", os.fspath(path))
                         .replace("%2", e.strerror or str(e))) from None
    try:
        chunks, size = [], 0
        while size <= limit:
            try:
                b = os.read(fd, min(1 << 16, limit + 1 - size))
            except BlockingIOError:
                raise UnsafeFile(_tr("%1 does not read like a file (it waits for data): choose a file.")
                                 .replace("%1", os.fspath(path))) from None
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                raise UnsafeFile(_tr("Cannot read %1: %2.").replace("%1", os.fspath(path))
                                 .replace("%2", e.strerror or str(e))) from None
            if not b:
                break
            chunks.append(b)
            size += len(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------
# Qt's file dialog
# ---------------------------------------------------------------------------------------
class NameOnlyIconProvider(QFileIconProvider):
    """Icons and type names from a file's name and kind alone: nothing is opened or read."""

    def __init__(self):
        super().__init__()
        self._mime = QMimeDatabase()

    def icon(self, what):
        if isinstance(what, QFileInfo):
            kind = QAbstractFileIconProvider.IconType.Folder if what.isDir() else QAbstractFileIconProvider.IconType.File
            return super().icon(kind)
        return super().icon(what)

    def type(self, info):
        if info.isDir():
            return QCoreApplication.translate("QAbstractFileIconProvider", "Folder")
        return self._mime.mimeTypeForFile(info.fileName(), QMimeDatabase.MatchMode.MatchExtension).comment()


_guard = {"provider": None}


def protect_dialog(dlg):
    """Give one file dialog the NameOnlyIconProvider (once)."""
    if _guard["provider"] is None:
        _guard["provider"] = NameOnlyIconProvider()
    if isinstance(dlg, QFileDialog) and dlg.iconProvider() is not _guard["provider"]:
        dlg.setIconProvider(_guard["provider"])


def _on_focus_changed(_old, new):
    protect_dialog(new.window() if new is not None else None)


def guard_file_dialogs(app):
    """Every Qt file dialog of `app` gets the NameOnlyIconProvider as soon as it takes the
    focus — before anything can be typed into it. (The static QFileDialog.get…FileName
    functions build their dialog inside; the focus is the first moment it can be reached.
    A window can catch its own dialogs earlier, at QEvent.ChildPolished: see app/classroom/classroom.py.)"""
    if not _guard.get("connected"):
        _guard["connected"] = True
        app.focusChanged.connect(_on_focus_changed)


# ---------------------------------------------------------------------------------------
# Writing files atomically (every export and the scenario files)
# ---------------------------------------------------------------------------------------
class ExportError(Exception):
    """An export failed; the message is meant for the user (one clear sentence)."""


class ExportCancelled(ExportError):
    """The user cancelled; no file was written."""


def check_writable(path: str):
    """Raise ExportError with a clear sentence if `path` cannot be written."""
    path = os.path.abspath(os.fspath(path))
    folder = os.path.dirname(path)
    try:
        check_writable_target(path)  # never write into a device, a pipe or /proc, /sys, /dev
    except UnsafeFile as e:
        raise ExportError(str(e)) from None
    if os.path.isdir(path):
        raise ExportError(QCoreApplication.translate("Export", "Cannot write %1: it is a folder.")
                          .replace("%1", path))
    if not os.path.isdir(folder):
        raise ExportError(QCoreApplication.translate("Export", "Cannot write %1: the folder %2 does not exist.")
                          .replace("%1", path).replace("%2", folder))
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ExportError(QCoreApplication.translate("Export", "Cannot write %1: no permission to write in %2.")
                          .replace("%1", path).replace("%2", folder))
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise ExportError(QCoreApplication.translate("Export", "Cannot write %1: the file is read-only.")
                          .replace("%1", path))


def atomic_write(path: str, write, suffix: str | None = None):
    """
    Call write(tmp_path) to write a temporary file in the target's folder, then move it onto
    `path` in one step. On any exception (including ExportCancelled) the temporary file is
    removed and the target is left as it was.
    """
    path = os.path.abspath(os.fspath(path))
    check_writable(path)
    suffix = suffix if suffix is not None else os.path.splitext(path)[1]
    try:
        fd, tmp = tempfile.mkstemp(prefix=".shard-lab-", suffix=suffix, dir=os.path.dirname(path))
    except OSError as e:
        raise ExportError(QCoreApplication.translate("Export", "Cannot write %1: %2")
                          .replace("%1", path).replace("%2", e.strerror or str(e))) from None
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, _mode_for(path))  # mkstemp makes 0600; give it what a new file would get
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise ExportError(QCoreApplication.translate("Export", "Cannot write %1: %2")
                              .replace("%1", path).replace("%2", e.strerror or str(e))) from None
        raise


def _mode_for(path: str) -> int:
    """The permission bits `path` has now, or those a newly created file gets (umask)."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
