"""The crowd *modes* the scenario suite compares: a registry other code plugs into.

A mode says how an agent is configured for the crowd: a function from the
scenario's agent (:class:`~navkit.crowd.AgentParams`: size, speed) to the mode's
agent (typically the same with another ``avoidance_type`` or ``update_flags``),
and optionally a crowd setup run once before agents are added (installing
avoidance parameters). Adding a mode is one line::

    register_mode("ttc", lambda p: replace(p, avoidance_type=4),
                  setup=lambda crowd: crowd.set_obstacle_avoidance_params(4, TTC))

The built-in modes are RecastDemo CrowdTool's four dtCrowd presets (low,
medium, good, high quality: avoidance params 0..3 from
``Crowd.use_recastdemo_presets``), the crowd with time-to-collision (``ttc``) and
ORCA (``orca``) avoidance, and the corridor agents of the Explicit Corridor Map
(``ecm-corridor``, a mode with its own ``runner``: not a navmesh crowd).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from navkit.crowd.agents import AgentParams
from navkit.errors import InputError

__all__ = ["Mode", "MODES", "register_mode", "get_mode", "DEFAULT_MODES"]


@dataclass(frozen=True)
class Mode:
    """A named crowd configuration.

    Attributes
    ----------
    name : str
    agent : callable(AgentParams) -> AgentParams
        The mode's agent from the scenario's agent.
    setup : callable(Crowd) -> None, optional
        Run once on a new crowd before its agents are added.
    description : str
    runner : callable(setup, dt, steps) -> (trajectory, velocities, update_ms, AgentParams), optional
        Runs the scenario itself instead of a :class:`navkit.Crowd` (the corridor
        agents); ``trajectory`` and ``velocities`` are (steps + 1, N, 3) float32.
    scenarios : tuple of str, optional
        The scenarios the mode can run (None: all).
    """

    name: str
    agent: Callable[[AgentParams], AgentParams]
    setup: Callable[..., None] | None = None
    description: str = ""
    runner: Callable[..., tuple] | None = None
    scenarios: tuple[str, ...] | None = None

    def configure(self, crowd, params: AgentParams) -> AgentParams:
        """The agent params of this mode (``setup`` is run by the suite, once per crowd)."""
        out = self.agent(params)
        if not isinstance(out, AgentParams):
            raise InputError(f"mode {self.name!r}: agent() must return an AgentParams")
        return out


#: name -> Mode, in registration order (the order of the comparison tables)
MODES: dict[str, Mode] = {}


def register_mode(
    name: str,
    agent: Callable[[AgentParams], AgentParams],
    setup: Callable[..., None] | None = None,
    description: str = "",
    *,
    runner: Callable[..., tuple] | None = None,
    scenarios: Sequence[str] | None = None,
    replace_existing: bool = False,
) -> Mode:
    """Add a mode to :data:`MODES` (InputError when the name is taken, unless
    ``replace_existing``); returns it."""
    if not isinstance(name, str) or not name:
        raise InputError("mode name must be a non-empty string")
    if not callable(agent) or (setup is not None and not callable(setup)):
        raise InputError("agent (and setup, when given) must be callable")
    if name in MODES and not replace_existing:
        raise InputError(f"a mode named {name!r} is already registered")
    if runner is not None and not callable(runner):
        raise InputError("runner must be callable")
    m = Mode(name, agent, setup, description, runner, None if scenarios is None else tuple(scenarios))
    MODES[name] = m
    return m


def get_mode(name: str) -> Mode:
    try:
        return MODES[name]
    except KeyError:
        raise InputError(f"no mode named {name!r}; modes: {', '.join(MODES)}") from None


def _presets(crowd) -> None:
    crowd.use_recastdemo_presets()


def _preset(i: int) -> Callable[[AgentParams], AgentParams]:
    def agent(p: AgentParams) -> AgentParams:
        return replace(p, avoidance_type=i)

    return agent


for _i, _q in enumerate(("low", "medium", "good", "high")):
    register_mode(
        f"dtcrowd-{_q}",
        _preset(_i),
        _presets,
        f"dtCrowd, RecastDemo's '{_q}' obstacle avoidance preset ({_i})",
    )



def _model(name: str) -> Callable[[AgentParams], AgentParams]:
    def agent(p: AgentParams) -> AgentParams:
        return replace(p, avoidance_model=name)

    return agent


register_mode("ttc", _model("ttc"), None,
              "dtCrowd with time-to-collision avoidance (Karamouzas, Skinner and Guy's power "
              "law, implicit step; navkit.crowd.ttc)")  # fmt: skip
register_mode("orca", _model("orca"), None,
              "dtCrowd with ORCA avoidance (reciprocal half-planes, RVO2's behaviour; "
              "navkit.crowd.orca)")  # fmt: skip


def _ecm_runner(st: object, dt: float, steps: int) -> tuple:
    from .ecm_mode import run_corridor_agents

    return run_corridor_agents(st, dt, steps)


register_mode(
    "ecm-corridor", lambda p: p, None,
    "corridor agents on the Explicit Corridor Map of the level's floor plan "
    "(navkit.ecm.CorridorAgents: indicative route, time-to-collision forces; no navmesh "
    "crowd; synthetic 2D levels only)",
    runner=_ecm_runner, scenarios=("crossing", "bottleneck", "corridor", "circle"),
)  # fmt: skip

#: dtCrowd's four presets, the baseline every other mode is compared with (a suite
#: run without a mode list runs every registered mode)
DEFAULT_MODES = ("dtcrowd-low", "dtcrowd-medium", "dtcrowd-good", "dtcrowd-high")
