"""A real one-node SLURM cluster for the tests: munged, slurmctld and slurmd as plain root processes.

    python tests/slurm/cluster.py start DIR     # prints the environment to export, leaves it running
    python tests/slurm/cluster.py stop DIR

Debian's `slurm-wlm` and `munge` (`make cluster-tools` installs them) run without systemd: a
generated munge key, a one-node `slurm.conf` (linuxproc process tracking, no task plugin,
cons_tres with CR_CPU, no accounting, SlurmUser root, state and spool under DIR), found
through SLURM_CONF. Without slurmdbd the real `sacct` fails, so the `sacct` beside this file
(first on PATH) answers submitit from `scontrol`. The daemons are stopped by their saved PIDs.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DAEMONS = ("munged", "slurmctld", "slurmd")
PORTS = (6817, 6818)


class Unavailable(Exception):
    """Why the cluster cannot run here (the tests skip with this reason)."""


def _free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


class LocalSlurm:
    def __init__(self, root: Path):
        self.root = Path(root).resolve()
        self.host = socket.gethostname()
        self._children: dict[str, subprocess.Popen] = {}

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.root / "slurm.conf"), "PATH": f"{HERE}{os.pathsep}{os.environ['PATH']}"}

    def _conf(self) -> str:
        cpus = os.cpu_count() or 1
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20 - 512
        r = self.root
        return "\n".join([
            "ClusterName=fdbu-test", f"SlurmctldHost={self.host}(127.0.0.1)", "SlurmUser=root",
            f"SlurmctldPort={PORTS[0]}", f"SlurmdPort={PORTS[1]}", "AuthType=auth/munge",
            f"AuthInfo=socket={r}/munge/munge.socket.2", f"StateSaveLocation={r}/state", f"SlurmdSpoolDir={r}/spool",
            f"SlurmctldPidFile={r}/slurmctld.pid", f"SlurmdPidFile={r}/slurmd.pid",
            f"SlurmctldLogFile={r}/slurmctld.log", f"SlurmdLogFile={r}/slurmd.log",
            "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU", "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none", "MpiDefault=none", "ReturnToService=2",
            "SchedulerParameters=batch_sched_delay=0", "MinJobAge=3600", "KillWait=5",
            f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={max(mem, 512)} State=UNKNOWN",
            f"PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP", ""])

    def start(self, timeout_s: float = 60) -> "LocalSlurm":
        missing = [d for d in DAEMONS + ("sbatch",) if not shutil.which(d, path="/usr/sbin:/usr/bin:" + os.environ["PATH"])]
        if missing:
            raise Unavailable(f"{', '.join(missing)} not installed (make cluster-tools: apt-get install slurm-wlm munge)")
        if os.geteuid() != 0:
            raise Unavailable("the test cluster runs its daemons as root")
        busy = [p for p in PORTS if not _free(p)]
        if busy:
            raise Unavailable(f"port {busy[0]} is taken (another slurmctld/slurmd?)")
        r = self.root
        for d in ("munge", "state", "spool"):
            (r / d).mkdir(parents=True, exist_ok=True)
        (r / "munge").chmod(0o755)  # munged refuses a socket folder of mode 0700
        key = r / "munge" / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
            key.chmod(0o400)
        (r / "slurm.conf").write_text(self._conf())
        env = {**os.environ, **self.env}
        self._spawn("munged", ["munged", "-F", "--force", f"--key-file={key}",
                               f"--socket={r}/munge/munge.socket.2", f"--pid-file={r}/munged.pid",
                               f"--log-file={r}/munged.log", f"--seed-file={r}/munge/munge.seed"], env)
        self._wait(lambda: (r / "munge" / "munge.socket.2").exists(), 10, "munged")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"], env)
        self._spawn("slurmd", ["slurmd", "-D"], env)
        # the scheduler's first pass comes a few seconds after slurmctld starts: wait for a smoke job
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = subprocess.run(["srun", "-N1", "-n1", "-t", "1", "true"], env=env, capture_output=True, text=True,
                                 timeout=timeout_s)
            if out.returncode == 0:
                return self
            time.sleep(1)
        self.stop()
        raise Unavailable(f"the test cluster did not run a job within {timeout_s:.0f} s: {out.stderr.strip()[-300:]}")

    def _spawn(self, name: str, argv: list[str], env: dict) -> None:
        log = open(self.root / f"{name}.out", "ab")
        p = subprocess.Popen([shutil.which(argv[0], path="/usr/sbin:/usr/bin") or argv[0]] + argv[1:], env=env,
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        (self.root / f"{name}.fdbu-pid").write_text(str(p.pid))
        self._children[name] = p

    def _wait(self, ready, timeout_s: float, what: str) -> None:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() > deadline:
                self.stop()
                raise Unavailable(f"{what} did not start; see {self.root}/{what}.out")
            time.sleep(0.1)

    def stop(self) -> None:
        """Cancel every job, then stop the daemons by their saved PIDs (slurmd, slurmctld, munged)."""
        env = {**os.environ, **self.env}
        if (self.root / "slurmctld.fdbu-pid").exists():
            subprocess.run(["scancel", "--user", "root"], env=env, capture_output=True, timeout=30)
        for name in reversed(DAEMONS):
            pidfile = self.root / f"{name}.fdbu-pid"
            if not pidfile.exists():
                continue
            pid = int(pidfile.read_text())
            try:
                os.killpg(pid, signal.SIGTERM)
                child = self._children.pop(name, None)
                if child is not None:  # our own child: reap it (a zombie would answer kill(pid, 0) for ever)
                    try:
                        child.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        os.killpg(pid, signal.SIGKILL)
                        child.wait()
                else:
                    for _ in range(100):
                        os.kill(pid, 0)
                        time.sleep(0.1)
                    os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            pidfile.unlink()


if __name__ == "__main__":
    cmd, root = sys.argv[1], Path(sys.argv[2])
    cluster = LocalSlurm(root)
    if cmd == "start":
        cluster.start()
        print("\n".join(f"export {k}={v}" for k, v in cluster.env.items()))
    else:
        cluster.stop()
