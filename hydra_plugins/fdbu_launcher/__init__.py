"""fdbu's SLURM launcher for Hydra: submitit's, saying what it does (fdbu/cli/launcher.py).

Hydra instantiates launchers only from the `hydra_plugins` namespace, so the class lives here;
its config `fdbu_slurm` (submitit_slurm's keys plus `status_every_s`) is what the presets in
conf/hydra/launcher/ extend.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from hydra.core.config_store import ConfigStore
from hydra_plugins.hydra_submitit_launcher.config import SlurmQueueConf
from hydra_plugins.hydra_submitit_launcher.submitit_launcher import SlurmLauncher


class FdbuSlurmLauncher(SlurmLauncher):
    def setup(self, **kwargs: Any) -> None:
        """Hydra sets the launcher up before its sweeper creates the job folder: refusals come first."""
        super().setup(**kwargs)
        from fdbu.cli.launcher import first_missing, setup

        setup(dict(self.params))
        self.fresh = first_missing(self.config.hydra.sweep.dir)  # what a refused submission takes away again
        self.had_submitit = (Path(str(self.config.hydra.sweep.dir)) / ".submitit").exists()

    def launch(self, job_overrides: Sequence[Sequence[str]], initial_job_idx: int) -> Any:
        from fdbu.cli.launcher import launch

        return launch(self, job_overrides, initial_job_idx)


@dataclass
class FdbuSlurmConf(SlurmQueueConf):
    _target_: str = "hydra_plugins.fdbu_launcher.FdbuSlurmLauncher"
    # seconds between two state lines while nothing changes (a change is printed at once)
    status_every_s: float = 60.0


ConfigStore.instance().store(group="hydra/launcher", name="fdbu_slurm", node=FdbuSlurmConf(),
                             provider="fdbu")
