"""Whether ``opgov serve`` can listen where it is asked, and if not, who holds the port."""

from __future__ import annotations

import errno
import os
import socket


def refusal(host: str, port: int) -> str | None:
    """Why ``opgov serve`` cannot listen on ``host``:``port`` (naming the process that holds it,
    where the system says), or None. Binds as uvicorn binds (``SO_REUSEADDR``) and lets go."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as err:
        return f"cannot listen on {host}:{port}: {err.strerror}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as err:
            if err.errno != errno.EADDRINUSE:
                return f"cannot listen on {host}:{port}: {err.strerror or err}"
            holders = listeners(port)
            who = "; ".join(f"pid {pid} ({command})" for pid, command in holders) if holders else \
                "a process this user cannot see"
            return (f"port {port} on {host} is in use by {who}: stop it, or choose another --port")
    return None


def listeners(port: int) -> list[tuple[int, str]]:
    """(pid, command line) of the processes listening on TCP ``port`` (Linux's /proc; else none)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as handle:
                next(handle, None)
                for line in handle:
                    fields = line.split()
                    if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(f"socket:[{fields[9]}]")
        except OSError:
            continue
    found = []
    if not inodes:
        return found
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            links = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        except OSError:
            continue
        if links & inodes:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    command = handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            except OSError:
                command = "?"
            found.append((int(pid), command[:200] or "?"))
    return sorted(found)
