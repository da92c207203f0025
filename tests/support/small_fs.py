"""Small filesystems a test mounts itself, to fill them and break them: a tmpfs of a few MB,
and an ext4 image on a loop device that can be made to fail as a dying disk does (the kernel
remounts it read-only: every write and fsync then fails with EROFS). Both need root (CI runs
as root); without it the test is skipped with the reason."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def _mount(*cmd: str) -> None:
    try:
        _run(*cmd)
    except (subprocess.CalledProcessError, FileNotFoundError) as e:
        why = getattr(e, "stderr", None) or str(e)
        pytest.skip(f"cannot mount a test filesystem here ({' '.join(cmd)}): {why.strip()}")


def free_bytes(path: str | Path) -> int:
    """The bytes free on the filesystem of ``path``, as df counts them."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


@contextlib.contextmanager
def tmpfs(size_mb: int) -> Iterator[Path]:
    """A tmpfs of ``size_mb`` MB mounted on a new folder; unmounted (lazily) on exit."""
    where = Path(tempfile.mkdtemp(prefix="kgroup-tmpfs-"))
    _mount("mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "kgroup-test", str(where))
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
        with contextlib.suppress(OSError):
            where.rmdir()


class Ext4:
    """An ext4 image on a loop device, mounted with errors=remount-ro."""

    def __init__(self, size_mb: int) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="kgroup-ext4-"))
        self.image = self.root / "disk.img"
        self.mount = self.root / "mnt"
        self.mount.mkdir()
        with open(self.image, "wb") as f:
            f.truncate(size_mb << 20)
        _mount("mkfs.ext4", "-q", "-F", str(self.image))
        self.mounted = False

    def attach(self) -> Ext4:
        _mount("mount", "-o", "loop,errors=remount-ro", str(self.image), str(self.mount))
        self.mounted = True
        return self

    @property
    def device(self) -> str:
        out = subprocess.run(
            ["findmnt", "-n", "-o", "SOURCE", str(self.mount)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        return os.path.basename(out)

    def fail(self) -> None:
        """Make the filesystem fail as on a disk error: ext4 remounts it read-only at once,
        open files and all (``/sys/fs/ext4/<dev>/trigger_fs_error``)."""
        Path(f"/sys/fs/ext4/{self.device}/trigger_fs_error").write_text("kgroup test\n")

    def detach(self) -> None:
        """Unmount, and repair what the failure left (e2fsck), ready to attach again."""
        if self.mounted:
            _run("umount", str(self.mount))
            self.mounted = False
        subprocess.run(["e2fsck", "-f", "-y", str(self.image)], capture_output=True)

    def remove(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.mount)], capture_output=True)
            self.mounted = False
        self.image.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self.mount.rmdir()
            self.root.rmdir()


@contextlib.contextmanager
def ext4(size_mb: int) -> Iterator[Ext4]:
    """An ext4 filesystem of ``size_mb`` MB, mounted; removed on exit."""
    fs = Ext4(size_mb)
    try:
        yield fs.attach()
    finally:
        fs.remove()
