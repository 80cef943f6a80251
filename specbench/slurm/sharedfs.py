"""Whether the results directory's filesystem gives `flock` across hosts, from its mount.

specbench's locks (`store.lock`, the manifest's read-merge-write) are `flock`s; a campaign
on several nodes relies on a lock taken on one host being seen on the others. That holds
on NFS (v3 through the lock manager, v4 natively: Linux sends `flock` to the server as a
whole-file lock), on Lustre mounted with `-o flock`, on CephFS and on GPFS. It does not hold
where the client keeps locks to itself: NFS mounted `nolock` or `local_lock=flock|all`,
Lustre `-o localflock` (and Lustre without `flock`, where `flock` fails outright), BeeGFS
unless `tuneUseGlobalFileLocks = true`. The mount options say which, so the submitter warns
(docs/slurm.md, "Shared filesystems and locks").
"""

from __future__ import annotations

from pathlib import Path

MOUNTS = Path("/proc/mounts")


def mount_of(path: Path, mounts: str) -> tuple[str, str, set[str]] | None:
    """(mount point, filesystem type, options) of the mount holding `path`."""
    best: tuple[str, str, set[str]] | None = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        point = fields[1].replace("\\040", " ")
        inside = path == Path(point) or Path(point) in path.parents
        if inside and (best is None or len(point) >= len(best[0])):
            best = (point, fields[2], set(fields[3].split(",")))
    return best


def lock_problem(fstype: str, options: set[str]) -> str | None:
    """Why `flock` on this mount is not seen by other hosts, or None when it is."""
    if fstype in ("nfs", "nfs4"):
        if "nolock" in options:
            return "NFS mounted nolock: locks stay on each client"
        for local in ("local_lock=flock", "local_lock=all"):
            if local in options:
                return f"NFS mounted {local}: flock stays on each client"
        return None
    if fstype == "lustre":
        if "localflock" in options:
            return "Lustre mounted localflock: flock stays on each client"
        if "flock" not in options:
            return "Lustre mounted without flock: flock fails (mount with -o flock)"
        return None
    if fstype == "beegfs":
        return "BeeGFS keeps flock on each client unless tuneUseGlobalFileLocks = true"
    if fstype.startswith("fuse."):
        return f"{fstype} (FUSE): flock is rarely passed between hosts"
    return None


def lock_warning(output: Path, mounts: str | None = None) -> str | None:
    """A warning when `output`'s mount is known not to give `flock` across hosts."""
    if mounts is None:
        try:
            mounts = MOUNTS.read_text()
        except OSError:
            return None
    found = mount_of(output, mounts)
    if found is None:
        return None
    point, fstype, options = found
    problem = lock_problem(fstype, options)
    if problem is None:
        return None
    return (
        f"--output {output} is on {point} ({problem}): jobs on different nodes could write "
        "the manifest at once and a second campaign would not be refused; see docs/slurm.md"
    )
